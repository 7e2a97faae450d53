"""torch's own docstring examples, run with torch and with ember: what they print must agree.

Each public callable of the namespaces below whose docstring has ``>>>`` examples is a case (the machinery
is in ``doc_examples.py``). The examples' values come from ``manual_seed(0)``, and ember's random streams
are torch's, so values compare as well as shapes, dtypes and printed forms.
"""
from __future__ import annotations

import importlib
import warnings

import pytest
import torch

from doc_examples import agree, examples_of, run_both

NAMESPACES = (
    "torch", "torch.Tensor", "torch.linalg", "torch.special", "torch.fft", "torch.nn", "torch.nn.functional",
    "torch.nn.init", "torch.nn.Module", "torch.nn.utils", "torch.nn.utils.rnn", "torch.nn.utils.parametrize",
    "torch.nn.utils.parametrizations", "torch.nn.utils.prune", "torch.nn.utils.stateless", "torch.optim",
    "torch.optim.lr_scheduler", "torch.optim.swa_utils", "torch.autograd", "torch.autograd.functional",
    "torch.autograd.forward_ad", "torch.autograd.graph", "torch.func", "torch.distributions",
    "torch.distributions.transforms", "torch.distributions.constraints", "torch.distributions.kl",
    "torch.utils.data", "torch.utils.checkpoint", "torch.utils.dlpack", "torch.testing", "torch.overrides",
    "torch.library", "torch.sparse", "torch.serialization", "torch.hub", "torch.signal.windows", "torch.profiler",
    "torch.cpu", "torch.autograd.function.FunctionCtx", "torch.Generator", "torch.nn.Sequential",
    "torch.autograd.graph.Node",
)

UNINITIALISED = "prints uninitialised memory, which differs from run to run"
ROUNDING = "a comparison at the edge of allclose's tolerance, decided by the last bits of a float32 kernel"
DIFFERENT_ON_PURPOSE = {
    ("torch", "empty"): UNINITIALISED,
    ("torch", "empty_strided"): UNINITIALISED,
    ("torch.Tensor", "new_empty"): UNINITIALISED,
    ("torch.Tensor", "new_empty_strided"): UNINITIALISED,
    ("torch.nn.utils", "skip_init"): UNINITIALISED + " (ember initialises the parameters anyway)",
    ("torch.linalg", "lu_solve"): ROUNDING,
    ("torch.linalg", "solve_triangular"): ROUNDING,
    ("torch.fft", "hfft2"): ROUNDING,
    ("torch.fft", "hfftn"): ROUNDING,
    ("torch", "cholesky_inverse"): "a float32 residual of an ill-conditioned matrix (0.0005 against 0.0007)",
    ("torch.distributions", "LKJCholesky"): "torch's onion sampler draws rows k >= 2 from Beta(k - 1/2, ·); the "
    "paper's Beta(k/2, ·), which ember uses, is what gives every correlation the same marginal",
    ("torch", "conj"): "ember has no lazy conjugate bit: conj() computes the conjugate, so is_conj() is False",
    ("torch", "resolve_conj"): "ember has no lazy conjugate bit",
    ("torch", "resolve_neg"): "ember has no lazy negative bit",
    ("torch", "set_default_dtype"): "ember has no complex32, so float16's complex counterpart is complex64",
    ("torch", "set_flush_denormal"): "NumPy cannot set the CPU's flush-to-zero mode, so ember reports False",
    ("torch", "vmap"): "prints torch.dot itself, a built-in method in torch and a Python function in ember",
    ("torch.func", "vmap"): "prints torch.dot itself, a built-in method in torch and a Python function in ember",
    ("torch.func", "functionalize"): "imports torch.fx.experimental.proxy_tensor.make_fx, which ember lacks",
    ("torch.linalg", "LinAlgError"): "torch raises its private subclass _LinAlgError; ember raises LinAlgError",
    ("torch.profiler", "record_function"): "prints measured times",
    ("torch.Generator", "seed"): "prints a seed drawn from the operating system's entropy",
    ("torch.overrides", "get_testing_overrides"): "prints the signature of torch.add's stand-in, which omits alpha; "
    "ember's stand-ins take each function's own signature",
    ("torch.library", "get_kernel"): "asks for the kernel of aten::add.Tensor: ember's built-in ops are not library "
    "operators, so only those defined with ember.library have kernels to hand out",
}


def _public(namespace: str):
    """The namespace's public names and objects; a class's own methods when the namespace is a class."""
    module_name, _, attribute = namespace.rpartition(".")
    if attribute and attribute[0].isupper():
        owner = getattr(importlib.import_module(module_name), attribute)
        return [(name, getattr(owner, name)) for name in sorted(vars(owner)) if not name.startswith("_")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = importlib.import_module(namespace)
        return [(name, getattr(module, name, None)) for name in sorted(dir(module)) if not name.startswith("_")]


def _cases():
    for namespace in NAMESPACES:
        for name, obj in _public(namespace):
            if examples_of(obj):
                reason = DIFFERENT_ON_PURPOSE.get((namespace, name))
                marks = (pytest.mark.skip(reason=reason),) if reason else ()
                yield pytest.param(namespace, name, id=f"{namespace}.{name}", marks=marks)


def _home(namespace: str) -> str:
    """The module whose names an example may use unqualified: the namespace, or a class's module."""
    module_name, _, attribute = namespace.rpartition(".")
    return module_name if attribute[0].isupper() else namespace


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("namespace, name", list(_cases()))
def test_example_prints_as_torch(namespace, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # some examples save files
    obj = dict(_public(namespace))[name]
    ran = run_both(examples_of(obj), _home(namespace))
    assert agree(ran.torch, ran.ember), "\n".join(
        f">>> {example.source}torch: {t!r}\nember: {e!r}"
        for example, t, e in zip(examples_of(obj), ran.torch, ran.ember) if t != e)


def test_the_namespaces_hold_many_examples():
    # the filters in doc_examples.py must not quietly drop most of torch's examples
    assert len(list(_cases())) > 650
