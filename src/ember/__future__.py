"""``ember.__future__``: switches for how ``nn.Module`` replaces its parameters, as torch's.

By default a conversion (``module.double()``, ``module.to(...)``) sets each parameter's ``.data`` and
``load_state_dict`` copies values into the parameters in place. With ``set_swap_module_params_on_conversion(True)``
both exchange the whole tensor object's contents with ``ember.utils.swap_tensors`` instead, and
``load_state_dict`` passes each value through the parameter's ``Tensor.module_load`` first, which a tensor subclass
can override. With ``set_overwrite_module_params_on_conversion(True)`` a conversion puts new ``Parameter`` objects in
the module.

>>> import ember
>>> ember.__future__.get_swap_module_params_on_conversion()
False
"""
from __future__ import annotations

__all__ = [
    "get_overwrite_module_params_on_conversion", "get_swap_module_params_on_conversion",
    "set_overwrite_module_params_on_conversion", "set_swap_module_params_on_conversion",
]


class _Switches:
    overwrite = False
    swap = False


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Make conversions put new Parameter objects in the module instead of changing the existing ones' data."""
    _Switches.overwrite = value


def get_overwrite_module_params_on_conversion() -> bool:
    """Whether conversions put new Parameter objects in the module (False by default)."""
    return _Switches.overwrite


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Make conversions and ``load_state_dict`` swap each parameter's contents with its new value
    (``ember.utils.swap_tensors``), the loaded value first passed through ``Tensor.module_load``; this takes
    precedence over the overwrite switch."""
    _Switches.swap = value


def get_swap_module_params_on_conversion() -> bool:
    """Whether conversions and ``load_state_dict`` swap parameters' contents (False by default)."""
    return _Switches.swap
