"""ember's generator draws torch's numbers: the same seed gives the same ``rand``, ``randint``, ``randperm``,
``uniform_`` and layer initialisations, bit for bit, and the same ``randn`` and ``normal_`` (bit for bit in
double precision up to 15 values, within a few units in the last place beyond, and within torch's own rounding in
single and half), and the stream goes on from the same place after each of them."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember


def _both(seed: int) -> None:
    torch.manual_seed(seed)
    ember.manual_seed(seed)


def _values(t) -> np.ndarray:
    return t.detach().double().numpy()


def _in_step() -> None:
    """The two streams are at the same place: their next draws agree."""
    assert ember.randint(0, 2 ** 31, (3,)).tolist() == torch.randint(0, 2 ** 31, (3,)).tolist()


@given(st.integers(0, 2 ** 64 - 1), st.integers(0, 40), st.sampled_from(["float32", "float64", "float16", "bfloat16"]))
@settings(max_examples=40, deadline=None)
def test_rand_is_torchs_to_the_bit(seed, n, dtype):
    _both(seed)
    assert np.array_equal(_values(ember.rand(n, dtype=getattr(ember, dtype))),
                          _values(torch.rand(n, dtype=getattr(torch, dtype))))
    _in_step()


@pytest.mark.parametrize("low, high", [(0, 10), (-5, 3), (0, 2 ** 31), (-2 ** 40, 2 ** 40), (7, 8)])
def test_randint_is_torchs(low, high):
    _both(3)
    assert ember.randint(low, high, (4, 5)).tolist() == torch.randint(low, high, (4, 5)).tolist()
    _in_step()


@pytest.mark.parametrize("n", [0, 1, 2, 10, 1000])
def test_randperm_is_torchs(n):
    _both(11)
    assert ember.randperm(n).tolist() == torch.randperm(n).tolist()
    _in_step()


@pytest.mark.parametrize("n", [1, 2, 3, 15, 16, 17, 40, 1001])
def test_double_randn_is_torchs(n):
    # one by one (fewer than 16), bit for bit; in blocks, NumPy's log and cos may differ from the C library's
    # in the last bit
    _both(5)
    mine, theirs = _values(ember.randn(n, dtype=ember.float64)), _values(torch.randn(n, dtype=torch.float64))
    if n < 16:
        assert np.array_equal(mine, theirs)
    np.testing.assert_allclose(mine, theirs, rtol=1e-14, atol=1e-15)
    _in_step()


def test_the_second_normal_of_a_pair_is_kept_for_the_next_call():
    _both(2)
    for n in (1, 3, 2, 1):  # odd counts leave a normal kept in the generator, which the next call starts with
        assert np.array_equal(_values(ember.randn(n, dtype=ember.float64)),
                              _values(torch.randn(n, dtype=torch.float64)))
    state = ember.get_rng_state()
    first = ember.randn(1, dtype=ember.float64)
    ember.set_rng_state(state)  # the kept normal is part of the state
    assert ember.randn(1, dtype=ember.float64).item() == first.item()


@pytest.mark.parametrize("dtype, n, tolerance", [
    ("float32", 5, 0), ("float32", 16, 3e-6), ("float32", 1000, 3e-6), ("float32", 33, 3e-6),
    ("float16", 5, 0), ("float16", 20, 4e-3), ("bfloat16", 5, 0), ("bfloat16", 40, 3.2e-2),
])
def test_single_and_half_randn_are_torchs_within_its_rounding(dtype, n, tolerance):
    # from 16 values on, torch's single-precision log and cos are not correctly rounded: a few ulp apart
    _both(9)
    mine, theirs = _values(ember.randn(n, dtype=getattr(ember, dtype))), _values(torch.randn(n, dtype=getattr(torch, dtype)))
    np.testing.assert_allclose(mine, theirs, rtol=tolerance, atol=tolerance)
    _in_step()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_complex_samples_are_torchs(dtype):
    complex_name = {"float32": "complex64", "float64": "complex128"}[dtype]
    _both(4)
    mine = ember.view_as_real(ember.rand(6, dtype=getattr(ember, complex_name)))
    theirs = torch.view_as_real(torch.rand(6, dtype=getattr(torch, complex_name)))
    assert np.array_equal(_values(mine), _values(theirs))
    mine = ember.view_as_real(ember.randn(6, dtype=getattr(ember, complex_name)))
    theirs = torch.view_as_real(torch.randn(6, dtype=getattr(torch, complex_name)))
    np.testing.assert_allclose(_values(mine), _values(theirs), rtol=1e-6, atol=1e-7)
    _in_step()


@pytest.mark.parametrize("low, high", [(0.0, 1.0), (-2.0, 3.0), (-0.2236, 0.2236), (-0.123456789, 0.3)])
def test_single_uniform_is_torchs_to_the_bit(low, high):
    _both(6)
    assert np.array_equal(_values(ember.empty(5000).uniform_(low, high)), _values(torch.empty(5000).uniform_(low, high)))
    _in_step()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("low, high", [(-0.123456, 0.123456), (-1.0, 0.3), (0.001, 0.0123), (-2.5, 2.5)])
def test_half_uniform_is_torchs_to_the_bit(low, high, dtype):
    """Drawn in single precision between the bounds as given, then rounded (not between bounds rounded first)."""
    _both(7)
    mine = ember.empty(5000, dtype=getattr(ember, dtype)).uniform_(low, high).float()
    assert np.array_equal(_values(mine), _values(torch.empty(5000, dtype=getattr(torch, dtype)).uniform_(low, high).float()))
    _in_step()


def test_normal_with_mean_and_std_is_torchs():
    _both(8)
    np.testing.assert_allclose(_values(ember.empty(7).normal_(1.0, 2.0)), _values(torch.empty(7).normal_(1.0, 2.0)),
                               rtol=1e-6)
    np.testing.assert_allclose(_values(ember.empty(64).normal_(-1.0, 0.5)),
                               _values(torch.empty(64).normal_(-1.0, 0.5)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_values(ember.normal(2.0, 3.0, size=(3,), dtype=ember.float64)),
                               _values(torch.normal(2.0, 3.0, size=(3,), dtype=torch.float64)), rtol=1e-14)
    mean, std = np.linspace(-1, 1, 20), np.linspace(0.5, 2, 20)
    np.testing.assert_allclose(_values(ember.normal(ember.tensor(mean), ember.tensor(std))),
                               _values(torch.normal(torch.tensor(mean), torch.tensor(std))), rtol=1e-14, atol=1e-15)
    _in_step()


@pytest.mark.parametrize("make", [
    lambda nn: nn.Linear(20, 30),
    lambda nn: nn.Conv2d(3, 8, 3),
    lambda nn: nn.Conv1d(4, 6, 5, bias=False),
    lambda nn: nn.Bilinear(3, 4, 5),
    lambda nn: nn.LSTM(6, 7),
])
def test_layers_start_from_torchs_weights(make):
    _both(0)
    mine, theirs = make(ember.nn), make(torch.nn)
    for (name, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters()):
        assert np.array_equal(_values(p), _values(q)), name
    _in_step()


def test_a_generator_of_its_own_draws_torchs_numbers_and_leaves_the_default_alone():
    torch.manual_seed(1), ember.manual_seed(1)
    mine, theirs = ember.Generator().manual_seed(42), torch.Generator().manual_seed(42)
    assert ember.rand(4, generator=mine).tolist() == torch.rand(4, generator=theirs).tolist()
    assert ember.randperm(6, generator=mine).tolist() == torch.randperm(6, generator=theirs).tolist()
    _in_step()


def test_seeds_keep_their_low_32_bits_as_torchs_do():
    _both(2 ** 32 + 5)
    assert ember.rand(3).tolist() == torch.rand(3).tolist()
    ember.manual_seed(5)
    torch.manual_seed(5)
    assert ember.rand(3).tolist() == torch.rand(3).tolist()
    assert ember.initial_seed() == torch.initial_seed() == 5


def test_a_state_round_trips_and_bad_states_are_refused():
    ember.manual_seed(3)
    state = ember.get_rng_state()
    first = ember.rand(5)
    ember.set_rng_state(state)
    assert ember.rand(5).tolist() == first.tolist()
    with pytest.raises(RuntimeError, match="of size 5056 .* to be 5055"):
        ember.set_rng_state(state[:-1])
    broken = state.clone()
    broken[8:12] = ember.tensor([0, 0, 0, 0], dtype=ember.uint8)  # no words left: torch refuses it too
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        ember.set_rng_state(broken)
    with pytest.raises(TypeError, match="uint8"):
        ember.set_rng_state(state.float())


def _draws(lib, generator) -> list:
    # doubles drawn one at a time (a normal kept over), a block of floats and integers: every part of the state
    return [lib.randn(3, dtype=lib.float64, generator=generator).numpy(), lib.rand(5, generator=generator).numpy(),
            lib.randint(0, 100, (7,), generator=generator).numpy(),
            lib.randn(1, dtype=lib.float64, generator=generator).numpy()]


@pytest.mark.parametrize("seed", [0, 5, 2 ** 40 + 3])
@pytest.mark.parametrize("rounds", [0, 1, 2, 3, 700])
def test_the_state_is_torch_s_byte_for_byte_and_restores_in_either_library(seed, rounds):
    ours, theirs = ember.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
    for _ in range(rounds):  # (700 rounds twist the words a few times over)
        _draws(ember, ours), _draws(torch, theirs)
    state, torch_state = ours.get_state(), theirs.get_state()
    np.testing.assert_array_equal(state.numpy(), torch_state.numpy())
    in_torch = torch.Generator().set_state(torch.from_numpy(state.numpy().copy()))
    in_ember = ember.Generator().set_state(ember.from_numpy(torch_state.numpy().copy()))
    for a, b in zip(_draws(torch, in_torch), _draws(ember, in_ember)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(in_torch.get_state().numpy(), in_ember.get_state().numpy())


def test_a_state_in_ember_s_former_layout_still_restores():
    generator = ember.Generator().manual_seed(11)
    ember.randn(3, dtype=ember.float64, generator=generator)  # a normal kept over
    words = generator._bits.state["state"]
    old = np.concatenate([words["key"].astype("<u4").view(np.uint8), np.array([words["pos"]], "<u4").view(np.uint8),
                          np.array([11], "<u8").view(np.uint8), np.array([generator._normal], "<f8").view(np.uint8)])
    expected = _draws(ember, generator)
    restored = ember.Generator().set_state(ember.from_numpy(old))
    for a, b in zip(_draws(ember, restored), expected):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("make", [
    lambda L: L.bernoulli(L.tensor(np.linspace(0.05, 0.95, 50), dtype=L.float32)),
    lambda L: L.bernoulli(L.tensor(np.linspace(0.05, 0.95, 50))),
    lambda L: L.bernoulli(L.zeros(40), 0.3),
    lambda L: L.empty(40).bernoulli_(0.3),
    lambda L: L.empty(50).bernoulli_(L.tensor(np.linspace(0.05, 0.95, 50), dtype=L.float32)),
    lambda L: L.nn.functional.dropout(L.tensor(np.linspace(-1, 1, 60), dtype=L.float32), 0.3),
    lambda L: L.nn.Dropout(0.5)(L.ones(4, 25)),
    lambda L: L.randint_like(L.zeros(10), 3, 17),
    lambda L: L.zeros(10, dtype=L.int64).random_(-3, 2 ** 40),
    lambda L: L.nn.init.xavier_uniform_(L.empty(5, 7)),
    lambda L: L.nn.init.kaiming_uniform_(L.empty(6, 4), a=0.1),
])
def test_masks_integers_and_initialisations_are_torchs(make):
    _both(0)
    assert np.array_equal(_values(make(ember)), _values(make(torch)))
    _in_step()


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64",
                                   "float16", "bfloat16"])
def test_random_without_bounds_covers_the_dtype_as_torchs(dtype):
    _both(1)
    mine = ember.zeros(30, dtype=getattr(ember, dtype)).random_()
    theirs = torch.zeros(30, dtype=getattr(torch, dtype)).random_()
    assert np.array_equal(_values(mine), _values(theirs))
    assert np.array_equal(_values(ember.zeros(8, dtype=getattr(ember, dtype)).random_(2)),
                          _values(torch.zeros(8, dtype=getattr(torch, dtype)).random_(2)))
    _in_step()


@pytest.mark.parametrize("options", [dict(std=0.02), dict(), dict(mean=0.0, std=1.0, a=2.0, b=3.0),
                                     dict(mean=1.0, std=0.5, a=-0.1, b=0.2)])
def test_truncated_normals_are_torchs_rejection_samples(options):
    # wide bounds: normals redrawn where they fall outside; narrow ones: uniforms kept by their density
    _both(0)
    mine, theirs = ember.empty(40, 30), torch.empty(40, 30)
    ember.nn.init.trunc_normal_(mine, **options)
    torch.nn.init.trunc_normal_(theirs, **options)
    np.testing.assert_allclose(_values(mine), _values(theirs), rtol=1e-5, atol=2e-6)
    low, high = options.get("a", -2.0), options.get("b", 2.0)
    assert bool(((mine >= low) & (mine <= high)).all())
    _in_step()


def _passes(L, **options) -> list:
    L.manual_seed(0)
    dataset = L.utils.data.TensorDataset(L.arange(20))
    seen = []
    for _ in range(2):
        seen += [batch.tolist() for (batch,) in L.utils.data.DataLoader(dataset, batch_size=6, **options)]
        seen.append(L.rand(1).item())  # the default stream after each pass
    return seen


@pytest.mark.parametrize("options", [dict(shuffle=True), dict(shuffle=False), dict(shuffle=True, drop_last=True)])
def test_data_loaders_shuffle_as_torchs_and_leave_the_stream_where_torchs_do(options):
    # each pass draws a base seed for its workers (even without any), then the sampler a seed of its own
    assert _passes(ember, **options) == _passes(torch, **options)


def test_samplers_and_random_split_draw_torchs_indices():
    def draws(L) -> list:
        L.manual_seed(1)
        data = L.utils.data
        return [list(data.RandomSampler(range(10), replacement=True, num_samples=40)),
                list(data.RandomSampler(range(7), num_samples=10)),
                list(data.SubsetRandomSampler([5, 6, 7, 8])),
                [list(part) for part in data.random_split(range(10), [3, 7])],
                [b.tolist() for b in data.DataLoader(range(10), batch_size=4, shuffle=True,
                                                     generator=L.Generator().manual_seed(3))],
                L.rand(1).item()]

    assert draws(ember) == draws(torch)


_WEIGHTS = np.random.default_rng(0).random((3, 10))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("make", [
    lambda L, d: L.empty(100, dtype=d).exponential_(2.0),
    lambda L, d: L.empty(100, dtype=d).geometric_(0.3),
    lambda L, d: L.empty(100, dtype=d).cauchy_(1.0, 2.0),
    lambda L, d: L.empty(101, dtype=d).log_normal_(0.5, 0.3),
    lambda L, d: L.multinomial(L.tensor(_WEIGHTS, dtype=d), 30, replacement=True),
    lambda L, d: L.multinomial(L.tensor(_WEIGHTS, dtype=d), 6),
    lambda L, d: L.multinomial(L.tensor(_WEIGHTS[0], dtype=d), 1),
], ids=["exponential_", "geometric_", "cauchy_", "log_normal_", "multinomial-replacement", "multinomial",
        "multinomial-one"])
def test_other_distributions_are_torchs(make, dtype):
    # the same bits in single precision; in double, NumPy's log1p, tan and exp may differ from the C library's in
    # the last bit
    _both(0)
    mine, theirs = _values(make(ember, getattr(ember, dtype))), _values(make(torch, getattr(torch, dtype)))
    if dtype == "float32":
        assert np.array_equal(mine, theirs)
    np.testing.assert_allclose(mine, theirs, rtol=1e-15, atol=0)
    _in_step()


def test_categorical_samples_and_weighted_sampling_are_torchs():
    def draws(L) -> list:
        L.manual_seed(2)
        probs = L.tensor(_WEIGHTS / _WEIGHTS.sum(-1, keepdims=True), dtype=L.float32)
        return [L.distributions.Categorical(probs=probs).sample((4,)).tolist(),
                L.distributions.Categorical(probs=probs[0]).sample().tolist(),
                list(L.utils.data.WeightedRandomSampler([0.1, 0.5, 0.4], 10)),
                list(L.utils.data.WeightedRandomSampler([0.1, 0.5, 0.4], 2, replacement=False)),
                L.rand(1).item()]

    assert draws(ember) == draws(torch)


@pytest.mark.parametrize("make", [
    lambda L: L.nn.functional.rrelu(L.tensor(_WEIGHTS - 0.5, dtype=L.float32), training=True),
    lambda L: L.nn.init.sparse_(L.empty(6, 4), 0.5),
    lambda L: L.distributions.Multinomial(10, L.tensor([0.2, 0.3, 0.5])).sample((2,)),
    lambda L: L.nn.Dropout2d(0.5)(L.ones(2, 3, 4, 4)),
    lambda L: L.nn.functional.alpha_dropout(L.tensor(_WEIGHTS, dtype=L.float32), 0.3, training=True),
])
def test_rrelu_sparse_init_multinomial_counts_and_channel_dropout_are_torchs(make):
    _both(0)
    np.testing.assert_allclose(_values(make(ember)), _values(make(torch)), rtol=0, atol=1e-9)
    _in_step()


@pytest.mark.parametrize("make", [
    lambda L: L.poisson(L.tensor([0.0, 0.5, 3.0, 9.9, 10.0, 25.0, 300.0, 1e4])),
    lambda L: L.poisson(L.tensor(np.linspace(0, 50, 60), dtype=L.float32)),
    lambda L: L.distributions.Gamma(L.tensor([0.3, 1.0, 2.0, 5.0, 0.05, 100.0], dtype=L.float64),
                                    L.tensor(1.0, dtype=L.float64)).sample(),
    lambda L: L.distributions.Dirichlet(L.tensor([0.5, 1.0, 3.0], dtype=L.float64)).sample((4,)),
    lambda L: L.distributions.Gamma(L.tensor([0.7, 4.0], dtype=L.float64), L.tensor([1.0, 2.0], dtype=L.float64))
    .sample((3,)),
], ids=["poisson", "poisson-single", "standard-gamma", "dirichlet", "gamma"])
def test_rejection_samplers_are_torchs(make):
    # Poisson: Hörmann's transformed rejection from rate 10, products of uniforms below; Gamma: Marsaglia and Tsang
    # with torch's single-precision constants, its normals drawn one by one (the kept one first)
    _both(0)
    assert np.array_equal(_values(make(ember)), _values(make(torch)))
    _in_step()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binomial_draws_are_torchs(dtype):
    # BTRS where the rarer outcome's mean is at least 10, else inversion by geometric waiting times
    counts, probs = np.arange(0, 300, 7.0), np.linspace(0.01, 0.99, 43)
    _both(0)
    mine = ember.binomial(ember.tensor(counts, dtype=getattr(ember, dtype)), ember.tensor(probs, dtype=getattr(ember, dtype)))
    theirs = torch.binomial(torch.tensor(counts, dtype=getattr(torch, dtype)), torch.tensor(probs, dtype=getattr(torch, dtype)))
    assert np.array_equal(_values(mine), _values(theirs))
    mine = ember.distributions.Binomial(ember.tensor([10.0, 50.0]), ember.tensor([0.3, 0.8])).sample((4,))
    theirs = torch.distributions.Binomial(torch.tensor([10.0, 50.0]), torch.tensor([0.3, 0.8])).sample((4,))
    assert np.array_equal(_values(mine), _values(theirs))
    _in_step()


def test_multinomial_without_replacement_goes_on_into_the_weightless_categories():
    # as torch's: the weighted ones first, in torch's order; then those of no weight (torch's order among them is
    # its top-k's, ember's the index order)
    weights = [0.5, 0.0, 0.5, 0.0, 0.0]
    _both(1)
    mine, theirs = ember.multinomial(ember.tensor(weights), 5).tolist(), torch.multinomial(torch.tensor(weights), 5).tolist()
    assert mine[:2] == theirs[:2] and sorted(mine[2:]) == sorted(theirs[2:]) == [1, 3, 4]
    _in_step()
