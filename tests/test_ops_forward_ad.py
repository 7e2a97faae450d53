"""The forward-mode column of the op table: every differentiable row's JVP agrees with its VJP.

For random ``v`` (a tangent per input) and ``u`` (a weight per output), forward mode gives ``J v`` and
reverse mode ``J^T u``; both must give the same ``u . J v = (J^T u) . v``, in float64, on one sample per row.
"""
from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwAD
from op_table import OPS, OpSpec
from test_ops import call, inputs_for

ROWS = [pytest.param(spec, id=spec.name) for spec in OPS if spec.differentiable and "float64" in spec.dtypes]


def _tensors(output) -> list:
    outputs = output if isinstance(output, (tuple, list)) else (output,)
    return [o for o in outputs if isinstance(o, ember.Tensor) and o.dtype.is_floating_point]


def _random(shape: tuple, seed: int) -> ember.Tensor:
    return ember.from_numpy(np.random.default_rng(seed).uniform(-1, 1, shape))


@pytest.mark.parametrize("spec", ROWS)
def test_forward_mode_jvp_agrees_with_reverse_mode_vjp(spec: OpSpec):
    inputs = inputs_for(spec, 0, "float64")
    args, kwargs, leaves = inputs.build(ember, requires_grad=True)
    output = call(spec, ember, args, kwargs)
    outs = [o for o in _tensors(output) if o.requires_grad]
    if not outs:
        pytest.skip(f"{spec.name}: no differentiable output on this sample")
    tangents = [_random(tuple(leaf.shape), 10 + i) for i, leaf in enumerate(leaves)]
    weights = [_random(tuple(o.shape), 20 + i) for i, o in enumerate(outs)]
    vjps = ember.autograd.grad(outs, leaves, weights, allow_unused=True)
    reverse = sum(float((g * v).sum()) for g, v in zip(vjps, tangents) if g is not None)

    plain_args, plain_kwargs, plain_leaves = inputs.build(ember)
    with fwAD.dual_level():
        duals = {id(leaf): fwAD.make_dual(leaf, v) for leaf, v in zip(plain_leaves, tangents)}

        def dual(a):
            if isinstance(a, tuple):
                return tuple(dual(x) for x in a)
            return duals.get(id(a), a)

        dual_out = call(spec, ember, tuple(dual(a) for a in plain_args),
                        {k: dual(v) for k, v in plain_kwargs.items()})
        jvps = [fwAD.unpack_dual(o).tangent for o in _tensors(dual_out)]
    floating = _tensors(output)
    jvps = [j for o, j in zip(floating, jvps) if o.requires_grad]
    forward = sum(float((j * w).sum()) for j, w in zip(jvps, weights) if j is not None)
    rtol = 1e-7 if all(o.dtype == ember.float64 for o in outs) else 1e-2  # a half output (x.half()) rounds
    assert np.isclose(forward, reverse, rtol=rtol, atol=1e-9), (
        f"{spec.name}{spec.samples[0]}: u.Jv = {forward} (forward mode) but (J^T u).v = {reverse} (reverse mode)"
    )
