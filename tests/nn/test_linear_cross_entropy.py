"""F.linear_cross_entropy and nn.LinearCrossEntropyLoss against torch: the reference path and the chunked one
(values and gradients), the chunk sizes torch's options pick, and gradients of the chunked op to second order."""
import dataclasses

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember

R = np.random.default_rng(1)
X, W, B = R.standard_normal((7, 5)), R.standard_normal((11, 5)), R.standard_normal(11)
CLASS_WEIGHTS, T = R.uniform(0.5, 2, 11), np.array([1, 3, -100, 10, 0, 3, 5])


def run(lib, x, w, target, chunk=None, **kwargs):
    tensors = [lib.tensor(a, requires_grad=True) for a in (x, w)]
    bias = kwargs.pop("bias", None)
    bias = None if bias is None else lib.tensor(bias, requires_grad=True)
    options = None if chunk is None else lib.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk)
    loss = lib.nn.functional.linear_cross_entropy(*tensors, lib.tensor(target), linear_bias=bias, options=options,
                                                  **kwargs)
    loss.sum().backward()
    return [loss] + [t.grad for t in tensors + ([bias] if bias is not None else [])]


def assert_same(ours, theirs):
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("chunk", [None, 1, 3, 100])
def test_matches_torch_with_weights_bias_and_ignored_rows(reduction, chunk):
    kwargs = dict(bias=B, weight=CLASS_WEIGHTS, reduction=reduction)
    assert_same(run(ember, X, W, T, chunk, **dict(kwargs, weight=ember.tensor(CLASS_WEIGHTS))),
                run(torch, X, W, T, chunk, **dict(kwargs, weight=torch.tensor(CLASS_WEIGHTS))))


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(1, 9), classes=st.integers(2, 8), chunk=st.integers(1, 10), seed=st.integers(0, 99))
def test_chunked_equals_reference(rows, classes, chunk, seed):
    rng = np.random.default_rng(seed)
    x, w, t = rng.standard_normal((rows, 3)), rng.standard_normal((classes, 3)), rng.integers(0, classes, rows)
    assert_same(run(ember, x, w, t, chunk), run(torch, x, w, t))


def test_k_dimensional_probabilities_smoothing_and_unbatched():
    w3, t3, b3 = R.standard_normal((4, 3, 5)), R.integers(0, 4, (7, 3)), R.standard_normal((4, 3))
    assert_same(run(ember, X, w3, t3, bias=b3), run(torch, X, w3, t3, bias=b3))
    probabilities = R.dirichlet(np.ones(11), 7)
    assert_same(run(ember, X, W, probabilities, label_smoothing=0.2),
                run(torch, X, W, probabilities, label_smoothing=0.2))
    assert_same(run(ember, X[0], W, np.array(4), 2), run(torch, X[0], W, np.array(4), 2))


def test_options_that_cannot_chunk_warn_and_fall_back():
    options = ember.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    with pytest.warns(UserWarning, match="options ignored"):
        loss = ember.nn.functional.linear_cross_entropy(ember.tensor(X), ember.tensor(W), ember.tensor(np.abs(T) % 11),
                                                        label_smoothing=0.1, options=options)
    expected = torch.nn.functional.linear_cross_entropy(torch.tensor(X), torch.tensor(W), torch.tensor(np.abs(T) % 11),
                                                        label_smoothing=0.1)
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-12)


def test_chunked_gradients_to_second_order():
    x, w, b = (ember.tensor(a, requires_grad=True) for a in (X[:4], W[:6], B[:6]))
    target, options = ember.tensor([1, 3, -100, 5]), ember.nn.LinearCrossEntropyOptions(batch_chunk_size=3)

    for reduction in ("none", "mean"):
        def loss(x, w, b):
            return ember.nn.functional.linear_cross_entropy(x, w, target, linear_bias=b, options=options,
                                                            reduction=reduction)

        assert ember.autograd.gradcheck(loss, (x, w, b))
        assert ember.autograd.gradgradcheck(loss, (x, w, b))


def test_chunked_backward_twice_with_retain_graph():
    x, w = ember.tensor(X, requires_grad=True), ember.tensor(W, requires_grad=True)
    loss = ember.nn.functional.linear_cross_entropy(x, w, ember.tensor(np.abs(T) % 11), reduction="sum",
                                                    options=ember.nn.LinearCrossEntropyOptions(batch_chunk_size=2))
    loss.backward(retain_graph=True)
    first = x.grad.clone()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first.numpy())


@pytest.mark.parametrize("method", ["auto", "aspect_ratio", "aspect_ratio:3", None])
def test_chunk_sizes_as_torch_picks_them(method):
    for rows, features, classes in ((100, 5, 11), (7, 16, 1000), (1, 3, 3)):
        ours = ember.nn.LinearCrossEntropyOptions(chunking_method=method, batch_chunk_size=None if method else 4)
        theirs = torch.nn.LinearCrossEntropyOptions(chunking_method=method, batch_chunk_size=None if method else 4)
        assert ours.chunk_rows(rows, features, classes) == theirs._adjust(rows, features, classes,
                                                                          torch.float32).batch_chunk_size


def test_option_and_shape_errors():
    for bad, match in (({"acc_policy": "fast"}, "invalid acc_policy"), ({"chunking_method": "rows"},
                       "invalid chunking_method"), ({"batch_chunk_size": 0}, "batch_chunk_size must be positive")):
        with pytest.raises(ValueError, match=match):
            ember.nn.LinearCrossEntropyOptions(**bad)
    with pytest.raises(RuntimeError, match="in_features"):
        ember.nn.functional.linear_cross_entropy(ember.ones(2, 3), ember.ones(4, 5), ember.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="ignore_index cannot be specified"):
        ember.nn.functional.linear_cross_entropy(ember.ones(2, 3), ember.ones(4, 3), ember.ones(2, 4), ignore_index=1)
    with pytest.raises(IndexError, match="Target 9 is out of bounds"):
        ember.nn.functional.linear_cross_entropy(ember.ones(2, 3), ember.ones(4, 3), ember.tensor([0, 9]),
                                                 options=ember.nn.LinearCrossEntropyOptions())


def test_module_matches_torch():
    torch.manual_seed(0)
    theirs = torch.nn.LinearCrossEntropyLoss(5, 4, out_features=(3,), bias=True, dtype=torch.float64)
    ours = ember.nn.LinearCrossEntropyLoss(5, 4, out_features=(3,), bias=True, dtype=ember.float64)
    ours.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    target = R.integers(0, 4, (7, 3))
    np.testing.assert_allclose(ours(ember.tensor(X), ember.tensor(target)).item(),
                               theirs(torch.tensor(X), torch.tensor(target)).item(), rtol=1e-12)
    assert repr(ours) == repr(theirs)
    with pytest.raises(RuntimeError, match="weight shape"):
        ember.nn.LinearCrossEntropyLoss(5, 4, weight=ember.ones(3))


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_chunked_forward_mode_equals_the_whole_path(reduction):
    x, w, tangent = ember.tensor(X), ember.tensor(W), ember.tensor(R.standard_normal(W.shape))
    target = ember.tensor(T)

    def loss(options):
        return lambda w: ember.nn.functional.linear_cross_entropy(x, w, target, reduction=reduction, options=options)

    chunked = ember.func.jvp(loss(ember.nn.LinearCrossEntropyOptions(batch_chunk_size=3)), (w,), (tangent,))
    whole = ember.func.jvp(loss(None), (w,), (tangent,))
    for a, b in zip(chunked, whole):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def test_options_fields_and_defaults_are_torchs():
    ours = {f.name: f.default for f in dataclasses.fields(ember.nn.LinearCrossEntropyOptions)}
    theirs = {f.name: f.default for f in dataclasses.fields(torch.nn.LinearCrossEntropyOptions)}
    assert ours == theirs
    ember.nn.LinearCrossEntropyOptions(acc_dtype=ember.bfloat16)  # torch takes each floating dtype
    with pytest.raises(ValueError, match="acc_dtype must be one of"):
        ember.nn.LinearCrossEntropyOptions(acc_dtype=ember.int64)


def test_a_chunk_size_and_a_method_that_agree_once_capped_at_the_rows():
    # aspect_ratio asks for 4 rows of a 3-row batch: torch caps it at 3, which the given size then matches
    options = dict(batch_chunk_size=3, chunking_method="aspect_ratio")
    assert torch.nn.LinearCrossEntropyOptions(**options)._adjust(3, 4, 4, torch.float32).batch_chunk_size == 3
    assert ember.nn.LinearCrossEntropyOptions(**options).chunk_rows(3, 4, 4) == 3


@pytest.mark.parametrize("acc", [{}, {"acc_dtype": "float16"}, {"acc_dtype": "float32"}, {"acc_policy": "accurate"}])
def test_half_precision_inputs_accumulate_in_the_dtype_torch_resolves(acc):
    x, w = R.standard_normal((64, 8)), R.standard_normal((100, 8))
    target = R.integers(0, 100, 64)

    def losses(lib):
        kwargs = {k: getattr(lib, v) if k == "acc_dtype" else v for k, v in acc.items()}
        options = lib.nn.LinearCrossEntropyOptions(batch_chunk_size=16, **kwargs)
        out = lib.nn.functional.linear_cross_entropy(lib.tensor(x).half(), lib.tensor(w).half(), lib.tensor(target),
                                                     reduction="none", options=options)
        return out.double().numpy(), str(out.dtype).split(".")[1]

    (ours, our_dtype), (theirs, their_dtype) = losses(ember), losses(torch)
    assert our_dtype == their_dtype == "float16"
    # float32 accumulation rounds once at the end (as torch's); a float16 one rounds on the way and drifts
    exact = ember.nn.functional.linear_cross_entropy(ember.tensor(x).half().double(), ember.tensor(w).half().double(),
                                                     ember.tensor(target), reduction="none").numpy()
    np.testing.assert_allclose(np.abs(ours - exact).max(), np.abs(theirs - exact).max(), rtol=0.1)


@pytest.mark.parametrize("dtype, acc", [("float32", "float64"), ("float32", "float16"), ("float64", "float32"),
                                        ("bfloat16", "float16")])
def test_accumulation_dtypes_torch_refuses(dtype, acc):
    for lib in (torch, ember):
        options = lib.nn.LinearCrossEntropyOptions(acc_dtype=getattr(lib, acc))
        with pytest.raises(RuntimeError, match="supports float32 acc_dtype with float16/bfloat16 inputs"):
            lib.nn.functional.linear_cross_entropy(lib.ones(2, 3, dtype=getattr(lib, dtype)),
                                                   lib.ones(4, 3, dtype=getattr(lib, dtype)), lib.tensor([0, 1]),
                                                   options=options)


@pytest.mark.parametrize("keep", [False, True])
def test_second_backward_gives_the_first_ones_gradients_whether_or_not_they_were_kept(keep):
    x = ember.tensor(X, requires_grad=True)
    options = ember.nn.LinearCrossEntropyOptions(batch_chunk_size=2, allow_retain_graph=keep)
    loss = ember.nn.functional.linear_cross_entropy(x, ember.tensor(W), ember.tensor(np.abs(T) % 11), options=options)
    loss.backward(retain_graph=True)
    first = x.grad.clone()
    loss.backward()
    assert np.array_equal(x.grad.numpy(), 2 * first.numpy())
