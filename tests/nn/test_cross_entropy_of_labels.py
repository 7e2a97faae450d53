"""cross_entropy's path for the usual call: [N, C] logits, int64 class indices that all count."""
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from ember._ops.loss import CrossEntropyOfLabels
from ember.autograd import gradcheck, gradgradcheck

F = ember.nn.functional


def _pair(logits: np.ndarray, labels: np.ndarray, **kwargs):
    x, tx = ember.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    loss, expected = F.cross_entropy(x, ember.tensor(labels), **kwargs), torch.nn.functional.cross_entropy(
        tx, torch.tensor(labels), **kwargs)
    return x, tx, loss, expected


def _takes_the_path(loss) -> bool:
    return type(loss.grad_fn)._forward_cls is CrossEntropyOfLabels


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 9), classes=st.integers(1, 7), reduction=st.sampled_from(["mean", "sum", "none"]),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**16))
def test_values_and_gradients_as_torch(rows, classes, reduction, dtype, seed):
    rng = np.random.default_rng(seed)
    logits = (rng.standard_normal((rows, classes)) * 4).astype(dtype)
    labels = rng.integers(0, classes, rows)
    x, tx, loss, expected = _pair(logits, labels, reduction=reduction)
    assert _takes_the_path(loss)
    assert loss.grad_fn.name() == expected.grad_fn.name() == "NllLossBackward0"
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(loss.detach().numpy(), expected.detach().numpy(), rtol=tol, atol=tol)
    seed_grad = rng.standard_normal(tuple(loss.shape)).astype(dtype)
    loss.backward(ember.tensor(seed_grad))
    expected.backward(torch.tensor(seed_grad))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_gradcheck_and_gradgradcheck(reduction):
    x = ember.randn(5, 4, dtype=ember.float64, requires_grad=True)
    labels = ember.tensor([0, 3, 1, 1, 2])
    assert _takes_the_path(F.cross_entropy(x, labels, reduction=reduction))
    assert gradcheck(lambda t: F.cross_entropy(t, labels, reduction=reduction), (x,))
    assert gradgradcheck(lambda t: F.cross_entropy(t, labels, reduction=reduction), (x,))


def test_a_retained_graph_gives_the_same_gradient_twice():
    x = ember.randn(6, 3, requires_grad=True)
    loss = F.cross_entropy(x, ember.tensor([0, 1, 2, 2, 1, 0]))
    loss.backward(retain_graph=True)
    first = x.grad.clone()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first.numpy(), rtol=1e-6)


def test_minus_infinity_in_another_class_stays_finite_as_in_torch():
    logits = np.array([[0.0, -np.inf, 1.0], [2.0, 0.5, -np.inf]], np.float32)
    x, tx, loss, expected = _pair(logits, np.array([0, 1]))
    assert _takes_the_path(loss)
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-6)
    loss.backward()
    expected.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("kwargs", [{"weight": [0.2, 0.3, 0.5]}, {"ignore_index": 1}, {"label_smoothing": 0.1}])
def test_minus_infinity_on_the_general_path_as_in_torch(kwargs):
    logits = np.array([[0.0, -np.inf, 1.0], [2.0, 0.5, -np.inf]], np.float32)
    weight = kwargs.pop("weight", None)
    loss = F.cross_entropy(ember.tensor(logits), ember.tensor([0, 1]), **kwargs,
                           **({"weight": ember.tensor(weight)} if weight else {}))
    expected = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor([0, 1]), **kwargs,
                                                 **({"weight": torch.tensor(weight)} if weight else {}))
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-6)  # finite (inf with smoothing), not nan


@pytest.mark.parametrize("labels, kwargs", [
    ([0, -100, 1], {}),                   # ignored by the default ignore_index: the general path
    ([0, 2, 1], {"ignore_index": 2}),     # an ignore_index that is a class, and present
    ([0, 2, 1], {"label_smoothing": 0.1}),
    ([0, 2, 1], {"weight": [0.2, 0.3, 0.5]}),
])
def test_other_calls_take_the_general_path_and_agree_with_torch(labels, kwargs):
    logits = np.random.default_rng(0).standard_normal((3, 3)).astype(np.float32)
    weight = kwargs.pop("weight", None)
    extra_e = {"weight": ember.tensor(weight)} if weight else {}
    extra_t = {"weight": torch.tensor(weight)} if weight else {}
    loss = F.cross_entropy(ember.tensor(logits, requires_grad=True), ember.tensor(labels), **kwargs, **extra_e)
    expected = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(labels), **kwargs, **extra_t)
    assert not _takes_the_path(loss)
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-6)


def test_the_path_records_nothing_without_grad():
    loss = F.cross_entropy(ember.randn(4, 3), ember.tensor([0, 1, 2, 0]))
    assert loss.grad_fn is None and not loss.requires_grad


@pytest.mark.parametrize("label", [3, -1])
def test_a_label_out_of_range_is_refused(label):
    with pytest.raises(IndexError, match="out of bounds"):
        F.cross_entropy(ember.randn(2, 3), ember.tensor([0, label]))


@pytest.mark.parametrize("classes", [63, 64, 65, 300])
def test_few_and_many_classes_as_torch_and_backward_twice(classes):
    """The logits are transposed for their reductions up to 64 classes and read as they lie beyond: both as torch,
    and a retained graph's second backward finds the saved softmax unchanged."""
    rng = np.random.default_rng(classes)
    logits = (rng.standard_normal((6, classes)) * 4).astype(np.float32)
    labels = rng.integers(0, classes, 6)
    x, tx, loss, expected = _pair(logits, labels)
    assert _takes_the_path(loss)
    np.testing.assert_allclose(loss.detach().numpy(), expected.detach().numpy(), rtol=1e-5)
    loss.backward(retain_graph=True)
    first = x.grad.clone()
    loss.backward()
    expected.backward()
    np.testing.assert_allclose(first.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(x.grad.numpy(), 2 * first.numpy())


def test_the_usual_call_goes_straight_to_its_op(monkeypatch):
    """[N, C] float logits, int64 labels and no other argument: none of the general checks run, the result is
    torch's."""
    from ember.nn._functional import losses

    def refuse(*args, **kwargs):
        raise AssertionError("the general checks ran")

    monkeypatch.setattr(losses, "_reduction", refuse)
    monkeypatch.setattr(losses, "refuse_integers", refuse)
    rng = np.random.default_rng(11)
    for reduction in ("mean", "sum", "none"):
        x, tx, loss, expected = _pair(rng.standard_normal((5, 4)), rng.integers(0, 4, 5), reduction=reduction)
        assert _takes_the_path(loss)
        np.testing.assert_allclose(loss.detach().numpy(), expected.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("kwargs", [{"reduction": "average"}, {"size_average": False}, {"reduce": False},
                                    {"label_smoothing": -0.2}, {"label_smoothing": 1.5}])
def test_the_usual_call_with_other_options_behaves_as_torchs(kwargs):
    logits = np.random.default_rng(12).standard_normal((3, 4)).astype(np.float32)

    def outcome(lib):
        try:
            loss = lib.nn.functional.cross_entropy(lib.tensor(logits), lib.tensor([0, 3, 1]), **kwargs)
        except (ValueError, RuntimeError) as error:
            return type(error)
        return loss.numpy()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the legacy flags' deprecation warning)
        ours, theirs = outcome(ember), outcome(torch)
    if isinstance(theirs, type):
        assert ours is theirs
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
