"""torch's own per-module sample inputs (its ModuleInfo database) run through ember's modules and torch's, and
the two runs compared.

``nn/test_torch_module_samples.py`` parametrises over the ModuleInfos; this module builds each module on both
sides (ember's loaded with torch's weights), runs a forward and a backward of the same ``grad_output``, and
describes how the two runs differ. torch is the oracle here: only tests import this module.
"""
from __future__ import annotations

import copy
import functools
import itertools
import warnings
from typing import Any

import numpy as np
import torch

import ember
from opinfo_samples import Unconvertible, difference, plain, to_ember

INPUTS_PER_MODE = 6
DTYPES = (torch.float64, torch.float32)

# ModuleInfos whose samples cannot be compared at all, by name, with the reason
SKIPPED: dict[str, str] = {}

# ModuleInfos whose forward draws from the generator in training, with the reason: in training only their
# results' dtypes and shapes are compared (their values and gradients are in eval mode)
_RANDOM = "random in training: torch's draws are not ember's"
RANDOM_IN_TRAINING = {
    "nn.TransformerEncoder": "dropout in training",
    "nn.TransformerEncoderLayer": "dropout in training",
    "nn.TransformerDecoderLayer": "dropout in training",
    "nn.Transformer": "dropout in training",
    "nn.MultiheadAttention": "dropout in training",
}

# ModuleInfos whose values are random in both modes, with the reason: only dtypes and shapes are compared
VALUES_NOT_COMPARED = {
    "nn.FractionalMaxPool2d": "its windows are drawn from the generator",
    "nn.FractionalMaxPool3d": "its windows are drawn from the generator",
}


def values_comparable(info, training: bool) -> bool:
    if info.name in VALUES_NOT_COMPARED:
        return False
    return not (training and info.name in RANDOM_IN_TRAINING)


@functools.cache
def module_db() -> list:
    """torch's ModuleInfos (imported once per process)."""
    from torch.testing._internal.common_modules import module_db as database
    # importing torch's test utilities freezes torch.backends' flags; other tests in this process set them
    # directly, so they are thawed again (see opinfo_samples.op_db)
    torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True
    return list(database)


def ember_module_class(info) -> type | None:
    """ember's module of the same name as torch's (``torch.nn.Conv2d`` -> ``ember.nn.Conv2d``), or None."""
    return getattr(ember.nn, info.module_cls.__qualname__, None)


def module_inputs(info, dtype: torch.dtype, training: bool) -> list:
    """The first ``INPUTS_PER_MODE`` of the ModuleInfo's inputs, the same ones on every run (none for a dtype
    it does not support)."""
    if dtype not in info.dtypes:
        return []
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = info.module_inputs_func(info, device="cpu", dtype=dtype, requires_grad=True, training=training)
        return list(itertools.islice(found, INPUTS_PER_MODE))


# ------------------------------------------------------------------------------------------ one run


def ember_args(value: Any, converted: dict | None = None) -> Any:
    """A constructor's or forward's argument in ember's terms: tensors keep whether they require grad (and a
    tensor passed twice stays one tensor), and torch's functions (an activation) become ember's."""
    converted = {} if converted is None else converted
    if isinstance(value, torch.Tensor):
        if id(value) not in converted:
            converted[id(value)] = to_ember(value).requires_grad_(value.requires_grad)
        return converted[id(value)]
    if isinstance(value, torch.nn.Module):
        return _ember_module(value, converted)
    if callable(value) and getattr(value, "__name__", None) and _is_torch_function(value):
        return getattr(ember.nn.functional, value.__name__)
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        return type(value)(ember_args(v, converted) for v in value)
    if isinstance(value, dict):
        return {k: ember_args(v, converted) for k, v in value.items()}
    return to_ember(value)


def _encoder_layer_arguments(layer: torch.nn.TransformerEncoderLayer) -> dict:
    attention = layer.self_attn
    return dict(d_model=attention.embed_dim, nhead=attention.num_heads, dim_feedforward=layer.linear1.out_features,
                dropout=layer.dropout.p, activation=layer.activation, layer_norm_eps=layer.norm1.eps,
                batch_first=attention.batch_first, norm_first=layer.norm_first, bias=layer.linear1.bias is not None)


# torch modules that samples pass to a constructor (TransformerEncoder's layer): how to read back the arguments
# that made them (their weights come with the state_dict the ember module loads)
_MODULE_ARGUMENTS = {torch.nn.TransformerEncoderLayer: _encoder_layer_arguments}


def _ember_module(module: torch.nn.Module, converted: dict):
    read = _MODULE_ARGUMENTS.get(type(module))
    if read is None:
        raise Unconvertible(type(module).__name__)
    return getattr(ember.nn, type(module).__name__)(**ember_args(read(module), converted))


def _is_torch_function(value) -> bool:
    return getattr(torch.nn.functional, value.__name__, None) is value or getattr(torch, value.__name__, None) is value


def _leaves(value: Any) -> list:
    """The tensors in a (nested) result or argument, in order."""
    if isinstance(value, (torch.Tensor, ember.Tensor)):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _leaves(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _leaves(v)]
    return []


def _grad_outputs(outputs: list) -> list[np.ndarray]:
    """A fixed random grad_output for each output (the same arrays feed both sides)."""
    rng = np.random.default_rng(0)
    return [rng.standard_normal(tuple(t.shape)) for t in outputs]


def torch_state(module: torch.nn.Module, args: tuple, kwargs: dict, lazy: bool) -> dict:
    """torch's module's state to load into ember's: after one forward for a lazy module (which shapes its
    parameters there)."""
    if lazy:
        with torch.no_grad():
            module(*copy.deepcopy(args), **copy.deepcopy(kwargs))
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def run(module, args: tuple, kwargs: dict, backend) -> dict:
    """A module's forward on the inputs, and its backward of the fixed grad_output: what the comparison reads."""
    inputs = list({id(t): t for t in _leaves((args, kwargs)) if t.requires_grad}.values())
    for tensor in inputs:
        if not tensor.is_leaf:  # (some of torch's inputs are computed from a leaf: ember's copies are leaves)
            tensor.retain_grad()
    output = module(*args, **kwargs)
    record = {"output": plain(output)}
    outputs = [t for t in _leaves(output) if t.requires_grad]
    if outputs:
        grads = [backend.tensor(g, dtype=t.dtype) for g, t in zip(_grad_outputs(outputs), outputs)]
        backend.autograd.backward(outputs, grads)
        record["input grads"] = tuple(plain(t.grad) for t in inputs)
        record["parameter grads"] = {name: plain(p.grad) for name, p in module.named_parameters()}
    record["buffers"] = {name: plain(b) for name, b in module.named_buffers()}
    return record


def state_layout(module) -> list[tuple[str, tuple]]:
    return [(name, tuple(value.shape)) for name, value in module.state_dict().items()]


def run_difference(expected: dict, got: dict, values: bool) -> str | None:
    """How ember's run differs from torch's, or None."""
    for part in expected.keys() | got.keys():
        if part not in got or part not in expected:
            return f"{part}: only {'torch' if part in expected else 'ember'} has them"
    for part, want in expected.items():
        have = got[part]
        if isinstance(want, dict):
            if list(want) != list(have):
                return f"{part}: names {list(want)} (torch) against {list(have)} (ember)"
            want, have = tuple(want.values()), tuple(have.values())
        found = difference(want, have, values)
        if found:
            return f"{part}: {found}"
    return None


def describe_input(module_input) -> str:
    """A module input's constructor arguments and forward shapes, short enough for a failure message."""
    def short(value):
        if isinstance(value, torch.Tensor):
            return f"{str(value.dtype).split('.')[-1]}{list(value.shape)}"
        if isinstance(value, (list, tuple)):
            return type(value)(short(v) for v in value)
        if isinstance(value, dict):
            return {k: short(v) for k, v in value.items()}
        return value
    made, forward = module_input.constructor_input, module_input.forward_input
    return (f"{module_input.desc or 'input'}: constructed with {short(tuple(made.args))} {short(dict(made.kwargs))}, "
            f"forward on {short(tuple(forward.args))} {short(dict(forward.kwargs))}")
