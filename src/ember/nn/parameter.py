"""``Parameter``: a tensor that a ``Module`` registers as one of its learnable weights.

>>> import ember
>>> w = ember.nn.Parameter(ember.zeros(2))
>>> w
Parameter containing:
tensor([0., 0.], requires_grad=True)
>>> type(w * 2).__name__  # ops on a parameter give plain tensors
'Tensor'
"""
from __future__ import annotations

from ember._layout import strided as _strided
from ember._tensor import _AUTOGRAD_STATE, Tensor
from ember.overrides import _disabled_torch_function_impl


class _ParameterMeta(type):
    def __instancecheck__(cls, instance) -> bool:
        # a tensor of a user's subclass made a parameter keeps its class and is flagged instead (see Parameter)
        if type.__instancecheck__(cls, instance):
            return True
        return cls is Parameter and isinstance(instance, Tensor) and instance.__dict__.get("_is_param", False)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A leaf tensor that requires grad by default and is picked up by ``Module.__setattr__``.

    It shares memory with ``data``; with no ``data`` it is an empty tensor. ``data`` of a user's Tensor
    subclass stays of that class, detached and flagged ``_is_param`` (it is then an instance of Parameter and
    prints as ``Parameter(MyTensor(...))``), as in torch.
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> "Parameter":
        if data is None:
            from ember._creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(): data must be a Tensor, not {type(data).__name__}; wrap it first, "
                "e.g. nn.Parameter(ember.tensor(data))"
            )
        if data.layout is not _strided:  # (its dense memory is a placeholder: a Parameter of it would be zeros)
            raise NotImplementedError(
                f"Parameter(): a tensor of layout {data.layout} cannot be a Parameter in ember; make its values the "
                "Parameter and build the sparse tensor from them in forward, e.g. "
                "ember.sparse_coo_tensor(indices, self.values, size)"
            )
        if type(data) is Tensor or type(data) is Parameter:
            return Tensor._make_subclass(cls, data, requires_grad)
        return _flagged_parameter(data, requires_grad)

    # Ops see a parameter as the plain tensor it holds: results are Tensors, not Parameters.
    __torch_function__ = classmethod(_disabled_torch_function_impl)
    _prints_as_tensor = True  # its repr says "Parameter containing:" and then tensor(...), as torch's

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict) -> "Parameter":
        # A copy of the values and the flag only: like torch, the gradient is not copied.
        if id(self) in memo:
            return memo[id(self)]
        copied = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = copied
        return copied

    def __reduce_ex__(self, protocol):
        own = {k: v for k, v in self.__dict__.items() if k not in _AUTOGRAD_STATE}  # attributes a user set
        return (_rebuild_parameter, (self.data, self.requires_grad, type(self), own))


def _flagged_parameter(data: Tensor, requires_grad: bool) -> Tensor:
    """``data`` (of a Tensor subclass) detached and flagged as a parameter, keeping its class."""
    param = data.detach().requires_grad_(requires_grad)
    if type(param) is not type(data):
        raise RuntimeError(
            f"Creating a Parameter from an instance of type {type(data).__name__} requires that detach() returns an "
            f"instance of the same type, but return type {type(param).__name__} was found instead. To use the type "
            "as a Parameter, please correct the detach() semantics defined by its __torch_function__() "
            "implementation."
        )
    param._is_param = True
    return param


def _rebuild_parameter(data: Tensor, requires_grad: bool, cls: type = Parameter, own: dict | None = None) -> Parameter:
    param = cls(data, requires_grad)
    param.__dict__.update(own or {})
    return param


class Buffer:
    """A tensor marked to become a buffer of the ``Module`` it is assigned to (``persistent``: in the state dict).

    ``Buffer(t)`` gives a plain tensor sharing ``t``'s memory; ``self.name = Buffer(t)`` in a module then
    registers it as ``register_buffer("name", t, persistent)`` would.

    >>> import ember
    >>> class Counter(ember.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.count = ember.nn.Buffer(ember.zeros(1))
    ...         self.scratch = ember.nn.Buffer(ember.zeros(3), persistent=False)
    >>> list(Counter().state_dict())
    ['count']
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Tensor:
        if data is None:
            from ember._creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): data must be a Tensor, not {type(data).__name__}; wrap it first, "
                            "e.g. nn.Buffer(ember.tensor(data))")
        marked = data.detach().requires_grad_(data.requires_grad)
        marked.persistent = persistent
        marked._is_buffer = True
        return marked


# ----------------------------------------------------------------- placeholders of lazy modules

_ALLOWED_UNINITIALIZED = frozenset({
    "__get__", "__set__", "__hash__", "__deepcopy__", "__reduce_ex__", "detach", "requires_grad_", "is_floating_point",
    "is_complex", "share_memory_", "get_device", "size", "copy_",
})
_CONVERSIONS = frozenset({"to", "float", "double", "half", "cpu", "cuda", "type"})


class UninitializedTensorMixin:
    """A placeholder whose size is not known yet: a lazy module's weights before its first call.

    ``materialize(shape)`` gives it memory (uninitialised values) and makes it what it stands for (a
    ``Parameter`` or a plain tensor) in place, so that what holds it (a module, an optimizer) keeps holding it.
    Until then, using it in an op is an error.
    """

    cls_to_become: type

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Take memory of ``shape`` (and ``dtype``, by default the placeholder's) and become ``cls_to_become``."""
        from ember._creation import empty

        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self._data = empty(shape, dtype=dtype if dtype is not None else self.dtype)._data
        self.__class__ = self.cls_to_become

    def _become_like(self, value: Tensor) -> None:
        """Take ``value``'s values, in the placeholder's dtype (a module's ``.double()`` may have changed it), and
        become ``cls_to_become``: how a lazy layer's first call hands over the weights it initialised."""
        self._data = value._data.astype(self._data.dtype, copy=False)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their attributes."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo: dict):
        copied = type(self)(self.requires_grad, dtype=self.dtype)
        memo[id(self)] = copied
        return copied

    def __reduce_ex__(self, protocol):
        return (type(self), (self.requires_grad, None, self.dtype))

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        converts = name in _CONVERSIONS and (name != "type" or len(args) > 1 or kwargs)  # (type(): a question)
        if converts:  # a module's .to(dtype) before its first call: a placeholder of the new dtype
            placeholder = args[0]
            probe = func(Tensor._wrap(placeholder._data), *args[1:], **kwargs)
            return type(placeholder)(placeholder.requires_grad, dtype=probe.dtype)
        if name == "detach":
            return args[0]
        if name in _ALLOWED_UNINITIALIZED:
            return _disabled_torch_function_impl(cls, func, types, args, kwargs)
        raise ValueError(
            f"Attempted to use an uninitialized parameter in {name or func}. This error happens when you are using "
            "a `LazyModule` or explicitly manipulating `ember.nn.parameter.UninitializedParameter` objects. When "
            "using LazyModules Call `forward` with a dummy batch to initialize the parameters before calling "
            "ember functions"
        )


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A ``Parameter`` whose size is not known yet (see ``UninitializedTensorMixin``).

    >>> import ember
    >>> from ember.nn.parameter import UninitializedParameter, is_lazy
    >>> p = UninitializedParameter()
    >>> p, is_lazy(p)
    (<UninitializedParameter>, True)
    >>> p.materialize((2, 3))
    >>> type(p).__name__, p.shape
    ('Parameter', ember.Size([2, 3]))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None) -> "UninitializedParameter":
        from ember._creation import empty

        return Tensor._make_subclass(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose size is not known yet; ``materialize`` makes it a plain tensor.

    >>> b = ember.nn.parameter.UninitializedBuffer()
    >>> b.materialize(3, dtype=ember.float64)
    >>> type(b).__name__, b.dtype
    ('Tensor', ember.float64)
    """

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None) -> "UninitializedBuffer":
        from ember._creation import empty

        return Tensor._make_subclass(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad: bool = False, device=None, dtype=None) -> None:
        pass


def is_lazy(param) -> bool:
    """Whether ``param`` is a placeholder of a lazy module (not yet materialized).

    >>> is_lazy(ember.nn.Parameter(ember.ones(1)))
    False
    """
    return isinstance(param, UninitializedTensorMixin)
