"""binomial (its distribution, shapes, dtypes and errors), is_inference and Tensor.new against torch."""
import numpy as np
import pytest
import torch
from twins import both, both_raise, normalise

import ember


def test_binomial_draws_follow_the_distribution():
    count = ember.tensor([[3.0], [20.0], [200.0]]).expand(3, 4000)
    prob = ember.tensor([0.5, 0.1, 0.9, 0.03]).repeat(1000)
    drawn = ember.binomial(count, prob, generator=ember.Generator().manual_seed(0)).numpy()
    for row, n in enumerate((3.0, 20.0, 200.0)):
        for col, p in enumerate((0.5, 0.1, 0.9, 0.03)):
            sample = drawn[row, col::4]
            mean, var = n * p, n * p * (1 - p)
            assert abs(sample.mean() - mean) < 5 * np.sqrt(var / sample.size)  # five standard errors
            assert abs(sample.var() / var - 1) < 0.25
            assert sample.min() >= 0 and sample.max() <= n and np.all(sample == np.round(sample))


def test_binomial_edges_shapes_and_dtypes_as_torch():
    def program(lib):
        # (a NaN count, or an infinite one with a probability inside (0, 1), is left out: torch hangs or draws
        # at random between inf and NaN there)
        count = lib.tensor([5.0, 0.0, -3.0, 4.0, 7.9, 0.4, float("inf"), 6.0, 6.0, 6.0, -1.0])
        prob = lib.tensor([1.0, 0.5, 0.5, 0.0, 1.0, 0.5, 1.0, float("nan"), -0.5, 1.5, float("nan")])
        broadcast = lib.binomial(lib.ones(2, 3), lib.full((3,), 0.0))
        return (lib.binomial(count, prob), broadcast, broadcast.dtype, lib.binomial(lib.ones(()), lib.ones(())),
                lib.binomial(lib.ones(0), lib.ones(0)).shape)

    both(program, prepare=normalise)


def test_binomial_is_reproducible_with_a_generator_and_has_no_gradient():
    def draw(seed):
        return ember.binomial(ember.full((50,), 10.0), ember.full((50,), 0.3), ember.Generator().manual_seed(seed))

    assert ember.equal(draw(3), draw(3)) and not ember.equal(draw(3), draw(4))
    for lib in (torch, ember):
        count = lib.tensor([5.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="derivative for .*binomial is not implemented"):
            lib.binomial(count, lib.tensor([0.5])).sum().backward()


@pytest.mark.parametrize("program, error, fragment", [
    (lambda lib: lib.binomial(lib.tensor([5, 3]), lib.tensor([0.5, 0.5])), ValueError,
     "binomial only supports floating-point dtypes for count, got: Long"),
    (lambda lib: lib.binomial(lib.ones(2), lib.ones(2, dtype=lib.float64)), RuntimeError,
     "Found dtype Double but expected Float"),
    (lambda lib: lib.binomial(lib.ones(2), 0.5), TypeError, "argument 'prob' \\(position 2\\) must be Tensor"),
    (lambda lib: lib.binomial(lib.ones(2), lib.ones(3)), RuntimeError, "must match the size"),
])
def test_binomial_errors_as_torch(program, error, fragment):
    both_raise(program, error, fragment)


def test_is_inference_as_torch():
    def program(lib):
        normal = lib.ones(2)
        with lib.inference_mode():
            made, view_of_normal, result = lib.ones(2), normal[:1], normal + 1
            legacy, copied = lib.Tensor(2), lib.tensor([1.0])
        after = made * 2
        flags = [t.is_inference() for t in (normal, made, view_of_normal, result, made[:1], made.detach(), after,
                                            legacy, copied)]
        return flags + [lib.is_inference(made)]

    both(program)
    both_raise(lambda lib: lib.is_inference([1.0]), TypeError, "is_inference\\(\\)")


def test_new_as_torch():
    def program(lib):
        x = lib.ones(2, dtype=lib.float64)
        other = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        aliased = x.new(other)
        return (x.new().shape, x.new(2, 3).shape, x.new(lib.Size([4])).shape, x.new([1, 2]), x.new((1, 2)),
                x.new(()).shape, lib.ones(2, dtype=lib.int32).new([1.7, 2]), aliased.requires_grad,
                aliased._base is other, x.new(3).dtype)

    both(program, prepare=normalise)
    both_raise(lambda lib: lib.ones(2).new(2.5), TypeError, "new\\(\\): data must be a sequence \\(got float\\)")
    both_raise(lambda lib: lib.ones(2).new(-1), RuntimeError, "negative dimension -1")
    both_raise(lambda lib: lib.ones(2, dtype=lib.float64).new(lib.ones(2)), TypeError, "")
