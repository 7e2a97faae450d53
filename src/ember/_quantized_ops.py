"""What a quantized tensor answers to: the rules its ``__torch_function__`` follows, one per function.

torch defines few operations on quantized tensors: reading them (shape, parameters, the integers, the real
values), moving their integers about (views, indexing, joining, sorting), ``relu``, and writing real values
into them. Everything else, arithmetic above all, is refused with the operation's name and the way out.

>>> import ember
>>> q = ember.quantize_per_tensor(ember.tensor([1.0, -2.0]), 0.5, 8, ember.qint8)
>>> q + q
Traceback (most recent call last):
  ...
NotImplementedError: Could not run 'aten::add' with arguments from the 'QuantizedCPU' backend: add is not defined for quantized tensors. Dequantize first (q.dequantize()), compute in floating point, and quantize the result again if needed
>>> q.flip(0).dequantize()
tensor([-2.,  1.])
"""
from __future__ import annotations

import numpy as np

import ember
from ember import _quantized as QT
from ember._ops import quantize as Q, quantized_kernels as K, quantized_readers as R
from ember._tensor import Tensor
from ember.overrides import resolve_name


def run(func, args: tuple, kwargs: dict):
    """Answer ``func`` for arguments that include a quantized tensor (subclass dispatch is off here)."""
    rule = RULES.get(func)
    if rule is None:
        raise _refusal(func)
    return rule(func, args, kwargs)


def _name(func) -> str:
    """The op's name as torch's messages give it: ``add`` for ``Tensor.add``, ``T`` for the property."""
    name = resolve_name(func) or getattr(func, "__name__", None) or repr(func)
    for prefix in ("ember.Tensor.", "ember.nn.functional.", "ember."):
        name = name.removeprefix(prefix)
    name = name.removesuffix(".__get__")
    return name.strip("_") if name.startswith("__") else name


def _refusal(func) -> NotImplementedError:
    name = _name(func)
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the 'QuantizedCPU' backend: {name} is not defined for "
        "quantized tensors. Dequantize first (q.dequantize()), compute in floating point, and quantize the result "
        "again if needed"
    )


def _as_is(func, args, kwargs):
    return func(*args, **kwargs)


def _first_quantized(args: tuple) -> QT.QuantizedTensor:
    for a in args:
        if isinstance(a, QT.QuantizedTensor):
            return a
        if isinstance(a, (list, tuple)):
            for item in a:
                if isinstance(item, QT.QuantizedTensor):
                    return item
    raise TypeError("no quantized tensor among the arguments")


def _plain(value):
    """A quantized tensor as a plain tensor of its integers (same memory); anything else as it is."""
    if isinstance(value, QT.QuantizedTensor):
        return Tensor._wrap(value._data)
    if isinstance(value, (list, tuple)) and any(isinstance(v, QT.QuantizedTensor) for v in value):
        return type(value)(_plain(v) for v in value)
    return value


def _requantized(result, q: QT.QuantizedTensor):
    """The integer tensors in ``result`` (of ``q``'s storage type) as quantized tensors with ``q``'s parameters."""
    if isinstance(result, Tensor):
        return QT.like(q, result._data) if result._data.dtype == q._data.dtype else result
    if isinstance(result, (tuple, list)):
        items = [_requantized(r, q) for r in result]
        if isinstance(result, list):
            return items
        return type(result)(*items) if hasattr(result, "_fields") else type(result)(items)
    return result


def _on_integers(func, args, kwargs):
    """Apply ``func`` to the integers; the result keeps the quantization (per-channel axes cannot move)."""
    q = _first_quantized(args)
    return _requantized(func(*_plain(args), **kwargs), q)


def _moving(func, args, kwargs):
    q = _first_quantized(args)
    if q._scales is not None:
        raise RuntimeError(f"{_name(func)}: Setting strides is possible only on uniformly quantized tensor: this "
                           "one is quantized per channel; dequantize it first (q.dequantize())")
    return _on_integers(func, args, kwargs)


def _joined(func, args, kwargs):
    """cat and stack: every input requantized to the first one's parameters, as torch's quantized cat."""
    tensors = args[0]
    q = _first_quantized((tensors,))
    if q._scales is not None:
        _moving(func, (q,), {})  # raises: a per-channel tensor cannot be joined
    same = [t if _same_params(t, q) else Q.quantize_per_tensor(Q.dequantize(t), q._scale, q._zero_point, q._qdtype)
            for t in tensors]
    return _on_integers(func, (same, *args[1:]), kwargs)


def _same_params(t, q: QT.QuantizedTensor) -> bool:
    if not isinstance(t, QT.QuantizedTensor):
        raise TypeError(f"cat: expected all tensors to be quantized like the first ({q._qdtype!r}), got a tensor "
                        f"of {t.dtype!r}; quantize it first")
    return t._qdtype is q._qdtype and t._scales is None and (t._scale, t._zero_point) == (q._scale, q._zero_point)


def _relu(func, args, kwargs):
    """relu: the integers below the zero point (the negative reals) become the zero point."""
    q = _first_quantized(args)
    points = q._zero_point if q._scales is None else q._zero_points.reshape(
        tuple(-1 if d == q._axis else 1 for d in range(q._data.ndim))).astype(np.int64)
    return QT.like(q, np.maximum(q._data, points).astype(q._data.dtype))


def _relu_(func, args, kwargs):
    q = _first_quantized(args)
    q._data[...] = _relu(func, args, kwargs)._data
    q._bump()
    return q


def _write(q: QT.QuantizedTensor, key, value) -> None:
    """Quantize ``value`` (a number or a float tensor, or a quantized one) with ``q``'s parameters into ``q[key]``."""
    if isinstance(value, QT.QuantizedTensor):
        value = Q.dequantize(value)
    reals = np.asarray(value._data if isinstance(value, Tensor) else value, dtype=np.float32)
    if q._scales is not None:
        if key is not Ellipsis:
            _moving(Tensor.__setitem__, (q,), {})  # raises: only the whole of a per-channel tensor is written
        shape = tuple(-1 if d == q._axis else 1 for d in range(q._data.ndim))
        reals = np.broadcast_to(reals, q._data.shape)
        q._data[...] = Q.integers(reals, q._scales.reshape(shape), q._zero_points.reshape(shape), q._qdtype, False)
    else:
        q._data[key] = Q.integers(reals, q._scale, q._zero_point, q._qdtype, True)
    q._bump()


def _setitem(func, args, kwargs):
    q, key, value = args
    _write(q, _plain(key), value)


def _fill_(func, args, kwargs):
    _write(args[0], Ellipsis, args[1])
    return args[0]


def _copy_(func, args, kwargs):
    q, source = args[0], args[1]
    _write(q, Ellipsis, source)
    return q


def _equal(func, args, kwargs):
    a, b = args[0], args[1]
    if not (isinstance(a, QT.QuantizedTensor) and isinstance(b, QT.QuantizedTensor)):
        raise RuntimeError("equal: both tensors must be quantized, or neither; dequantize the quantized one first")
    if a._qscheme is not b._qscheme or a._qdtype is not b._qdtype or a._data.shape != b._data.shape:
        return False
    if a._scales is None:
        same = (a._scale, a._zero_point) == (b._scale, b._zero_point)
    else:
        same = a._axis == b._axis and np.array_equal(a._scales, b._scales) and np.array_equal(
            a._zero_points, b._zero_points)
    return bool(same and np.array_equal(a._data, b._data))


def _on_reals(func, args, kwargs):
    """Compare the real values (``q == 0.5``, ``q < r``), as torch's quantized comparisons do."""
    return func(*_dequantized(args), **kwargs)


def _dequantized(args: tuple) -> tuple:
    return tuple(Q.dequantize(a) if isinstance(a, QT.QuantizedTensor) else a for a in args)


def _requantizing(func, args, kwargs):
    """clamp and mean: computed on the real values, quantized back with the input's parameters."""
    q = _first_quantized(args)
    if q._scales is not None:
        _moving(func, (q,), {})  # raises: these keep no per-channel parameters
    result = func(*_dequantized(args), **kwargs)
    return Q.quantize_per_tensor(result, q._scale, q._zero_point, q._qdtype)


def _nearest(func, args, kwargs):
    """interpolate in mode 'nearest' picks values: requantized, they are the input's integers."""
    mode = kwargs.get("mode", args[4] if len(args) > 4 else "nearest")
    if mode != "nearest":
        raise NotImplementedError(f"interpolate: ember resizes quantized tensors in mode 'nearest' only, not {mode!r}; "
                                  "dequantize first (q.dequantize()) for the other modes")
    return _requantizing(func, args, kwargs)


def _is_signed(func, args, kwargs):
    return args[0]._qdtype.is_signed  # raises, as torch: quantized dtypes have no signedness


def _empty_like(func, args, kwargs):
    return QT.like(args[0], np.empty_like(args[0]._data))


def _data(func, args, kwargs):
    return QT.like(args[0], args[0]._data)


def _type(func, args, kwargs):
    if len(args) > 1 or kwargs:
        return _conversion(func, args, kwargs)
    return f"ember.quantized.{args[0]._qdtype.scalar_name}Tensor"


def _to(func, args, kwargs):
    """``q.to('cpu')`` is ``q``; a dtype (or another tensor's) asks for a conversion, which torch refuses."""
    wanted = [a for a in (*args[1:], *kwargs.values()) if isinstance(a, (ember.dtype, Tensor))]
    if any(w is not args[0]._qdtype for w in wanted):
        return _conversion(func, args, kwargs)
    return args[0]


def _pooling(kernel):
    """F.max_pool1d/2d/3d, avg_pool2d and adaptive_avg_pool2d of a quantized tensor: torch's quantized kernels."""
    return lambda func, args, kwargs: kernel(*args, **kwargs)


def _dtype(func, args, kwargs):
    return args[0]._qdtype


def _repr(func, args, kwargs):
    return QT.quantized_repr(args[0])


def _format(func, args, kwargs):
    return QT.quantized_repr(args[0]) if not args[1] else object.__format__(args[0], args[1])


def _item(func, args, kwargs):
    return Q.dequantize(args[0]).item()


def _iter(func, args, kwargs):
    q = args[0]
    return iter([_on_integers(Tensor.__getitem__, (q, i), {}) for i in range(len(q))])


def _requires_grad_(func, args, kwargs):
    wanted = args[1] if len(args) > 1 else kwargs.get("requires_grad", True)
    if wanted:
        raise RuntimeError(f"only Tensors of floating point dtype can require gradients (got {args[0]._qdtype!r}); "
                           "train with fake quantization (ember.fake_quantize_per_tensor_affine) instead")
    return args[0]


def _conversion(func, args, kwargs):
    q = args[0]
    raise RuntimeError(f"{_name(func)}: Creation of quantized tensor requires quantized dtype like ember.quint8: a "
                       f"tensor of {q._qdtype!r} converts to a float tensor with q.dequantize() and to its integers "
                       "with q.int_repr()")


def _numpy(func, args, kwargs):
    raise TypeError(f"Got unsupported ScalarType {args[0]._qdtype.scalar_name}: use q.int_repr().numpy() for the "
                    "integers or q.dequantize().numpy() for the real values")


def _reading_rules() -> dict:
    """Metadata, the parameters and the real values: as for any tensor (the dtype is the quantized one)."""
    rules = {getattr(Tensor, name).__get__: _as_is
             for name in ("shape", "ndim", "itemsize", "nbytes", "device", "requires_grad", "grad", "grad_fn",
                          "is_leaf")}
    as_is = ("size dim ndimension numel nelement element_size stride is_contiguous data_ptr storage_offset "
             "is_floating_point is_complex get_device __len__ int_repr q_scale q_zero_point q_per_channel_scales "
             "q_per_channel_zero_points q_per_channel_axis qscheme dequantize is_inference")
    rules.update({getattr(Tensor, n): _as_is for n in as_is.split()})
    rules.update({f: _as_is for f in (R.int_repr, R.q_scale, R.q_zero_point, R.q_per_channel_scales, Q.dequantize,
                                      R.q_per_channel_zero_points, R.q_per_channel_axis, R.empty_quantized,
                                      K.quantized_batch_norm)})
    rules.update({Tensor.dtype.__get__: _dtype, Tensor.__repr__: _repr, Tensor.__format__: _format,
                  Tensor.item: _item, Tensor.__iter__: _iter, Tensor.requires_grad_: _requires_grad_,
                  Tensor.numpy: _numpy, Tensor.__array__: _numpy, Tensor.data.__get__: _data, Tensor.type: _type,
                  Tensor.to: _to, Tensor.is_signed: _is_signed, ember.empty_like: _empty_like})
    comparisons = "eq ne lt le gt ge __eq__ __ne__ __lt__ __le__ __gt__ __ge__ __contains__ __bool__"
    rules.update({getattr(Tensor, n): _on_reals for n in comparisons.split()})
    rules.update({getattr(ember, n): _on_reals for n in comparisons.split()[:6]})
    rules.update({ember.equal: _equal, Tensor.equal: _equal})
    conversions = "float double half bfloat16 int long short char byte bool type_as"
    rules.update({getattr(Tensor, n): _conversion for n in conversions.split()})
    return rules


def _moving_rules() -> dict:
    """Copies, views, selections and joins of the integers, and writes of real values into them."""
    rules = {getattr(Tensor, n): _on_integers for n in ("clone", "detach", "contiguous", "cpu")}
    rules[ember.clone] = _on_integers
    moving = ("view view_as reshape reshape_as flatten unflatten squeeze unsqueeze t transpose permute swapaxes "
              "swapdims movedim moveaxis __getitem__ select narrow expand expand_as flip unbind chunk split "
              "tensor_split index_select sort topk max min")
    rules.update({getattr(Tensor, n): _moving for n in moving.split()})
    rules.update({getattr(ember, n): _moving for n in moving.split() if hasattr(ember, n) and n[0] != "_"})
    rules.update({Tensor.T.__get__: _moving, Tensor.mT.__get__: _moving})
    rules.update({ember.cat: _joined, ember.concat: _joined, ember.concatenate: _joined, ember.stack: _joined})
    rules.update({Tensor.__setitem__: _setitem, Tensor.fill_: _fill_, Tensor.copy_: _copy_})
    return rules


def _kernel_rules() -> dict:
    """relu and friends, clamp, mean, resizing and pooling: torch's quantized kernels."""
    functional = ember.nn.functional
    rules = {ember.relu: _relu, Tensor.relu: _relu, functional.relu: _relu, Tensor.relu_: _relu_,
             ember.relu_: _relu_, functional.interpolate: _nearest,
             functional.avg_pool2d: _pooling(K.quantized_avg_pool2d),
             functional.adaptive_avg_pool2d: _pooling(K.quantized_adaptive_avg_pool2d)}
    rules.update({f: _requantizing for f in (Tensor.clamp, ember.clamp, Tensor.clip, ember.clip, Tensor.mean,
                                            ember.mean, functional.hardtanh, functional.relu6)})
    for pool, kernel in ((functional.max_pool1d, K.quantized_max_pool1d), (functional.max_pool2d,
                         K.quantized_max_pool2d), (functional.max_pool3d, K.quantized_max_pool3d)):
        rules[pool] = _pooling(kernel)
        rules[kernel] = _as_is
    return rules


RULES = _reading_rules() | _moving_rules() | _kernel_rules()
