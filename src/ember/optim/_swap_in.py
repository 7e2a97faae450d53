"""``swap_in_optimizer_params_and_state``: run an optimizer on other parameters and state for a while.

Inside the block the optimizer's groups hold the given parameters and hyperparameters and its ``state`` is
the given ``state_dict``'s, keyed by those parameters; leaving it puts the live ones back. The per-parameter
state dicts are shallow copies: a step's in-place updates of their tensors reach the given state, a new
tensor put in their place does not.

>>> p = ember.nn.Parameter(ember.ones(2))
>>> opt = ember.optim.SGD([p], lr=0.5, momentum=0.9)
>>> p.grad = ember.ones(2); opt.step()
>>> other = ember.nn.Parameter(ember.zeros(2)); other.grad = ember.ones(2)
>>> with ember.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, opt.state_dict()):
...     opt.step()
>>> other, p
(Parameter containing:
tensor([-0.9500, -0.9500], requires_grad=True), Parameter containing:
tensor([0.5000, 0.5000], requires_grad=True))
"""
from __future__ import annotations

import contextlib
from collections import defaultdict
from typing import Any, Iterator

from ember._tensor import Tensor

_NAME = "swap_in_optimizer_params_and_state"


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]) -> Iterator[None]:
    """Give ``optimizer`` the parameters ``swapin_parameters`` (in the order of its groups' parameters) and the
    state and hyperparameters of ``swapin_optim_state`` (an ``optimizer.state_dict()``) for the block."""
    state, groups = _checked(optimizer, swapin_parameters, swapin_optim_state)
    live_state = optimizer.state
    snapshots = [dict(group) for group in optimizer.param_groups]
    try:
        swapped = defaultdict(dict)
        parameters = iter(swapin_parameters.values())
        for live, given in zip(optimizer.param_groups, groups):
            live.update({key: value for key, value in given.items() if key != "params"})
            live["params"] = [next(parameters) for _ in given["params"]]
            for parameter, packed_id in zip(live["params"], given["params"]):
                swapped[parameter] = dict(state.get(packed_id, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = live_state


def _checked(optimizer, parameters: dict, optim_state) -> tuple:
    """The given state and groups, once they are seen to fit the optimizer (else a RuntimeError saying how)."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state: take a step first")
    if not isinstance(optim_state, dict):
        raise RuntimeError(f"{_NAME} requires an optimizer.state_dict()-style dict, got {type(optim_state).__name__}")
    state, groups = optim_state.get("state"), optim_state.get("param_groups")
    if not isinstance(state, dict) or any(isinstance(key, Tensor) for key in state):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict keyed by packed parameter ids")
    if not isinstance(groups, list) or len(groups) != len(optimizer.param_groups):
        raise RuntimeError(f"{_NAME}: swapin_optim_state['param_groups'] must be a list of "
                           f"{len(optimizer.param_groups)} groups, as the live optimizer has")
    ids = []
    for index, (live, given) in enumerate(zip(optimizer.param_groups, groups)):
        if not isinstance(given, dict) or len(given.get("params", ())) != len(live["params"]) or \
                set(given) != set(live):
            raise RuntimeError(f"{_NAME}: param group {index} does not match the live group: expected the keys "
                               f"{sorted(live)} and {len(live['params'])} parameter ids")
        ids += given["params"]
    if len(ids) > len(parameters):
        raise RuntimeError(f"{_NAME} requires the explicit parameter state to match optimizer.param_groups "
                           f"ordering: {len(ids)} parameters expected, {len(parameters)} given")
    extra = [key for key in state if key not in set(ids)]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter ids "
                           f"from param_groups[*]['params']; got extra keys {extra!r}")
    return state, groups
