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

from ember._tensor import _AUTOGRAD_STATE, Tensor
from ember.overrides import _disabled_torch_function_impl


class Parameter(Tensor):
    """A leaf tensor that requires grad by default and is picked up by ``Module.__setattr__``.

    It shares memory with ``data``; with no ``data`` it is an empty tensor.
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
        return Tensor._make_subclass(cls, data, requires_grad)

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
