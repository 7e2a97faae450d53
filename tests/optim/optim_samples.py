"""torch's optimizer database (its ``optim_db``) run through ember's optimizers and torch's, and the results compared.

``test_torch_optim_samples.py`` parametrises over the database's entries. This module builds the same small
problem on both sides and runs an optimizer on it: two parameters drawn from torch under a fixed seed (both 2-d
for Muon, which takes matrices only), and a loss ``sum(h * |p|**2 / 2 + Re(conj(n) * p))`` whose gradient
``h * p + n`` is set by hand, element by element, so that both libraries see the same gradients to the last bit
(``h`` a fixed positive curvature, ``n`` a noise drawn anew each step, fixed for optimizers that search along a
line within a step). torch is the oracle here: only tests import this module.
"""
from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch

import ember
from tests.opinfo_samples import Unconvertible, difference, plain, to_ember

STEPS = 10

# (rtol, atol) for parameter trajectories and state values, by the parameters' dtype
TOLERANCES = {torch.float64: (1e-9, 1e-12), torch.float32: (1e-5, 1e-6)}


def optim_db() -> list:
    """torch's OptimizerInfos (importing torch's testing module freezes ``torch.backends``' flags: thawed)."""
    from torch.testing._internal.common_optimizers import optim_db as database
    torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True
    return database


def info_named(name: str):
    return next(info for info in optim_db() if info.name == name)


def optimizer_inputs(info, dtype: torch.dtype) -> list:
    """The entry's optimizer inputs for the CPU (torch drops the ones it cannot run there)."""
    return list(info.optim_inputs_func(device="cpu", dtype=dtype))


def error_inputs(info) -> list:
    return list(info.optim_error_inputs_func(device="cpu", dtype=torch.float32))


def ember_optimizer_class(info) -> type:
    return getattr(ember.optim, info.name)


# ------------------------------------------------------------------------------------------ conversion


def param_to_ember(value: Any, converted: dict | None = None) -> Any:
    """Parameters (tensors, lists, param-group dicts, (name, tensor) pairs) in ember's terms, keeping which
    tensors require grad, their gradients and which are the same tensor; sparse tensors become ember's sparse COO tensors."""
    converted = {} if converted is None else converted
    if isinstance(value, torch.Tensor):
        if id(value) not in converted:
            converted[id(value)] = _param_to_ember(value)
        return converted[id(value)]
    if isinstance(value, (list, tuple)):
        return type(value)(param_to_ember(v, converted) for v in value)
    if isinstance(value, dict):
        return {k: param_to_ember(v, converted) for k, v in value.items()}
    return to_ember(value)


def _param_to_ember(tensor: torch.Tensor) -> ember.Tensor:
    converted = _sparse_to_ember(tensor) if tensor.layout == torch.sparse_coo else to_ember(tensor)
    if isinstance(tensor, torch.nn.Parameter):
        converted = ember.nn.Parameter(converted, requires_grad=tensor.requires_grad)
    else:
        converted.requires_grad_(tensor.requires_grad)
    if tensor.grad is not None:
        converted.grad = to_ember(tensor.grad)
    return converted


def _sparse_to_ember(tensor: torch.Tensor) -> ember.Tensor:
    return ember.sparse_coo_tensor(to_ember(tensor._indices()), to_ember(tensor._values()), tuple(tensor.shape))


def state_dict_to_ember(state_dict: dict) -> dict:
    return to_ember(copy.deepcopy(state_dict))


# ------------------------------------------------------------------------------------------ the problem


class Problem:
    """The parameters' starting values, the curvature ``h`` and each step's noise ``n``, drawn from torch."""

    def __init__(self, info, dtype: torch.dtype, complex_params: bool = False, seed: int = 0) -> None:
        generator = torch.Generator().manual_seed(seed)
        shapes = [(3, 4), (2, 3)] if info.name == "Muon" else [(3, 4), (4,)]
        self.dtype = dtype.to_complex() if complex_params else dtype
        self.start = [torch.randn(s, generator=generator, dtype=self.dtype) for s in shapes]
        self.curvature = [torch.rand(s, generator=generator, dtype=dtype) * 1.5 + 0.5 for s in shapes]
        self.noise = [[torch.randn(s, generator=generator, dtype=self.dtype) for s in shapes]
                      for _ in range(STEPS + 5)]
        self.fixed_noise = info.step_requires_closure
        self.sparse_grads = info.only_supports_sparse_grads

    def params(self, lib) -> list:
        """Fresh leaf parameters of library ``lib`` (torch or ember) at the starting values."""
        return [self.convert(lib, p).clone().requires_grad_() for p in self.start]

    @staticmethod
    def convert(lib, value: Any) -> Any:
        return value if lib is torch else to_ember(value)

    def closure(self, lib, params: list, step: int):
        """The step's closure: sets each parameter's gradient ``h * p + n`` and returns the loss."""
        noise = [self.convert(lib, n) for n in self.noise[0 if self.fixed_noise else step]]
        curvature = [self.convert(lib, h) for h in self.curvature]

        def closure():
            loss = 0.0
            with lib.no_grad():
                for p, h, n in zip(params, curvature, noise):
                    grad = h * p + n
                    p.grad = grad.to_sparse() if self.sparse_grads else grad
                    loss = loss + (h * (p * p.conj()).real / 2 + (n.conj() * p).real).sum()
            return loss

        return closure


def run(problem: Problem, lib, optimizer, params: list, steps: int, first_step: int = 0) -> list:
    """The parameters (NumPy copies) after each of ``steps`` steps."""
    seen = []
    for step in range(first_step, first_step + steps):
        closure = problem.closure(lib, params, step)
        if problem.fixed_noise:
            optimizer.step(closure)
        else:
            closure()
            optimizer.step()
        seen.append([p.detach().numpy().copy() for p in params])
    return seen


def trajectory_difference(expected: list, got: list, dtype: torch.dtype, rtol: float | None = None,
                          atol: float | None = None) -> str | None:
    """Where ember's parameter trajectory first leaves torch's (beyond the dtype's tolerances, unless given),
    or None."""
    rtol, atol = rtol or TOLERANCES[dtype][0], atol or TOLERANCES[dtype][1]
    for step, (want, have) in enumerate(zip(expected, got)):
        for index, (w, h) in enumerate(zip(want, have)):
            if w.dtype != h.dtype:
                return f"step {step}, parameter {index}: dtype {w.dtype} (torch) against {h.dtype} (ember)"
            if not np.allclose(h, w, rtol=rtol, atol=atol):
                worst = np.max(np.abs(h - w) / (np.abs(w) + atol))
                return f"step {step}, parameter {index}: relative difference up to {worst:.3g} (rtol {rtol})"
    return None


# ------------------------------------------------------------------------------------------ state dicts


def state_dict_difference(expected: dict, got: dict) -> str | None:
    """How ember's ``state_dict()`` differs from torch's: its keys, each parameter's state (keys, values,
    dtypes) and each param group's entries, or None if they agree."""
    if list(expected) != list(got):
        return f"top-level keys {list(expected)} (torch) against {list(got)} (ember)"
    if sorted(expected["state"]) != sorted(got["state"]):
        return f"state indices {sorted(expected['state'])} (torch) against {sorted(got['state'])} (ember)"
    for index, entry in expected["state"].items():
        found = _entries_difference(entry, got["state"][index])
        if found:
            return f"state of parameter {index}: {found}"
    if len(expected["param_groups"]) != len(got["param_groups"]):
        return f"{len(expected['param_groups'])} param groups (torch) against {len(got['param_groups'])} (ember)"
    for index, (want, have) in enumerate(zip(expected["param_groups"], got["param_groups"])):
        found = _entries_difference(want, have)
        if found:
            return f"param group {index}: {found}"
    return None


def _entries_difference(expected: dict, got: dict) -> str | None:
    if set(expected) != set(got):
        return f"keys {sorted(expected)} (torch) against {sorted(got)} (ember)"
    for key, value in expected.items():
        found = difference(plain(value), plain(got[key]))
        if found:
            return f"{key!r}: {found}"
    return None


def defaults_difference(expected: dict, got: dict) -> str | None:
    return _entries_difference(expected, got)


__all__ = ["STEPS", "Problem", "Unconvertible", "defaults_difference", "ember_optimizer_class", "error_inputs",
           "info_named", "optim_db", "optimizer_inputs", "param_to_ember", "run", "state_dict_difference",
           "state_dict_to_ember", "trajectory_difference"]
