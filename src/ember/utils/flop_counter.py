"""``FlopCounterMode``: count the floating-point operations of matrix products, convolutions and attention.

The counts are torch's: each call is counted as the ATen ops torch runs for it on the CPU (``aten.mm``,
``aten.addmm``, ``aten.bmm``, ``aten.baddbmm``, ``aten.convolution``, ``aten.convolution_backward``), with
torch's formulas (a multiply-add is 2 FLOPs; bias additions and elementwise ops are not counted), per module
(``"Global"`` and each module's fully qualified name).

>>> import ember
>>> from ember.utils.flop_counter import FlopCounterMode
>>> model = ember.nn.Sequential(ember.nn.Linear(8, 4), ember.nn.ReLU(), ember.nn.Linear(4, 2))
>>> with FlopCounterMode(display=False) as counter:
...     model(ember.ones(3, 8)).sum().backward()
>>> counter.get_total_flops()  # forward 192 + 48; backward: the first's weight 192, the second's weight and input 96
528
>>> {op: count for op, count in counter.get_flop_counts()["Sequential.2"].items()}
{aten.addmm: 48, aten.mm: 96}

How the counts are made: ember's ``__torch_function__`` mode sees the public calls (``matmul``,
``nn.functional.linear``, ``conv2d``, ...), not the ATen ops inside them, and ember's built-in backward
formulas run unseen by modes. So each call's ATen ops are planned from its arguments' shapes, strides and
``requires_grad`` as torch decomposes it (``matmul`` folds a batch into one ``mm`` or runs a ``bmm``; ``linear``
is an ``addmm``; ``scaled_dot_product_attention`` is torch's math path: two batched products; ``einsum`` is
one ``bmm`` per pair of operands it multiplies, left to right; ``multi_head_attention_forward`` is its
projections' ``linear`` calls around a ``bmm``/``baddbmm`` pair, or, without weights, around torch's fused
attention kernel, which torch's counter counts as 0). The backward ops are counted when the call's gradient
node runs, for each input that required grad in forward (torch counts the gradients a pass computes:
``autograd.grad`` of some inputs counts fewer there). torch's ``MultiheadAttention`` in inference (no grad,
batch first, self-attention) runs one fused kernel its counter counts as 0; ember's counts its products.
"""
from __future__ import annotations

import math
import warnings
from collections import defaultdict
from typing import Any, Callable

from ember._ops.einsum import _from_sublists as _einsum_from_sublists, _parse as _einsum_parse
from ember._tensor import Tensor
from ember.overrides import TorchFunctionMode
from ember.utils.module_tracker import ModuleTracker

__all__ = ["FlopCounterMode", "register_flop_formula"]


class OpName:
    """The name of an ATen op that the counts are keyed by; prints as torch's op packet does (``aten.mm``)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"aten.{self.name}"


class _Aten:
    """The ATen ops whose FLOPs are counted (``aten.mm``), as keys of ``custom_mapping`` and of the counts."""

    mm = OpName("mm")
    addmm = OpName("addmm")
    bmm = OpName("bmm")
    baddbmm = OpName("baddbmm")
    convolution = OpName("convolution")
    convolution_backward = OpName("convolution_backward")


aten = _Aten()


def get_shape(value):
    return tuple(value.shape) if isinstance(value, Tensor) else value


def _shapes_of(values):
    if isinstance(values, (tuple, list)):
        return type(values)(_shapes_of(v) for v in values)
    if isinstance(values, dict):
        return {k: _shapes_of(v) for k, v in values.items()}
    return get_shape(values)


def shape_wrapper(formula: Callable) -> Callable:
    """``formula`` called with the shapes of its tensors (and of the output, as ``out_shape``) in their place."""
    def on_shapes(*args, out_val=None, **kwargs):
        return formula(*_shapes_of(args), out_shape=_shapes_of(out_val), **_shapes_of(kwargs))

    return on_shapes


flop_registry: dict[Any, Callable] = {}


def register_flop_formula(targets, get_raw: bool = False) -> Callable[[Callable], Callable]:
    """Count the FLOPs of ``targets`` (an op of ``ember.ops``, or a list of them) with the decorated formula.

    The formula takes the op's arguments with tensors replaced by their shapes, and ``out_shape``
    (``get_raw=True``: the arguments as they are, and ``out_val``).

    >>> import ember
    >>> @ember.library.custom_op("flopdoc::scale", mutates_args=())
    ... def scale(x: ember.Tensor) -> ember.Tensor:
    ...     return x * 2
    >>> @register_flop_formula(ember.ops.flopdoc.scale)
    ... def scale_flop(x_shape, out_shape=None) -> int:
    ...     return math.prod(x_shape)
    >>> with FlopCounterMode(display=False) as counter:
    ...     _ = scale(ember.ones(3, 4))
    >>> counter.get_total_flops()
    12
    """
    from ember.library._operator import OpOverloadPacket

    def register(formula: Callable) -> Callable:
        counted = formula if get_raw else shape_wrapper(formula)
        for target in targets if isinstance(targets, (list, tuple)) else (targets,):
            if not isinstance(target, (OpOverloadPacket, OpName)):
                raise ValueError(f"register_flop_formula(targets): expected each target to be an OpOverloadPacket "
                                 f"(i.e. ember.ops.mylib.foo), got {target} which is of type {type(target)}")
            if target in flop_registry:
                raise RuntimeError(f"duplicate registrations for {target}")
            flop_registry[target] = counted
        return counted

    return register


# ---- torch's formulas: 2 FLOPs per multiply-add

@register_flop_formula(aten.mm)
def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """An ``[m, k] @ [k, n]`` product."""
    m, k = a_shape
    k2, n = b_shape
    _same_inner("mm", k, k2)
    return 2 * m * n * k


@register_flop_formula(aten.addmm)
def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs) -> int:
    return mm_flop(a_shape, b_shape)


@register_flop_formula(aten.bmm)
def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs) -> int:
    """A batch of ``[m, k] @ [k, n]`` products."""
    b, m, k = a_shape
    b2, k2, n = b_shape
    if b != b2:
        raise AssertionError(f"bmm: batch sizes differ: {b} and {b2}")
    _same_inner("bmm", k, k2)
    return 2 * b * m * n * k


@register_flop_formula(aten.baddbmm)
def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs) -> int:
    return bmm_flop(a_shape, b_shape)


def _same_inner(op: str, k: int, k2: int) -> None:
    if k != k2:
        raise AssertionError(f"{op}: inner dimensions differ: {k} and {k2}")


def conv_flop_count(x_shape, w_shape, out_shape, transposed: bool = False) -> int:
    """Multiplications (times 2) of a convolution; the bias is not counted.

    A convolution takes each filter over each output position; a transposed one over each input position.
    """
    batch = x_shape[0]
    positions = math.prod((x_shape if transposed else out_shape)[2:])
    c_out, c_in, *kernel = w_shape
    return 2 * positions * math.prod(kernel) * batch * c_out * c_in


@register_flop_formula(aten.convolution)
def conv_flop(x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed, *args, out_shape=None,
              **kwargs) -> int:
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


def _channels_first(shape) -> list:
    """The shape with its first two dims swapped: backward's convolutions treat channels as the batch."""
    return [shape[1], shape[0], *shape[2:]]


@register_flop_formula(aten.convolution_backward)
def conv_backward_flop(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed,
                       _output_padding, _groups, output_mask, out_shape, **kwargs) -> int:
    """The input's gradient is the transposed convolution of the output's gradient with the weight; the
    weight's is a convolution of the input with the output's gradient (operands swapped when transposed)."""
    flops = 0
    if output_mask[0]:
        flops += conv_flop_count(grad_out_shape, w_shape, out_shape[0], not transposed)
    if output_mask[1]:
        data, filters = (grad_out_shape, x_shape) if transposed else (x_shape, grad_out_shape)
        flops += conv_flop_count(_channels_first(data), _channels_first(filters), _channels_first(out_shape[1]))
    return flops


# ---- how torch decomposes each public call into the ops above

class _Call:
    """One ATen op torch runs: its key, its arguments (tensors as shapes) and its output's shape."""

    __slots__ = ("op", "args", "out_shape")

    def __init__(self, op: OpName, args: tuple, out_shape):
        self.op, self.args, self.out_shape = op, args, out_shape


class _Product:
    """A matrix product torch runs (mm or bmm, maybe with an added input), and which operands need a gradient."""

    def __init__(self, op: OpName, a_shape: tuple, b_shape: tuple, a_grad: bool, b_grad: bool, added=None):
        self.op, self.a_shape, self.b_shape, self.a_grad, self.b_grad = op, a_shape, b_shape, a_grad, b_grad
        self.added = added  # the shape of addmm's or baddbmm's input

    def forward(self) -> _Call:
        operands = (self.a_shape, self.b_shape)
        return _Call(self.op, operands if self.added is None else (self.added, *operands), self._out_shape())

    def backward(self) -> list:
        """grad @ b^T for a, a^T @ grad for b: mm (or bmm) calls, whatever the forward op."""
        product = aten.mm if len(self.a_shape) == 2 else aten.bmm
        grad, calls = self._out_shape(), []
        if self.a_grad:
            calls.append(_Call(product, (grad, _transposed(self.b_shape)), self.a_shape))
        if self.b_grad:
            calls.append(_Call(product, (_transposed(self.a_shape), grad), self.b_shape))
        return calls

    def _out_shape(self) -> tuple:
        return (*self.a_shape[:-1], self.b_shape[-1])


def _transposed(shape: tuple) -> tuple:
    return (*shape[:-2], shape[-1], shape[-2])


class _Operand:
    """What torch's matmul reads of a tensor to choose its steps: shape, strides, requires_grad."""

    __slots__ = ("shape", "strides", "requires_grad")

    def __init__(self, shape: tuple, strides: tuple, requires_grad: bool):
        self.shape, self.strides, self.requires_grad = shape, strides, requires_grad

    @classmethod
    def of(cls, tensor: Tensor) -> "_Operand":
        return cls(tuple(tensor.shape), tuple(tensor.stride()), tensor.requires_grad)

    @classmethod
    def fresh(cls, shape: tuple, requires_grad: bool) -> "_Operand":
        """A new tensor, laid out row-major."""
        strides, step = [], 1
        for size in reversed(shape):
            strides.append(step)
            step *= max(size, 1)
        return cls(tuple(shape), tuple(reversed(strides)), requires_grad)

    def squeezed(self) -> "_Operand":
        return _Operand(self.shape[1:], self.strides[1:], self.requires_grad)

    def unsqueezed(self, dim: int) -> "_Operand":
        """A dim of size 1 inserted before ``dim``, with the stride torch gives it."""
        stride = self.shape[dim] * self.strides[dim] if dim < len(self.shape) else 1
        return _Operand(self.shape[:dim] + (1,) + self.shape[dim:], self.strides[:dim] + (stride,) + self.strides[dim:],
                        self.requires_grad)

    def is_contiguous(self) -> bool:
        """Row-major, as torch reads it: dims of size 1 may have any stride, and an empty tensor is contiguous."""
        if 0 in self.shape:
            return True
        step = 1
        for size, stride in zip(reversed(self.shape), reversed(self.strides)):
            if size != 1 and stride != step:
                return False
            step *= size
        return True

    def transposed(self) -> "_Operand":
        if len(self.shape) < 2:
            return self
        return _Operand(_transposed(self.shape), _transposed(self.strides), self.requires_grad)


def _matmul_products(a: _Operand, b: _Operand) -> list:
    """The products torch's matmul runs: mv and dot are not counted, so a vector result has none."""
    dims_a, dims_b = len(a.shape), len(b.shape)
    if dims_b == 1 and dims_a <= 2:
        return []  # dot or mv
    if dims_a <= 2 and dims_b == 2:
        rows = a.shape if dims_a == 2 else (1, a.shape[0])  # a vector is a row, unsqueezed
        return [_Product(aten.mm, rows, b.shape, a.requires_grad, b.requires_grad)]
    if dims_a == 3 and dims_b == 3 and a.shape[0] != b.shape[0]:
        # under a dispatch mode torch drops a batch of one, so that its gradient is no sum over copies
        if a.shape[0] == 1:
            return _matmul_products(a.squeezed(), b)
        if b.shape[0] == 1:
            return _matmul_products(a, b.squeezed())
    if _folds(a, b):
        return _folded_products(a, b)
    return [_batched_product(a, b)]


def _folds(a: _Operand, b: _Operand) -> bool:
    """Whether torch's matmul folds the batch of the operand with more dims into the rows of one mm or mv."""
    a_larger = len(a.shape) >= len(b.shape)
    larger, smaller = (a, b.transposed()) if a_larger else (b.transposed(), a)
    if len(larger.shape) < 3 or len(smaller.shape) > 2:
        return False
    if smaller.requires_grad:  # folded, its gradient is one product rather than a batch summed down
        return True
    if len(a.shape) == 2:  # folding would need the product transposed and copied
        return False
    if math.prod(larger.shape) == 0:
        return True
    shape, strides = larger.shape, larger.strides
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))  # a view


def _folded_products(a: _Operand, b: _Operand) -> list:
    transposed = len(b.shape) > len(a.shape)  # a @ b computed as (b^T @ a^T)^T
    rows, right = (b.transposed(), a.transposed()) if transposed else (a, b)
    if len(right.shape) == 1:
        return []  # mv
    folded = (math.prod(rows.shape[:-1]), rows.shape[-1])
    return [_Product(aten.mm, folded, right.shape, rows.requires_grad, right.requires_grad)]


def _batched_product(a: _Operand, b: _Operand) -> _Product:
    """One bmm of both operands expanded to their broadcast batch, flattened to one batch dim."""
    rows = a.shape[-2] if len(a.shape) > 1 else 1
    columns = b.shape[-1] if len(b.shape) > 1 else 1
    inner = a.shape[-1]
    batch = math.prod(_broadcast(a.shape[:-2], b.shape[:-2]))
    return _Product(aten.bmm, (batch, rows, inner), (batch, inner, columns), a.requires_grad, b.requires_grad)


def _broadcast(x: tuple, y: tuple) -> tuple:
    width = max(len(x), len(y))
    x, y = (1,) * (width - len(x)) + tuple(x), (1,) * (width - len(y)) + tuple(y)
    return tuple(max(p, q) if min(p, q) != 0 else 0 for p, q in zip(x, y))


def _plan_matmul(input, other, *, out=None) -> list:
    return _matmul_products(_Operand.of(input), _Operand.of(other))


def _plan_mm(input, mat2, *, out=None) -> list:
    return [_Product(aten.mm, tuple(input.shape), tuple(mat2.shape), input.requires_grad, mat2.requires_grad)]


def _plan_bmm(input, mat2, *, out=None) -> list:
    return [_Product(aten.bmm, tuple(input.shape), tuple(mat2.shape), input.requires_grad, mat2.requires_grad)]


def _plan_addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None) -> list:
    return [_Product(aten.addmm, tuple(mat1.shape), tuple(mat2.shape), mat1.requires_grad, mat2.requires_grad,
                     added=_shape_or_number(input))]


def _plan_baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None) -> list:
    return [_Product(aten.baddbmm, tuple(batch1.shape), tuple(batch2.shape), batch1.requires_grad,
                     batch2.requires_grad, added=_shape_or_number(input))]


def _shape_or_number(value):
    return tuple(value.shape) if isinstance(value, Tensor) else value


def _plan_linear(input, weight, bias=None) -> list:
    return _linear_products(_Operand.of(input), _Operand.of(weight), None if bias is None else tuple(bias.shape))


def _linear_products(x: _Operand, weight: _Operand, bias_shape) -> list:
    """torch's linear: one addmm when there is a bias and the input is a matrix or flattens to one as a view."""
    if bias_shape is not None and len(weight.shape) == 2 and (
            len(x.shape) == 2 or x.is_contiguous() and (len(x.shape) == 3 or len(bias_shape) == 1)):
        rows = (math.prod(x.shape[:-1]), x.shape[-1])
        return [_Product(aten.addmm, rows, weight.shape[::-1], x.requires_grad, weight.requires_grad,
                         added=bias_shape)]
    return _matmul_products(x, weight.transposed())


def _plan_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                    enable_gqa=False) -> list:
    """torch's math path: (query @ key^T) then (weights @ value), the query and key scaled into fresh tensors.

    torch 2.13 on the CPU counts these unless it takes its fused CPU kernel (query, key and value of one
    head size, 4-d), which its counter misses and counts as 0.
    """
    q_shape, k_shape, v_shape = tuple(query.shape), tuple(key.shape), tuple(value.shape)
    if enable_gqa and len(q_shape) >= 3 and k_shape[-3] != q_shape[-3]:
        heads = q_shape[-3]
        k_shape, v_shape = (*k_shape[:-3], heads, *k_shape[-2:]), (*v_shape[:-3], heads, *v_shape[-2:])
    value = _Operand.of(value) if v_shape == tuple(value.shape) else _Operand.fresh(v_shape, value.requires_grad)
    mask_grad = isinstance(attn_mask, Tensor) and attn_mask.requires_grad
    return _math_attention_products(q_shape, query.requires_grad, k_shape, key.requires_grad, value, mask_grad)


def _math_attention_products(q_shape: tuple, query_grad: bool, k_shape: tuple, key_grad: bool, value: _Operand,
                             mask_grad: bool) -> list:
    scores = _matmul_products(_Operand.fresh(q_shape, query_grad), _Operand.fresh(k_shape, key_grad).transposed())
    weights_shape = (*_broadcast(q_shape[:-2], k_shape[:-2]), q_shape[-2], k_shape[-2])
    weights = _Operand.fresh(weights_shape, query_grad or key_grad or mask_grad)
    return scores + _matmul_products(weights, value)


def _plan_einsum(equation, *operands) -> list:
    """The batched products of torch's einsum, which contracts the operands left to right (torch takes
    opt_einsum's order only where that package is installed) and each pair with one bmm."""
    if not isinstance(equation, str):
        equation, operands = _einsum_from_sublists((equation,) + operands)
    elif len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, output = _einsum_parse(equation, tuple(t.dim() for t in operands))
    contracted = {label for term in terms for label in term} - set(output)
    pending = [({label: size for label, size in zip(term, t.shape)}, t.requires_grad)
               for term, t in zip(terms, operands)]
    spread = {label: sum(sizes.get(label, 1) != 1 for sizes, _ in pending) for label in contracted}
    products = []
    while len(pending) > 1:
        (a, a_grad), (b, b_grad) = pending.pop(0), pending.pop(0)
        summed = _einsum_summed_labels(a, b, spread)
        if summed:
            a, product = _einsum_pair_product(a, b, summed)
            products.append(_Product(aten.bmm, *product, a_grad, b_grad))
        else:  # a broadcast multiplication
            a = {label: max(a.get(label, 1), b.get(label, 1)) for label in {**a, **b}}
        pending.insert(0, (a, a_grad or b_grad))
    return products


def _einsum_summed_labels(a: dict, b: dict, spread: dict) -> list:
    """The contracted labels that ``a`` times ``b`` sums over: those in both that no later operand holds (in
    ``spread``, how many operands still hold each label). A label that only one of the two holds and no later
    operand needs is summed out of that one beforehand (dropped from its dict)."""
    summed = []
    for label in spread:
        in_a, in_b = a.get(label, 1) != 1, b.get(label, 1) != 1
        if in_a and in_b:
            spread[label] -= 1
            if spread[label] == 1:
                summed.append(label)
                spread[label] = 0
        elif spread[label] == 1 and (in_a or in_b):
            (a if in_a else b).pop(label)
            spread[label] = 0
    return summed


def _einsum_pair_product(a: dict, b: dict, summed: list) -> tuple:
    """The sizes of ``a`` times ``b`` summed over ``summed``, and the bmm that computes it: the labels both
    hold are its batch, those of one alone its rows or columns."""
    batch = rows = columns = inner = 1
    result = {}
    for label in {**a, **b}:
        size_a, size_b = a.get(label, 1), b.get(label, 1)
        if label in summed:
            inner *= size_a
        elif size_a != 1 and size_b != 1:
            batch *= size_a
            result[label] = size_a
        elif size_a != 1:
            rows *= size_a
            result[label] = size_a
        else:
            columns *= size_b
            result[label] = size_b
    return result, ((batch, rows, inner), (batch, inner, columns))


def _plan_multi_head_attention(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                               bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                               training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                               use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                               v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                               is_causal=False) -> list:
    """The products of torch's ``multi_head_attention_forward``: the input projections (linear), the attention
    and the output projection (linear).

    With weights, the attention is a bmm (a baddbmm with a mask) of the scaled queries and the keys, then a bmm
    of the weights and the values. Without, it is ``scaled_dot_product_attention``, whose fused CPU kernel
    torch's counter counts as 0; it takes its math path (two matmuls) only for dropout.
    """
    if query.dim() == 2:  # unbatched: torch unsqueezes each input, so no two are the same tensor any more
        query, key, value = (_Operand.of(x).unsqueezed(1) for x in (query, key, value))
    (length, batch, embed_dim), source = query.shape, key.shape[0]
    if use_separate_proj_weight:
        weights = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        weights = _packed_projection_weights(in_proj_weight, query, key, value)
    bias_grad = in_proj_bias is not None and in_proj_bias.requires_grad
    replaced = {"k"} if static_k is not None else set()
    replaced |= {"v"} if static_v is not None else set()
    feeds = {1: ("qkv",), 2: ("q", "kv"), 3: ("q", "k", "v")}[len(weights)]
    products, grads = [], []
    for x, weight, fed in zip((query, key, value), weights, feeds):  # the first one, two or three
        x = x if isinstance(x, _Operand) else _Operand.of(x)
        bias_shape = None if in_proj_bias is None else (weight.shape[0],)
        projection = _linear_products(x, _Operand.fresh(tuple(weight.shape), weight.requires_grad), bias_shape)
        if set(fed) <= replaced:  # static keys and values take its place: no gradient reaches it
            for product in projection:
                product.a_grad = product.b_grad = False
        products += projection
        grads.append(x.requires_grad or weight.requires_grad or bias_grad)
    q_grad, k_grad, v_grad = grads + grads[-1:] * (3 - len(grads))  # one projection may give several of q, k, v
    if bias_k is not None:
        source += 1
        k_grad, v_grad = k_grad or bias_k.requires_grad, v_grad or bias_v.requires_grad
    if static_k is not None:
        source, k_grad = static_k.shape[1], static_k.requires_grad
    if static_v is not None:
        v_grad = static_v.requires_grad
    source += bool(add_zero_attn)
    masks = [m for m in (attn_mask, key_padding_mask) if m is not None]
    mask_grad = any(m.requires_grad for m in masks)
    heads, head_dim = batch * num_heads, embed_dim // num_heads
    if need_weights:
        scores_op = aten.baddbmm if masks else aten.bmm
        products.append(_Product(scores_op, (heads, length, head_dim), (heads, head_dim, source), q_grad, k_grad,
                                 added=(heads, length, source) if masks else None))
        products.append(_Product(aten.bmm, (heads, length, source), (heads, source, head_dim),
                                 q_grad or k_grad or mask_grad, v_grad))
    elif training and dropout_p > 0:
        q_shape, kv_shape = (batch, num_heads, length, head_dim), (batch, num_heads, source, head_dim)
        products += _math_attention_products(q_shape, q_grad, kv_shape, k_grad, _Operand.fresh(kv_shape, v_grad),
                                             mask_grad)
    attended = _Operand.fresh((length * batch, embed_dim), q_grad or k_grad or v_grad or mask_grad)
    out_bias = None if out_proj_bias is None else tuple(out_proj_bias.shape)
    return products + _linear_products(attended, _Operand.of(out_proj_weight), out_bias)


def _packed_projection_weights(in_proj_weight, query, key, value) -> tuple:
    """The rows of ``in_proj_weight`` that each linear of torch's packed projection takes: one linear for
    self-attention, two when the key is the value (queries; keys and values), else three."""
    if key is value:
        return (in_proj_weight,) if query is key else _split_rows(in_proj_weight, (1, 2))
    return _split_rows(in_proj_weight, (1, 1, 1))


class _Rows:
    """Some rows of a weight: their shape and whether the weight requires grad."""

    def __init__(self, shape: tuple, requires_grad: bool):
        self.shape, self.requires_grad = shape, requires_grad


def _split_rows(weight, parts: tuple) -> tuple:
    rows = weight.shape[0] // sum(parts)
    return tuple(_Rows((rows * part, weight.shape[1]), weight.requires_grad) for part in parts)


class _Convolution:
    """torch's aten.convolution of one conv call: the shapes its formula and its backward's read."""

    def __init__(self, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, output):
        unbatched = input.dim() == weight.dim() - 1  # torch adds a batch of one
        self.x_shape = ((1,) if unbatched else ()) + tuple(input.shape)
        self.out_shape = ((1,) if unbatched else ()) + tuple(output.shape)
        self.w_shape = tuple(weight.shape)
        self.bias_shape = None if bias is None else tuple(bias.shape)
        self.options = (stride, padding, dilation, transposed, output_padding, groups)
        self.mask = [input.requires_grad, weight.requires_grad, bias is not None and bias.requires_grad]

    def forward(self) -> _Call:
        return _Call(aten.convolution, (self.x_shape, self.w_shape, self.bias_shape, *self.options), self.out_shape)

    def backward(self) -> list:
        if not any(self.mask[:2]):
            return []
        stride, padding, dilation, transposed, output_padding, groups = self.options
        grad_shapes = (self.x_shape, self.w_shape, self.bias_shape)
        args = (self.out_shape, self.x_shape, self.w_shape, self.bias_shape, stride, padding, dilation, transposed,
                output_padding, groups, self.mask)
        return [_Call(aten.convolution_backward, args, grad_shapes)]


def _plan_conv(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *, output) -> list:
    return _as_real_convolutions(input, _Convolution(input, weight, bias, stride, padding, dilation, False, 0, groups,
                                                     output))


def _plan_conv_transpose(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1, *,
                         output) -> list:
    return _as_real_convolutions(input, _Convolution(input, weight, bias, stride, padding, dilation, True,
                                                     output_padding, groups, output))


def _as_real_convolutions(input, step: _Convolution) -> list:
    """A complex convolution is three real ones of the same shapes (Gauss's trick), in torch as in ember, and torch
    counts each."""
    return [step] * (3 if input.is_complex() else 1)


def _plans() -> dict:
    """Each public function (and Tensor method) the counter sees -> how its ATen ops are planned."""
    import ember
    from ember.nn import functional as F

    plans = {}
    for plan, functions in (
        (_plan_matmul, (ember.matmul, Tensor.matmul, Tensor.__matmul__)),
        (_plan_mm, (ember.mm, Tensor.mm)),
        (_plan_bmm, (ember.bmm, Tensor.bmm)),
        (_plan_addmm, (ember.addmm, Tensor.addmm)),
        (_plan_baddbmm, (ember.baddbmm, Tensor.baddbmm)),
        (_plan_linear, (F.linear,)),
        (_plan_attention, (F.scaled_dot_product_attention,)),
        (_plan_einsum, (ember.einsum,)),
        (_plan_multi_head_attention, (F.multi_head_attention_forward,)),
    ):
        plans.update(dict.fromkeys(functions, (plan, False)))
    plans.update(dict.fromkeys((F.conv1d, F.conv2d, F.conv3d), (_plan_conv, True)))
    plans.update(dict.fromkeys((F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d),
                               (_plan_conv_transpose, True)))
    return plans


_PLANS: dict = {}


# ---- the counter

_SUFFIXES = ["", "K", "M", "B", "T"]


def get_suffix_str(number: int) -> str:
    """The unit a table of counts up to ``number`` is written in."""
    return _SUFFIXES[max(0, min(len(_SUFFIXES) - 1, (len(str(number)) - 2) // 3))]


def convert_num_with_suffix(number: int, suffix: str) -> str:
    return f"{number / 1000 ** _SUFFIXES.index(suffix):.3f}{suffix}"


def convert_to_percent_str(num: int, denom: int) -> str:
    return "0%" if denom == 0 else f"{num / denom:.2%}"


class FlopCounterMode:
    """A context manager that counts the FLOPs of the matrix products, convolutions and attention run within it.

    Counts are kept per module (``"Global"`` and each module's fully qualified name) and per ATen op;
    ``display=True`` prints the table on exit, down to ``depth`` levels of modules. ``custom_mapping`` maps
    ops (``ember.ops.mylib.foo``, or ``aten.mm`` of this module) to formulas, as ``register_flop_formula``.

    >>> import ember
    >>> linear = ember.nn.Linear(16, 8)
    >>> with FlopCounterMode(display=False) as counter:
    ...     _ = linear(ember.ones(4, 16))
    >>> counter.get_total_flops()  # 4 rows x 8 outputs x 16 inputs x 2
    1024
    >>> print(counter.get_table())
    Module             FLOP  % Total
    -------------  --------  -------
    Linear         1024.000  100.00%
     - aten.addmm  1024.000  100.00%
    """

    def __init__(self, mods=None, depth: int = 2, display: bool = True,
                 custom_mapping: dict[Any, Any] | None = None) -> None:
        self.flop_counts: dict[str, dict[Any, int]] = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        self.mode: _FlopCounterMode | None = None
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it", stacklevel=2)
        custom = {op: formula if getattr(formula, "_get_raw", False) else shape_wrapper(formula)
                  for op, formula in (custom_mapping or {}).items()}
        self.flop_registry = {**flop_registry, **custom}
        self.mod_tracker = ModuleTracker()

    def get_total_flops(self) -> int:
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict[str, dict[Any, int]]:
        """The counts: module name -> {op: FLOPs}."""
        return {name: dict(counts) for name, counts in self.flop_counts.items()}

    def get_table(self, depth: int | None = None) -> str:
        """The counts as a text table: each module down to ``depth`` levels, with its ops under it."""
        rows = self._table_rows(self.depth if depth is None else depth)
        return _format_table(["Module", "FLOP", "% Total"], rows)

    def _table_rows(self, depth: int | None) -> list:
        depth = 999999 if depth is None else depth
        total = self.get_total_flops()
        suffix = get_suffix_str(total)
        rows, global_subsumed = [], False
        for name in sorted(self.flop_counts):
            level = name.count(".") + 1
            if name == "Global" or level > depth:
                continue
            global_subsumed |= sum(self.flop_counts[name].values()) >= total
            rows += self._module_rows(name, level - 1, suffix, total)
        if "Global" in self.flop_counts and not global_subsumed:  # Global shown on top, the modules under it
            rows = self._module_rows("Global", 0, suffix, total) + [[" " + row[0], *row[1:]] for row in rows]
        return rows or [["Global", "0", "0%"]]

    def _module_rows(self, name: str, level: int, suffix: str, total: int) -> list:
        counts = self.flop_counts[name]
        padding = " " * level
        module_total = sum(counts.values())
        rows = [[padding + name, convert_num_with_suffix(module_total, suffix),
                 convert_to_percent_str(module_total, total)]]
        rows += [[f"{padding} - {op}", convert_num_with_suffix(count, suffix), convert_to_percent_str(count, total)]
                 for op, count in counts.items()]
        return rows

    def __enter__(self) -> "FlopCounterMode":
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        self.mode = _FlopCounterMode(self)
        self.mode.__enter__()
        return self

    def __exit__(self, *args) -> bool:
        if self.mode is None:
            raise RuntimeError("FlopCounterMode.__exit__: the counter was not entered")
        self.mode.__exit__(*args)
        self.mode = None
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))
        return False

    def _count_flops(self, op, out, args, kwargs) -> None:
        formula = self.flop_registry.get(op)
        if formula is not None:
            flops = formula(*args, **kwargs, out_val=out)
            for parent in set(self.mod_tracker.parents):
                self.flop_counts[parent][op] += flops

    def _count_calls(self, calls: list) -> None:
        for call in calls:  # (a formula wrapped to take shapes takes the shapes planned as they are)
            self._count_flops(call.op, call.out_shape, call.args, {})


def _format_table(header: list, rows: list) -> str:
    """Plain columns, the first left-aligned and the others right-aligned, under a rule."""
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]

    def line(cells) -> str:
        return "  ".join(str(cell).ljust(width) if i == 0 else str(cell).rjust(width)
                         for i, (cell, width) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(header), "  ".join("-" * width for width in widths), *map(line, rows)])


class _FlopCounterMode(TorchFunctionMode):
    """Sees each public call; counts the forward ops now and the backward ones when its gradient node runs."""

    def __init__(self, counter: FlopCounterMode):
        self.counter = counter
        if not _PLANS:
            _PLANS.update(_plans())

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        planned = _PLANS.get(func)
        if planned is not None:
            self._count_planned(planned, out, args, kwargs)
        else:
            self._count_custom_op(func, out, args, kwargs)
        return out

    def _count_planned(self, planned: tuple, out, args: tuple, kwargs: dict) -> None:
        plan, takes_output = planned
        steps = plan(*args, **kwargs, output=out) if takes_output else plan(*args, **kwargs)
        self.counter._count_calls([step.forward() for step in steps])
        backward = [call for step in steps for call in step.backward()]
        if isinstance(out, tuple):  # multi_head_attention_forward: (output, weights)
            out = out[0]
        if backward and isinstance(out, Tensor) and out.grad_fn is not None:
            out.grad_fn.register_prehook(self._backward_counter(backward))

    def _backward_counter(self, calls: list) -> Callable:
        counter = self.counter

        def count_backward(grad_outputs) -> None:
            if counter.mode is self:  # only while the counter that saw the forward is still counting
                counter._count_calls(calls)

        return count_backward

    def _count_custom_op(self, func, out, args: tuple, kwargs: dict) -> None:
        op = getattr(func, "overloadpacket", func)
        if op in self.counter.flop_registry:
            self.counter._count_flops(op, out, args, kwargs)
