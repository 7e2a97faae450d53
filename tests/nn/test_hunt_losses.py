"""Mismatches against torch found by a sweep of the loss functions: each test failed before its fix."""
from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _tensors(lib, arrays, grads):
    """The arrays as ``lib`` tensors; the positions in ``grads`` are leaves that require grad."""
    return [lib.tensor(a, requires_grad=i in grads) if isinstance(a, np.ndarray) else a for i, a in enumerate(arrays)]


def _options(lib, kwargs):
    return {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}


def _same(program, *arrays, grads=(0,), **kwargs):
    """``program(lib, *tensors, **kwargs)`` gives torch's value, dtype and gradients in ember."""
    results = []
    for lib in (torch, ember):
        tensors = _tensors(lib, arrays, grads)
        out = program(lib, *tensors, **_options(lib, kwargs))
        out.sum().backward()
        results.append((out.detach().numpy(), str(out.dtype).split(".")[1],
                        [tensors[i].grad.numpy() for i in grads]))
    (expected, dtype, expected_grads), (actual, actual_dtype, actual_grads) = results
    assert actual_dtype == dtype
    np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-12)
    for g, e in zip(actual_grads, expected_grads):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-12)


def _same_error(program, *arrays, grads=(), **kwargs):
    """Both raise, an exception of one type, and ember's message has torch's words in ``match`` if given."""
    match = kwargs.pop("match", None)
    raised = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as info:
            program(lib, *_tensors(lib, arrays, grads), **_options(lib, kwargs))
        raised.append(info)
    assert raised[1].type is raised[0].type, (raised[0].value, raised[1].value)
    if match:
        assert match in str(raised[0].value) and match in str(raised[1].value), (raised[0].value, raised[1].value)


# ---------------------------------------------------------------------------------------------- margin losses


def _multi_margin(lib, x, target, weight=None, **kwargs):
    return lib.nn.functional.multi_margin_loss(x, target, weight=weight, **kwargs)


def _multilabel_margin(lib, x, target, **kwargs):
    return lib.nn.functional.multilabel_margin_loss(x, target, **kwargs)


@pytest.mark.parametrize("weight, match", [
    (np.ones((1, 5)), "weight must be one-dimensional"),
    (np.array(1.0), "weight must be one-dimensional"),
    (np.ones(3), "inconsistent weight size"),
    (np.ones(5, np.float32), "expected scalar type"),
    (np.ones(5, np.int64), "expected scalar type"),
])
def test_multi_margin_loss_refuses_a_weight_of_the_wrong_shape_or_dtype(weight, match):
    # a 2-d weight failed deep inside with an IndexError, a float32 one for float64 input was taken
    _same_error(_multi_margin, RNG.standard_normal((4, 5)), np.array([0, 2, 4, 1]), weight=weight, match=match)


@pytest.mark.parametrize("target", [np.array([0., 2., 4., 1.]), np.array([0, 2, 4, 1], np.int32),
                                    np.array([0, 2, 4, 1], np.uint8), np.array([[0, 2], [4, 1]])])
def test_multi_margin_loss_takes_one_long_class_per_row_only(target):
    _same_error(_multi_margin, RNG.standard_normal((4, 5)), target)


@pytest.mark.parametrize("target", [np.array([[3, 0, -1, 1, 2]] * 4, np.float64),
                                    np.array([[3, 0, -1, 1, 2]] * 4, np.int32)])
def test_multilabel_margin_loss_takes_a_long_target_only(target):
    _same_error(_multilabel_margin, RNG.standard_normal((4, 5)), target, match="expected scalar type Long")


def test_multi_margin_loss_refuses_a_weight_that_requires_grad():
    # ember gave the weight no gradient, silently; torch has no formula and refuses
    _same_error(_multi_margin, RNG.standard_normal((4, 5)), np.array([0, 2, 4, 1]), RNG.random(5) + 0.5,
                grads=(2,), match="not differentiable with respect to argument 'weight'")


# ------------------------------------------------------------------------------------- operands without a gradient


def _weighted(name):
    def program(lib, x, target, weight):
        return getattr(lib.nn.functional, name)(x, target, weight=weight)
    return program


@pytest.mark.parametrize("program, arrays, argument", [
    (_weighted("nll_loss"), (RNG.standard_normal((4, 5)), np.array([0, 2, 4, 1]), RNG.random(5)), "weight"),
    (_weighted("cross_entropy"), (RNG.standard_normal((4, 5)), np.array([0, 2, 4, 1]), RNG.random(5)), "weight"),
    (_weighted("binary_cross_entropy"), (RNG.random((4, 5)), RNG.random((4, 5)), RNG.random(5)), "weight"),
    (lambda lib, x, target, _: lib.nn.functional.soft_margin_loss(x, target),
     (RNG.standard_normal((4, 5)), np.sign(RNG.standard_normal((4, 5))), None), "target"),
])
def test_operands_torch_cannot_differentiate_are_refused_when_they_require_grad(program, arrays, argument):
    # ember left the class weights without a gradient, silently (and differentiated soft_margin_loss's target)
    position = 2 if argument == "weight" else 1
    _same_error(program, *arrays, grads=(position,), match=f"with respect to argument '{argument}'")
    with ember.no_grad():  # without a graph to record there is nothing to refuse, as in torch
        program(ember, *_tensors(ember, arrays, (position,)))


# ---------------------------------------------------------------------------------------------- cross-entropy and nll


def _cross_entropy(lib, x, target, **kwargs):
    return lib.nn.functional.cross_entropy(x, target, **kwargs)


def _nll(lib, x, target, **kwargs):
    return lib.nn.functional.nll_loss(x, target, **kwargs)


@pytest.mark.parametrize("program", [_cross_entropy, _nll])
@pytest.mark.parametrize("weight", [np.ones((1, 5)), np.ones((5, 1)), np.array(1.0)])
def test_class_weights_must_be_one_dimensional(program, weight):
    # a [1, C], [C, 1] or 0-d weight was flattened and taken
    x = RNG.standard_normal((4, 5)) if weight.ndim else RNG.standard_normal((4, 1))
    target = np.zeros(4, np.int64)
    _same_error(program, x, target, weight=weight, match="weight tensor should be defined either for all")


@pytest.mark.parametrize("weight", [np.ones((1, 5)), np.array(1.0)])
def test_class_weights_of_probabilities_must_be_one_dimensional(weight):
    x = RNG.standard_normal((4, 5))
    _same_error(_cross_entropy, x, RNG.dirichlet(np.ones(5), 4), weight=weight,
                match="weight tensor should be defined either for all")


def test_cross_entropy_of_probabilities_refuses_ignore_index():
    # the ignore_index was silently dropped
    x, target = RNG.standard_normal((4, 5)), RNG.dirichlet(np.ones(5), 4)
    _same_error(_cross_entropy, x, target, ignore_index=1, match="ignore_index is not supported for floating point")
    _same(_cross_entropy, x, target, ignore_index=-100)  # (the default is no index)


@pytest.mark.parametrize("target", [RNG.dirichlet(np.ones(5), 3), RNG.random(6)])
def test_cross_entropy_of_probabilities_with_another_batch_size_is_a_value_error(target):
    _same_error(_cross_entropy, RNG.standard_normal((4, 5)), target, match="to match target batch_size")


@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_cross_entropy_of_an_integer_target_of_the_input_shape_asks_for_probabilities(shape):
    # torch reads a target of the input's shape as probabilities, which must be floating (ember's error spoke of
    # class indices; of a 0-d input, it was an IndexError)
    _same_error(_cross_entropy, RNG.standard_normal(shape), np.zeros(shape, np.int64),
                match="Expected floating point type for target with class probabilities")


def test_nll_loss_of_a_0d_input_is_a_value_error():
    _same_error(_nll, np.array(1.0), np.array(0), match="Expected 1 or more dimensions (got 0)")


# ---------------------------------------------------------------------------------------------- pairs and triplets


def _cosine_embedding(lib, x1, x2, target, **kwargs):
    return lib.nn.functional.cosine_embedding_loss(x1, x2, target, **kwargs)


@pytest.mark.parametrize("shapes, match", [
    (((4, 5), (4, 5), (4, 1)), "0D or 1D target tensor expected"),
    (((4, 5), (4, 5), ()), "0D target tensor expects 1D input tensors"),
    (((5,), (5,), (1,)), "1D target tensor expects 2D input tensors"),
    (((5,), (4, 5), (4,)), "1D target tensor expects 2D input tensors"),
])
def test_cosine_embedding_loss_checks_the_target_dims_as_torch(shapes, match):
    # a [4, 1] target broadcast the loss to [4, 4], a 0-d one was taken for 2-d inputs
    arrays = [RNG.standard_normal(shape) for shape in shapes]
    _same_error(_cosine_embedding, *arrays, match=match)


def test_cosine_embedding_loss_broadcasts_its_inputs():
    # inputs of shapes [4, 5] and [1, 5] were refused
    _same(_cosine_embedding, RNG.standard_normal((4, 5)), RNG.standard_normal((1, 5)), np.array([1., -1., 1., -1.]),
          grads=(0, 1), margin=0.1)


@pytest.mark.parametrize("margin", [0.0, -1.0])
def test_triplet_margin_loss_refuses_a_margin_that_is_not_positive(margin):
    def program(lib, *xs):
        return lib.nn.functional.triplet_margin_loss(*xs, margin=margin)
    _same_error(program, *RNG.standard_normal((3, 4, 5)), match="margin must be greater than 0")


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_margin_ranking_loss_of_integers_is_floating(reduction):
    # the margin (an int 0 by default) kept the losses in int64, and 'mean' failed
    def program(lib, x1, x2, target):
        return lib.nn.functional.margin_ranking_loss(x1, x2, target, reduction=reduction)
    results = [program(lib, *(lib.tensor(a) for a in (np.arange(6), np.arange(6)[::-1].copy(), np.ones(6, np.int64))))
               for lib in (torch, ember)]
    assert str(results[1].dtype) == str(results[0].dtype).replace("torch", "ember")
    np.testing.assert_allclose(results[1].double().numpy(), results[0].double().numpy())


# ---------------------------------------------------------------------------------------------- regression


@pytest.mark.parametrize("shape, var_shape", [((4, 5), (1, 5)), ((2, 3, 4), (2, 1, 4)), ((2, 3, 4), (1, 3, 4))])
def test_gaussian_nll_loss_takes_a_variance_shared_along_any_one_dim(shape, var_shape):
    # only the last dim could be shared: a [1, 5] variance for a [4, 5] input was refused
    def program(lib, x, target, var):
        return lib.nn.functional.gaussian_nll_loss(x, target, var, reduction="none")
    _same(program, RNG.standard_normal(shape), RNG.standard_normal(shape), RNG.random(var_shape) + 0.1,
          grads=(0, 1, 2))


@pytest.mark.parametrize("name", ["l1_loss", "huber_loss", "mse_loss"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_weight_of_a_regression_loss_has_the_input_shape(name, reduction):
    # the weight was checked against the broadcast loss (huber_loss did not check it at all)
    def program(lib, x, target, weight):
        return getattr(lib.nn.functional, name)(x, target, weight=weight, reduction=reduction)
    x, target, weight = RNG.standard_normal((1, 5)), RNG.standard_normal((4, 5)), RNG.random((1, 5))
    _same(program, x, target, weight, grads=(0, 1))
    _same_error(program, x, target, RNG.random((4, 5)), match="Weights and input must have the same size")
    _same_error(program, target, target, weight, match="Weights and input must have the same size")


# ---------------------------------------------------------------------------------------------- ctc


def _ctc(lib, log_probs, targets, input_lengths, target_lengths, **kwargs):
    return lib.nn.functional.ctc_loss(log_probs, targets, input_lengths, target_lengths, **kwargs)


def _ctc_arrays(steps=12, batch=3, classes=5):
    log_probs = np.log(RNG.dirichlet(np.ones(classes), (steps, batch)))
    return log_probs, RNG.integers(1, classes, (batch, 4)), np.array([12, 10, 8])[:batch], np.array([4, 2, 3])[:batch]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss_gradient_of_an_impossible_alignment_is_nan_at_every_class(reduction):
    # ember gave finite gradients to the classes outside the target (torch: nan for the whole sequence)
    log_probs, targets, _, target_lengths = _ctc_arrays()
    _same(_ctc, log_probs[:3], targets, np.array([3, 3, 3]), target_lengths, reduction=reduction)


def test_ctc_loss_of_a_target_holding_the_blank_label_is_torch_value():
    # ember forbade skipping to such a target; torch decides the skips by position
    log_probs, targets, input_lengths, target_lengths = _ctc_arrays()
    targets[targets == 1] = 0
    values = [_ctc(lib, *(lib.tensor(a) for a in (log_probs, targets, input_lengths, target_lengths)),
                   reduction="none").numpy() for lib in (torch, ember)]
    np.testing.assert_allclose(values[1], values[0], rtol=1e-12)


@pytest.mark.parametrize("change, match", [
    (lambda arrays: (arrays[0], arrays[1], arrays[2].astype(np.float64), arrays[3]), "input_lengths must be integral"),
    (lambda arrays: (arrays[0], arrays[1], arrays[2], arrays[3].astype(np.float32)), "target_lengths must be integral"),
    (lambda arrays: (arrays[0], arrays[1][:2], arrays[2], arrays[3]), "Expected tensor to have size 3 at dimension 0"),
    (lambda arrays: (arrays[0][:, :0], arrays[1][:0], arrays[2][:0], arrays[3][:0]), "must not be empty"),
])
def test_ctc_loss_checks_its_arguments_as_torch(change, match):
    # floating lengths and an empty batch were taken, a padded target of another batch failed in NumPy
    _same_error(_ctc, *change(_ctc_arrays()), match=match)


def test_adaptive_log_softmax_forward_takes_torch_keyword_names():
    # forward(input_=..., target_=...) as torch names them raised a TypeError
    torch.manual_seed(0)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 4])
    mine = ember.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 4])
    mine.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    x, target = RNG.standard_normal((3, 4)).astype(np.float32), np.array([0, 3, 5])
    expected = theirs(input_=torch.tensor(x), target_=torch.tensor(target))
    actual = mine(input_=ember.tensor(x), target_=ember.tensor(target))
    np.testing.assert_allclose(actual.loss.detach().numpy(), expected.loss.detach().numpy(), rtol=1e-6)
