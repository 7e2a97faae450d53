"""The loss functions and loss modules against torch: values, gradients, gradcheck, repr, buffers and errors."""
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from ember import nn
from ember.nn import functional as F

RNG = np.random.default_rng(0)
REDUCTIONS = ("none", "mean", "sum")


def normal(*shape):
    return RNG.standard_normal(shape)


def uniform(*shape, low=0.05, high=0.95):
    return RNG.uniform(low, high, shape)


def signs(*shape):
    return RNG.choice([-1.0, 1.0], shape)


def labels(classes, *shape):
    return RNG.integers(0, classes, shape)


def run(lib, program, arrays, dtype, grads):
    """``program(lib, *tensors)`` with the float arrays as leaves (those in ``grads`` requiring grad)."""
    tensors = []
    for position, array in enumerate(arrays):
        if array.dtype.kind == "f":
            tensors.append(lib.tensor(array, dtype=getattr(lib, dtype), requires_grad=position in grads))
        else:
            tensors.append(lib.tensor(array))
    loss = program(lib, *tensors)
    if grads and loss.requires_grad:
        (loss * lib.tensor(np.linspace(0.5, 1.5, loss.numel()).reshape(loss.shape), dtype=loss.dtype)).sum().backward()
    return loss, [tensors[i].grad for i in grads]


def twin(program, arrays, grads=(0,), dtype="float64", rtol=1e-10, atol=1e-12):
    """The loss and the gradients of the chosen inputs agree with torch's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected, expected_grads = run(torch, program, arrays, dtype, grads)
        actual, actual_grads = run(ember, program, arrays, dtype, grads)
    assert actual.shape == tuple(expected.shape)
    assert str(actual.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(), rtol=rtol, atol=atol)
    for e, t in zip(actual_grads, expected_grads):
        assert (e is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=rtol, atol=atol)


# ------------------------------------------------------------------------------------- one case per loss and option

CASES = {
    "l1": (lambda m, x, y: m.nn.functional.l1_loss(x, y, reduction=R), (normal(3, 4), normal(3, 4)), (0, 1)),
    "l1_weight": (lambda m, x, y, w: m.nn.functional.l1_loss(x, y, reduction=R, weight=w),
                  (normal(3, 4), normal(3, 4), uniform(3, 4)), (0, 1)),
    "l1_broadcast": (lambda m, x, y: m.nn.functional.l1_loss(x, y, reduction=R), (normal(3, 4), normal(4)), (0, 1)),
    "mse_0d": (lambda m, x, y: m.nn.functional.mse_loss(x, y, reduction=R), (normal(), normal()), (0, 1)),
    "smooth_l1": (lambda m, x, y: m.nn.functional.smooth_l1_loss(x, y, reduction=R, beta=0.7),
                  (normal(3, 4), normal(3, 4)), (0, 1)),
    "smooth_l1_beta0": (lambda m, x, y: m.nn.functional.smooth_l1_loss(x, y, reduction=R, beta=0.0),
                        (normal(5), normal(5)), (0,)),
    "huber": (lambda m, x, y: m.nn.functional.huber_loss(x, y, reduction=R, delta=0.6),
              (normal(3, 4), normal(3, 4)), (0, 1)),
    "huber_weight": (lambda m, x, y, w: m.nn.functional.huber_loss(x, y, reduction=R, weight=w),
                     (2 * normal(3, 4), normal(3, 4), uniform(3, 4)), (0,)),
    "cross_entropy": (lambda m, x, t: m.nn.functional.cross_entropy(x, t, reduction=R),
                      (normal(5, 4), labels(4, 5)), (0,)),
    "cross_entropy_1d": (lambda m, x, t: m.nn.functional.cross_entropy(x, t, reduction=R),
                         (normal(4), np.array(2)), (0,)),
    "cross_entropy_options": (
        lambda m, x, t, w: m.nn.functional.cross_entropy(x, t, w, ignore_index=1, reduction=R, label_smoothing=0.2),
        (normal(6, 4), np.array([0, 1, 2, 3, 1, 2]), uniform(4)), (0,)),
    "cross_entropy_kdim": (lambda m, x, t, w: m.nn.functional.cross_entropy(x, t, w, reduction=R),
                           (normal(2, 3, 4, 2), labels(3, 2, 4, 2), uniform(3)), (0,)),
    "cross_entropy_transposed": (lambda m, x, t: m.nn.functional.cross_entropy(x.t(), t, reduction=R),
                                 (normal(4, 5), labels(4, 5)), (0,)),
    "cross_entropy_probabilities": (
        lambda m, x, t, w: m.nn.functional.cross_entropy(x, t, w, reduction=R, label_smoothing=0.1),
        (normal(2, 3, 4), uniform(2, 3, 4), uniform(3)), (0, 1)),
    "cross_entropy_large_logits": (lambda m, x, t: m.nn.functional.cross_entropy(x, t, reduction=R),
                                   (np.array([[1000.0, -1000.0, 0.0], [-800.0, 800.0, 1.0]]), np.array([1, 1])),
                                   (0,)),
    "nll": (lambda m, x, t: m.nn.functional.nll_loss(x, t, reduction=R), (normal(5, 4), labels(4, 5)), (0,)),
    "nll_options": (lambda m, x, t, w: m.nn.functional.nll_loss(x, t, w, ignore_index=0, reduction=R),
                    (normal(3, 4, 2), np.array([[0, 1], [3, 0], [2, 2]]), uniform(4)), (0,)),
    "bce": (lambda m, x, y: m.nn.functional.binary_cross_entropy(x, y, reduction=R),
            (uniform(3, 4), uniform(3, 4)), (0, 1)),
    "bce_weight_edges": (lambda m, x, y, w: m.nn.functional.binary_cross_entropy(x, y, w, reduction=R),
                         (np.array([0.0, 1.0, 0.0, 1.0, 0.3]), np.array([0.0, 1.0, 1.0, 0.0, 0.5]), uniform(5)),
                         (0,)),
    "bce_logits": (lambda m, x, y: m.nn.functional.binary_cross_entropy_with_logits(x, y, reduction=R),
                   (normal(3, 4), uniform(3, 4)), (0, 1)),
    "bce_logits_large": (lambda m, x, y: m.nn.functional.binary_cross_entropy_with_logits(x, y, reduction=R),
                         (np.array([-1000.0, 1000.0, 0.0, 40.0]), np.array([1.0, 0.0, 0.5, 0.0])), (0, 1)),
    "bce_logits_weights": (
        lambda m, x, y, w, p: m.nn.functional.binary_cross_entropy_with_logits(x, y, w, reduction=R, pos_weight=p),
        (normal(3, 4), uniform(3, 4), uniform(4), uniform(4) * 3), (0, 1)),
    "kl_div": (lambda m, x, y: m.nn.functional.kl_div(x, y, reduction=R), (normal(3, 4), uniform(3, 4)), (0, 1)),
    "kl_div_zero_target": (lambda m, x, y: m.nn.functional.kl_div(x, y, reduction=R),
                           (normal(3), np.array([0.0, 0.5, 0.5])), (0, 1)),
    "kl_div_log_target": (lambda m, x, y: m.nn.functional.kl_div(x, y, reduction=R, log_target=True),
                          (normal(3, 4), normal(3, 4)), (0, 1)),
    "poisson": (lambda m, x, y: m.nn.functional.poisson_nll_loss(x, y, reduction=R),
                (normal(3, 4), uniform(3, 4, high=4)), (0, 1)),
    "poisson_full": (lambda m, x, y: m.nn.functional.poisson_nll_loss(x, y, log_input=False, full=True, reduction=R),
                     (uniform(3, 4, high=3), uniform(3, 4, high=4)), (0, 1)),
    "gaussian": (lambda m, x, y, v: m.nn.functional.gaussian_nll_loss(x, y, v, reduction=R),
                 (normal(3, 4), normal(3, 4), uniform(3, 4)), (0, 1, 2)),
    "gaussian_row_var": (lambda m, x, y, v: m.nn.functional.gaussian_nll_loss(x, y, v, full=True, eps=0.1,
                                                                               reduction=R),
                         (normal(3, 4), normal(3, 4), uniform(3)), (0, 2)),
    "cosine_embedding": (lambda m, a, b, t: m.nn.functional.cosine_embedding_loss(a, b, t, 0.1, reduction=R),
                         (normal(4, 3), normal(4, 3), np.array([1.0, -1.0, 1.0, -1.0])), (0, 1)),
    "margin_ranking": (lambda m, a, b, t: m.nn.functional.margin_ranking_loss(a, b, t, 0.2, reduction=R),
                       (normal(5), normal(5), signs(5)), (0, 1)),
    "hinge_embedding": (lambda m, x, t: m.nn.functional.hinge_embedding_loss(x, t, 0.8, reduction=R),
                        (normal(3, 4), signs(3, 4)), (0,)),
    "triplet": (lambda m, a, p, n: m.nn.functional.triplet_margin_loss(a, p, n, 2.0, p=3, reduction=R),
                (normal(4, 3), normal(4, 3), normal(4, 3)), (0, 1, 2)),
    "triplet_swap": (lambda m, a, p, n: m.nn.functional.triplet_margin_loss(a, p, n, swap=True, reduction=R),
                     (normal(4, 3), normal(4, 3), normal(4, 3)), (0, 1, 2)),
    "triplet_distance": (
        lambda m, a, p, n: m.nn.functional.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda x, y: 1 - m.nn.functional.cosine_similarity(x, y), swap=True,
            reduction=R),
        (normal(4, 3), normal(4, 3), normal(4, 3)), (0, 1, 2)),
    "multilabel_margin": (lambda m, x, t: m.nn.functional.multilabel_margin_loss(x, t, reduction=R),
                          (normal(3, 4), np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 0, 0, 0]])), (0,)),
    "multilabel_margin_1d": (lambda m, x, t: m.nn.functional.multilabel_margin_loss(x, t, reduction=R),
                             (normal(4), np.array([2, -1, 0, 0])), (0,)),
    "multilabel_soft_margin": (lambda m, x, y, w: m.nn.functional.multilabel_soft_margin_loss(x, y, w, reduction=R),
                               (normal(3, 4), RNG.integers(0, 2, (3, 4)).astype(float), uniform(4)), (0, 1)),
    "multi_margin": (lambda m, x, t: m.nn.functional.multi_margin_loss(x, t, reduction=R),
                     (normal(5, 4), labels(4, 5)), (0,)),
    "multi_margin_p2": (lambda m, x, t, w: m.nn.functional.multi_margin_loss(x, t, 2, 0.5, w, reduction=R),
                        (normal(5, 4), labels(4, 5), uniform(4)), (0,)),
    "soft_margin": (lambda m, x, y: m.nn.functional.soft_margin_loss(x, y, reduction=R),
                    (normal(3, 4), signs(3, 4)), (0,)),
    "ctc": (lambda m, lp, t, il, tl: m.nn.functional.ctc_loss(lp.log_softmax(2), t, il, tl, reduction=R),
            (normal(6, 3, 4), np.array([[1, 2, 2], [3, 1, 0], [2, 0, 0]]), np.array([6, 5, 4]),
             np.array([3, 2, 1])), (0,)),
    "ctc_concatenated_blank": (
        lambda m, lp, t, il, tl: m.nn.functional.ctc_loss(lp.log_softmax(2), t, il, tl, blank=3, reduction=R),
        (normal(5, 2, 4), np.array([1, 1, 0, 2]), np.array([5, 4]), np.array([2, 2])), (0,)),
    "ctc_raw_log_probs": (  # torch's gradient assumes a log-softmax input: exp(log_probs) - posterior, as ember's
        lambda m, lp, t, il, tl: m.nn.functional.ctc_loss(lp, t, il, tl, reduction=R),
        (normal(4, 2, 3), np.array([[1, 2], [2, 0]]), np.array([4, 3]), np.array([2, 1])), (0,)),
    "ctc_sequences_of_no_steps": (  # an empty target scores 0, any other cannot be aligned (inf, or 0 zeroed)
        lambda m, lp, t, il, tl: m.nn.functional.ctc_loss(lp.log_softmax(2), t, il, tl, reduction=R,
                                                          zero_infinity=True),
        (normal(4, 3, 3), np.array([[1, 2], [2, 1], [1, 1]]), np.array([4, 0, 0]), np.array([2, 0, 1])), (0,)),
    "ctc_impossible": (
        lambda m, lp, t, il, tl: m.nn.functional.ctc_loss(lp.log_softmax(2), t, il, tl, reduction=R,
                                                          zero_infinity=True),
        (normal(3, 2, 3), np.array([[1, 1, 1], [2, 1, 2]]), np.array([3, 3]), np.array([3, 1])), (0,)),
}
R = "mean"


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_loss_and_gradients_match_torch_in_float64(case, reduction):
    global R
    R = reduction
    program, arrays, grads = CASES[case]
    twin(program, arrays, grads)


@pytest.mark.parametrize("case", ["l1", "smooth_l1", "huber", "cross_entropy_options", "cross_entropy_kdim",
                                  "nll_options", "bce", "bce_logits_weights", "kl_div", "gaussian", "triplet",
                                  "multilabel_margin", "multi_margin_p2", "soft_margin", "ctc"])
def test_float32_matches_torch_within_float32_tolerance(case):
    global R
    R = "mean"
    program, arrays, grads = CASES[case]
    twin(program, arrays, grads, dtype="float32", rtol=1e-5, atol=1e-6)


def test_batchmean_and_mean_warning_of_kl_div():
    x, y = normal(3, 4), uniform(3, 4)
    for reduction in ("batchmean", "sum"):
        twin(lambda m, a, b: m.nn.functional.kl_div(a, b, reduction=reduction), (x, y), (0, 1))
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(ember.tensor(x), ember.tensor(y))


def test_empty_inputs_give_torchs_results():
    global R
    for reduction in REDUCTIONS:
        R = reduction
        twin(lambda m, x, t: m.nn.functional.cross_entropy(x, t, reduction=R), (normal(0, 3), labels(3, 0)), ())
        twin(lambda m, x, y: m.nn.functional.l1_loss(x, y, reduction=R), (normal(0, 3), normal(0, 3)), ())
        twin(lambda m, x, y: m.nn.functional.binary_cross_entropy_with_logits(x, y, reduction=R),
             (normal(0), uniform(0)), ())


def test_all_ignored_targets_average_to_nan_as_torch():
    twin(lambda m, x, t: m.nn.functional.cross_entropy(x, t), (normal(2, 3), np.array([-100, -100])), ())
    twin(lambda m, x, t: m.nn.functional.nll_loss(x, t), (normal(2, 3), np.array([-100, -100])), ())


def test_legacy_size_average_and_reduce_pick_torchs_reduction():
    x, y = normal(3, 4), normal(3, 4)
    for size_average, reduce in [(False, None), (None, False), (True, True), (False, True)]:
        twin(lambda m, a, b: m.nn.functional.l1_loss(a, b, size_average, reduce), (x, y), (0,))
        twin(lambda m, a, b: m.nn.SmoothL1Loss(size_average, reduce)(a, b), (x, y), (0,))


def test_cross_entropy_is_one_node_named_as_torch():
    x = ember.tensor(normal(3, 4), requires_grad=True)
    loss = F.cross_entropy(x, ember.tensor([0, 1, 3]))
    assert loss.grad_fn.name() == "NllLossBackward0"


# ---------------------------------------------------------------------------------------------- gradcheck


def constant(array):
    return ember.tensor(array)


GRADCHECKED = {
    "cross_entropy": (lambda x, t=constant([0, 2, 1]), w=constant(np.array([0.5, 1.0, 2.0])):
                      F.cross_entropy(x, t, w, label_smoothing=0.3), normal(3, 3)),
    "cross_entropy_kdim": (lambda x, t=constant(labels(3, 2, 2)): F.cross_entropy(x, t, reduction="none"),
                           normal(2, 3, 2)),
    "nll": (lambda x, t=constant([0, 2, 1]): F.nll_loss(x, t), normal(3, 3)),
    "bce": (lambda x, t=constant(uniform(4)): F.binary_cross_entropy(x, t), uniform(4, low=0.2, high=0.8)),
    "bce_logits": (lambda x, t=constant(uniform(4)), p=constant(uniform(4)):
                   F.binary_cross_entropy_with_logits(x, t, pos_weight=p), normal(4)),
    "kl_div": (lambda x, t=constant(uniform(4)): F.kl_div(x, t, reduction="batchmean"), normal(4)),
    "huber": (lambda x, t=constant(normal(5)): F.huber_loss(x, t, delta=0.5), normal(5)),
    "gaussian": (lambda v, x=constant(normal(4)), t=constant(normal(4)): F.gaussian_nll_loss(x, t, v), uniform(4)),
    "cosine_embedding": (lambda x, y=constant(normal(2, 3)), t=constant([1., -1.]):
                         F.cosine_embedding_loss(x, y, t, -0.5), normal(2, 3)),
    "triplet": (lambda x, p=constant(normal(2, 3)), n=constant(normal(2, 3)): F.triplet_margin_loss(x, p, n, 3.0),
                normal(2, 3)),
    "multilabel_soft_margin": (lambda x, t=constant([[1., 0., 1.]]): F.multilabel_soft_margin_loss(x, t),
                               normal(1, 3)),
    "soft_margin": (lambda x, t=constant(signs(4)): F.soft_margin_loss(x, t), normal(4)),
    "poisson": (lambda x, t=constant(uniform(4, high=3)): F.poisson_nll_loss(x, t, full=True), normal(4)),
}


@pytest.mark.parametrize("case", sorted(GRADCHECKED))
def test_gradcheck_and_gradgradcheck(case):
    fn, array = GRADCHECKED[case]
    x = ember.tensor(array, requires_grad=True)
    assert ember.autograd.gradcheck(fn, (x,))
    assert ember.autograd.gradgradcheck(fn, (x,))


def test_ctc_gradcheck_on_log_softmax_input():
    targets, lengths = ember.tensor([[1, 2], [2, 2]]), ember.tensor([4, 3])

    def loss(x):
        return F.ctc_loss(x.log_softmax(2), targets, lengths, ember.tensor([2, 2]))

    assert ember.autograd.gradcheck(loss, (ember.tensor(normal(4, 2, 3), requires_grad=True),))


# ---------------------------------------------------------------------------------------------- modules

MODULES = [
    ("L1Loss", {}, (normal(3, 4), normal(3, 4))),
    ("MSELoss", {"reduction": "sum"}, (normal(3, 4), normal(3, 4))),
    ("SmoothL1Loss", {"beta": 0.5}, (normal(3, 4), normal(3, 4))),
    ("HuberLoss", {"delta": 0.5, "reduction": "none"}, (normal(3, 4), normal(3, 4))),
    ("CrossEntropyLoss", {"ignore_index": 2, "label_smoothing": 0.1}, (normal(5, 4), labels(4, 5))),
    ("NLLLoss", {"reduction": "sum"}, (normal(5, 4), labels(4, 5))),
    ("BCELoss", {}, (uniform(3, 4), uniform(3, 4))),
    ("BCEWithLogitsLoss", {}, (normal(3, 4), uniform(3, 4))),
    ("KLDivLoss", {"reduction": "batchmean", "log_target": True}, (normal(3, 4), normal(3, 4))),
    ("PoissonNLLLoss", {"full": True}, (normal(3, 4), uniform(3, 4, high=4))),
    ("GaussianNLLLoss", {"full": True}, (normal(3, 4), normal(3, 4), uniform(3, 4))),
    ("CosineEmbeddingLoss", {"margin": 0.2}, (normal(3, 4), normal(3, 4), signs(3))),
    ("MarginRankingLoss", {"margin": 0.2}, (normal(5), normal(5), signs(5))),
    ("HingeEmbeddingLoss", {}, (normal(3, 4), signs(3, 4))),
    ("TripletMarginLoss", {"p": 1.0}, (normal(3, 4), normal(3, 4), normal(3, 4))),
    ("TripletMarginWithDistanceLoss", {"margin": 0.5}, (normal(3, 4), normal(3, 4), normal(3, 4))),
    ("MultiLabelMarginLoss", {}, (normal(2, 3), np.array([[2, -1, 0], [0, 1, 2]]))),
    ("MultiLabelSoftMarginLoss", {}, (normal(3, 4), RNG.integers(0, 2, (3, 4)).astype(float))),
    ("MultiMarginLoss", {"p": 2}, (normal(5, 4), labels(4, 5))),
    ("SoftMarginLoss", {}, (normal(3, 4), signs(3, 4))),
    ("CTCLoss", {"blank": 1}, (normal(4, 2, 3), np.array([[0, 2], [2, 2]]), np.array([4, 4]), np.array([2, 1]))),
]


@pytest.mark.parametrize("name, options, arrays", MODULES, ids=[m[0] for m in MODULES])
def test_module_matches_torch(name, options, arrays):
    def program(lib, *tensors):
        return getattr(lib.nn, name)(**options)(*tensors)

    twin(program, arrays, (0,))
    assert repr(getattr(nn, name)(**options)) == repr(getattr(torch.nn, name)(**options))


def test_weighted_modules_keep_weights_as_buffers_like_torch():
    weight = np.array([0.5, 1.0, 2.0])
    for name, options in [("CrossEntropyLoss", {}), ("NLLLoss", {}), ("BCELoss", {}),
                          ("MultiMarginLoss", {}), ("MultiLabelSoftMarginLoss", {}), ("BCEWithLogitsLoss", {})]:
        e = getattr(nn, name)(weight=ember.tensor(weight), **options)
        t = getattr(torch.nn, name)(weight=torch.tensor(weight), **options)
        assert list(e.state_dict()) == list(t.state_dict())
        assert list(getattr(nn, name)().state_dict()) == list(getattr(torch.nn, name)().state_dict())
    e = nn.BCEWithLogitsLoss(pos_weight=ember.ones(3))
    assert list(e.state_dict()) == list(torch.nn.BCEWithLogitsLoss(pos_weight=torch.ones(3)).state_dict())


def test_module_attributes_match_torch():
    for name in ["CrossEntropyLoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "PoissonNLLLoss", "TripletMarginLoss",
                 "MultiMarginLoss", "CTCLoss", "GaussianNLLLoss", "HingeEmbeddingLoss"]:
        e, t = getattr(nn, name)(), getattr(torch.nn, name)()
        for attribute in ("reduction", "ignore_index", "label_smoothing", "beta", "delta", "log_target", "log_input",
                          "full", "eps", "margin", "p", "swap", "blank", "zero_infinity"):
            assert getattr(e, attribute, None) == getattr(t, attribute, None), (name, attribute)


# ---------------------------------------------------------------------------------------------- distances


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cosine_similarity_pairwise_distance_and_normalize_match_torch(dim):
    a, b = normal(3, 3), normal(1, 3)
    twin(lambda m, x, y: m.nn.functional.cosine_similarity(x, y, dim), (a, b), (0, 1))
    twin(lambda m, x, y: m.nn.functional.pairwise_distance(x, y, 1.5, keepdim=True), (a, b), (0, 1))
    twin(lambda m, x: m.nn.functional.normalize(x, 3.0, dim), (a,), (0,))
    twin(lambda m, x, y: m.nn.functional.cosine_similarity(x, y, dim), (a, np.zeros((3, 3))), (0, 1))


def test_normalize_writes_out():
    out = ember.empty(2)
    result = F.normalize(ember.tensor([3.0, 4.0]), dim=0, out=out)
    assert result is out and out.tolist() == pytest.approx([0.6, 0.8])


# ---------------------------------------------------------------------------------------------- errors


def raises_as_torch(program, arrays, *fragments):
    """Both libraries reject the input with the same error type; ember's message has the fragments."""
    errors = []
    for lib in (torch, ember):
        tensors = [lib.tensor(a) for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as info:
                program(lib, *tensors)
        errors.append(info)
    assert errors[1].type is errors[0].type, (errors[0].value, errors[1].value)
    for fragment in fragments:
        assert fragment in str(errors[1].value)


ERRORS = [
    (lambda m, x, t: m.nn.functional.cross_entropy(x, t), (normal(3, 4), np.array([0, 1])), "batch_size (3)"),
    (lambda m, x, t: m.nn.functional.cross_entropy(x, t), (normal(3, 4), np.array([0, 1, 7])), "Target 7"),
    (lambda m, x, t: m.nn.functional.nll_loss(x, t), (normal(3, 4), np.array([0, 1, 2], np.int32)), "Int"),
    (lambda m, x, t: m.nn.functional.nll_loss(x, t), (normal(3, 4), np.array([0.0, 1.0, 2.0])), "Double"),
    (lambda m, x, t: m.nn.functional.nll_loss(x, t), (normal(3, 4, 5), np.zeros((3, 4), np.int64)), "[3, 5]"),
    (lambda m, x, t, w: m.nn.functional.nll_loss(x, t, w), (normal(3, 4), labels(4, 3), np.ones(3)), "4 classes"),
    (lambda m, x, t: m.nn.functional.cross_entropy(x, t), (normal(3, 4), uniform(3, 5)), "shape"),
    (lambda m, x, t: m.nn.functional.binary_cross_entropy(x, t), (np.array([0.5, 2.0]), np.array([0.0, 1.0])),
     "between 0 and 1"),
    (lambda m, x, t: m.nn.functional.binary_cross_entropy(x, t), (uniform(2), uniform(3)), "target size"),
    (lambda m, x, t: m.nn.functional.binary_cross_entropy_with_logits(x, t), (uniform(2), uniform(3)), "size"),
    (lambda m, x, t: m.nn.functional.smooth_l1_loss(x, t, beta=-1.0), (normal(3), normal(3)), "beta"),
    (lambda m, x, t: m.nn.functional.huber_loss(x, t, delta=0.0), (normal(3), normal(3)), "delta"),
    (lambda m, x, t: m.nn.functional.mse_loss(x, t, reduction="avg"), (normal(3), normal(3)), "avg"),
    (lambda m, x, t: m.nn.functional.l1_loss(x, t, reduction="avg"), (normal(3), normal(3)), "avg"),
    (lambda m, x, t: m.nn.functional.l1_loss(x, t, reduction="batchmean"), (normal(3), normal(3)), "batchmean"),
    (lambda m, x, t: m.nn.functional.multi_margin_loss(x, t, p=3), (normal(3, 4), labels(4, 3)), "p == 1"),
    (lambda m, x, t: m.nn.functional.multi_margin_loss(x, t), (normal(3, 4), np.array([0, 1, 9])), "range"),
    (lambda m, x, t: m.nn.functional.multilabel_margin_loss(x, t), (normal(3, 4), labels(4, 3)), "[3]"),
    (lambda m, x, t, v: m.nn.functional.gaussian_nll_loss(x, t, v), (normal(3, 4), normal(3, 4), uniform(3, 3)),
     "incorrect size"),
    (lambda m, x, t, v: m.nn.functional.gaussian_nll_loss(x, t, v), (normal(3, 4), normal(3, 4), -uniform(3, 4)),
     "negative"),
    (lambda m, a, b, t: m.nn.functional.margin_ranking_loss(a, b, t), (normal(3, 4), normal(3, 4), signs(2)),
     "same dimension"),
    (lambda m, a, p, n: m.nn.functional.triplet_margin_loss(a, p, n), (normal(3, 4), normal(3, 4), normal(4)),
     "1D"),
    (lambda m, x, t: m.nn.functional.cross_entropy(x, t, label_smoothing=1.5), (normal(3, 4), labels(4, 3)),
     "label_smoothing"),
    (lambda m, x, t: m.nn.functional.binary_cross_entropy(x.float(), t), (uniform(3), uniform(3)), "Double"),
    (lambda m, lp, t, il, tl: m.nn.functional.ctc_loss(lp, t, il, tl),
     (normal(5, 1, 3), np.array([[1, 2]]), np.array([6]), np.array([2])), "at most 5"),
    (lambda m, lp, t, il, tl: m.nn.functional.ctc_loss(lp, t, il, tl),
     (normal(5, 1, 3), np.array([[1, 2]]), np.array([5]), np.array([3])), "at least 3"),
    (lambda m, lp, t, il, tl: m.nn.functional.ctc_loss(lp, t, il, tl),
     (normal(5, 1, 3), np.array([[1, 2]]), np.array([5]), np.array([-1])),
     "Expected target_lengths to have value at least 0, but got value -1"),
    (lambda m, lp, t, il, tl: m.nn.functional.ctc_loss(lp, t, il, tl),
     (normal(5, 1, 3), np.array([[1, 2]]), np.array([-1]), np.array([1])),
     "Expected input_lengths to have value at least 0, but got value -1"),
    (lambda m, lp, t, il, tl: m.nn.functional.ctc_loss(lp, t, il, tl),
     (normal(5, 2, 3), np.array([[1, 2]] * 2), np.array([5]), np.array([1, 1])),
     "input_lengths must be of size batch_size"),
    (lambda m, lp, t, il, tl: m.nn.functional.ctc_loss(lp, t, il, tl),
     (normal(5, 2, 3), np.array([[1, 2]] * 2), np.array([5, 5]), np.array([1])),
     "target_lengths must be of size batch_size"),
    (lambda m, lp, t, il, tl: m.nn.functional.ctc_loss(lp, t, il, tl, blank=3),
     (normal(5, 1, 3), np.array([[1, 2]]), np.array([5]), np.array([2])), "blank must be in label range"),
    (lambda m, lp, t, il, tl: m.nn.functional.ctc_loss(lp, t, il, tl, blank=-1),
     (normal(5, 1, 3), np.array([[1, 2]]), np.array([5]), np.array([2])), "blank must be in label range"),
] + [
    (lambda m, x, t, name=name: getattr(m.nn.functional, name)(x, t), (np.array([[1, 2]]), np.array([[0, 1]])),
     "integer")
    for name in ("smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
                 "kl_div", "soft_margin_loss", "multilabel_soft_margin_loss")
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_bad_input_raises_torchs_error_type_with_a_clear_message(index):
    program, arrays, fragment = ERRORS[index]
    raises_as_torch(program, arrays, fragment)


def test_size_mismatch_warns_as_torch():
    with pytest.warns(UserWarning, match="different to the input size"):
        F.l1_loss(ember.ones(3, 1), ember.ones(3))


def test_distance_modules_match_torch():
    a, b = normal(3, 4), normal(3, 4)
    for name, options in [("PairwiseDistance", {"p": 1.0, "keepdim": True}), ("CosineSimilarity", {"dim": 0})]:
        twin(lambda m, x, y: getattr(m.nn, name)(**options)(x, y), (a, b), (0, 1))
        assert repr(getattr(nn, name)(**options)) == repr(getattr(torch.nn, name)(**options))


def test_all_ignored_targets_give_torchs_gradient():
    twin(lambda m, x, t: m.nn.functional.cross_entropy(x, t), (normal(2, 3), np.array([-100, -100])), (0,))


ZERO_TOTAL_WEIGHT_CASES = [
    # (input shape, targets, class weights): every target ignored, or every counted one of a zero-weight class
    ((2, 3), [1, 1], None),
    ((3,), 1, None),
    ((2, 3), [1, 2], [1.0, 0.0, 0.0]),
    ((3, 3), [1, 2, 0], [0.0, 0.0, 0.0]),
    ((2, 3, 2), [[2, 1], [1, 1]], [1.0, 1.0, 0.0]),
    ((3,), 2, [1.0, 1.0, 0.0]),
]


@pytest.mark.parametrize("shape, target, weight", ZERO_TOTAL_WEIGHT_CASES)
@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy", "cross_entropy_smoothed"])
def test_mean_over_zero_total_weight_gives_torchs_nan_and_gradient(shape, target, weight, loss):
    """0 / 0 is the loss; the gradient is nan on the rows that count and 0 on the ignored ones (ignore_index 1)."""
    def program(m, x, t, *w):
        options = {"weight": w[0] if w else None, "ignore_index": 1}
        if loss == "nll_loss":
            return m.nn.functional.nll_loss(x, t, **options)
        return m.nn.functional.cross_entropy(x, t, label_smoothing=0.2 if loss.endswith("smoothed") else 0.0,
                                             **options)
    arrays = (normal(*shape), np.array(target)) + (() if weight is None else (np.array(weight),))
    twin(program, arrays, (0,))


BCE_LOGITS_OPERANDS = [  # input, target, weight, pos_weight shapes: the weights broadcast against the input
    ((3, 4), (3, 4), (4,), (4,)),
    ((3, 4), (3, 4), (3, 1), ()),
    ((2, 3, 4), (2, 3, 4), None, (3, 1)),
    ((), (), (), ()),
    ((0, 4), (0, 4), (4,), (4,)),
]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shapes", BCE_LOGITS_OPERANDS, ids=str)
def test_bce_with_logits_is_one_node_with_torchs_gradients(shapes, reduction):
    global R
    R = reduction
    x, t, w, p = shapes
    arrays = (normal(*x), uniform(*t), uniform(*w) if w is not None else None, uniform(*p) * 3)
    present = [a for a in arrays if a is not None]

    def program(m, *tensors):
        x, t, *rest = tensors
        w, p = (None, rest[0]) if arrays[2] is None else rest
        loss = m.nn.functional.binary_cross_entropy_with_logits(x, t, w, reduction=R, pos_weight=p)
        assert loss.grad_fn.name() == "BinaryCrossEntropyWithLogitsBackward0"
        return loss
    twin(program, present, (0, 1))
    leaves = [ember.tensor(a, requires_grad=True) for a in present[:2]]
    weights = [ember.tensor(a) for a in present[2:]]
    assert ember.autograd.gradgradcheck(lambda *leaves: program(ember, *leaves, *weights), leaves)


@pytest.mark.parametrize("name", ["weight", "pos_weight"])
def test_bce_with_logits_refuses_weights_that_need_a_gradient_as_torch(name):
    messages = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as error:
            lib.nn.functional.binary_cross_entropy_with_logits(lib.zeros(2), lib.ones(2),
                                                               **{name: lib.ones(2, requires_grad=True)})
        messages.append(str(error.value))
    assert messages[1] == messages[0]
    with ember.no_grad():
        F.binary_cross_entropy_with_logits(ember.zeros(2), ember.ones(2), **{name: ember.ones(2, requires_grad=True)})


@pytest.mark.parametrize("smoothing", [-0.1, -5.0])
@pytest.mark.parametrize("target", [labels(4, 3), uniform(3, 4)], ids=["indices", "probabilities"])
def test_negative_label_smoothing_is_none_as_torch(smoothing, target):
    twin(lambda m, x, t: m.nn.functional.cross_entropy(x, t, label_smoothing=smoothing), (normal(3, 4), target), (0,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 2), (2, 3, 2, 2), (2, 3, 2, 1, 2)])
def test_nll_loss_is_one_node_named_as_torch(shape, reduction):
    names = []
    for lib in (torch, ember):
        x = lib.zeros(*shape, requires_grad=True)
        target = lib.zeros(shape[0], *shape[2:], dtype=lib.int64) if len(shape) > 1 else lib.tensor(1)
        names.append(lib.nn.functional.nll_loss(x, target, reduction=reduction).grad_fn.name())
    assert names[1] == names[0]


NLL_SHAPES = [((4, 3), (4,)), ((2, 3, 2), (2, 2)), ((2, 3, 2, 2), (2, 2, 2)), ((2, 3, 1, 2, 2), (2, 1, 2, 2)),
              ((3,), ()), ((0, 3), (0,))]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape, target_shape", NLL_SHAPES, ids=str)
def test_nll_loss_with_weights_and_ignored_targets_matches_torch(shape, target_shape, reduction):
    global R
    R = reduction
    targets = np.random.default_rng(4).integers(0, 3, target_shape)
    targets.flat[:1] = 1  # (ignored)
    twin(lambda m, x, t, w: m.nn.functional.nll_loss(x, t, w, ignore_index=1, reduction=R),
         (normal(*shape), targets, uniform(3)), (0,))
    twin(lambda m, x, t: m.nn.functional.nll_loss(x, t, reduction=R), (normal(*shape), targets), (0,))
    x = ember.tensor(normal(*shape), requires_grad=True)
    weight = ember.tensor(uniform(3))
    assert ember.autograd.gradgradcheck(lambda x: F.nll_loss(x, ember.tensor(targets), weight, ignore_index=1,
                                                             reduction=reduction), (x,))


@pytest.mark.parametrize("name", ["nll_loss", "cross_entropy"])
def test_unbatched_input_takes_a_one_element_target_as_torch(name):
    """torch's [C] input takes a [1] target as the 0-d one (torch itself refuses it when the input needs a grad)."""
    x = normal(5)
    for options in [{}, {"reduction": "none"}, {"weight": uniform(5)}, {"ignore_index": 3}]:
        outs = [getattr(lib.nn.functional, name)(lib.tensor(x), lib.tensor([3]), **{
            k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in options.items()})
            for lib in (torch, ember)]
        assert tuple(outs[1].shape) == tuple(outs[0].shape) == ()
        np.testing.assert_allclose(outs[1].numpy(), outs[0].numpy(), rtol=1e-12)
    for target in ([3, 1], []):
        with pytest.raises(ValueError, match="For 1D input, 1D target must have size 1"):
            getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(target, dtype=torch.int64))
        with pytest.raises(ValueError, match="For 1D input, 1D target must have size 1"):
            getattr(F, name)(ember.tensor(x), ember.tensor(target, dtype=ember.int64))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 2), (2, 3, 2, 2), (2, 3, 2, 1, 2)])
def test_cross_entropy_node_names_match_torch(shape, reduction):
    names = []
    for lib in (torch, ember):
        x = lib.zeros(*shape, requires_grad=True)
        names.append(lib.nn.functional.cross_entropy(x, lib.zeros(shape[0], *shape[2:], dtype=lib.int64),
                                                     weight=lib.ones(3), reduction=reduction).grad_fn.name())
    assert names[0] == names[1]


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(0, 4), classes=st.integers(1, 5), smoothing=st.sampled_from([0.0, 0.3]),
       weighted=st.booleans(), reduction=st.sampled_from(REDUCTIONS), seed=st.integers(0, 2**16))
def test_cross_entropy_of_random_batches_matches_torch(rows, classes, smoothing, weighted, reduction, seed):
    rng = np.random.default_rng(seed)
    target = rng.integers(-1, classes, rows)
    target[target < 0] = -100  # some rows ignored
    arrays = (rng.standard_normal((rows, classes)), target, rng.uniform(0.1, 2.0, classes))

    def program(m, x, t, w):
        return m.nn.functional.cross_entropy(x, t, w if weighted else None, reduction=reduction,
                                             label_smoothing=smoothing)

    twin(program, arrays, (0,))


@pytest.mark.parametrize("name, arrays", [
    ("CrossEntropyLoss", (normal(3, 4), np.array([0, 1]))),
    ("NLLLoss", (normal(3, 4, 2), np.zeros((3, 4), np.int64))),
    ("BCELoss", (uniform(3), uniform(2))),
    ("BCEWithLogitsLoss", (normal(3), uniform(2))),
    ("MultiLabelMarginLoss", (normal(3, 4), np.array([0, 1, 2]))),
])
def test_modules_reject_mismatched_shapes_as_torch(name, arrays):
    raises_as_torch(lambda m, x, t: getattr(m.nn, name)()(x, t), arrays, str(list(arrays[0].shape))[1:2])


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_ctc_loss_second_derivative_raises_rather_than_vanish(m):
    m.manual_seed(0)
    log_probs = m.randn(6, 2, 5, dtype=m.float64).log_softmax(-1).detach().requires_grad_()
    loss = m.nn.functional.ctc_loss(log_probs, m.tensor([[1, 2], [3, 1]]), m.tensor([6, 5]), m.tensor([2, 2]))
    (gradient,) = m.autograd.grad(loss, log_probs, create_graph=True)
    assert gradient.requires_grad
    with pytest.raises(RuntimeError, match="not implemented"):
        gradient.sum().backward()
