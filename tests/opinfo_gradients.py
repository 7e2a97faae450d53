"""Gradients of torch's OpInfo samples through ember and torch: the vector-Jacobian product of a fixed random
grad_output (reverse mode), the Jacobian-vector product of a fixed random tangent (forward mode, dual tensors),
and the vector-Jacobian product of that vector-Jacobian product (double backward) with respect to the inputs and
grad_outputs, each described as how ember's
differs from torch's.

The differentiated inputs are those torch's samples make for differentiation (``requires_grad`` samples): the
floating tensors requiring grad in the sample's input, arguments and keyword arguments, lists of tensors
included, as torch's own gradient tests take them. Only tests import this module.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch
import torch.autograd.forward_ad as torch_fwad

import ember
import ember.autograd.forward_ad as ember_fwad
from opinfo_samples import difference, plain, to_ember

# (rtol, atol) for gradients by their dtype
GRAD_TOLERANCES = {"float64": (1e-7, 1e-9), "complex128": (1e-7, 1e-9)}


def _differentiable(tensor) -> bool:
    return tensor.dtype.is_floating_point or tensor.dtype.is_complex


class Pair:
    """A sample's arguments in torch's and ember's terms, and its differentiated inputs in both."""

    def __init__(self, sample) -> None:
        self.torch_args = (sample.input, *sample.args)
        self.torch_kwargs = dict(sample.kwargs)
        self._ember_of: dict[int, ember.Tensor] = {}
        self.torch_inputs: list[torch.Tensor] = []
        self.ember_args = self._convert(self.torch_args)
        self.ember_kwargs = self._convert(self.torch_kwargs)
        self.ember_inputs = [self._ember_of[id(t)] for t in self.torch_inputs]

    def _convert(self, value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            if id(value) not in self._ember_of:
                converted = to_ember(value)
                if value.requires_grad and _differentiable(value):
                    converted.requires_grad_()
                    self.torch_inputs.append(value)
                self._ember_of[id(value)] = converted
            return self._ember_of[id(value)]
        if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
            return type(value)(self._convert(v) for v in value)
        if isinstance(value, dict):
            return {k: self._convert(v) for k, v in value.items()}
        return to_ember(value)


def substituted(value: Any, replacement: dict[int, Any]) -> Any:
    """``value`` with the tensors whose ids ``replacement`` holds replaced (lists, tuples and dicts rebuilt)."""
    if isinstance(value, (torch.Tensor, ember.Tensor)):
        return replacement.get(id(value), value)
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        return type(value)(substituted(v, replacement) for v in value)
    if isinstance(value, dict):
        return {k: substituted(v, replacement) for k, v in value.items()}
    return value


def flat_tensors(result: Any) -> list:
    """The tensors of a result (lists and tuples flattened), None where a place holds something else."""
    if isinstance(result, (torch.Tensor, ember.Tensor)):
        return [result]
    if isinstance(result, (list, tuple)):
        return [t for v in result for t in flat_tensors(v)]
    return [None]


def random_like(tensor: torch.Tensor, seed: int) -> torch.Tensor:
    """Fixed standard normal values in ``tensor``'s shape and dtype."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(tensor.shape, dtype=tensor.dtype, generator=generator)


def gradient_difference(expected: tuple, got: tuple, values: bool, nones: bool = True) -> str | None:
    """How ember's gradients (or tangents) differ from torch's, place by place, or None: both None (unless not
    ``nones``), or the same dtype and shape and (if ``values``) values within ``GRAD_TOLERANCES``."""
    for place, (want, have) in enumerate(zip(expected, got)):
        if (want is None) != (have is None) and nones:
            return f"input {place}: torch gives {_none_or_tensor(want)}, ember {_none_or_tensor(have)}"
        if want is None or have is None:
            continue
        want, have = plain(_materialised(want)), plain(have)
        found = difference(want, have, values=False)
        if found:
            return f"input {place}: {found}"
        apart = _apart(want[1], want[3], have[3]) if values else None
        if apart is not None and apart.any():
            return (f"input {place}: {want[1]} values differ at {int(apart.sum())} of {apart.size} places, by up to "
                    f"{np.abs(have[3] - want[3])[apart].max():.3g} (torch {want[3][apart][:3]}, ember "
                    f"{have[3][apart][:3]})")
    return None


def _none_or_tensor(value) -> str:
    return "None" if value is None else f"a tensor ({'all zero' if not bool((value != 0).any()) else 'nonzero'})"


def _apart(dtype: str, want: np.ndarray, have: np.ndarray) -> np.ndarray:
    """Where ember's values are not within tolerance of torch's (nan where torch's are nan)."""
    rtol, atol = GRAD_TOLERANCES.get(dtype, (1e-4, 1e-5))
    return ~np.isclose(have, want, rtol=rtol, atol=atol, equal_nan=True)


# ------------------------------------------------------------------------------------------ the three products


def _materialised(tangent: torch.Tensor | None) -> torch.Tensor | None:
    """torch's gradient or tangent, its zeros materialised (torch gives a lazy zero tensor where it knows the
    result is zero)."""
    if tangent is not None and tangent._is_zerotensor():
        return torch.zeros(tangent.shape, dtype=tangent.dtype)
    return tangent


def vjp_difference(info, fn: Callable, pair: Pair, values: bool, nones: bool = True) -> str | None | bool:
    """How ember's vector-Jacobian product of the sample differs from torch's; False if torch cannot compute it
    (or the sample has nothing to differentiate)."""
    if not pair.torch_inputs:
        return False
    try:
        torch_outputs = flat_tensors(info.op(*pair.torch_args, **pair.torch_kwargs))
        places = [i for i, t in enumerate(torch_outputs) if t is not None and t.requires_grad and _differentiable(t)]
        if not places:
            return False
        vectors = [random_like(torch_outputs[i], seed=i) for i in places]
        expected = torch.autograd.grad([torch_outputs[i] for i in places], pair.torch_inputs, vectors,
                                       allow_unused=True)
    except Exception:
        return False
    try:
        ember_outputs = flat_tensors(fn(*pair.ember_args, **pair.ember_kwargs))
        chosen = [ember_outputs[i] if i < len(ember_outputs) else None for i in places]
        missing = [i for i, t in zip(places, chosen) if t is None or not t.requires_grad]
        if missing:
            return f"ember's outputs {missing} are not differentiable, torch's are"
        got = ember.autograd.grad(chosen, pair.ember_inputs, [to_ember(v) for v in vectors], allow_unused=True)
    except Exception as error:
        return f"ember's backward raised {type(error).__name__}: {error}"
    return gradient_difference(expected, got, values, nones)


def jvp_difference(info, fn: Callable, pair: Pair, values: bool, nones: bool = True) -> str | None | bool:
    """How ember's Jacobian-vector product (dual tensors) of the sample differs from torch's; False if torch
    cannot compute it."""
    if not pair.torch_inputs:
        return False
    tangents = [random_like(t, seed=100 + i) for i, t in enumerate(pair.torch_inputs)]
    try:
        with torch_fwad.dual_level():
            duals = {id(t): torch_fwad.make_dual(t.detach(), v) for t, v in zip(pair.torch_inputs, tangents)}
            outputs = flat_tensors(info.op(*substituted(pair.torch_args, duals),
                                           **substituted(pair.torch_kwargs, duals)))
            expected = [None if t is None else torch_fwad.unpack_dual(t).tangent for t in outputs]
    except Exception:
        return False
    try:
        with ember_fwad.dual_level():
            duals = {id(t): ember_fwad.make_dual(t.detach(), to_ember(v))
                     for t, v in zip(pair.ember_inputs, tangents)}
            outputs = flat_tensors(fn(*substituted(pair.ember_args, duals), **substituted(pair.ember_kwargs, duals)))
            got = [None if t is None else ember_fwad.unpack_dual(t).tangent for t in outputs]
    except Exception as error:
        return f"ember's forward AD raised {type(error).__name__}: {error}"
    if len(expected) != len(got):
        return f"torch gives {len(expected)} outputs, ember {len(got)}"
    found = gradient_difference(expected, got, values, nones)
    return found and found.replace("input", "output", 1)


def gradgrad_difference(info, fn: Callable, pair: Pair, values: bool, nones: bool = True) -> str | None | bool:
    """How ember's vector-Jacobian product of its (graph-building) vector-Jacobian product differs from torch's;
    False if torch cannot compute it."""
    if not pair.torch_inputs:
        return False
    try:
        torch_outputs = flat_tensors(info.op(*pair.torch_args, **pair.torch_kwargs))
        places = [i for i, t in enumerate(torch_outputs) if t is not None and t.requires_grad and _differentiable(t)]
        vectors = [random_like(torch_outputs[i], seed=i).requires_grad_() for i in places]
        if not places:
            return False
        first = torch.autograd.grad([torch_outputs[i] for i in places], pair.torch_inputs, vectors,
                                    allow_unused=True, create_graph=True)
        kept = [i for i, g in enumerate(first) if g is not None and g.requires_grad]
        if not kept:
            return False
        seconds = [random_like(first[i], seed=200 + i) for i in kept]
        expected = torch.autograd.grad([first[i] for i in kept], [*pair.torch_inputs, *vectors], seconds,
                                       allow_unused=True)
    except Exception:
        return False
    try:
        ember_outputs = flat_tensors(fn(*pair.ember_args, **pair.ember_kwargs))
        ember_vectors = [to_ember(v).requires_grad_() for v in vectors]
        ember_first = ember.autograd.grad([ember_outputs[i] for i in places], pair.ember_inputs, ember_vectors,
                                          allow_unused=True, create_graph=True)
        chosen = [ember_first[i] for i in kept]
        missing = [i for i, g in zip(kept, chosen) if g is None or not g.requires_grad]
        if missing:
            return f"ember's gradients of inputs {missing} are not differentiable, torch's are"
        got = ember.autograd.grad(chosen, [*pair.ember_inputs, *ember_vectors], [to_ember(v) for v in seconds],
                                  allow_unused=True)
    except Exception as error:
        return f"ember's double backward raised {type(error).__name__}: {error}"
    return gradient_difference(expected, got, values, nones)
