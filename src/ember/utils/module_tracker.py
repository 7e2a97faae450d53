"""``ModuleTracker``: which modules are running now, in forward and in backward.

>>> import ember
>>> from ember.utils.module_tracker import ModuleTracker
>>> model = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.ReLU())
>>> seen = []
>>> with ModuleTracker() as tracker:
...     handle = model[1].register_forward_pre_hook(lambda m, args: seen.append(sorted(tracker.parents)))
...     _ = model(ember.ones(1, 2))
...     handle.remove()
>>> seen
[['Global', 'Sequential', 'Sequential.1']]
"""
from __future__ import annotations

import logging
import weakref
from typing import Callable

from ember._tensor import Tensor
from ember.autograd import engine as _engine
from ember.autograd.graph import register_multi_grad_hook
from ember.func._tree import flatten as _flatten
from ember.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

__all__ = ["ModuleTracker"]

_log = logging.getLogger(__name__)


class ModuleTracker:
    """A context manager that keeps ``parents``: the names of the modules whose forward (or backward) is running.

    A module is named by its fully qualified name, starting with its root module's class name
    (``"Sequential.0.linear"``); ``parents`` always holds ``"Global"``. In backward, a module enters
    ``parents`` when its outputs' gradients are ready and leaves when its inputs' gradients are; once the
    backward pass ends, ``parents`` is ``{"Global"}`` again. ``is_bw`` says whether a backward pass is
    running now.

    >>> import ember
    >>> linear = ember.nn.Linear(2, 2)
    >>> during = []
    >>> def note(module, args):
    ...     during.append((sorted(tracker.parents), tracker.is_bw))
    >>> with ModuleTracker() as tracker:
    ...     _ = linear.register_forward_pre_hook(note)
    ...     linear(ember.ones(1, 2)).sum().backward()
    >>> during, tracker.parents
    ([(['Global', 'Linear'], False)], {'Global'})
    """

    parents: set[str]

    def __init__(self) -> None:
        self.parents = {"Global"}
        self._known_modules: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._seen_modules: weakref.WeakSet = weakref.WeakSet()
        self._has_callback = False
        self._hooks: list = []

    @property
    def is_bw(self) -> bool:
        """Whether a backward pass is running now."""
        return _engine.current_pass() is not None

    def _maybe_set_engine_callback(self) -> None:
        # one reset per backward pass: when it ends, the modules it entered and never left are forgotten
        if self._has_callback:
            return

        def reset() -> None:
            self.parents = {"Global"}
            self._has_callback = False

        _engine.queue_callback(reset)
        self._has_callback = True

    def _get_mod_name(self, module) -> str:
        """The module's name; the first sight of a module names its children after it."""
        if module not in self._known_modules:
            self._known_modules[module] = type(module).__name__
        name = self._known_modules[module]
        if module not in self._seen_modules:
            for child_name, child in module.named_children():
                self._known_modules[child] = f"{name}.{child_name}"
                self._get_mod_name(child)
            self._seen_modules.add(module)
        return name

    def _get_append_fn(self, name: str, is_bw: bool) -> Callable[..., None]:
        def enter(*args) -> None:
            if is_bw:
                self._maybe_set_engine_callback()
            if name in self.parents:
                _log.info("ModuleTracker: module %s entered again during %s before it was left",
                          name, "backward" if is_bw else "forward")
            self.parents.add(name)

        return enter

    def _get_pop_fn(self, name: str, is_bw: bool) -> Callable[..., None]:
        def leave(*args) -> None:
            if name in self.parents:
                self.parents.remove(name)
            else:
                _log.info("ModuleTracker: module %s left during %s without being entered",
                          name, "backward" if is_bw else "forward")

        return leave

    def _fw_pre_hook(self, module, args) -> None:
        name = self._get_mod_name(module)
        self._get_append_fn(name, False)()
        # in backward, the module is left once its inputs' gradients are computed
        self._hook_gradients(args, self._get_pop_fn(name, True))

    def _fw_post_hook(self, module, args, output) -> None:
        name = self._get_mod_name(module)
        self._get_pop_fn(name, False)()
        # in backward, the module is entered once its outputs' gradients are ready
        self._hook_gradients(output, self._get_append_fn(name, True))

    def _hook_gradients(self, values, fn: Callable[..., None]) -> None:
        leaves, _ = _flatten(values)
        tensors = [leaf for leaf in leaves if isinstance(leaf, Tensor) and leaf.requires_grad]
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, fn))

    def __enter__(self) -> "ModuleTracker":
        self._fw_pre_handle = register_module_forward_pre_hook(self._fw_pre_hook)
        self._fw_post_handle = register_module_forward_hook(self._fw_post_hook)
        return self

    def __exit__(self, *args) -> None:
        self._fw_pre_handle.remove()
        self._fw_post_handle.remove()
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()
