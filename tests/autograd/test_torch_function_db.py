"""torch's databases of custom autograd.Functions and custom ops (``autograd_function_db``, ``custom_op_db``), run
in ember and in torch, every transform compared.

``function_db`` loads each database twice: torch's module, and its source rewritten to ``import ember as torch``.
Every entry's samples (torch's generators, one sample per entry, in float64, converted with ``to_ember``) go
through the same program in both frameworks, written once over ``fw`` (``torch`` or ``ember``): the forward; the
gradients by ``autograd.grad`` with fixed grad_outputs; the second-order ones; forward-mode by dual numbers and by
``func.jvp``; ``func.vmap`` over a batch of two; ``func.grad``, ``jacrev`` and ``jacfwd``; for the Functions
``hessian`` and ``vmap(grad)``; and for the custom ops ``library.opcheck``. Where torch raises (a Function without
``jvp`` under forward AD, a Function without a vmap rule under vmap), ember must raise the same exception
type; otherwise the results must match (values, dtypes, shapes, and which outputs require grad).

Each database yields one sample per entry, and each check runs on it: 25 entries, 264 cases, about 13 s of CPU.
Where torch.func refuses what ember supports (``TORCH_NO_ORACLE``), ember's result is compared with torch's
ordinary autograd instead; ``DIFFERENT_ON_PURPOSE`` lists the few cases skipped, with the reason.
"""
from __future__ import annotations

import types
import warnings
from typing import Any, Callable

import pytest
import torch

import ember
from tests.autograd.function_db import DATABASES, ember_db, torch_db
from tests.opinfo_samples import difference, plain, to_ember

BATCH = 2

# (entry, check) pairs where ember differs from torch on purpose, with the reason
DIFFERENT_ON_PURPOSE: dict[tuple[str, str], str] = {
    **dict.fromkeys([("NumpyNonzeroCustomOp", "opcheck"), ("NumpyNMSCustomOp", "opcheck")],
                    "the fake kernel asks for an unbacked symbolic size (get_ctx().create_unbacked_symint()): ember's "
                    "sizes are plain ints, and its get_ctx() gives None"),
    **dict.fromkeys([("NumpyMulCustomOp", "jacfwd"), ("NumpyMulScalarCustomOp", "jacfwd"),
                     ("NumpyNonzeroCustomOp", "jacfwd"), ("NumpyNMSCustomOp", "jacfwd")],
                    "ember's jacfwd batches the tangents and so runs the op's vmap rule, whose ember ops carry them "
                    "(the true Jacobian, or the rule's refusal); torch runs the kernel once, dropping the tangents "
                    "(a Jacobian of zeros) or returning no float output"),
    ("CubeGenVmapAutogradFunction", "hessian"):
        "the entry's backward and jvp disagree on purpose (its backward drops grad_saved); ember's hessian takes "
        "its forward products by reverse mode (faster), so it differentiates the backward where torch uses the jvp",
    **dict.fromkeys([("NumpyCatCustomOp", "jacrev"), ("NumpyCatCustomOp", "jacfwd")],
                    "the database's vmap rule for numpy_cat unpacks in_dims as one entry where it has two (torch's "
                    "vmap fails on it as ember's does, see the vmap check); these transforms reach that rule in ember"),
}

# (database, check) pairs where torch's own transform is no oracle, with the reason: ember's result is compared
# with ``REFERENCES[check]`` run in torch (ordinary autograd) instead, and where ``REFERENCES`` has none, ember must
# raise ``NotImplementedError`` (a jacfwd may do either)
_REVERSE_REFUSED = ("torch.func's reverse transforms refuse a custom op's autograd formula (the Function torch makes "
                    "for it has no setup_context); ember's run it")
TORCH_NO_ORACLE = {("custom_op_db", "func.grad"): _REVERSE_REFUSED, ("custom_op_db", "jacrev"): _REVERSE_REFUSED}


# ------------------------------------------------------------------------------------------- the checks
# Each check is one program over ``fw``: the same code runs in torch and in ember.


def _leaves(value) -> list:
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _outputs(result) -> list:
    return [leaf for leaf in _leaves(result) if _is_tensor(leaf)]


def _is_tensor(value) -> bool:
    return isinstance(value, (torch.Tensor, ember.Tensor))


def _differentiable(fw, values) -> list:
    return [v for v in _leaves(values) if _is_tensor(v) and v.dtype == fw.float64]


def _with_grad(fw, value):
    """The sample's argument, its float64 tensors leaves that require grad."""
    if isinstance(value, (list, tuple)):
        return type(value)(_with_grad(fw, v) for v in value)
    if _is_tensor(value) and value.dtype == fw.float64:
        return value.detach().clone().requires_grad_()
    return value


def _cotangents(fw, outputs) -> list:
    """A fixed grad_output for each output: values that differ from place to place, the same in both frameworks."""
    return [fw.linspace(-1.5, 2.0, o.numel(), dtype=o.dtype).reshape(o.shape) for o in outputs]


def check_forward(fw, op, args, kwargs):
    result = op(*args, **kwargs)
    return result, [o.requires_grad for o in _outputs(result)]


def _first_order(fw, op, args, kwargs, create_graph: bool):
    args = _with_grad(fw, args)
    inputs = _differentiable(fw, args)
    outputs = [o for o in _outputs(op(*args, **kwargs)) if o.requires_grad]
    grads = fw.autograd.grad(outputs, inputs, _cotangents(fw, outputs), create_graph=create_graph, allow_unused=True)
    return inputs, grads


def check_grad(fw, op, args, kwargs):
    return _first_order(fw, op, args, kwargs, create_graph=False)[1]


def check_gradgrad(fw, op, args, kwargs):
    inputs, grads = _first_order(fw, op, args, kwargs, create_graph=True)
    grads = [g for g in grads if g is not None and g.requires_grad]
    return fw.autograd.grad(grads, inputs, _cotangents(fw, grads), allow_unused=True)


def _tangents(fw, primals) -> list:
    return [fw.linspace(0.5, -1.0, p.numel(), dtype=p.dtype).reshape(p.shape) for p in primals]


def check_forward_ad(fw, op, args, kwargs):
    fwad = fw.autograd.forward_ad
    primals = _differentiable(fw, args)
    with fwad.dual_level():
        duals = dict(zip(map(id, primals), (fwad.make_dual(p, t) for p, t in zip(primals, _tangents(fw, primals)))))
        result = op(*_replace(args, duals), **kwargs)
        return [(fwad.unpack_dual(o).primal, fwad.unpack_dual(o).tangent) for o in _outputs(result)]


def _replace(value, by_id: dict):
    if isinstance(value, (list, tuple)):
        return type(value)(_replace(v, by_id) for v in value)
    return by_id.get(id(value), value)


def _of_first_input(fw, op, args, kwargs) -> Callable:
    """``op`` as a function of its first float tensor argument alone (the others fixed), returning its outputs."""
    first = _differentiable(fw, args)[0]

    def function(x):
        return tuple(_outputs(op(*_replace(args, {id(first): x}), **kwargs)))
    return function, first


def _float_outputs(function: Callable) -> Callable:
    def float_only(x):
        return tuple(o for o in function(x) if o.is_floating_point())
    return float_only


def check_func_jvp(fw, op, args, kwargs):
    function, first = _of_first_input(fw, op, args, kwargs)
    return fw.func.jvp(function, (first,), tuple(_tangents(fw, [first])))


def check_func_grad(fw, op, args, kwargs):
    function, first = _of_first_input(fw, op, args, kwargs)
    return fw.func.grad(_weighted_sum(function, fw))(first)


def _weighted_sum(function: Callable, fw) -> Callable:
    def scalar(x):
        output = function(x)[0]
        return (output * _cotangents(fw, [output])[0]).sum()
    return scalar


def check_hessian(fw, op, args, kwargs):
    function, first = _of_first_input(fw, op, args, kwargs)
    return fw.func.hessian(_weighted_sum(function, fw))(first)


def check_vmap_of_grad(fw, op, args, kwargs):
    """Per-sample gradients: grad under vmap, over a batch of the first input and a rescaled copy."""
    function, first = _of_first_input(fw, op, args, kwargs)
    return fw.func.vmap(fw.func.grad(_weighted_sum(function, fw)))(fw.stack([first, first * 0.5]))


def check_jacrev(fw, op, args, kwargs):
    function, first = _of_first_input(fw, op, args, kwargs)
    return fw.func.jacrev(_float_outputs(function))(first)


def check_jacfwd(fw, op, args, kwargs):
    function, first = _of_first_input(fw, op, args, kwargs)
    return fw.func.jacfwd(_float_outputs(function))(first)


def _batched(fw, value):
    """A batch of two of a tensor argument: itself and (float tensors) a rescaled copy; other arguments as they are."""
    if isinstance(value, (list, tuple)):
        return type(value)(_batched(fw, v) for v in value)
    if not _is_tensor(value):
        return value
    second = value * 0.75 + 0.125 if value.is_floating_point() else value
    return fw.stack([value, second])


def _in_dims(value):
    if isinstance(value, (list, tuple)):
        return type(value)(_in_dims(v) for v in value)
    return 0 if _is_tensor(value) else None


def check_vmap(fw, op, args, kwargs):
    batched = _batched(fw, args)
    return fw.func.vmap(lambda *a: op(*a, **kwargs), in_dims=tuple(_in_dims(args)))(*batched)


def check_opcheck(fw, op, args, kwargs):
    results = fw.library.opcheck(op, _with_grad(fw, args), kwargs, raise_exception=False)
    return {name: outcome if outcome == "SUCCESS" else type(outcome).__name__ for name, outcome in results.items()}


def reference_grad(fw, op, args, kwargs):
    """``check_func_grad``'s gradient by autograd.grad (zeros where the output does not depend on the input)."""
    function, first = _of_first_input(fw, op, args, kwargs)
    x = first.detach().requires_grad_()
    output = function(x)[0]
    scalar = (output * _cotangents(fw, [output])[0]).sum()
    found = fw.autograd.grad(scalar, x, allow_unused=True)[0] if scalar.requires_grad else None
    return fw.zeros_like(x) if found is None else found


def reference_jacobian(fw, op, args, kwargs):
    """``check_jacrev``'s Jacobians by autograd.functional.jacobian (reverse mode, one row at a time)."""
    function, first = _of_first_input(fw, op, args, kwargs)
    outputs = _float_outputs(function)
    if not outputs(first):
        return fw.func.jacrev(outputs)(first)  # (the same refusal of a function with no outputs)
    return fw.autograd.functional.jacobian(outputs, first.detach())


REFERENCES = {"func.grad": reference_grad, "jacrev": reference_jacobian}


CHECKS = {
    "forward": check_forward, "grad": check_grad, "gradgrad": check_gradgrad, "forward_ad": check_forward_ad,
    "func.jvp": check_func_jvp, "vmap": check_vmap, "func.grad": check_func_grad, "jacrev": check_jacrev,
    "jacfwd": check_jacfwd,
}
# (torch.func's grad refuses custom ops, so these compositions of it are run for the Functions only)
FUNCTION_CHECKS = {**CHECKS, "hessian": check_hessian, "vmap(grad)": check_vmap_of_grad}
CUSTOM_OP_CHECKS = {**CHECKS, "opcheck": check_opcheck}
ALL_CHECKS = {**FUNCTION_CHECKS, **CUSTOM_OP_CHECKS}


# ------------------------------------------------------------------------------------------- running them


def _samples(info) -> list:
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(info.sample_inputs_func(info, "cpu", torch.float64, False))


def _outcome(fw: types.ModuleType, check: Callable, op: Callable, args: tuple, kwargs: dict) -> Any:
    """The check's result in ``fw``, or the exception it raised."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return check(fw, op, args, kwargs)
    except Exception as error:  # noqa: BLE001  (an exception is an outcome to compare)
        return error


def _cases():
    for database in DATABASES:
        checks = CUSTOM_OP_CHECKS if database == "custom_op_db" else FUNCTION_CHECKS
        for name in torch_db(database):
            for check in checks:
                yield pytest.param(database, name, check, id=f"{name}-{check}")


@pytest.mark.parametrize("database, name, check_name", list(_cases()))
def test_entry_matches_torch(database: str, name: str, check_name: str):
    if (name, check_name) in DIFFERENT_ON_PURPOSE:
        pytest.skip(DIFFERENT_ON_PURPOSE[name, check_name])
    info, entry = torch_db(database)[name], ember_db(database)[name]
    check = ALL_CHECKS[check_name]
    no_oracle = (database, check_name) in TORCH_NO_ORACLE
    for sample in _samples(info):
        args, kwargs = (sample.input, *sample.args), dict(sample.kwargs)
        got = _outcome(ember, check, entry.op, to_ember(args), to_ember(kwargs))
        if no_oracle and (check_name not in REFERENCES or isinstance(got, NotImplementedError)):
            assert isinstance(got, NotImplementedError), f"{name} {check_name}: ember gives {got!r}"
            continue
        reference = REFERENCES[check_name] if no_oracle else check
        expected = _outcome(torch, reference, info.op, args, kwargs)
        if isinstance(expected, Exception) or isinstance(got, Exception):
            assert type(got).__name__ == type(expected).__name__, (
                f"{name} {check_name}: torch gives {expected!r}, ember {got!r}")
            continue
        found = difference(plain(expected), plain(got))
        assert found is None, f"{name} {check_name}: {found}"
