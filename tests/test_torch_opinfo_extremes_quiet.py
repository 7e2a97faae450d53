"""Every OpInfo's first float64 samples, their floating values replaced by extremes (inf, -inf, nan, +-1e308,
+-1e-308, -0.0), through ember as a user's strict test suite runs it: with every warning an error
(``warnings.simplefilter("error")``, which pytest's ``-W error`` and ``filterwarnings = error`` set) and with
NumPy's floating-point errors raising (``np.errstate(all="raise")``).

torch computes inf and nan without a word, and so must ember: no RuntimeWarning or FloatingPointError of NumPy's
may escape an op, and the result must be the one ember gives under the default settings. The same holds for the
gradients (``autograd.grad`` of each differentiable output, weighted by ones, with respect to every floating
input) of the first sample of each differentiable OpInfo. torch's samples only supply the calls: torch itself is
not run on the extremes, where some of its LAPACK routines do not return. Two samples per OpInfo; samples that
ember refuses under the default settings are not run, and a warning of ember's own that the strict filter turns
into an error is not a fault (torch's would be one too)."""
import contextlib
import warnings

import numpy as np
import pytest
import torch

import ember

from opinfo_samples import Unconvertible, callable_or_skip, difference, op_db, op_id, plain, samples, to_ember, \
    values_comparable

OPS = op_db()
SAMPLES = 2

# the values the samples' floating tensors are filled with, in turn: every extreme, among ordinary numbers
EXTREMES = (float("inf"), 1.5, float("-inf"), float("nan"), -2.0, 1e308, -1e308, 0.0, 1e-308, -0.0, 0.5, -1e-308)


def _extreme(value):
    """A floating tensor's values replaced by ``EXTREMES`` (the samples' transform also passes their dtypes)."""
    if not isinstance(value, torch.Tensor) or not value.is_floating_point():
        return value
    pool = torch.tensor(EXTREMES, dtype=value.dtype)
    return pool[torch.arange(value.numel()) % len(pool)].reshape(value.shape)


@contextlib.contextmanager
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# the two strict settings, as context manager factories
STRICT = {"warnings as errors": _warnings_are_errors, "numpy errors raise": lambda: np.errstate(all="raise")}


def _run(fn, sample, settings=None, gradients: bool = False):
    """The sample's result in ember (or with ``gradients``, the inputs' gradients), under ``settings`` or, for
    None, under the default settings with warnings ignored."""
    args, kwargs = to_ember((sample.input, *sample.args)), to_ember(dict(sample.kwargs))
    compute = _gradients if gradients else _result
    if settings is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compute(fn, args, kwargs)
    with settings():
        return compute(fn, args, kwargs)


def _result(fn, args: tuple, kwargs: dict):
    return plain(fn(*args, **kwargs))


def _gradients(fn, args: tuple, kwargs: dict):
    inputs = [t for t in _tensors(args) if t.is_floating_point()]
    for tensor in inputs:
        tensor.requires_grad_()
    outputs = [t for t in _tensors(fn(*args, **kwargs)) if t.requires_grad]
    if not inputs or not outputs:
        raise Unconvertible("nothing to differentiate")
    found = ember.autograd.grad(outputs, inputs, [ember.ones_like(t) for t in outputs], allow_unused=True)
    return plain(tuple(found))


def _tensors(value) -> list:
    if isinstance(value, ember.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _numpy_objection(error: Exception) -> bool:
    return isinstance(error, FloatingPointError) or isinstance(error, RuntimeWarning) and "encountered" in str(error)


def _faults(info, fn, sample, gradients: bool = False) -> list[str]:
    """What goes wrong with ``sample`` in ember under each strict setting."""
    try:
        quiet = _run(fn, sample, gradients=gradients)
    except (Unconvertible, Exception):  # (ember refuses it, or cannot be given it: nothing to compare)
        return []
    faults = []
    for name, settings in STRICT.items():
        try:
            strict = _run(fn, sample, settings, gradients)
        except Exception as error:
            if _numpy_objection(error):
                faults.append(f"{name}: NumPy's {type(error).__name__} escaped: {error}")
            continue
        found = difference(quiet, strict, values_comparable(info))
        if found:
            faults.append(f"{name}: the result differs from the default settings' ({found})")
    return faults


@pytest.mark.parametrize("info", OPS, ids=op_id)
def test_extremes_run_quietly_under_strict_settings(info):
    fn = callable_or_skip(info)
    faults = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chosen = [s.transform(_extreme) for s in samples(info, torch.float64, SAMPLES)]
    for sample in chosen:
        faults += _faults(info, fn, sample)
    assert not faults, "\n".join(faults)


@pytest.mark.parametrize("info", [info for info in OPS if info.supports_autograd], ids=op_id)
def test_gradients_of_extremes_run_quietly_under_strict_settings(info):
    fn = callable_or_skip(info)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chosen = [s.transform(_extreme) for s in samples(info, torch.float64, 1)]
    faults = [fault for sample in chosen for fault in _faults(info, fn, sample, gradients=True)]
    assert not faults, "\n".join(faults)
