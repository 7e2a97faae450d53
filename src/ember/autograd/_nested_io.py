"""``NestedIOFunction``: the name of the pre-1.0 Function with nested inputs and outputs, kept so that code which
names it still imports.

It cannot run, in torch either: it was built on the legacy ``Function._do_forward`` and ``_do_backward``,
which no longer exist. Calling an instance, or ``apply`` on the class, raises the AttributeError torch's
raises, with the way out.

>>> import ember
>>> issubclass(ember.autograd.NestedIOFunction, ember.autograd.Function)
True
"""
from __future__ import annotations

from typing import Any

from ember.autograd.function import Function

_CANNOT_RUN = (
    "NestedIOFunction cannot run: it rests on the legacy Function._do_forward/_do_backward, which no longer "
    "exist. Subclass ember.autograd.Function with static forward and backward (flatten nested inputs yourself) "
    "and call it through .apply"
)


class NestedIOFunction(Function):
    """Kept only so that old code imports; see the module's docstring. Use ``Function`` instead."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise AttributeError(_CANNOT_RUN)

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        raise AttributeError(_CANNOT_RUN)

    def forward_extended(self, *input: Any) -> Any:
        """What a subclass would compute, on nested inputs."""
        raise NotImplementedError

    def backward_extended(self, *grad_output: Any) -> Any:
        """The gradients a subclass would return, nested as the inputs."""
        raise NotImplementedError
