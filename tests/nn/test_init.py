"""The initialisers added beside the basic ones: trunc_normal_, dirac_, orthogonal_, sparse_, against torch."""
import inspect
import math
import warnings

import numpy as np
import pytest
import torch

import ember
from ember import nn


def test_dirac_matches_torch_for_every_rank_and_group_count():
    for shape, groups in [((4, 2, 3), 1), ((4, 2, 3, 3), 2), ((6, 2, 3, 3, 3), 3), ((2, 4, 5, 4), 1), ((3, 1, 1), 3)]:
        expected = torch.nn.init.dirac_(torch.empty(shape), groups=groups).numpy()
        np.testing.assert_array_equal(nn.init.dirac_(ember.empty(shape), groups=groups).numpy(), expected)


@pytest.mark.parametrize("call, message", [
    (lambda lib: lib.nn.init.dirac_(lib.empty(3, 3)), "Only tensors with 3, 4, or 5 dimensions are supported"),
    (lambda lib: lib.nn.init.dirac_(lib.empty(3, 3, 3), groups=2), "dim 0 must be divisible by groups"),
    (lambda lib: lib.nn.init.orthogonal_(lib.empty(3)), "Only tensors with 2 or more dimensions are supported"),
    (lambda lib: lib.nn.init.sparse_(lib.empty(3, 3, 3), 0.5), "Only tensors with 2 dimensions are supported"),
])
def test_init_errors_match_torch(call, message):
    for lib in (torch, ember):
        with pytest.raises(ValueError, match=message):
            call(lib)


def test_trunc_normal_stays_in_bounds_with_the_truncated_moments():
    a, b, mean, std = -1.0, 2.0, 0.5, 1.0
    values = nn.init.trunc_normal_(ember.empty(200_000, dtype=ember.float64), mean, std, a, b).numpy()
    assert values.min() >= a and values.max() <= b
    reference = torch.nn.init.trunc_normal_(torch.empty(200_000, dtype=torch.float64), mean, std, a, b).numpy()
    # Moments of the truncated normal, from its closed form.
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2
    z = cdf(beta) - cdf(alpha)
    expected_mean = mean + std * (pdf(alpha) - pdf(beta)) / z
    for sample in (values, reference):
        assert sample.mean() == pytest.approx(expected_mean, abs=0.01)
    assert values.std() == pytest.approx(reference.std(), abs=0.01)


def test_trunc_normal_warns_when_the_mean_is_far_outside_the_bounds():
    with pytest.warns(UserWarning, match="mean is more than 2 std"):
        nn.init.trunc_normal_(ember.empty(10), mean=10.0, a=-1.0, b=1.0)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (6, 2, 3)])
def test_orthogonal_gives_orthonormal_rows_or_columns_scaled_by_gain(shape):
    w = nn.init.orthogonal_(ember.empty(shape, dtype=ember.float64), gain=2.0).numpy().reshape(shape[0], -1)
    rows, cols = w.shape
    gram = w @ w.T if rows <= cols else w.T @ w
    np.testing.assert_allclose(gram, 4.0 * np.eye(min(rows, cols)), atol=1e-12)


def test_orthogonal_is_not_always_the_same_matrix_and_honours_generators():
    a, b = nn.init.orthogonal_(ember.empty(4, 4)), nn.init.orthogonal_(ember.empty(4, 4))
    assert not ember.allclose(a, b)
    seeded = [nn.init.orthogonal_(ember.empty(4, 4), generator=ember.Generator().manual_seed(3)) for _ in range(2)]
    assert ember.equal(*seeded)


def test_orthogonal_of_an_empty_tensor_is_a_no_op():
    assert nn.init.orthogonal_(ember.empty(0, 3)).shape == (0, 3)


@pytest.mark.parametrize("rows, cols, sparsity", [(10, 3, 0.3), (7, 5, 0.5), (4, 2, 0.0), (5, 3, 1.0)])
def test_sparse_zeroes_the_same_count_per_column_as_torch(rows, cols, sparsity):
    e = nn.init.sparse_(ember.empty(rows, cols), sparsity, std=0.5).numpy()
    t = torch.nn.init.sparse_(torch.empty(rows, cols), sparsity, std=0.5).numpy()
    np.testing.assert_array_equal((e == 0).sum(0), (t == 0).sum(0))


def test_sparse_nonzeros_have_the_requested_spread():
    values = nn.init.sparse_(ember.empty(2000, 50, dtype=ember.float64), 0.1, std=0.2).numpy()
    assert values[values != 0].std() == pytest.approx(0.2, rel=0.05)


def test_new_inits_do_not_record_on_parameters():
    for fill in (lambda w: nn.init.trunc_normal_(w), lambda w: nn.init.orthogonal_(w),
                 lambda w: nn.init.sparse_(w, 0.5), lambda w: nn.init.dirac_(w.view(3, 3, 1))):
        p = nn.Parameter(ember.empty(3, 3))
        fill(p)
        assert p.is_leaf and p.grad_fn is None


def test_seeded_trunc_normal_and_sparse_repeat():
    for fill in (lambda w, g: nn.init.trunc_normal_(w, generator=g), lambda w, g: nn.init.sparse_(w, 0.5, generator=g)):
        results = []
        for _ in range(2):
            ember.manual_seed(0)  # sparse_ draws the rows it zeroes from the default generator, as torch's does
            results.append(fill(ember.empty(4, 4), ember.Generator().manual_seed(5)))
        assert ember.equal(*results)


@pytest.mark.parametrize("name", ["constant", "dirac", "eye", "kaiming_normal", "kaiming_uniform", "normal",
                                  "orthogonal", "sparse", "uniform", "xavier_normal", "xavier_uniform"])
def test_old_names_warn_and_initialise_in_place_as_torch(name):
    import torch

    messages = []
    for lib in (torch, ember):
        t = lib.empty(2, 2, 3) if name == "dirac" else lib.empty(3, 3)
        args = (t, 0.5) if name in ("constant", "sparse") else (t,)
        with pytest.warns(FutureWarning) as caught:
            assert getattr(lib.nn.init, name)(*args) is t
        assert caught[0].filename == __file__
        messages.append(str(caught[0].message))
    assert messages[0] == messages[1]


class _Recorder:
    """A tensor-like that answers every call with the public function's name and the keywords it was given."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        lib = torch if isinstance(func.__module__, str) and func.__module__.startswith("torch") else ember
        return lib.overrides.resolve_name(func).split(".", 1)[1], args, sorted((kwargs or {}).keys())


@pytest.mark.parametrize("call", [
    lambda lib, t: lib.nn.init.uniform_(t, -1.0, b=2.0),
    lambda lib, t: lib.nn.init.normal_(t),
    lambda lib, t: lib.nn.init.constant_(t, 3.0),
    lambda lib, t: lib.nn.init.kaiming_uniform_(t, a=math.sqrt(5)),
])
def test_the_initialisers_torch_dispatches_hand_a_tensor_like_every_argument_by_name(call):
    assert call(ember, _Recorder()) == call(torch, _Recorder())


def test_a_mode_sees_the_dispatching_initialisers_a_linear_layer_and_its_callers_use():
    def program(lib):
        seen = []

        class Names(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                name = lib.overrides.resolve_name(func) or ""
                if ".nn.init." in name:
                    seen.append(name.split(".", 1)[1])
                return func(*args, **(kwargs or {}))

        with Names():
            layer = lib.nn.Linear(3, 2)
            lib.nn.init.ones_(layer.weight)  # neither these nor what they call internally dispatch
            lib.nn.init.xavier_normal_(layer.weight)
        return seen

    assert program(ember) == program(torch) == ["nn.init.kaiming_uniform_", "nn.init.uniform_"]


def test_a_subclass_keeps_its_type_through_the_dispatching_initialisers():
    def program(lib):
        class Marked(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return super().__torch_function__(func, types, args, kwargs)

        weight = lib.zeros(2, 3).as_subclass(Marked)
        results = [lib.nn.init.kaiming_uniform_(weight, a=math.sqrt(5)), lib.nn.init.constant_(weight, 2.0)]
        return [(type(r).__name__, r is weight) for r in results], weight.tolist()

    assert program(ember) == program(torch)


def _parameters(function) -> list:
    return [(p.name, p.default) for p in inspect.signature(function).parameters.values()]


def test_testing_overrides_have_the_dispatching_initialisers_with_their_signatures():
    overrides = ember.overrides.get_testing_overrides()
    for name in ("uniform_", "normal_", "constant_", "kaiming_uniform_"):
        mine, torchs = getattr(ember.nn.init, name), getattr(torch.nn.init, name)
        assert _parameters(overrides[mine]) == _parameters(torch.overrides.get_testing_overrides()[torchs])
        assert mine not in ember.overrides.get_ignored_functions()
    assert ember.nn.init.xavier_uniform_ not in overrides
