"""torch's optimizer database (``optim_db``) run through ember: every entry's optimizer inputs for the CPU, in
float64 and float32 (and complex128 and complex64 where the entry takes complex parameters), give the same
parameter trajectory over ten steps, the same ``state_dict()`` and ``defaults``; torch's state dict loaded into
ember continues the same way; the ``foreach``, ``fused`` and ``differentiable`` implementations match; and the
entries' error inputs raise the same exceptions. See ``optim_samples`` for the problem both libraries solve.
"""
from __future__ import annotations

import pytest
import torch

import ember
from tests.optim.optim_samples import (STEPS, Problem, defaults_difference, ember_optimizer_class, error_inputs,
                                       info_named, optim_db, optimizer_inputs, param_to_ember, run,
                                       state_dict_difference, state_dict_to_ember, trajectory_difference)
from tests.opinfo_samples import to_ember

# torch's error messages that ember words differently on purpose, by (entry, torch's regex): ember's message
# must name the same problem, matched by the regex given here instead (none so far)
REWORDED_ERRORS: dict[tuple[str, str], str] = {}

# where ember differs from torch on purpose, with the reason; how each is compared instead is in its test
DIFFERENT_ON_PURPOSE = {
    "Muon": "torch runs Muon's Newton-Schulz iteration in bfloat16, ember in the parameter's own precision: "
            "compared with torch's iteration run in full precision",
    "LBFGS-float32": "float32 L-BFGS runs its 20 inner iterations a step down to float32's rounding noise, where "
                     "the order in which torch and NumPy sum dot products decides: trajectories compared to 1e-2, "
                     "the state (built from those noisy differences) not at all",
    "ASGD-foreach": "torch's foreach ASGD multiplies by its float32 eta and mu tensors, its for-loop (which ember "
                    "follows) by Python floats: foreach=True float64 trajectories compared to 1e-6",
    "differentiable-step": "torch's recorded Adam, AdamW and NAdam updates take their bias corrections (NAdam's "
                           "momentum schedule) from the float32 step counter, ember's (the same code as its "
                           "ordinary update) in float64: compared to 1e-5",
}


@pytest.fixture(autouse=True)
def _muon_in_full_precision(request, monkeypatch):
    """torch's Muon with its Newton-Schulz iteration in the parameters' precision (``DIFFERENT_ON_PURPOSE``)."""
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None and callspec.params.get("name") == "Muon":
        monkeypatch.setattr(torch.Tensor, "bfloat16", lambda self: self.clone())


def _tolerances(name: str, dtype: torch.dtype, flag: dict | None = None) -> dict:
    """The trajectory tolerances where ``DIFFERENT_ON_PURPOSE`` loosens them; the dtype's otherwise."""
    if name == "LBFGS" and dtype == torch.float32:
        return {"rtol": 1e-2, "atol": 1e-5}
    if name == "ASGD" and dtype == torch.float64 and flag == {"foreach": True}:
        return {"rtol": 1e-6, "atol": 1e-10}
    return {}


def _assert_same(name: str, dtype: torch.dtype, expected: list, got: list, reference, optimizer,
                 flag: dict | None = None) -> None:
    """The same trajectory, and (but for float32 L-BFGS, see ``DIFFERENT_ON_PURPOSE``) the same state dict."""
    found = trajectory_difference(expected, got, dtype, **_tolerances(name, dtype, flag))
    assert found is None, found
    if name == "LBFGS" and dtype == torch.float32:
        return
    found = state_dict_difference(reference.state_dict(), optimizer.state_dict())
    assert found is None, found


def _cases(with_complex: bool = False) -> list:
    cases = []
    for info in optim_db():
        dtypes = [torch.float64, torch.float32]
        for dtype in dtypes:
            for complex_params in ([False, True] if with_complex and info.supports_complex else [False]):
                for index, sample in enumerate(optimizer_inputs(info, dtype)):
                    kind = str(dtype.to_complex() if complex_params else dtype).split(".")[-1]
                    cases.append(pytest.param(info.name, dtype, complex_params, index,
                                              id=f"{info.name}-{sample.desc.replace(' ', '_')}-{kind}"))
    return cases


def _pair(name: str, dtype: torch.dtype, complex_params: bool, index: int, **extra):
    """The problem, and (params, optimizer) for torch and for ember, built from the entry's input ``index``."""
    info = info_named(name)
    sample = optimizer_inputs(info, dtype)[index]
    problem = Problem(info, dtype, complex_params)
    kwargs = dict(sample.kwargs, **extra)
    theirs = problem.params(torch)
    ours = problem.params(ember)
    reference = info.optim_cls(theirs, **kwargs)
    optimizer = ember_optimizer_class(info)(ours, **to_ember(kwargs))
    return problem, (theirs, reference), (ours, optimizer)


@pytest.mark.parametrize("name, dtype, complex_params, index", _cases(with_complex=True))
def test_trajectory_state_and_defaults(name, dtype, complex_params, index):
    problem, (theirs, reference), (ours, optimizer) = _pair(name, dtype, complex_params, index)
    assert defaults_difference(reference.defaults, optimizer.defaults) is None, \
        defaults_difference(reference.defaults, optimizer.defaults)
    expected = run(problem, torch, reference, theirs, STEPS)
    got = run(problem, ember, optimizer, ours, STEPS)
    _assert_same(name, dtype, expected, got, reference, optimizer)


@pytest.mark.parametrize("name, dtype, complex_params, index", _cases())
def test_loading_torchs_state_dict_continues_alike(name, dtype, complex_params, index):
    """torch's state dict after five steps, loaded into fresh optimizers of both libraries over parameters at
    the values torch reached, gives the same next five steps and state."""
    problem, (theirs, reference), _ = _pair(name, dtype, complex_params, index)
    run(problem, torch, reference, theirs, 5)
    saved, reached = reference.state_dict(), [p.detach().clone() for p in theirs]
    problem, (theirs, reference), (ours, optimizer) = _pair(name, dtype, complex_params, index)
    with torch.no_grad(), ember.no_grad():
        for their, mine, value in zip(theirs, ours, reached):
            their.copy_(value)
            mine.copy_(to_ember(value))
    reference.load_state_dict(saved)
    optimizer.load_state_dict(state_dict_to_ember(saved))
    expected = run(problem, torch, reference, theirs, 5, first_step=5)
    got = run(problem, ember, optimizer, ours, 5, first_step=5)
    _assert_same(name, dtype, expected, got, reference, optimizer)


def _implementations() -> list:
    cases = []
    for info in optim_db():
        flags = []
        if "foreach" in info.supported_impls:
            flags += [{"foreach": True}, {"foreach": False}]
        if "fused" in info.supported_impls and "cpu" in info.supports_fused_on:
            flags.append({"fused": True})
        for flag in flags:
            for dtype in (torch.float64, torch.float32):
                for index, sample in enumerate(optimizer_inputs(info, dtype)):
                    if isinstance(sample.kwargs.get("lr"), torch.Tensor) and flag.get("foreach"):
                        continue  # (a tensor lr with foreach is one of the error inputs)
                    key, value = next(iter(flag.items()))
                    cases.append(pytest.param(info.name, dtype, index, flag, id=f"{info.name}-{key}={value}-"
                                              f"{sample.desc.replace(' ', '_')}-{str(dtype).split('.')[-1]}"))
    return cases


@pytest.mark.parametrize("name, dtype, index, flag", _implementations())
def test_implementation_flags(name, dtype, index, flag):
    """``foreach=True/False`` and (where torch has it on the CPU) ``fused=True`` are taken, kept in the param
    groups, and give torch's trajectory."""
    problem, (theirs, reference), (ours, optimizer) = _pair(name, dtype, False, index, **flag)
    expected = run(problem, torch, reference, theirs, STEPS)
    got = run(problem, ember, optimizer, ours, STEPS)
    _assert_same(name, dtype, expected, got, reference, optimizer, flag)


def _differentiable() -> list:
    return [pytest.param(info.name, complex_params, index, id=f"{info.name}-{index}{'-complex' * complex_params}")
            for info in optim_db() if "differentiable" in info.supported_impls
            for complex_params in ([False, True] if info.supports_complex else [False])
            for index, _ in enumerate(optimizer_inputs(info, torch.float64))]


@pytest.mark.parametrize("name, complex_params, index", _differentiable())
def test_differentiable_steps_carry_the_graph(name, complex_params, index):
    """With ``differentiable=True`` an optimizer may step non-leaf parameters (clones of leaves), recording its
    update: the gradient of the final parameters' sum with respect to the leaves matches torch's. Three steps,
    or one where torch's own recorded update cannot be differentiated through more (some keep in the graph a
    state tensor that their next step changes in place). Complex parameters step as their real pairs."""
    info = info_named(name)
    problem = Problem(info, torch.float64, complex_params)
    kwargs = dict(optimizer_inputs(info, torch.float64)[index].kwargs, differentiable=True)
    kwargs.pop("foreach", None)  # (refused with differentiable=True: see test_differentiable_refuses_foreach)
    try:
        steps, expected = 3, _recorded_run(problem, torch, info.optim_cls, kwargs, 3)
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error)
        steps, expected = 1, _recorded_run(problem, torch, info.optim_cls, kwargs, 1)
    got = _recorded_run(problem, ember, ember_optimizer_class(info), to_ember(kwargs), steps)
    tolerances = _recorded_tolerances(name)
    for what, theirs, ours in zip(("trajectory", "gradient"), expected, got):
        found = trajectory_difference(theirs, ours, torch.float64, **tolerances)
        assert found is None, f"{what}: {found}"


def _recorded_run(problem: Problem, lib, cls, kwargs: dict, steps: int) -> tuple:
    """``steps`` recorded steps of clones of leaves: the trajectory, and the leaves' gradients of the sum of
    the last parameters (of their real and imaginary parts)."""
    leaves = problem.params(lib)
    params = [leaf.clone() for leaf in leaves]
    trajectory = run(problem, lib, cls(params, **kwargs), params, steps)
    sum((lib.view_as_real(p) if p.is_complex() else p).sum() for p in params).backward()
    return trajectory, [[leaf.grad.numpy() for leaf in leaves]]


def _recorded_tolerances(name: str) -> dict:
    """float64's tolerances, but where ``DIFFERENT_ON_PURPOSE["differentiable-step"]`` loosens them."""
    return {"rtol": 1e-5, "atol": 1e-9} if name in ("Adam", "AdamW", "NAdam") else {}


def _error_cases() -> list:
    return [pytest.param(info.name, index, id=f"{info.name}-{index}-{error.error_type.__name__}")
            for info in optim_db() for index, error in enumerate(error_inputs(info))]


@pytest.mark.parametrize("name, index", _error_cases())
def test_error_inputs(name, index):
    """Each error input raises (or warns) in ember as in torch: the same exception type, and a message matching
    torch's regex (or, where ember words it differently on purpose, the regex in ``REWORDED_ERRORS``)."""
    info = info_named(name)
    error = error_inputs(info)[index]
    sample = error.optimizer_error_input
    if sample.params is None:
        params = None
    else:
        params = param_to_ember(sample.params)
    kwargs = to_ember(sample.kwargs)
    regex = REWORDED_ERRORS.get((name, error.error_regex), error.error_regex)
    cls = ember_optimizer_class(info)
    construction = error.error_on.name == "CONSTRUCTION_ERROR"
    if issubclass(error.error_type, Warning):
        with pytest.warns(error.error_type, match=regex):
            optimizer = cls(params, **kwargs)
            if not construction:
                optimizer.step()
        return
    if construction:
        with pytest.raises(error.error_type, match=regex):
            cls(params, **kwargs)
        return
    optimizer = cls(params, **kwargs)
    with pytest.raises(error.error_type, match=regex):
        optimizer.step()

