"""The Tensor: a NumPy array plus autograd metadata.

A tensor owns ``_data`` (an ``ndarray``) and, for autograd, ``requires_grad``,
``grad``, ``grad_fn`` and a version counter that views share with their base.
Operations are attached in ``_tensor_methods.py``; each is an
``ember.autograd.Function`` defined in ``ember/_ops``.

>>> import ember
>>> t = ember.tensor([[1., 2.], [3., 4.]])
>>> t.shape, t.dtype
(ember.Size([2, 2]), ember.float32)
>>> v = t[0]
>>> v[1] = 5.
>>> t
tensor([[1., 5.],
        [3., 4.]])
"""
from __future__ import annotations

import copy
import numbers
import warnings
from typing import Callable

import numpy as np

from ember import _dtype
from ember._size import Size
from ember.autograd.grad_mode import state as _grad
from ember import _layout
from ember.utils.hooks import RemovableHandle

_new = object.__new__


def _fresh(cls: type) -> "Tensor":
    """A new ``cls`` instance in the state of a fresh tensor, its data not yet set.

    The six attributes every op reads (does an input require grad, is it a view) or writes (a view's base,
    version counter and replay; a recorded output's grad_fn) are set on each tensor rather than defaulted on
    the class: CPython 3.11 specialises neither the reads nor the writes of an instance attribute whose name
    the class also defines, and a write to one costs about five times as much. ``wrap`` and ``view_of`` (in
    ``ember._ops._support``) spell the same stores out.
    """
    t = _new(cls)
    t._requires_grad = False
    t._grad_fn = None
    t._output_nr = 0
    t._vc = None  # version counter: a one-element list shared by a base and its views
    t._base = None  # the tensor this one is a view of
    t._view_replay = ()  # steps (function, args) that recreate this view from _base
    return t


OF_MULTIPLE_OUTPUTS = "one of several outputs"
IN_CUSTOM_FUNCTION = "made in a custom Function"


def view_requires_grad(view: "Tensor") -> bool:
    """A view's requires_grad, brought up to date: its base may have gained a history in place since it was made
    (``v = x[0]; x[1] = w``, ``w`` requiring grad), which ``v`` learns of only when asked.

    As in torch, a view without a grad_fn (one made under no_grad, or before its base was made to require grad)
    requires grad when its base does: the ops that use it record a graph, whose edge to it is empty (see
    ``ember.autograd.function._edge``). A view made under no_grad is not brought up to date: once its base
    changed in place, only using it in a graph raises (``_sync_view``).
    """
    if view._vc[0] != view._view_version and view._view_origin is None and not (
            view._no_grad_view and view._grad_fn is None):  # (the others raise only where they are used in a graph)
        view._sync_view()
    return view._requires_grad or view._grad_fn is None and view._base._requires_grad


def version_counter(t: "Tensor") -> list:
    """The tensor's version counter, shared with its views; created on first need."""
    counter = t._vc
    if counter is None:
        base = t._base
        if base is not None:
            counter = version_counter(base)
        else:
            counter = _InferenceVersion([0]) if t._inference else [0]
        t._vc = counter
    return counter


_INFERENCE_UPDATE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal "
    "tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details."
)


def refuse_inference_update(t: "Tensor") -> None:
    """torch's refusal to change a tensor made under inference_mode in place once out of it (or clone it first)."""
    if t._inference and not _grad.inference:
        raise RuntimeError(_INFERENCE_UPDATE)


def _check_make_subclass_arguments(cls, data, require_grad) -> None:
    """torch's argument checks of ``Tensor._make_subclass``."""
    if not isinstance(cls, type):
        raise TypeError(f"cls must be a type (got {type(cls).__name__})")
    if not issubclass(cls, Tensor):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        f"Make sure your class inherits from Tensor (got {cls.__name__}).")
    if not isinstance(data, Tensor):
        raise TypeError(f"_make_subclass(): argument 'data' (position 2) must be Tensor, not {type(data).__name__}")
    if type(require_grad) is not bool:
        raise TypeError("_make_subclass(): argument 'require_grad' (position 3) must be bool, not "
                        f"{type(require_grad).__name__}")


NO_GRAD_VIEW_REBASED = (
    "A view was created in no_grad mode and its base or another view of its base has been modified inplace with "
    "grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden: the view has no "
    "history to follow the change. Make the view and the in-place change both inside the no_grad block, or both "
    "outside it, or clone() the view."
)


class _InferenceVersion(list):
    """The version counter of tensors made under inference_mode. torch tracks none for them and refuses their
    in-place change outside inference_mode: every in-place change counts a version, so here it is refused too
    (the in-place ops also check before they write, with refuse_inference_update)."""

    def __setitem__(self, index, value) -> None:
        if not _grad.inference:
            raise RuntimeError(_INFERENCE_UPDATE)
        list.__setitem__(self, index, value)


def _real_number(value, type_name: str):
    """``value`` (a tensor's one element) as a real number for float(t) or int(t): a complex one only if it has
    no imaginary part, as in torch."""
    if type(value) is not complex:
        return value
    if value.imag:
        raise RuntimeError(f"value cannot be converted to type {type_name} without overflow: {value!r} is complex; "
                           "use complex(t), or t.real")
    if type_name == "int64_t" and not np.isfinite(value.real):
        # as torch: a complex element's conversion is checked, so its nan or inf is no ValueError or OverflowError
        raise RuntimeError(f"value cannot be converted to type {type_name} without overflow: {value!r}")
    return value.real


SAME_DTYPE = object()  # a tensor's grad_dtype when none was set: its own dtype


class Tensor:
    """A multi-dimensional array that can record the operations applied to it.

    ``ember.Tensor(2, 3)`` makes an uninitialised 2x3 tensor and
    ``ember.Tensor([1, 2])`` a float tensor from data (the legacy constructors);
    prefer ``ember.tensor``, ``ember.empty`` and friends.
    """

    __module__ = "ember"  # type(t) prints as <class 'ember.Tensor'>, where users find it

    # The state of a fresh tensor. Instances set only what differs from it, which keeps creating a tensor (the
    # most frequent thing ember does) cheap; except for the six attributes of _FRESH, which every op reads or
    # writes and every tensor therefore holds itself (see _fresh).
    _grad = None
    _view_version = 0  # the shared version when this view's grad_fn was made (see _sync_view)
    # Why changing this view in place (or using it once its base changed) is refused, inherited by views of it:
    # OF_MULTIPLE_OUTPUTS (one of several an op returned: unbind's) or IN_CUSTOM_FUNCTION. See _check_recordable.
    _view_origin = None
    _no_grad_view = False  # a view made with grad mode off (set by view_of): see view_requires_grad
    _inference = False  # made under inference_mode (or a view or detach of such a tensor): see is_inference
    _hooks = None
    _post_hooks = None
    _accumulator = None  # a leaf's AccumulateGrad node, once next_functions has shown it
    _grad_dtype = SAME_DTYPE  # what grad_dtype says: the tensor's dtype, None (any) or a set dtype
    _retains_grad = False
    _retain_handle = None  # where retain_grad's hook sits: it follows the tensor through in-place changes
    _is_node = False
    _fw = None  # (dual level, tangent) of a dual tensor: see ember.autograd.forward_ad
    __array_priority__ = 1000  # NumPy defers to ember's operators

    def __new__(cls, *args, device=None, **kwargs):
        data = _legacy_constructor_data(args, kwargs)
        t = _fresh(cls)
        t._data = data
        if _grad.inference:  # as every tensor made under inference_mode
            t._inference = True
        return t

    @staticmethod
    def _wrap(array: np.ndarray) -> "Tensor":
        """A plain tensor around ``array`` (which must already be an ndarray of a supported dtype)."""
        t = _fresh(Tensor)
        t._data = array
        return t

    @staticmethod
    def _make_subclass(cls: type, data: "Tensor", require_grad: bool = False) -> "Tensor":
        """A ``cls`` instance sharing ``data``'s memory, as a fresh leaf (how ``Parameter`` is made)."""
        _check_make_subclass_arguments(cls, data, require_grad)
        t = _fresh(cls)
        t._data = data._data
        t._vc = version_counter(data)
        if require_grad:
            t._set_requires_grad(True)  # (as torch's: a mode sees _make_subclass make a Parameter, not this flag)
        return t

    def as_subclass(self, cls: type) -> "Tensor":
        """The same memory seen as an instance of ``cls``: an alias (a view) of this tensor, as torch's.

        Gradients flow through the alias to this tensor; the instance's own attributes are not carried over.
        """
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(
                f"as_subclass: cls must be a subclass of ember.Tensor, got {cls!r}; "
                "define it as `class MyTensor(ember.Tensor): ...`"
            )
        # as torch: an alias, a view of the same memory (recorded as AliasBackward0 when it requires grad; under
        # no_grad it keeps the tensor's place in the graph, so a view of a leaf that requires grad still does)
        source = self._alias_attached() if _grad.enabled else self._alias()
        t = _fresh(cls)
        t.__dict__.update(source.__dict__)
        return t

    # ------------------------------------------------------------------ metadata

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    @property
    def dtype(self) -> _dtype.dtype:
        return _dtype.from_numpy_dtype(self._data.dtype)

    @property
    def device(self) -> "device":
        return _CPU

    @property
    def ndim(self) -> int:
        return self._data.ndim

    is_cuda = False
    is_cpu = True
    is_sparse = False
    is_quantized = False
    is_meta = False
    # the other devices and layouts torch can tell apart: an ember tensor is on none of them
    is_xpu = is_mps = is_mtia = is_maia = is_ipu = is_xla = is_vulkan = is_mkldnn = is_nested = False
    name = None  # (torch's named tensors: ember's have no names)

    @property
    def output_nr(self) -> int:
        """Which output of its ``grad_fn`` this tensor is (0 for a leaf)."""
        return self._output_nr

    @property
    def volatile(self) -> bool:
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        return False
    layout = _layout.strided

    def size(self, dim: int | None = None) -> "Size | int":
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim, "size")]

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        """The bytes the elements take (``numel() * itemsize``), as if the tensor were contiguous."""
        return self._data.size * self._data.itemsize

    def stride(self, dim: int | None = None) -> "tuple[int, ...] | int":
        strides = torch_strides(self._data)
        return strides if dim is None else strides[_wrap_dim(dim, self._data.ndim, "stride")]

    def is_contiguous(self, memory_format=None) -> bool:
        if memory_format is None:
            return self._data.flags.c_contiguous
        from ember._dim_order import is_contiguous_in  # (a channels-last format asks about other strides)

        return is_contiguous_in(self, memory_format)

    def data_ptr(self) -> int:
        return self._data.__array_interface__["data"][0]

    def storage_offset(self) -> int:
        """How many elements into its memory block this tensor starts (0 unless it is a view into it).

        The block is the NumPy array that owns the memory; for ``from_numpy`` of a sliced array
        that is the array sliced, where torch counts from the slice.

        >>> ember.arange(6.).view(2, 3)[1, 1:].storage_offset()
        4
        """
        data = owner = self._data
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        if owner is data:
            return 0
        return (data.__array_interface__["data"][0] - owner.__array_interface__["data"][0]) // data.itemsize

    def is_floating_point(self) -> bool:
        dtype = self._data.dtype
        return dtype.kind == "f" or dtype is _dtype.BF16

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def get_device(self) -> int:
        return -1

    def cpu(self) -> "Tensor":
        return self

    def cuda(self, *args, **kwargs):
        raise RuntimeError(f"ember runs on the CPU only: there is no CUDA device. {PORTABLE_IDIOM}")

    @property
    def _version(self) -> int:
        if self._inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc[0] if self._vc is not None else (self._base._version if self._base is not None else 0)

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (``_base``), as torch's private method tells.

        >>> x = ember.ones(3)
        >>> x[1:]._is_view(), x._is_view(), x.detach()._is_view(), x[[0]]._is_view()
        (True, False, False, False)
        """
        return self._base is not None

    # ------------------------------------------------------------------ autograd metadata

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad or self._base is not None and view_requires_grad(self)

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._set_requires_grad(value)

    def _set_requires_grad(self, value: bool) -> None:
        """The ``requires_grad`` setter without the protocol (which sees ``Tensor.requires_grad.__set__``)."""
        if self._grad_fn is not None:
            hint = (" If you want to use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().") if not value else ""
            raise RuntimeError("you can only change requires_grad flags of leaf variables." + hint)
        if value and _dtype.kind(self._data.dtype) not in "fc":
            raise RuntimeError(
                f"only Tensors of floating point and complex dtype can require gradients (got {self.dtype}); "
                "convert it first, e.g. t.float().requires_grad_()"
            )
        if value and self._inference and not _grad.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed; "
                               "use a clone of it (t.clone()), which is a normal tensor")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if type(requires_grad) is not bool:
            raise TypeError(
                "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                f"{type(requires_grad).__name__}; pass True or False"
            )
        if requires_grad and self._grad_fn is not None:
            return self  # as torch: asking a computed tensor for what it already has is fine
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        if self._base is not None and self._vc[0] != self._view_version:
            self._sync_view()
        return self._grad_fn

    def _sync_view(self) -> None:
        """Give a view whose base changed in place since its grad_fn was made a fresh one, from the base.

        Without this, ``v = a[0]; a.mul_(2)`` would leave ``v`` attached to ``a``'s old graph.
        """
        base = self._base
        if self._no_grad_view and self._grad_fn is None and base._requires_grad:
            raise RuntimeError(NO_GRAD_VIEW_REBASED)
        if self._view_origin is not None and self._grad_fn is not None:
            # as torch: replaying one of several views (unbind's) would detach it from the node they share, and
            # replaying a view made in a custom Function would bypass that Function's backward
            raise RuntimeError(self._rebased_view_message())
        if base._requires_grad:
            from ember._ops.views import check_replayable, replay

            check_replayable(self)
            prev = _grad.enabled
            _grad.enabled = True  # as torch, also under no_grad (or in backward): the view must not keep a stale graph
            try:
                fresh = replay(base, self._view_replay)
            finally:
                _grad.enabled = prev
            self._grad_fn = fresh._grad_fn
            self._output_nr = fresh._output_nr
            self._requires_grad = fresh._requires_grad
        self._view_version = self._vc[0]

    def _rebased_view_message(self) -> str:
        output = f"Output {self._output_nr} of {self._grad_fn._forward_cls.__name__}"
        if self._view_origin is OF_MULTIPLE_OUTPUTS:
            return (f"{output} is a view and its base or another view of its base has been modified inplace. This "
                    "view is the output of a function that returns multiple views, and such views cannot be used "
                    "once their base changed in place. Use an out-of-place operation instead, or clone() the views "
                    "before the change.")
        return (f"{output} is a view and its base or another view of its base has been modified inplace. This view "
                "was created inside a custom Function (or because an input was returned as-is): following the "
                "change would replay the view and bypass that Function's backward, so the gradients would be wrong. "
                "clone() the Function's output before changing its base in place.")

    @property
    def is_leaf(self) -> bool:
        return self._grad_fn is None

    @property
    def grad(self) -> "Tensor | None":
        # as torch: a non-leaf's .grad that was assigned reads back without a warning
        if self._grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
                "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
                "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor.",
                UserWarning,
                stacklevel=3,
            )
        return self._grad

    @grad.setter
    def grad(self, value: "Tensor | None") -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a tensor of size "
                    f"'{list(self._data.shape)}'. Please ensure that the gradient and the tensor are the same size"
                )
            wanted = self._grad_dtype
            if wanted is SAME_DTYPE and value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value.dtype}' to a tensor with dtype "
                    f"'{self.dtype}'. The gradient must match the tensor's dtype; convert it, e.g. g.to(t.dtype)"
                )
            if wanted is not SAME_DTYPE and wanted is not None and value.dtype != wanted:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value.dtype}' to a tensor with grad_dtype "
                    f"'{wanted}'. The gradient must match the tensor's grad_dtype; convert it, e.g. g.to({wanted}), "
                    "or set grad_dtype to None to allow any dtype"
                )
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None  # as torch: ``del t.grad`` drops the gradient, as assigning None does

    @property
    def grad_dtype(self) -> "_dtype.dtype | None":
        """The dtype ``.grad`` takes (gradients accumulate in it): the tensor's own unless set; None allows any.

        >>> w = ember.zeros(2, requires_grad=True)
        >>> w.grad_dtype = ember.float64
        >>> (w * 2).sum().backward(); w.grad.dtype
        ember.float64
        """
        return self.dtype if self._grad_dtype is SAME_DTYPE else self._grad_dtype

    @grad_dtype.setter
    def grad_dtype(self, value: "_dtype.dtype | None") -> None:
        if self._grad_fn is not None:
            raise RuntimeError("grad_dtype can only be set on leaf tensors.")
        if value is not None and not isinstance(value, _dtype.dtype):
            raise TypeError(f"grad_dtype must be a dtype or None, got {type(value).__name__}")
        self._grad_dtype = value

    @property
    def data(self) -> "Tensor":
        """The same memory with no autograd history, and its own version counter (changes are not tracked)."""
        t = _fresh(Tensor)
        t._data = self._data
        return t

    @data.setter
    def data(self, value: "Tensor") -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Tensor.data must be set to a Tensor, not {type(value).__name__}")
        if self._requires_grad and _dtype.kind(value._data.dtype) not in "fc":
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point or complex dtype (got "
                f"{value.dtype}); convert the new data first, e.g. value.float(), or set requires_grad=False"
            )
        self._data = value._data

    @data.deleter
    def data(self) -> None:
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward."""
        if self._grad_fn is None:
            if not self.requires_grad:  # (a view made under no_grad requires grad as its base does)
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._retains_grad:
            return
        self._retains_grad = True
        self._retain_handle = self._grad_fn._add_tensor_hook(self._output_nr, _RetainGrad(self))

    def _move_retain_grad(self) -> None:
        """After an in-place change gave this tensor a new grad_fn: retain the gradient of the new version (as torch)."""
        if self._retains_grad and self._grad_fn is not None:
            self._retain_handle.remove()
            self._retain_handle = self._grad_fn._add_tensor_hook(self._output_nr, _RetainGrad(self))

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def register_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(grad)`` runs when this tensor's gradient is computed; it may return a replacement."""
        if not self.requires_grad:  # (a view made under no_grad requires grad as its base does)
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            return self._grad_fn._add_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = {}
        return RemovableHandle.add(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(tensor)`` runs on a leaf after its ``.grad`` has been accumulated."""
        if not self.requires_grad:  # (a view made under no_grad requires grad as its base does)
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_hooks is None:
            self._post_hooks = {}
        return RemovableHandle.add(self._post_hooks, hook)

    def detach(self) -> "Tensor":
        """A tensor sharing memory and version counter, cut from the graph."""
        t = _fresh(Tensor)
        t._data = self._data
        t._vc = version_counter(self)
        if self._inference:
            t._inference = True
        return t

    def detach_(self) -> "Tensor":
        if self._base is not None:  # as torch, any view: it shares its base's place in the graph
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._requires_grad = False
        return self

    def _alias(self) -> "Tensor":
        """A new tensor object with the same memory, version counter and place in the graph."""
        t = _new(Tensor)
        t._data = self._data
        t._vc = version_counter(self)
        t._base = self._base if self._base is not None else self
        t._view_replay = self._view_replay
        t._view_version = t._vc[0]
        t._grad_fn = self._grad_fn
        t._output_nr = self._output_nr
        t._requires_grad = self._requires_grad
        return t

    def _alias_attached(self) -> "Tensor":
        from ember._ops.views import alias

        return alias(self)

    def _bump(self) -> None:
        counter = version_counter(self)
        counter[0] += 1

    # ------------------------------------------------------------------ conversion

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The underlying array (shared memory). Refuses for tensors that require grad unless ``force``."""
        if self._requires_grad and not force and _grad.enabled:  # as torch: allowed under no_grad
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._data.dtype is _dtype.BF16:  # as torch: NumPy has no bfloat16 of its own
            raise TypeError("Got unsupported ScalarType BFloat16; convert first, e.g. t.float().numpy()")
        return self._data

    def __array__(self, dtype=None, copy=None):
        """NumPy's view of the tensor: the memory itself unless a copy or another dtype is asked for.

        ``np.asarray(t)`` shares memory, ``np.array(t)`` copies (NumPy passes ``copy=True``).
        """
        if self._requires_grad and _grad.enabled:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        data = self._data
        if dtype is not None and np.dtype(dtype) != data.dtype:
            if copy is False:
                raise ValueError(
                    f"__array__: converting a tensor of {self.dtype} to NumPy {np.dtype(dtype)} needs a copy, "
                    "but copy=False was asked for; use np.asarray(t, dtype=...) to allow it"
                )
            return data.astype(dtype)
        return data.copy() if copy else data

    def __array_wrap__(self, array: np.ndarray, context=None, return_scalar: bool = False) -> "Tensor":
        """What a NumPy function computed from this tensor comes back as: a tensor (as in torch).

        ``np.exp(t)`` or ``t * np.ones(2)`` give tensors with no autograd history;
        bool results come back as uint8, as torch's do.
        """
        from ember._creation import from_numpy

        array = np.asarray(array)
        return from_numpy(array.astype(np.uint8) if array.dtype == np.bool_ else array)

    def tolist(self):
        return self._data.tolist()

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar; "
                "use .tolist() for several elements, or index one first (t[0].item())"
            )
        return self._data.reshape(()).item()

    def _scalar(self, warn: bool):
        """The one element as a Python number, for float(t), int(t) and complex(t)."""
        data = self._data
        if data.size != 1:
            raise ValueError(
                f"only one element tensors can be converted to Python scalars (this one has {data.size}); "
                "use .tolist(), or index one element first (t[0])"
            )
        if warn and self._requires_grad:
            _warn_once(
                "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                "Consider using tensor.detach() first.",
                stacklevel=4,
            )
        return data.reshape(()).item()

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        # Not dispatched itself, as in torch: handlers see dim and unbind, so a subclass's rows keep its type.
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # as torch: the rows share one UnbindBackward0 node

    def __reversed__(self) -> "Tensor":
        """``reversed(t)``: ``t`` flipped along its first dimension, a tensor (as in torch), not an iterator.

        >>> reversed(ember.tensor([1, 2, 3]))
        tensor([3, 2, 1])
        """
        if self.dim() == 0:
            return self
        return self.flip(0)

    def __bool__(self) -> bool:
        size = self._data.size
        if size != 1:
            amount = "no values" if size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {amount} is ambiguous ({size} values); use .any() or .all()")
        return bool(self._data.reshape(()))

    def __contains__(self, element) -> bool:
        """``x in t``: whether any element of ``t`` equals ``x`` (a number, or a tensor compared broadcast)."""
        if not isinstance(element, (Tensor, numbers.Number)):
            raise RuntimeError(
                f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}."
            )
        return bool((self == element).any())

    def __float__(self) -> float:
        return float(_real_number(self._scalar(True), "double"))

    def __int__(self) -> int:
        return int(_real_number(self._scalar(False), "int64_t"))

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.reshape(()))

    def __complex__(self) -> complex:
        return complex(self._scalar(True))

    # by identity, as torch's: object's own hash, which dicts and sets (optimizer state, a module's
    # parameter memo) reach without calling Python
    __hash__ = object.__hash__

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0 and type(self) is Tensor:  # as torch: a plain 0-d tensor formats as its number
            return self.item().__format__(spec)
        return object.__format__(self, spec) if spec else repr(self)

    def __repr__(self, *, tensor_contents=None) -> str:
        from ember._tensor_str import format_tensor

        trailing = []
        if self._grad_fn is not None:
            trailing.append(f"grad_fn=<{self._grad_fn.name()}>")
        elif self._requires_grad or self._base is not None and view_requires_grad(self):
            trailing.append("requires_grad=True")
        if self._fw is not None:
            trailing.extend(_tangent_note(self))
        text = format_tensor(
            self._data,
            dtype_name=repr(self.dtype),
            default_dtype_name=repr(_dtype.defaults.floating),
            trailing=trailing,
            prefix=_repr_prefix(type(self)),
            contents=tensor_contents,
        )
        return _marked_if_parameter(self, text)

    def __reduce_ex__(self, protocol):
        if self._hooks:  # (hooks are not saved, as in torch)
            from ember.utils.hooks import warn_if_has_hooks  # utils imports the tensor: bound here

            warn_if_has_hooks(self)
        own = {k: v for k, v in self.__dict__.items() if k not in _AUTOGRAD_STATE}  # a subclass's attributes
        return (_rebuild_tensor, (self._data, self.requires_grad, type(self), own))

    def __deepcopy__(self, memo):
        """A new leaf with copied memory; tensors copied together that shared memory share the copy (views stay views)."""
        if self._grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the "
                "moment. If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage."
            )
        t = _fresh(type(self))
        memo[id(self)] = t
        for key, value in self.__dict__.items():
            if key not in _AUTOGRAD_STATE:  # a subclass's own attributes, copied deeply as any object's
                t.__dict__[key] = copy.deepcopy(value, memo)
            elif key not in ("_data", "_grad", "_vc", "_base", "_view_replay", "_view_version", "_hooks",
                             "_post_hooks", "_retain_handle", "_accumulator", "_view_origin", "_no_grad_view"):
                t.__dict__[key] = value
        if self._base is not None and not self._requires_grad and self.requires_grad:
            t._requires_grad = True  # a view made under no_grad: as torch, the copy requires grad as the view does
        t._data = _deepcopy_array(self._data, memo)
        if self._grad is not None:
            t._grad = copy.deepcopy(self._grad, memo)
        return t

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """The default protocol handler: run ``func`` and return tensors as ``cls``."""
        from ember.overrides import DisableTorchFunctionSubclass

        if kwargs is None:
            kwargs = {}
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with DisableTorchFunctionSubclass():
            result = func(*args, **kwargs)
        if func in _NO_WRAP:
            return result
        return _convert(result, cls)


_NO_WRAP: set = set()  # functions whose results stay as they are (filled below: the Tensor.grad getter ...)


def _convert(value, cls: type):
    """Return tensors (also inside tuples, named tuples and lists) as ``cls``, as the default handler promises."""
    if isinstance(value, Tensor):
        return value if isinstance(value, cls) else value.as_subclass(cls)
    if isinstance(value, (tuple, list)) and value:
        items = [_convert(v, cls) for v in value]
        if all(new is old for new, old in zip(items, value)):
            return value  # no tensor inside (a Size, say): keep the very object
        if isinstance(value, list):
            return items
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


def _dispatch_class_members() -> None:
    """The members defined in the class body dispatch too, like the ops bound in _tensor_methods.py.

    A handler sees e.g. ``Tensor.size`` or ``Tensor.shape.__get__`` as ``func``, as in torch,
    where every method and property dispatches. ``as_subclass`` and ``__hash__`` do not.
    """
    from ember.overrides import not_overridable, tensor_method as method, tensor_property as prop

    Tensor.shape = prop(Tensor.shape, "shape")
    Tensor.dtype = prop(Tensor.dtype, "dtype")
    Tensor.device = prop(Tensor.device, "device")
    Tensor.ndim = prop(Tensor.ndim, "ndim")
    Tensor.itemsize = prop(Tensor.itemsize, "itemsize")
    Tensor.nbytes = prop(Tensor.nbytes, "nbytes")
    Tensor.requires_grad = prop(Tensor.requires_grad, "requires_grad")
    Tensor.grad = prop(Tensor.grad, "grad")
    Tensor.grad_dtype = prop(Tensor.grad_dtype, "grad_dtype")
    Tensor.grad_fn = prop(Tensor.grad_fn, "grad_fn")
    Tensor.is_leaf = prop(Tensor.is_leaf, "is_leaf")
    Tensor.data = prop(Tensor.data, "data")
    Tensor.retains_grad = prop(Tensor.retains_grad, "retains_grad")
    Tensor.output_nr = prop(Tensor.output_nr, "output_nr")
    Tensor.volatile = prop(Tensor.volatile, "volatile")
    Tensor.size = method(Tensor.size)
    Tensor.dim = method(Tensor.dim)
    Tensor.ndimension = method(Tensor.dim, "ndimension")
    Tensor.numel = method(Tensor.numel)
    Tensor.nelement = method(Tensor.nelement, "nelement")
    Tensor.element_size = method(Tensor.element_size)
    Tensor.stride = method(Tensor.stride)
    Tensor.is_contiguous = method(Tensor.is_contiguous)
    Tensor.data_ptr = method(Tensor.data_ptr)
    Tensor.storage_offset = method(Tensor.storage_offset)
    Tensor.is_floating_point = method(Tensor.is_floating_point)
    Tensor.is_complex = method(Tensor.is_complex)
    Tensor.get_device = method(Tensor.get_device)
    Tensor.cpu = method(Tensor.cpu)
    Tensor.cuda = method(Tensor.cuda)
    Tensor.requires_grad_ = method(Tensor.requires_grad_)
    Tensor.retain_grad = method(Tensor.retain_grad)
    Tensor.register_hook = method(Tensor.register_hook)
    Tensor.register_post_accumulate_grad_hook = method(Tensor.register_post_accumulate_grad_hook)
    Tensor.detach = method(Tensor.detach)
    Tensor.detach_ = method(Tensor.detach_)
    Tensor.numpy = method(Tensor.numpy)
    Tensor.__array__ = method(Tensor.__array__)
    Tensor.__array_wrap__ = method(Tensor.__array_wrap__)
    Tensor.tolist = method(Tensor.tolist)
    Tensor.item = method(Tensor.item)
    Tensor.__len__ = method(Tensor.__len__)
    Tensor.__reversed__ = method(Tensor.__reversed__)
    Tensor.__bool__ = method(Tensor.__bool__)
    Tensor.__contains__ = method(Tensor.__contains__)
    Tensor.__float__ = method(Tensor.__float__)
    Tensor.__int__ = method(Tensor.__int__)
    Tensor.__index__ = method(Tensor.__index__)
    Tensor.__complex__ = method(Tensor.__complex__)
    Tensor.__format__ = method(Tensor.__format__)
    Tensor.__repr__ = method(Tensor.__repr__)
    not_overridable(Tensor.as_subclass)
    not_overridable(Tensor.__iter__)
    # .grad is stored plain: a subclass's gradient is a plain tensor, as in torch; tolist() holds no tensors.
    _NO_WRAP.update({Tensor.grad.__get__, Tensor.tolist})


_dispatch_class_members()


class _RetainGrad:
    """The hook behind ``retain_grad``: store the gradient on the tensor (without keeping it alive)."""

    def __init__(self, tensor: Tensor):
        import weakref

        self.ref = weakref.ref(tensor)

    def __call__(self, grad: Tensor) -> None:
        tensor = self.ref()
        if tensor is None:
            return
        if tensor._grad is None:
            tensor._grad = grad if _grad.enabled else grad.detach().clone()
        else:
            tensor._grad = tensor._grad + grad


PORTABLE_IDIOM = (
    "Write device-portable code: device = 'cuda' if ember.cuda.is_available() else 'cpu', then x.to(device) "
    "and model.to(device)"
)


class device:
    """A device: ember has only ``cpu``, with or without an index (``cpu:0``), as torch writes them.

    >>> device("cpu:1"), str(device("cpu", 1)), device("cpu", 0) == device("cpu")
    (device(type='cpu', index=1), 'cpu:1', False)
    """

    __module__ = "ember"  # where users reach it (the class prints as ember.device)
    __slots__ = ("_index",)

    def __init__(self, type: "str | device", index: int | None = None):
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): argument 'type' (position 1) must be str, not ember.device")
            self._index = type.index
            return
        if isinstance(type, bytes):
            type = type.decode()
        if not isinstance(type, str):
            if isinstance(type, int):
                raise RuntimeError(f"ember runs on the CPU only; device {type!r} is not available. {PORTABLE_IDIOM}")
            raise TypeError(f"device(): argument 'type' (position 1) must be str, not {_typename(type)}")
        name, colon, written_index = type.partition(":")
        if name != "cpu" and name.isidentifier():
            raise RuntimeError(f"ember runs on the CPU only; device {type!r} is not available. {PORTABLE_IDIOM}")
        # as torch: a bare type, or the type, a colon and a non-negative index without leading zeros
        if name != "cpu" or (colon and not (written_index.isdecimal() and str(int(written_index)) == written_index)):
            raise RuntimeError(f"Invalid device string: {type!r}")
        if colon and index is not None:
            raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {type}")
        self._index = int(written_index) if colon else _device_index(index)

    @property
    def type(self) -> str:
        return "cpu"

    @property
    def index(self) -> int | None:
        return self._index

    def __repr__(self) -> str:
        return "device(type='cpu')" if self._index is None else f"device(type='cpu', index={self._index})"

    def __str__(self) -> str:
        return "cpu" if self._index is None else f"cpu:{self._index}"

    def __eq__(self, other) -> bool:
        # the same type and index; ember also lets it equal the string that names it ("cpu", "cpu:0")
        if isinstance(other, device):
            return self._index == other._index
        return str(self) == other if isinstance(other, str) else NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))  # (equal to its string, so hashed as it)

    def __reduce__(self):
        return (device, ("cpu", self._index))

    def __enter__(self) -> "device":  # ``with ember.device("cpu"):`` makes it the default: it always is
        return self

    def __exit__(self, *exc_info) -> None:
        return None


def _typename(obj) -> str:
    kind = type(obj)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _device_index(index) -> int | None:
    """A device's index as given (an int, or anything with ``__index__`` but a bool): None or non-negative."""
    if index is None:
        return None
    if isinstance(index, bool) or not hasattr(index, "__index__"):
        raise TypeError(f"device(): argument 'index' (position 2) must be int, not {_typename(index)}")
    if index.__index__() < 0:
        raise RuntimeError("Device index must not be negative")
    return index.__index__()


_CPU = device("cpu")


def get_default_device() -> device:
    """The device new tensors are made on: always the CPU.

    >>> import ember
    >>> ember.get_default_device()
    device(type='cpu')
    """
    return _CPU


def set_default_device(device_: "device | str | None") -> None:
    """Set the device new tensors are made on: the CPU (or None, the same) is the only one ember has.

    >>> import ember
    >>> ember.set_default_device("cpu")
    """
    if device_ is not None:
        device(device_)  # anything but the CPU raises, saying so


_warned: set = set()
warn_always = [False]  # ember.set_warn_always: show these warnings every time


def _warn_once(message: str, stacklevel: int = 2) -> None:
    """A UserWarning shown once in the life of the program (as torch's warnings of this kind)."""
    if message not in _warned or warn_always[0]:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)


def torch_strides(data: np.ndarray) -> tuple:
    """The strides, in elements, torch reports for the tensor whose memory ``data`` is.

    NumPy gives a freshly made empty array strides of 0 (torch: row-major), and a new dim of size 1
    (``x[None]``, ``unsqueeze``, ``expand``) a stride of 0 (torch: the next dim's size times its
    stride, 1 if last). Where NumPy has kept meaningful strides, as for a slice to empty, they are torch's.

    >>> torch_strides(np.zeros((2, 0, 3))), torch_strides(np.ones((4, 3))[:, 1:1]), torch_strides(np.ones(3)[None])
    ((3, 3, 1), (3, 1), (3, 1))
    """
    itemsize = data.itemsize
    strides = tuple([s // itemsize for s in data.strides])
    if 0 not in strides:
        return strides
    shape = data.shape
    fresh_empty = not data.size and not any(strides)  # NumPy kept nothing: all row-major, as torch makes them
    fixed, below = list(strides), 1
    for i in range(len(shape) - 1, -1, -1):
        if fresh_empty or fixed[i] == 0 and shape[i] == 1:
            fixed[i] = below
        # a new dim before one of size 0 has stride 0 in torch (its unsqueeze multiplies by the size); a fresh
        # tensor's strides treat a size of 0 as 1
        below = fixed[i] * (max(shape[i], 1) if fresh_empty else shape[i])
    return tuple(fixed)


def _tangent_note(t: Tensor) -> list:
    """``tangent=...`` for the repr of a dual tensor in the open dual level (as torch prints it)."""
    from ember.autograd._forward_state import state

    # formatted with str.format, as torch does, so a 0-d tangent shows as its number ("tangent=6.0")
    return [f"tangent={t._fw[1]}"] if t._fw[0] is state.key else []


def _wrap_dim(dim: int, ndim: int, op: str) -> int:
    """``dim`` as an index into a shape of ``ndim`` dims (a 0-d tensor has none to index)."""
    if ndim == 0:
        raise IndexError(f"{op}: Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(
            f"{op}: Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})"
        )
    return dim % ndim


def _marked_if_parameter(t: Tensor, text: str) -> str:
    """As torch: a parameter of a subclass's type (a flagged tensor, or a subclass of Parameter) shows as
    ``Parameter(MyTensor(...))``; a plain Parameter's own repr adds "Parameter containing:" instead."""
    if type(t) is Tensor or "_prints_as_tensor" in type(t).__dict__:
        return text
    from ember.nn.parameter import Parameter

    return f"Parameter({text})" if isinstance(t, Parameter) else text


def _repr_prefix(cls: type) -> str:
    """As torch: ``tensor(`` for Tensor and Parameter themselves, a subclass's own name otherwise."""
    return "tensor(" if cls is Tensor or "_prints_as_tensor" in cls.__dict__ else cls.__name__ + "("


# What a tensor's __dict__ holds for ember itself (see _fresh and the class defaults of Tensor); the rest is a
# subclass's.
_AUTOGRAD_STATE = frozenset({
    "_data", "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_vc", "_base", "_view_replay", "_view_version",
    "_hooks", "_post_hooks", "_retains_grad", "_retain_handle", "_accumulator", "_view_origin", "_no_grad_view",
})


def _deepcopy_array(data: np.ndarray, memo: dict) -> np.ndarray:
    """A copy of ``data`` made inside a copy of the block of memory it lies in, copied once per deepcopy.

    So tensors that share memory (a tensor and its views) still share it after ``copy.deepcopy``.
    """
    owner = data
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    if owner is data or not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        return copy.deepcopy(data, memo) if owner is data else np.array(data, copy=True)
    block = copy.deepcopy(owner, memo)  # memo: the block is copied once and found again for the next view
    if block.strides != owner.strides or block.shape != owner.shape:
        return np.array(data, copy=True)
    offset = data.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    return np.ndarray(data.shape, data.dtype, block, offset, data.strides)


def _rebuild_tensor(data: np.ndarray, requires_grad: bool, cls: type = None, own: dict | None = None) -> Tensor:
    """Unpickling: a fresh leaf of the pickled class, with the subclass's own attributes (as torch)."""
    t = _fresh(cls or Tensor)
    t._data = data
    t._requires_grad = requires_grad
    if own:
        t.__dict__.update(own)
    return t


def _legacy_constructor_data(args: tuple, kwargs: dict) -> np.ndarray:
    """``Tensor(*sizes)``, ``Tensor(size)``, ``Tensor(data)`` and ``Tensor()``, all of the default dtype."""
    floating = _dtype.defaults.floating.np
    if kwargs:
        raise TypeError(f"Tensor(): unexpected keyword arguments {sorted(kwargs)}; use ember.tensor(data, dtype=...)")
    if not args:
        return np.empty((0,), floating)
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        return np.empty(tuple(int(a) for a in args), floating)
    if len(args) == 1 and isinstance(args[0], Size):
        return np.empty(tuple(args[0]), floating)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, Tensor):
            return data._data
        return np.array(data, dtype=floating)
    raise TypeError(f"Tensor(): expected sizes (ints) or one sequence of data, got {args!r}")


def _register_as_plain() -> None:
    """Exactly ``Tensor`` skips the protocol (its handler would only call through)."""
    from ember import overrides

    overrides._never_dispatch.add(Tensor)


_register_as_plain()
