"""Random sampling (ember/_sampling.py), logspace and the element-wise Python methods, against torch.

Draws differ from torch's (another generator), so the twins compare what does not depend on the draw: shapes,
dtypes, nodes, gradients, errors; and the draws' statistics are checked against their distribution.
"""
import numpy as np
import pytest
import torch

import ember
from twins import both, both_raise, grad_fn_name, normalise


def shape_dtype_and_node(t):
    return tuple(t.shape), normalise(t.dtype), grad_fn_name(t), t.requires_grad


@pytest.mark.parametrize("program", [
    lambda m: m.normal(m.zeros(2, 3, requires_grad=True), 1.0),
    lambda m: m.normal(0.0, m.ones(3, requires_grad=True)),
    lambda m: m.normal(m.zeros(2, 3, requires_grad=True), m.ones(3, requires_grad=True)),
    lambda m: m.normal(m.zeros(2, 3, dtype=m.float64), m.ones(3)),
    lambda m: m.normal(2.0, 3.0, (2, 4)),
    lambda m: m.normal(2.0, 3.0, size=(2,), dtype=m.float64),
    lambda m: m.normal(m.zeros(0, 3), 1.0),
    lambda m: m.normal(m.zeros(()), 1.0),
    lambda m: m.bernoulli(m.full((3,), 0.5, requires_grad=True)),
    lambda m: m.bernoulli(m.full((2, 2), 0.5, dtype=m.float64)),
    lambda m: m.poisson(m.ones(3, requires_grad=True)),
    lambda m: m.poisson(m.ones(2, dtype=m.float64)),
    lambda m: m.multinomial(m.ones(3), 2),
    lambda m: m.multinomial(m.ones(2, 3), 5, replacement=True),
    lambda m: m.ones(4).multinomial(4),
    lambda m: m.randint_like(m.zeros(2, 3), 5),
    lambda m: m.randint_like(m.zeros(2, dtype=m.int32), 2, 5),
    lambda m: m.randint_like(m.zeros(2), 2, 5, dtype=m.int64),
    lambda m: m.ones(3, requires_grad=True).mul(1).random_(),
    lambda m: m.ones(3, requires_grad=True).mul(1).exponential_(),
    lambda m: m.ones(3, requires_grad=True).mul(1).geometric_(0.5),
    lambda m: m.ones(3, requires_grad=True).mul(1).log_normal_(),
    lambda m: m.ones(3, requires_grad=True).mul(1).cauchy_(),
    lambda m: m.ones(3, requires_grad=True).mul(1).bernoulli_(0.5),
    lambda m: m.ones(3, requires_grad=True).mul(1).bernoulli_(m.full((3,), 0.5, requires_grad=True)),
    lambda m: m.ones(3, dtype=m.int64).bernoulli_(0.5),
    lambda m: m.ones(3).bernoulli(),
])
def test_samples_have_torchs_shape_dtype_and_node(program):
    both(lambda m: shape_dtype_and_node(program(m)))


@pytest.mark.parametrize("program", [
    lambda m, p: m.normal(p, 1.0),
    lambda m, p: m.normal(0.5, p),
    lambda m, p: m.normal(p, p),
    lambda m, p: m.bernoulli(p),
    lambda m, p: m.poisson(p),
    lambda m, p: m.ones(3, dtype=m.float64).mul(1).bernoulli_(p),
])
def test_parameters_get_a_zero_gradient_as_in_torch(program):
    def run(m):
        p = m.full((3,), 0.5, dtype=m.float64, requires_grad=True)
        program(m, p).sum().backward()
        return p.grad
    both(run)


@pytest.mark.parametrize("program,error,fragment", [
    (lambda m: m.normal(m.zeros(2, 3), m.ones(4)), RuntimeError, "size"),
    (lambda m: m.normal(m.zeros(2), -1.0), RuntimeError, "std >= 0.0"),
    (lambda m: m.normal(m.zeros(2, dtype=m.int64), 1.0), NotImplementedError, "Long"),
    (lambda m: m.bernoulli(m.tensor([1.5])), RuntimeError, "p"),
    (lambda m: m.bernoulli(m.tensor([1, 0])), NotImplementedError, "Long"),
    (lambda m: m.multinomial(m.tensor([1.0, 0.0]), 3), RuntimeError, "without replacement"),
    (lambda m: m.multinomial(m.tensor([-1.0, 2.0]), 1), RuntimeError, "element < 0"),
    (lambda m: m.multinomial(m.ones(2, 2, 2), 1), RuntimeError, "dim"),
    (lambda m: m.poisson(m.tensor([-1.0])), RuntimeError, "non-negative"),
    (lambda m: m.zeros(3, dtype=m.int8).random_(0, 300), RuntimeError, "to - 1 is out of bounds"),
    (lambda m: m.ones(2).random_(5, 2), RuntimeError, "from"),
    (lambda m: m.ones(2).geometric_(1.5), RuntimeError, r"geometric_ expects p to be in \(0, 1\)"),
    (lambda m: m.ones(2).exponential_(-1), RuntimeError, "lambda > 0.0"),
    (lambda m: m.ones(2).log_normal_(0, -1), RuntimeError, "std > 0.0"),
    (lambda m: m.ones(2).cauchy_(0, -1), RuntimeError, "sigma > 0.0"),
    (lambda m: m.ones(2, requires_grad=True).apply_(lambda v: v), RuntimeError, "requires grad"),
    (lambda m: m.tensor([1.0, 2.0]).is_nonzero(), RuntimeError, "more than one value"),
    (lambda m: m.tensor([]).is_nonzero(), RuntimeError, "no values"),
    (lambda m: m.randint_like(m.zeros(2), 5, 2), RuntimeError, "from"),
])
def test_bad_parameters_are_refused_as_by_torch(program, error, fragment):
    both_raise(program, error, fragment)


def test_samples_follow_their_distributions():
    ember.manual_seed(0)
    n = 200_000
    checks = {
        "normal": (ember.normal(2.0, 3.0, (n,)), 2.0, 3.0),
        "normal of tensors": (ember.normal(ember.full((n,), -1.0), ember.full((n,), 0.5)), -1.0, 0.5),
        "bernoulli": (ember.bernoulli(ember.full((n,), 0.25)), 0.25, 0.25 ** 0.5 * 0.75 ** 0.5),
        "poisson": (ember.poisson(ember.full((n,), 4.0)), 4.0, 2.0),
        "exponential_": (ember.empty(n).exponential_(2.0), 0.5, 0.5),
        "geometric_": (ember.empty(n).geometric_(0.25), 4.0, (0.75 / 0.25 ** 2) ** 0.5),
        "uniform random_": (ember.empty(n).random_(0, 10), 4.5, (99 / 12) ** 0.5),
    }
    for name, (sample, mean, std) in checks.items():
        values = sample.numpy().astype(np.float64)
        assert abs(values.mean() - mean) < 5 * std / n ** 0.5, name
        assert abs(values.std() - std) < 0.02 * std, name
    counts = np.bincount(ember.multinomial(ember.tensor([1.0, 2.0, 7.0]), n, replacement=True).numpy(), minlength=3)
    np.testing.assert_allclose(counts / n, [0.1, 0.2, 0.7], atol=0.005)


def test_random_without_bounds_stays_within_what_the_dtype_holds_exactly():
    assert set(ember.zeros(1000, dtype=ember.bool).random_().tolist()) == {False, True}
    assert ember.zeros(1000, dtype=ember.uint8).random_().numpy().max() > 200
    single = ember.zeros(1000).random_().numpy()
    assert single.min() >= 0 and single.max() <= 2 ** 24 and np.all(single == np.round(single))


def test_multinomial_without_replacement_draws_distinct_categories():
    for _ in range(20):
        drawn = ember.multinomial(ember.tensor([[1.0, 1.0, 0.0, 5.0], [0.0, 2.0, 1.0, 1.0]]), 3)
        assert all(len(set(row)) == 3 for row in drawn.tolist())
        assert 2 not in drawn[0].tolist() and 0 not in drawn[1].tolist()


def test_a_seed_repeats_every_sampler():
    def draws():
        ember.manual_seed(7)
        return [ember.normal(ember.zeros(3), 1.0), ember.bernoulli(ember.full((3,), 0.5)),
                ember.poisson(ember.ones(3)), ember.multinomial(ember.ones(5), 3), ember.empty(3).cauchy_(),
                ember.randint_like(ember.zeros(3), 9)]
    for first, second in zip(draws(), draws()):
        assert first.tolist() == second.tolist()


@pytest.mark.parametrize("args", [(0, 2, 3), (-1, 1, 4), (0, 1, 7, 2.0), (1, 0, 3), (0, 10, 11), (0, 0, 0),
                                  (2, 2, 1), (0, 2, 5, 3.0)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
def test_logspace_is_torchs_bit_for_bit(args, dtype):
    mine = ember.logspace(*args, dtype=getattr(ember, dtype)).numpy()
    theirs = torch.logspace(*args, dtype=getattr(torch, dtype)).numpy()
    assert mine.dtype == theirs.dtype
    np.testing.assert_array_equal(mine, theirs)


def test_logspace_takes_torchs_keywords_and_refuses_what_it_refuses():
    both(lambda m: m.logspace(start=1, end=3, steps=3, base=2, requires_grad=True), normalise)
    both_raise(lambda m: m.logspace(0, 1, -1), RuntimeError, "non-negative")
    both_raise(lambda m: m.logspace(0, 1, 3, dtype=m.bool), NotImplementedError, "Bool")


def test_apply_and_map_call_python_on_each_element_as_torch():
    def run(m):
        x = m.arange(4.0).reshape(2, 2)
        x.apply_(lambda v: v * v + 1)
        y = m.tensor([1, 2, 3]).map_(m.tensor([10, 20, 30]), lambda a, b: a * b)
        z = m.arange(6.0).reshape(2, 3).map_(m.tensor([1.0, -1.0, 2.0]), lambda a, b: a - b)
        return x, y, z, m.empty(0).apply_(abs)
    both(run)


def test_apply_counts_as_a_change_so_a_saved_tensor_it_changed_is_caught():
    # torch does not bump the version here, and its backward then silently reads the changed values
    w = ember.ones(2, requires_grad=True)
    c = ember.tensor([1.0, 2.0])
    y = (w * c).sum()
    c.apply_(lambda v: -v)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_is_nonzero_reads_one_element_as_torch():
    both(lambda m: [m.is_nonzero(m.tensor(v)) for v in ([0.0], [2], True, 0, [[-0.5]])])
