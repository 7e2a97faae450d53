"""``skip_init``: build a module without spending time on its initial values.

>>> import ember
>>> ember.nn.utils.skip_init(ember.nn.Linear, 3, 2).weight.shape
ember.Size([2, 3])
"""
from __future__ import annotations

import inspect

from ember.nn.modules.module import Module
from ember.random import fork_rng

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args, **kwargs) -> Module:
    """An instance of ``module_cls`` whose parameters and buffers hold unspecified values.

    ember has no "meta" device to build on, so the module is built as usual: its values are then the
    initialised ones, which is one of the allowed outcomes. The initialisers' draws are taken from a
    fork of the default generator: torch's ``skip_init`` draws nothing, so a seeded program's later
    random numbers are the same as torch's.
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    with fork_rng():
        return module_cls(*args, **kwargs)
