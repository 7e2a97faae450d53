"""An op saves for backward only what the gradients that are needed read, as torch's formulas do.

Driven by the op table: for every row with two or more differentiable inputs, one input at a time is made a
constant (no gradient), and after the forward one input is changed in place. Where torch's op saved that input
for a gradient that is needed, both libraries must refuse the backward ("modified by an inplace operation");
where it did not, both must run it and give the same gradients. So ember neither refuses legal programs nor
keeps alive what no backward reads.

Where torch refuses but its gradient never reads the changed values (torch saves both operands of a division
with a rounding mode, whose gradients are zero), ember may run: its gradients must then be those of the same
program without the change. The few cases where ember refuses and torch does not are listed, with the reason.
"""
from __future__ import annotations

import pytest
import torch

import ember
from op_table import OPS
from test_ops import _markers, assert_same, call, inputs_for


def _cases():
    for spec in OPS:
        if not spec.differentiable or "float64" not in spec.dtypes:
            continue
        for index, sample in enumerate(spec.samples):
            count = sum(1 for _ in _markers(sample.args + tuple(sample.kwargs.values())))
            for constant in range(count if count >= 2 else 0):
                for changed in range(count):
                    yield pytest.param(spec, index, constant, changed,
                                       id=f"{spec.name}-{index}-const{constant}-changed{changed}")


def _replace(value, old, new):
    if value is old:
        return new
    if isinstance(value, tuple):
        return tuple(_replace(v, old, new) for v in value)
    return value


def _run(lib, spec, index, constant: int, changed: int | None):
    """(outcome, gradients of the inputs that need one): outcome is 'ok' or the type of error raised."""
    args, kwargs, leaves = inputs_for(spec, index, "float64").build(lib)
    operands = []
    for i, leaf in enumerate(leaves):
        operand = leaf if i == constant else leaf.requires_grad_().clone()  # a non-leaf may change in place
        args = tuple(_replace(a, leaf, operand) for a in args)
        kwargs = {k: _replace(v, leaf, operand) for k, v in kwargs.items()}
        operands.append(operand)
    try:
        out = call(spec, lib, args, kwargs)
    except Exception as error:  # the sample itself fails: compared as an outcome
        return type(error), []
    if not isinstance(out, lib.Tensor) or not out.requires_grad:
        return "no graph", []
    if changed is not None:
        operands[changed].add_(1.0)
    try:
        out.sum().backward()
    except RuntimeError as error:
        return ("modified in place" if "inplace operation" in str(error) else type(error)), []
    return "ok", [leaf.grad for i, leaf in enumerate(leaves) if i != constant]


CASES = list(_cases())

# Where ember refuses a change that torch allows (or records no graph where torch records one), and why
REFUSES_WHERE_TORCH_RUNS = {
    "einsum_three": "ember contracts three operands in the cheapest order (torch: left to right), so the "
                    "intermediate products that are saved, and the inputs they need, differ",
}
# Where torch runs but its gradient reads the changed values (a wrong gradient): ember keeps copies and gives the
# gradients of the program as it ran, which the test takes from torch's run without the change
TORCH_READS_THE_CHANGE = {"kron"}


@pytest.mark.parametrize("spec,index,constant,changed", CASES)
def test_changing_an_input_after_the_forward_is_refused_exactly_where_torch_refuses(spec, index, constant, changed):
    mine, my_grads = _run(ember, spec, index, constant, changed)
    theirs, their_grads = _run(torch, spec, index, constant, changed)
    what = f"{spec.name}{spec.samples[index]}, input {constant} constant, input {changed} changed in place"
    if theirs == "modified in place" and mine == "ok" or spec.name in TORCH_READS_THE_CHANGE:
        # torch saved what its gradient does not read (or reads only through a copy); ember's gradients must
        # then be the ones of the program without the change
        theirs, their_grads = _run(torch, spec, index, constant, changed=None)
    if spec.name in REFUSES_WHERE_TORCH_RUNS and mine != theirs and mine in ("modified in place", "no graph"):
        pytest.skip(REFUSES_WHERE_TORCH_RUNS[spec.name])
    assert mine == theirs, f"{what}: torch gives {theirs!r}, ember {mine!r}"
    for i, (g, h) in enumerate(zip(my_grads, their_grads)):
        if h is None:
            assert g is None, f"{what}: gradient {i} should be None"
        else:
            assert_same(g, h, f"{what}: gradient {i}")
