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
import re
import types
import warnings
from typing import Any, Callable

import numpy as np
import torch

import ember
from opinfo_samples import Unconvertible, difference, plain, to_ember
from opinfo_samples import _over_ember as over_ember_globals

INPUTS_PER_MODE = 6
DTYPES = (torch.float64, torch.float32)

# ModuleInfos whose samples cannot be compared at all, by name, with the reason
SKIPPED: dict[str, str] = {}

# ModuleInfos whose values are random in both modes, with the reason: only dtypes and shapes are compared
VALUES_NOT_COMPARED = {
    "nn.FractionalMaxPool2d": "its windows are drawn from the generator",
    "nn.FractionalMaxPool3d": "its windows are drawn from the generator",
}


def values_comparable(info) -> bool:
    """Whether the values can be compared (the transformers' samples train with dropout 0: theirs can)."""
    return info.name not in VALUES_NOT_COMPARED


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
    if isinstance(value, torch.Size):
        return ember.Size(value)
    if isinstance(value, (list, tuple)):
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


def compare(make_torch: Callable[[], torch.nn.Module], make_ember: Callable[[], Any], args: tuple, kwargs: dict,
            lazy: bool = False, values: bool = True, gradient_values: bool = True) -> tuple[bool, str | None]:
    """Build both modules (torch's under a fixed seed, ember's loaded with torch's state), run both on the
    inputs: whether they could be compared (torch runs them, and ember can be given them), and what went wrong
    with ember (None if nothing did)."""
    try:
        ours_args, ours_kwargs = ember_args((tuple(args), dict(kwargs)))
    except Unconvertible:
        return False, None
    try:
        torch.manual_seed(0)
        module = make_torch()
        state = torch_state(module, args, kwargs, lazy)
        expected = run(module, args, kwargs, torch)
    except Exception:  # (torch refuses them)
        return False, None
    try:
        ours = make_ember()
        ours.load_state_dict(to_ember(state))
    except Unconvertible:
        return False, None
    except Exception as error:
        return True, f"ember's module could not be built and loaded: {type(error).__name__}: {error}"
    try:
        got = run(ours, ours_args, ours_kwargs, ember)
    except Exception as error:
        return True, f"ember raised {type(error).__name__}: {error}"
    # (after the forward, which turns a lazy module into its eager class)
    if state_layout(module) != state_layout(ours):
        return True, f"state_dict: {state_layout(module)} (torch) against {state_layout(ours)} (ember)"
    if repr(module) != repr(ours).replace("ember.", "torch."):  # (a size's or dtype's repr names its library)
        return True, f"repr: {module!r} (torch) against {ours!r} (ember)"
    return True, run_difference(expected, got, values, gradient_values)


def run_difference(expected: dict, got: dict, values: bool, gradient_values: bool = True) -> str | None:
    """How ember's run differs from torch's, or None (the gradients' values compared only if
    ``gradient_values``)."""
    for part in expected.keys() | got.keys():
        if part not in got or part not in expected:
            return f"{part}: only {'torch' if part in expected else 'ember'} has them"
    for part, want in expected.items():
        have = got[part]
        if isinstance(want, dict):
            if list(want) != list(have):
                return f"{part}: names {list(want)} (torch) against {list(have)} (ember)"
            want, have = tuple(want.values()), tuple(have.values())
        found = difference(want, have, values and (gradient_values or not part.endswith("grads")))
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
    described = f"{module_input.desc or 'input'}: constructed with {short(tuple(made.args))} {short(dict(made.kwargs))}"
    if forward is None:
        return described
    return described + f", forward on {short(tuple(forward.args))} {short(dict(forward.kwargs))}"


# ------------------------------------------------------------------------------------------ common_nn's specs
# torch's older, dict-based module tests: ``module_name`` and ``constructor_args``, or a ``constructor`` (a lambda
# over torch.nn, or a module class wrapping a functional), and an input (``input``, ``input_fn`` or ``input_size``;
# a criterion's target likewise)

# specs whose forward draws from the generator in training: there only dtypes and shapes are compared
SPECS_RANDOM_IN_TRAINING = {"RReLU": "its slopes are drawn from the generator in training"}


# specs where ember differs from torch on purpose, with the reason: their gradients' values are not compared
GRADIENTS_DIFFERENT_ON_PURPOSE = {
    "CrossMapLRN2d": "torch's hand-written backward is off by up to 3e-6 in float64 (finite differences of its "
                     "own forward agree with ember's gradient to 2e-9)",
}


@functools.cache
def nn_specs() -> list[tuple[dict, bool]]:
    """common_nn's specs, each with whether it is a criterion's (whose forward also takes a target)."""
    from torch.testing._internal import common_nn
    torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True  # (see module_db)
    modules = [*common_nn.module_tests, *common_nn.get_new_module_tests()]
    return [(spec, False) for spec in modules] + [(spec, True) for spec in common_nn.criterion_tests]


def spec_id(spec: dict) -> str:
    if spec.get("fullname"):
        return spec["fullname"]
    return spec["module_name"] + (f"_{spec['desc']}" if spec.get("desc") else "")


def spec_dtypes(spec: dict) -> tuple[torch.dtype, ...]:
    """The default dtypes the spec runs under: its own (float32 where it names none, as in torch's suite), and
    float32 as well."""
    return tuple(dict.fromkeys((spec.get("default_dtype") or torch.float32, torch.float32)))


def spec_arguments(spec: dict, criterion: bool) -> tuple:
    """The spec's forward arguments (drawn from torch's generator, under the spec's default dtype): floating
    inputs require grad, a target does not. An input may be several (a tuple)."""
    inputs = _spec_argument(spec, "input")
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    inputs = tuple(x.detach().requires_grad_(x.is_floating_point() or x.is_complex()) for x in inputs)
    return inputs + (_spec_argument(spec, "target").detach(),) if criterion else inputs


def _spec_argument(spec: dict, name: str):
    if name in spec:
        return spec[name]
    if f"{name}_fn" in spec:
        return spec[f"{name}_fn"]()
    return torch.randn(spec[f"{name}_size"])


def torch_spec_module(spec: dict) -> torch.nn.Module:
    constructor = spec.get("constructor") or getattr(torch.nn, spec["module_name"])
    return constructor(*spec.get("constructor_args", ()))


def ember_spec_module(spec: dict):
    """ember's module for the spec: the same constructor over ember.nn."""
    constructor = spec.get("constructor")
    arguments = ember_args(tuple(spec.get("constructor_args", ())))
    if constructor is None:
        found = getattr(ember.nn, spec["module_name"], None)
        if found is None:
            raise AssertionError(f"ember has no nn.{spec['module_name']}")
        return found(*arguments)
    if isinstance(constructor, type) and constructor.__name__ == "FunctionalModule":
        wrapped = dict(zip(constructor.forward.__code__.co_freevars,
                           (cell.cell_contents for cell in constructor.forward.__closure__)))
        return FunctionalModule(_closed_over(wrapped["fn"]), ember_args(wrapped["kwargs"]))
    return _over_ember(constructor)(*arguments)


class FunctionalModule(ember.nn.Module):
    """ember's counterpart of common_nn's module around a functional (named as torch's, for its repr)."""

    def __init__(self, fn: Callable, kwargs: dict) -> None:
        super().__init__()
        self.fn, self.kwargs = fn, kwargs

    def forward(self, *args):
        return self.fn(*args, **self.kwargs)


def _over_ember(function: types.FunctionType) -> types.FunctionType:
    """A lambda of torch's test module rebuilt over ember: its globals' torch modules, and the tensors and
    functions it closes over, ember's."""
    rebuilt = over_ember_globals(function)
    rebuilt.__kwdefaults__ = function.__kwdefaults__
    if not function.__closure__:
        return rebuilt
    cells = tuple(types.CellType(_closed_over(cell.cell_contents)) for cell in function.__closure__)
    rebuilt = types.FunctionType(rebuilt.__code__, rebuilt.__globals__, rebuilt.__name__, rebuilt.__defaults__, cells)
    rebuilt.__kwdefaults__ = function.__kwdefaults__
    return rebuilt


def _closed_over(value):
    if isinstance(value, types.FunctionType) and (value.__module__ or "").startswith("torch.testing"):
        return _over_ember(value)
    return ember_args(value)


# torch's error patterns that ember's messages do not match on purpose, by (module, pattern), with the reason
# (the exception's type is still compared)
WORDED_OTHERWISE = {
    ("nn.MaxPool2d", r"non-empty 3D or 4D \(batch mode\) tensor expected for input"):
        "ember's names the op and the input's size: 'max_pool2d: Expected 3D or 4D input with non-zero spatial "
        "sizes, but got input of size: [3, 4]'",
    ("nn.CrossEntropyLoss", "expected target dtype to be Long or Byte"):
        "a floating target is one of class probabilities to ember's message, which says it needs the input's "
        "shape, and that class indices need a long target",
    **dict.fromkeys([(name, r"RNN input dtype .* does not match weight dtype .* Convert input: input\.to\(.*\), "
                            r"or convert model: model\.to\(.*\)") for name in ("nn.GRU", "nn.LSTM")],
                    "ember's message names the layer (GRU, LSTM), not its base class RNN"),
}


def error_inputs(info, training: bool) -> list:
    """The ModuleInfo's inputs that its construction or its forward must refuse (float64; none if it has none)."""
    if info.module_error_inputs_func is None:
        return []
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(info.module_error_inputs_func(info, device="cpu", dtype=torch.float64, requires_grad=False,
                                                  training=training))


def refusal_difference(info, ember_class, error_input, training: bool) -> str | None:
    """How ember's refusal of an error input differs from torch's, or None: the exception's type is torch's, and
    its message matches the database's pattern where torch's does (unless ``WORDED_OTHERWISE``). An input torch
    takes is not compared."""
    refused = _refusal(info.module_cls, error_input, training, lambda value: value)
    if refused is None:
        return None
    refused_too = _refusal(ember_class, error_input, training, ember_args)
    if refused_too is None:
        return f"ember raised nothing; torch raises {type(refused).__name__}: {refused}"
    if not isinstance(refused_too, type(refused)):
        return f"ember raised {type(refused_too).__name__}: {refused_too}; torch raises {type(refused).__name__}"
    pattern = error_input.error_regex
    if (info.name, pattern) in WORDED_OTHERWISE or not re.search(pattern, str(refused)):
        return None
    if not re.search(pattern, str(refused_too)):
        return f"ember's message {str(refused_too)!r} does not match torch's {pattern!r}"
    return None


def _refusal(module_class, error_input, training: bool, convert: Callable) -> Exception | None:
    """The exception building the module, or its forward, raises (None if neither does)."""
    module_input = error_input.module_error_input
    made, forward = module_input.constructor_input, module_input.forward_input
    try:
        module = module_class(*convert(tuple(made.args)), **convert(dict(made.kwargs)))
        if error_input.error_on.name == "FORWARD_ERROR":
            module.train(training)
            module(*convert(tuple(forward.args)), **convert(dict(forward.kwargs)))
    except Exception as error:
        return error
    return None
