"""Every op of the op table under vmap: the batched call equals a stack of per-sample calls.

Each row's first sample is drawn three times (the row's own value generator, three seeds); the
tensor inputs (``A`` markers) are stacked and mapped over dim 0, everything else stays unbatched.
A second run maps only the first tensor input, the others shared by every sample. Rows whose op
has no batching rule must raise vmap's error naming the op, and ``NO_RULE`` says why.
"""
from __future__ import annotations

import numpy as np
import pytest

import ember
from op_spec import A, OpSpec
from op_table import OPS
from test_ops import Inputs, inputs_for, to_numpy

BATCH = 3

# Rows whose op vmap refuses, as torch.func.vmap does or where no rule is written yet: the row and the op
# its error must name (the message says why; docs/func.md lists the reasons).
NO_RULE = {
    "nonzero": "nonzero", "nonzero_as_tuple": "nonzero", "argwhere": "argwhere", "unique": "unique",
    "unique_inverse": "unique", "unique_counts": "unique", "unique_dim": "unique", "unique_dim_inverse": "unique",
    "unique_consecutive": "unique_consecutive", "unique_consecutive_inverse": "unique_consecutive",
    "unique_consecutive_counts": "unique_consecutive", "repeat_interleave_counts": "repeat_interleave",
    "getitem_bool_mask": "boolean mask",
    "nonzero_static": "nonzero_static", "bincount": "bincount", "bincount_weights": "bincount", "histc": "histc",
    "histogram": "histogram", "histogram_bin_edges": "histogram", "histogram_edges_given": "histogram",
    "as_strided": "as_strided", "as_strided_of_a_view": "as_strided", "as_strided_overlapping": "as_strided",
    "as_strided_form": "as_strided",
    # a quantized tensor holds one set of quantization parameters: it cannot carry a batch of samples
    "quantize_per_tensor_dequantize": "quantize_per_tensor", "quantize_per_tensor_int_repr": "quantize_per_tensor",
    "quantize_per_channel_int_repr": "quantize_per_channel",
}


def _dtype(spec: OpSpec) -> str:
    return "float64" if "float64" in spec.dtypes else spec.dtypes[0]


def _tensors_of(output) -> list | None:
    """The output's tensors in order (named tuples, tuples and lists flattened); None if it holds anything else."""
    if isinstance(output, ember.Tensor):
        return [output]
    if isinstance(output, (tuple, list)):
        found = []
        for o in output:
            inner = _tensors_of(o)
            if inner is None:
                return None
            found += inner
        return found
    return None


def _marker_positions(sample) -> list:
    return [i for i, a in enumerate(sample.args) if isinstance(a, A)]


ROWS = [pytest.param(spec, id=spec.name) for spec in OPS if _marker_positions(spec.samples[0])]


def _draws(spec: OpSpec) -> list:
    """The row's first sample, as the op table's tests draw it, and redrawn with other seeds."""
    return [inputs_for(spec, 0, _dtype(spec))] + [
        Inputs(spec, spec.samples[0], _dtype(spec), 1000 + seed) for seed in range(1, BATCH)]


@pytest.mark.parametrize("spec", ROWS)
def test_vmap_of_every_op_equals_a_stack_of_per_sample_calls(spec: OpSpec):
    positions = _marker_positions(spec.samples[0])
    builds = [draw.build(ember) for draw in _draws(spec)]
    try:
        looped = [_tensors_of(spec.fn(ember, *args, **kwargs)) for args, kwargs, _ in builds]
    except Exception as error:  # the sample's own call fails for the redrawn values: nothing to compare
        pytest.skip(f"{spec.name}: per-sample call raised {type(error).__name__}")
    if looped[0] is None or not looped[0]:
        pytest.skip(f"{spec.name}: returns no tensors")
    args0, kwargs0, _ = builds[0]
    for mapped_positions in (positions, positions[:1]) if len(positions) > 1 else (positions,):
        stacked = [ember.stack([b[0][p] for b in builds]) if p in mapped_positions else args0[p] for p in positions]

        def one(*xs):
            args = list(args0)
            for p, x in zip(positions, xs):
                args[p] = x
            return spec.fn(ember, *args, **kwargs0)

        in_dims = tuple(0 if p in mapped_positions else None for p in positions)
        if spec.name in NO_RULE:
            with pytest.raises(RuntimeError, match=f"vmap.*{NO_RULE[spec.name]}"):
                ember.func.vmap(one, in_dims=in_dims)(*stacked)
            return
        outputs = _tensors_of(ember.func.vmap(one, in_dims=in_dims)(*stacked))
        for k, out in enumerate(outputs):
            if mapped_positions == positions:
                expected = [to_numpy(loop[k]) for loop in looped]
            else:  # only the first input differs between the samples: the others are sample 0's
                expected = [to_numpy(_tensors_of(spec.fn(ember, *_with_first(args0, positions[0], b[0]),
                                                         **kwargs0))[k]) for b in builds]
            got = to_numpy(out)
            assert got.shape[0] == BATCH, f"{spec.name}: output {k} has shape {got.shape}, no batch dim in front"
            for i in range(BATCH):
                assert got[i].dtype == expected[i].dtype, f"{spec.name}: output {k} dtype {got.dtype}"
                np.testing.assert_allclose(got[i], expected[i], rtol=1e-6, atol=1e-9, equal_nan=True,
                                           err_msg=f"{spec.name}: output {k}, sample {i} (mapped {in_dims})")


def _with_first(args0: tuple, position: int, args: tuple) -> tuple:
    args = list(args0)[:position] + [args[position]] + list(args0)[position + 1:]
    return tuple(args)


GRAD_ROWS = [pytest.param(spec, id=spec.name) for spec in OPS
             if spec.differentiable and "float64" in spec.dtypes and spec.name not in NO_RULE
             and _marker_positions(spec.samples[0])]


@pytest.mark.parametrize("spec", GRAD_ROWS)
def test_gradients_through_vmap_equal_per_sample_gradients(spec: OpSpec):
    """The batched op's graph gives each sample the gradient its own call gives (weights drawn per output)."""
    positions = _marker_positions(spec.samples[0])
    builds = [draw.build(ember, requires_grad=True) for draw in _draws(spec)]
    try:
        looped = [_tensors_of(spec.fn(ember, *args, **kwargs)) for args, kwargs, _ in builds]
    except Exception as error:
        pytest.skip(f"{spec.name}: per-sample call raised {type(error).__name__}")
    floating = [k for k, o in enumerate(looped[0] or []) if o.dtype.is_floating_point and o.requires_grad]
    if not floating:
        pytest.skip(f"{spec.name}: no differentiable output")
    rng = np.random.default_rng(7)
    weights = [[ember.from_numpy(rng.uniform(-1, 1, tuple(looped[0][k].shape))) for k in floating]
               for _ in builds]
    stacked = [ember.stack([b[0][p] for b in builds]).detach().requires_grad_() for p in positions]
    args0, kwargs0, _ = builds[0]

    def one(*xs):
        args = list(args0)
        for p, x in zip(positions, xs):
            args[p] = x
        return spec.fn(ember, *args, **kwargs0)

    outputs = _tensors_of(ember.func.vmap(one)(*stacked))
    total = sum((outputs[k] * ember.stack([w[j] for w in weights])).sum() for j, k in enumerate(floating))
    batched_grads = ember.autograd.grad(total, stacked, allow_unused=True)
    for i, (args, kwargs, leaves) in enumerate(builds):
        own = sum((looped[i][k] * weights[i][j]).sum() for j, k in enumerate(floating))
        own_grads = ember.autograd.grad(own, leaves, allow_unused=True)
        for n, (mine, theirs) in enumerate(zip(batched_grads, own_grads)):
            expected = np.zeros(tuple(leaves[n].shape)) if theirs is None else to_numpy(theirs)
            got = np.zeros(tuple(leaves[n].shape)) if mine is None else to_numpy(mine)[i]
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9,
                                       err_msg=f"{spec.name}: gradient of input {n}, sample {i}")
