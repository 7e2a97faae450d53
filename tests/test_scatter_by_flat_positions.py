"""gather, scatter_add, scatter(reduce=) and gather's gradient on multi-dim tensors by flat positions
(``scatter.flat_positions``): bit for bit torch's, repeated indices summed in torch's order."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from ember._ops.scatter import _FLAT_GATHER_FROM
from twins import both

_SHAPES = st.sampled_from([(64, 80), (80, 64), (4, 32, 40), (2, 3, 40, 20), (5000, 1), (1, 5000)])


def _inputs(shape: tuple, dim: int, seed: int, index_dtype: str, high: int | None = None) -> tuple:
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(shape).astype(np.float32)
    index = rng.integers(0, high or shape[dim], shape).astype(index_dtype)  # many repeats along dim
    return values, index


@settings(max_examples=25, deadline=None)
@given(shape=_SHAPES, data=st.data(), seed=st.integers(0, 99), index_dtype=st.sampled_from(["int64", "int32"]))
def test_gather_scatter_add_and_gathers_gradient_as_torch(shape, data, seed, index_dtype):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    values, index = _inputs(shape, dim, seed, index_dtype)
    assert index.size >= _FLAT_GATHER_FROM

    def program(lib):
        x = lib.tensor(values, requires_grad=True)
        i = lib.tensor(index)
        picked = x.gather(dim, i)
        (picked * lib.arange(picked.numel(), dtype=x.dtype).reshape(picked.shape)).sum().backward()
        with lib.no_grad():
            return picked, x.grad, x.scatter_add(dim, i, x * 0.5), x.scatter(dim, i, 2.0, reduce="add"), \
                x.scatter(dim, i, x, reduce="multiply")

    both(program)


@pytest.mark.parametrize("layout", ["transposed self", "strided src", "half"])
def test_scatter_add_of_other_layouts_and_dtypes_as_torch(layout):
    values, index = _inputs((80, 64), 1, 0, "int64")

    def program(lib):
        x = lib.tensor(values)
        src = x * 3
        if layout == "transposed self":
            x = x.t().contiguous().t()
        elif layout == "strided src":
            src = lib.tensor(np.repeat(values, 2, axis=1))[:, ::2]
        else:
            x, src = x.half(), src.half()
        return x.scatter_add(1, lib.tensor(index), src)

    both(program)


def test_scatter_add_with_an_index_smaller_than_self_as_torch():
    values, index = _inputs((90, 70), 0, 1, "int64", high=90)

    def program(lib):
        x = lib.tensor(values)
        return x.scatter_add(0, lib.tensor(index[:60, :50]), x.flip(0))

    both(program)


@pytest.mark.parametrize("shape,dim", [((4, 4), 1), ((4, 4), 0), ((3, 5, 6), 2), ((2, 3, 4), 1), ((15, 17), 1)])
def test_few_values_combine_by_one_index_per_dim_as_torch(shape, dim, monkeypatch):
    """Fewer values than scatter._FLAT_AT_FROM: ufunc.at takes the key as it is (no flat positions are made),
    repeated places still summed in torch's order."""
    import ember._ops.scatter as scatter

    values, index = _inputs(shape, dim, 3, "int64", high=2)  # most places receive several values
    assert index.size < scatter._FLAT_AT_FROM
    made = []
    real = scatter.flat_positions
    monkeypatch.setattr(scatter, "flat_positions", lambda *a: (made.append(a), real(*a))[1])

    def program(lib):
        x = lib.tensor(values * 1e3, requires_grad=True)
        i = lib.tensor(index)
        picked = x.gather(dim, i)
        (picked * lib.linspace(-1.0, 3.3, picked.numel()).reshape(picked.shape)).sum().backward()
        with lib.no_grad():
            return picked, x.grad, x.scatter_add(dim, i, x * 0.37)

    both(program)
    assert made == []
