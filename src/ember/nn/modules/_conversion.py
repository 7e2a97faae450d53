"""How ``Module._apply`` and ``Module.load_state_dict`` replace a parameter, as ``ember.__future__``'s switches say:
its ``.data`` set (the default), a new Parameter object put in its place, or its contents swapped."""
from __future__ import annotations

from typing import Callable

from ember import __future__ as future
from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.nn.parameter import Parameter
from ember.utils.swap import swap_tensors


def convert_parameter(parameters: dict, key: str, param: Tensor, fn: Callable[[Tensor], Tensor]) -> None:
    """Convert ``parameters[key]`` (``param``) and its gradient with ``fn``, under no_grad."""
    applied, grad = fn(param), param.grad
    if future.get_swap_module_params_on_conversion():
        param.grad = None  # the gradient is swapped on its own below
        swap_tensors(param, Parameter(applied, requires_grad=param.requires_grad))
        converted = param
    elif future.get_overwrite_module_params_on_conversion():
        converted = parameters[key] = Parameter(applied, param.requires_grad)
    else:
        param.data = applied
        converted = param
    if grad is None:
        return
    grad_applied = fn(grad)
    if future.get_swap_module_params_on_conversion():
        swap_tensors(grad, grad_applied.requires_grad_(grad.requires_grad))
        converted.grad = grad
    elif future.get_overwrite_module_params_on_conversion():
        converted.grad = grad_applied.requires_grad_(grad.requires_grad)
    else:
        grad.data = grad_applied


def load_by_swapping(current: Tensor, value: Tensor, assign: bool) -> None:
    """``load_state_dict`` under the swap switch: ``current.module_load(value)``, as a Parameter if ``current`` is
    one, swapped into ``current``."""
    with no_grad():
        loaded = current.module_load(value, assign=assign)
    if loaded is current or loaded is value:
        raise RuntimeError("module_load returned one of self or other, please .detach() the result if returning one "
                           "of the inputs in module_load")
    if isinstance(current, Parameter):
        if isinstance(loaded, Parameter):
            loaded.requires_grad_(current.requires_grad)
        else:
            loaded = Parameter(loaded, requires_grad=current.requires_grad)
    swap_tensors(current, loaded)
