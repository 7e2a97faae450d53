"""Checks that ops remember once passed (shapes and sizes of gather, view, reshape, permute, expand, pairs of
shapes that broadcast) and the short paths of the usual calls (cat, stack, where, clamp, index_select, div,
in-place add_ with alpha, clamp_, zero_): each call after the first must still refuse what torch refuses, with
the same error, and compute what torch computes."""
import numpy as np
import pytest

import ember
from twins import both, both_raise


def _x(lib, shape=(3, 4), seed=0):
    return lib.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def test_gather_refuses_an_out_of_bounds_index_after_the_same_shapes_passed():
    good, negative, large = [[0, 1], [2, 3], [1, 0]], [[0, -1], [2, 3], [1, 0]], [[0, 1], [2, 4], [1, 0]]
    both(lambda lib: _x(lib).gather(1, lib.tensor(good)))  # the shapes are now remembered
    for bad in (negative, large):
        both_raise(lambda lib: _x(lib).gather(1, lib.tensor(bad)), RuntimeError, "out of bounds")
    both_raise(lambda lib: _x(lib).gather(1, lib.tensor(good, dtype=lib.int16)), RuntimeError, "int64")
    both(lambda lib: _x(lib).gather(-1, lib.tensor(good)))  # the same dim, counted from the end


def test_scatter_after_gather_of_the_same_shapes_still_checks_src():
    index = [[0, 1], [2, 3], [1, 0]]
    both(lambda lib: _x(lib).gather(1, lib.tensor(index)))
    both(lambda lib: _x(lib).scatter(1, lib.tensor(index), _x(lib, (3, 2), 1)))
    both_raise(lambda lib: _x(lib).scatter(1, lib.tensor(index), _x(lib, (3, 1), 1)), RuntimeError, "src")


@pytest.mark.parametrize("op", ["view", "reshape"])
def test_view_and_reshape_refuse_bad_sizes_after_good_ones_of_the_same_shape(op):
    both(lambda lib: getattr(_x(lib), op)(2, 6))
    both(lambda lib: getattr(_x(lib), op)(-1, 6))
    both_raise(lambda lib: getattr(_x(lib), op)(2.0, 6), TypeError)  # 2.0 == 2: not the remembered sizes
    both_raise(lambda lib: getattr(_x(lib), op)(True, 12), TypeError)
    both_raise(lambda lib: getattr(_x(lib), op)(5, 6), RuntimeError, "invalid for input of size 12")
    both_raise(lambda lib: getattr(_x(lib), op)(-1, -1), RuntimeError, "only one dimension can be inferred")


def test_expand_and_permute_refuse_bad_sizes_after_good_ones():
    column = lambda lib: _x(lib, (3, 1))  # noqa: E731
    both(lambda lib: column(lib).expand(3, 4))
    both(lambda lib: column(lib).expand(2, -1, 5))
    both_raise(lambda lib: column(lib).expand(4, 4), RuntimeError, "must match the existing size")
    both_raise(lambda lib: column(lib).expand(3, 4.0), TypeError)
    both(lambda lib: _x(lib).permute(1, 0))
    both(lambda lib: _x(lib).permute(-1, 0))
    both_raise(lambda lib: _x(lib).permute(1, 1), RuntimeError, "repeated dim|duplicate dims")


def test_a_remembered_broadcast_still_refuses_shapes_that_do_not_broadcast():
    both(lambda lib: _x(lib) + _x(lib, (3, 1), 1))
    both(lambda lib: _x(lib) / _x(lib, (1, 4), 1))
    both_raise(lambda lib: _x(lib) + _x(lib, (2, 1), 1), RuntimeError, "must match the size")


def test_cat_and_stack_short_paths_match_torch_and_hand_over_the_rest():
    both(lambda lib: lib.cat([_x(lib), _x(lib, (2, 4), 1)]))
    both(lambda lib: lib.cat((_x(lib), _x(lib, (3, 2), 1)), -1))
    both(lambda lib: lib.cat([_x(lib), _x(lib, seed=1).double()]))  # two dtypes: the general path
    both(lambda lib: lib.cat([_x(lib).t(), _x(lib, seed=1).t()], 1))  # transposed: laid out as torch
    both(lambda lib: lib.stack([_x(lib), _x(lib, seed=1)]))
    both(lambda lib: lib.stack([_x(lib).t(), _x(lib, seed=1).t()]))
    both(lambda lib: lib.stack([_x(lib), _x(lib, seed=1)], 1))
    both_raise(lambda lib: lib.cat([_x(lib), _x(lib, (3, 3), 1)]), RuntimeError, "Sizes of tensors must match")
    both_raise(lambda lib: lib.cat([_x(lib), 1.0]), TypeError, "Tensor")
    both_raise(lambda lib: lib.stack([_x(lib), _x(lib, (4, 3))]), RuntimeError, "equal size")


def test_where_clamp_and_index_select_short_paths_match_torch():
    mask = lambda lib: _x(lib, seed=2) > 0  # noqa: E731
    both(lambda lib: lib.where(mask(lib), _x(lib), _x(lib, seed=1)))
    both(lambda lib: lib.where(mask(lib), _x(lib), _x(lib, (1, 4), 1)))
    both(lambda lib: lib.where(mask(lib), _x(lib), 0.5))
    both(lambda lib: _x(lib).clamp(-0.5, 0.25))
    both(lambda lib: _x(lib).clamp(max=0.25))
    both(lambda lib: _x(lib).double().clamp(-1, 0))
    both(lambda lib: _x(lib).clamp(0.5, -0.5))  # min above max: max everywhere, as torch
    both(lambda lib: _x(lib).clamp(float("nan"), 1.0))  # the general path
    both(lambda lib: _x(lib).index_select(1, lib.tensor([3, 0, 3])))
    for bad in ([3], [-1]):
        both(lambda lib: _x(lib, (3,)).index_select(0, lib.tensor([2, 0])))
        both_raise(lambda lib: _x(lib, (3,)).index_select(0, lib.tensor(bad)), IndexError, "out of range")


def test_in_place_short_paths_match_torch_and_bump_the_version():
    def program(lib):
        x = _x(lib)
        x.add_(_x(lib, seed=1), alpha=0.5)
        x.sub_(_x(lib, seed=2), alpha=2)
        x.clamp_(-0.5, 0.75)
        x.clamp_(max=0.5)
        before = x._version
        x.zero_()
        return x, x._version - before

    both(program)
    # torch lets zero_ write one value into an expanded tensor but refuses add_
    both(lambda lib: lib.ones(3, 1).expand(3, 3).zero_())
    both_raise(lambda lib: lib.ones(3, 1).expand(3, 3).add_(1), RuntimeError, "single memory location")
