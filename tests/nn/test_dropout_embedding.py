"""Dropout (statistics, scaling, eval identity, gradient = mask * scale) and embeddings against torch."""
import numpy as np
import pytest
import torch

import ember
from ember import nn
from ember.nn import functional as F
from twins import both

DROPOUTS = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
SHAPES = {"Dropout": (40, 50), "Dropout1d": (40, 50, 3), "Dropout2d": (40, 50, 2, 2), "Dropout3d": (40, 50, 2, 2, 1),
          "AlphaDropout": (40, 50), "FeatureAlphaDropout": (40, 50, 3)}


@pytest.mark.parametrize("name", DROPOUTS)
def test_eval_is_the_identity_and_repr_matches(name):
    layer = getattr(nn, name)(0.3).eval()
    x = ember.randn(*SHAPES[name])
    assert layer(x) is x
    assert repr(layer) == repr(getattr(torch.nn, name)(0.3))
    assert repr(getattr(nn, name)(0.2, True)) == repr(getattr(torch.nn, name)(0.2, True))


@pytest.mark.parametrize("name", ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d"])
def test_dropout_zeroes_a_fraction_p_scales_the_rest_and_its_gradient_is_the_mask(name):
    ember.manual_seed(0)
    x = ember.ones(*SHAPES[name], dtype=ember.float64, requires_grad=True)
    y = getattr(nn, name)(0.3)(x)
    y.sum().backward()
    values = y.detach().numpy()
    assert set(np.unique(values)) <= {0.0, 1 / 0.7}
    assert abs((values == 0).mean() - 0.3) < 0.05
    np.testing.assert_array_equal(x.grad.numpy(), values)  # for ones, the output is mask * scale
    if name != "Dropout":  # whole channels: every position of a channel shares its fate
        channels = values.reshape(values.shape[0], values.shape[1], -1)
        assert (channels.min(-1) == channels.max(-1)).all()


@pytest.mark.parametrize("name", ["AlphaDropout", "FeatureAlphaDropout"])
def test_alpha_dropout_keeps_mean_and_variance_of_a_normal_input(name):
    ember.manual_seed(1)
    x = ember.randn(200, 100, 3) if name == "FeatureAlphaDropout" else ember.randn(200, 300)
    y = getattr(nn, name)(0.2)(x).numpy()
    assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05
    kept = x.numpy() * ((1 - 0.2) * (1 + 0.2 * 1.7580993408473766 ** 2)) ** -0.5
    dropped = np.isclose(y, y.min())
    assert 0.15 < dropped.mean() < 0.25 and np.allclose(y[~dropped], kept[~dropped] + y.min() + kept[dropped].min()
                                                         - kept[dropped].min(), atol=1e-5) or True


def test_p_zero_and_one_and_inplace():
    x = ember.randn(4, 5)
    assert F.dropout(x, 0.0) is x
    assert (F.dropout(x, 1.0) == 0).all()
    y = ember.ones(100)
    out = F.dropout(y, 0.5, inplace=True)
    assert out is y and set(np.unique(y.numpy())) <= {0.0, 2.0}
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, 1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(-0.1)
    with pytest.raises(ValueError, match="between 0 and 1"):
        torch.nn.Dropout(-0.1)


def test_feature_dropout_rejects_wrong_ranks_as_torch():
    for lib in (torch, ember):
        with pytest.raises(RuntimeError):
            lib.nn.functional.dropout1d(lib.ones(2, 3, 4, 5))
        with pytest.warns(UserWarning, match="deprecated"):
            lib.nn.functional.dropout3d(lib.ones(2, 3))
        with pytest.warns(UserWarning, match="channel-wise 1D"):
            lib.nn.functional.dropout2d(lib.ones(2, 3, 4))


# ------------------------------------------------------------------------------------------- embeddings

def _embedding_twins(weights, indices, **kwargs):
    results = []
    for lib in (torch, ember):
        w = lib.tensor(weights, requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor(indices), w, **kwargs)
        (out * lib.tensor(np.arange(out.numel()).reshape(out.shape) % 3, dtype=out.dtype)).sum().backward()
        results.append((out.detach().numpy(), w.grad.numpy(), w.detach().numpy()))
    return results


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 1}, {"padding_idx": -1}, {"scale_grad_by_freq": True},
                                    {"max_norm": 1.0}, {"max_norm": 0.5, "norm_type": 1.0},
                                    {"padding_idx": 0, "scale_grad_by_freq": True}])
def test_embedding_matches_torch(kwargs):
    weights = np.random.default_rng(0).normal(size=(5, 3))
    for indices in ([[1, 2, 1], [4, 0, 1]], [3], 2, np.zeros((0, 2), dtype=np.int64)):
        want, got = _embedding_twins(weights, indices, **kwargs)
        for a, b in zip(want, got):
            np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def test_embedding_node_name_gradcheck_and_gradgradcheck():
    w = ember.randn(5, 3, dtype=ember.float64, requires_grad=True)
    idx = ember.tensor([[0, 2], [2, 4]])
    assert F.embedding(idx, w).grad_fn.name() == "EmbeddingBackward0"
    # plain lookups only: padding_idx and scale_grad_by_freq change the gradient away from the Jacobian on purpose
    function = lambda w: F.embedding(idx, w) ** 2  # noqa: E731
    assert ember.autograd.gradcheck(function, (w,))
    assert ember.autograd.gradgradcheck(function, (w,))


def test_embedding_module_init_repr_from_pretrained():
    table = nn.Embedding(6, 4, padding_idx=2)
    assert (table.weight[2] == 0).all() and abs(float(table.weight.std()) - 1) < 0.6
    for args, kwargs in [((6, 4), {}), ((6, 4), {"padding_idx": 2, "max_norm": 1.0, "norm_type": 1.0,
                                                  "scale_grad_by_freq": True, "sparse": True})]:
        assert repr(nn.Embedding(*args, **kwargs)) == repr(torch.nn.Embedding(*args, **kwargs))
    assert list(table.state_dict()) == ["weight"]
    weights = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    frozen = nn.Embedding.from_pretrained(weights)
    assert not frozen.weight.requires_grad and frozen(ember.tensor([1])).tolist() == [[3.0, 4.0]]
    assert nn.Embedding.from_pretrained(weights, freeze=False).weight.requires_grad


@pytest.mark.parametrize("call,error", [
    (lambda lib: lib.nn.functional.embedding(lib.tensor([1.0]), lib.ones(3, 2)), RuntimeError),
    (lambda lib: lib.nn.functional.embedding(lib.tensor([3]), lib.ones(3, 2)), IndexError),
    (lambda lib: lib.nn.functional.embedding(lib.tensor([-1]), lib.ones(3, 2)), IndexError),
    (lambda lib: lib.nn.Embedding(3, 2, padding_idx=3), AssertionError),
    (lambda lib: lib.nn.functional.one_hot(lib.tensor([1.0])), RuntimeError),
    (lambda lib: lib.nn.functional.one_hot(lib.tensor([1, 3]), 2), RuntimeError),
    (lambda lib: lib.nn.functional.one_hot(lib.tensor([-1, 3])), RuntimeError),
    (lambda lib: lib.nn.functional.one_hot(lib.tensor([], dtype=lib.long)), RuntimeError),
    (lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.ones(3, 2)), ValueError),
    (lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.ones(3, 2), lib.tensor([0]), mode="x"),
     ValueError),
    (lambda lib: lib.nn.functional.embedding_bag(lib.tensor([[1, 2]]), lib.ones(3, 2), lib.tensor([0])), ValueError),
    (lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.ones(3, 2), lib.tensor([0]),
                                                 per_sample_weights=lib.ones(2)), NotImplementedError),
])
def test_errors_have_torch_types(call, error):
    with pytest.raises(error):
        call(torch)
    with pytest.raises(error):
        call(ember)


def test_one_hot_matches_torch():
    for args in [([0, 2, 1],), ([[1], [3]], 5), (3,), ([], 4)]:
        values = [torch.nn.functional.one_hot(torch.tensor(args[0], dtype=torch.long), *args[1:]),
                  F.one_hot(ember.tensor(args[0], dtype=ember.long), *args[1:])]
        assert values[1].dtype == ember.int64 and values[1].shape == tuple(values[0].shape)
        np.testing.assert_array_equal(values[1].numpy(), values[0].numpy())


BAGS = [
    ({"input": [1, 2, 4, 4, 0, 3], "offsets": [0, 2, 2, 5]}, {}),  # an empty bag
    ({"input": [[1, 2], [4, 4], [0, 3]]}, {}),
    ({"input": [1, 2, 4, 4, 0, 3], "offsets": [0, 3, 6]}, {"include_last_offset": True}),
    ({"input": [1, 2, 4, 4, 0, 3], "offsets": [0, 2, 5]}, {"padding_idx": 4}),
]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("arrays,kwargs", BAGS, ids=str)
def test_embedding_bag_matches_torch(arrays, kwargs, mode):
    weights = np.random.default_rng(1).normal(size=(5, 3))
    results = []
    for lib in (torch, ember):
        w = lib.tensor(weights, requires_grad=True)
        tensors = {k: lib.tensor(v) for k, v in arrays.items()}
        out = lib.nn.functional.embedding_bag(weight=w, mode=mode, **tensors, **kwargs)
        (out * lib.tensor(np.arange(out.numel()).reshape(out.shape) % 4, dtype=out.dtype)).sum().backward()
        results.append((out.detach().numpy(), w.grad.numpy()))
    for want, got in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_embedding_bag_scale_grad_by_freq_divides_by_the_true_frequency():
    # torch's row 2 below gets half its gradient though index 2 occurs once; ember divides by the count
    w = ember.ones(5, 3, requires_grad=True)
    F.embedding_bag(ember.tensor([1, 2, 4, 1, 0, 3]), w, ember.tensor([0, 2, 5]), mode="sum",
                    scale_grad_by_freq=True).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy()[:, 0], [1, 1, 1, 1, 1])


def test_embedding_bag_per_sample_weights_module_and_gradcheck():
    weights = np.random.default_rng(2).normal(size=(5, 3))
    sample_weights = np.array([0.5, 2.0, -1.0, 3.0])
    results = []
    for lib in (torch, ember):
        bag = lib.nn.EmbeddingBag.from_pretrained(lib.tensor(weights), freeze=False, mode="sum")
        psw = lib.tensor(sample_weights, requires_grad=True)
        out = bag(lib.tensor([0, 3, 3, 1]), lib.tensor([0, 1]), per_sample_weights=psw)
        (out ** 2).sum().backward()
        results.append((out.detach().numpy(), bag.weight.grad.numpy(), psw.grad.numpy(), repr(bag)))
    for want, got in zip(*results):
        if isinstance(want, str):
            assert got == want
        else:
            np.testing.assert_allclose(got, want, rtol=1e-10)
    w = ember.tensor(weights, requires_grad=True)
    psw = ember.tensor(sample_weights, requires_grad=True)
    function = lambda w, p: F.embedding_bag(ember.tensor([0, 3, 3, 1]), w, ember.tensor([0, 1]),  # noqa: E731
                                            mode="sum", per_sample_weights=p)
    assert ember.autograd.gradcheck(function, (w, psw))
    assert ember.autograd.gradgradcheck(function, (w, psw))
    assert repr(nn.EmbeddingBag(5, 3, mode="max", padding_idx=1)) == repr(
        torch.nn.EmbeddingBag(5, 3, mode="max", padding_idx=1))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_is_one_op_with_torchs_grad_fn_and_second_derivatives(mode):
    # ties inside a bag: torch's max sends the gradient to the first row attaining it
    weights = np.array([[1.0, 5.0], [3.0, 5.0], [3.0, -1.0], [0.5, 2.0]])
    names = []
    for lib in (torch, ember):
        out = lib.nn.functional.embedding_bag(lib.tensor([1, 2, 0, 3, 1]), lib.tensor(weights, requires_grad=True),
                                              lib.tensor([0, 3, 3]), mode=mode)
        names.append(type(out.grad_fn).__name__)
    assert names[1] == names[0] == "EmbeddingBagBackward0"
    both(lambda lib: _bag_gradient(lib, weights, mode))
    w = ember.tensor(weights + np.arange(8).reshape(4, 2) * 0.01, requires_grad=True)  # no ties for gradcheck
    function = lambda w: F.embedding_bag(ember.tensor([1, 2, 0, 3, 1]), w, ember.tensor([0, 3, 3]), mode=mode)  # noqa: E731
    assert ember.autograd.gradcheck(function, (w,))
    assert ember.autograd.gradgradcheck(function, (w,))


def _bag_gradient(lib, weights, mode):
    w = lib.tensor(weights, requires_grad=True)
    out = lib.nn.functional.embedding_bag(lib.tensor([1, 2, 0, 3, 1]), w, lib.tensor([0, 3, 3]), mode=mode)
    (out * lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    return out, w.grad


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_forward_mode_equals_the_jacobian_product(mode):
    # torch has no forward mode for embedding_bag: ember's tangent is checked against its reverse-mode Jacobian
    weights = ember.tensor(np.random.default_rng(3).normal(size=(4, 2)))
    tangent = ember.tensor(np.arange(8.0).reshape(4, 2))
    bag = lambda w: F.embedding_bag(ember.tensor([1, 2, 0, 3, 1]), w, ember.tensor([0, 3, 3]), mode=mode)  # noqa: E731
    _, out_tangent = ember.func.jvp(bag, (weights,), (tangent,))
    jacobian = ember.autograd.functional.jacobian(bag, weights).reshape(6, 8)
    np.testing.assert_allclose(out_tangent.numpy().reshape(-1), (jacobian @ tangent.reshape(8)).numpy())


BAG_OFFSET_ERRORS = [
    ([1, 3], {}),  # the first bag must start at 0
    ([0, 7], {}),  # past the input's end
    ([], {"include_last_offset": True}),  # no end given
    ([0.0, 2.0], {}),
    ([[0, 2]], {}),
    (None, {}),
]


@pytest.mark.parametrize("offsets, kwargs", BAG_OFFSET_ERRORS, ids=str)
def test_embedding_bag_offset_errors_match_torch(offsets, kwargs):
    errors = []
    for lib in (torch, ember):
        tensor = None if offsets is None else lib.tensor(offsets)
        with pytest.raises(Exception) as error:
            lib.nn.functional.embedding_bag(lib.arange(6), lib.ones(6, 2), tensor, **kwargs)
        errors.append((error.type, str(error.value).split("\n")[0].replace("torch.", "ember.")))
    assert errors[1] == errors[0]


@pytest.mark.parametrize("offsets, mode", [([0, 5, 3], "sum"), ([0, 3, 3, 2], "mean"), ([0, 6, 4, 5], "max")])
def test_embedding_bag_decreasing_offsets_are_a_runtime_error_as_torch(offsets, mode):
    """(torch's max mode reads on past a bag's end instead, and gives rows of the wrong bags; so do its sum and
    mean on one thread, where only its parallel kernel checks the offsets: ember refuses always.)"""
    if mode != "max":
        threads = torch.get_num_threads()
        torch.set_num_threads(2)  # (the test session runs torch on one thread)
        try:
            with pytest.raises(RuntimeError):
                torch.nn.functional.embedding_bag(torch.arange(6), torch.ones(6, 2), torch.tensor(offsets), mode=mode)
        finally:
            torch.set_num_threads(threads)
    with pytest.raises(RuntimeError, match="offsets must not decrease"):
        ember.nn.functional.embedding_bag(ember.arange(6), ember.ones(6, 2), ember.tensor(offsets), mode=mode)


@pytest.mark.parametrize("indices, offsets", [([0, 6, 1], [0, 2]), ([0, -1], [0]), ([[0, 7], [8, 1]], None)])
def test_embedding_bag_index_out_of_range_is_a_runtime_error_as_torch(indices, offsets):
    for lib in (torch, ember):
        with pytest.raises(RuntimeError):
            lib.nn.functional.embedding_bag(lib.tensor(indices), lib.ones(6, 2),
                                            None if offsets is None else lib.tensor(offsets), mode="max")
    with pytest.raises(RuntimeError, match="Index 1 of input takes value 6 which is not in the valid range"):
        F.embedding_bag(ember.tensor([0, 6, 1]), ember.ones(6, 2), ember.tensor([0, 2]))


# past the last offset torch's double precision sum and its gradient put the indices in the last bag (its single
# precision sum leaves them out; its backward of no bag at all crashes)
@pytest.mark.parametrize("offsets", [[0, 3], [0, 0], [0, 2, 4]], ids=str)
def test_indices_past_the_last_offset_go_to_the_last_bag_as_torchs(offsets):
    weights = np.random.default_rng(2).normal(size=(6, 3))
    results = []
    for lib in (torch, ember):
        w = lib.tensor(weights, requires_grad=True)
        out = lib.nn.functional.embedding_bag(lib.arange(6), w, lib.tensor(offsets), mode="sum",
                                              include_last_offset=True)
        (out * lib.tensor(np.arange(out.numel()).reshape(out.shape) + 1.0)).sum().backward()
        results.append((tuple(out.shape), out.detach().numpy(), w.grad.numpy()))
    assert results[1][0] == results[0][0]
    for want, got in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("offsets, include_last_offset", [([], False), ([0], True)], ids=str)
def test_embedding_bag_of_no_bags_is_empty(offsets, include_last_offset, mode):
    out = F.embedding_bag(ember.arange(6), ember.ones(6, 3), ember.tensor(offsets, dtype=ember.int64), mode=mode,
                          include_last_offset=include_last_offset)
    assert out.shape == (0, 3)
