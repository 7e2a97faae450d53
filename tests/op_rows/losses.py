"""Op-table rows: the loss functions of ``nn.functional`` and the distances they use.

Each row runs every reduction through one sample per reduction; targets that torch does not differentiate
(class indices, signs) are constants.
"""
import numpy as np

from op_spec import A, C, Err, OpSpec, S, T, s  # noqa: F401


def loss(name: str):
    return lambda m, *args, **kwargs: getattr(m.nn.functional, name)(*args, **kwargs)


def reductions(*args) -> tuple:
    return tuple(s(*args, reduction=r) for r in ("none", "mean", "sum"))


PAIRS = (s(A(3, 4), A(3, 4)), s(A(), A()), s(A(0, 3), A(0, 3)), s(T(3, 4), S(3, 4))) + reductions(A(2, 3), A(2, 3))
SIGNS = C(np.array([[1.0, -1.0, 1.0, -1.0], [-1.0, -1.0, 1.0, 1.0], [1.0, 1.0, -1.0, 1.0]]))
CLASSES = C(np.array([0, 3, 1]))
SOFT_MARGIN = (s(A(3, 4), SIGNS), s(T(3, 4), SIGNS)) + reductions(S(3, 4), SIGNS)
NLL = (s(A(3, 4), CLASSES), s(T(3, 4), CLASSES), s(A(4), C(2))) + reductions(S(3, 4), CLASSES)


def composite(samples: tuple, unreduced: str, mean: str = "MeanBackward0") -> dict:
    """ember's node names for a loss composed of ops: the reduction's, or ``unreduced``'s for 'none'."""
    last = {"none": unreduced, "mean": mean, "sum": "SumBackward0"}
    return {i: last[sample.kwargs.get("reduction", "mean")] for i, sample in enumerate(samples)}


COMPOSED = "composed of ember ops, so its node is the last op's (the values and gradients are torch's)"


def pair_loss(name: str, unreduced: str, domain=(-2.0, 2.0), **options) -> OpSpec:
    shape_error = Err(lambda m: loss(name)(m, m.ones(2, 3), m.ones(2, 3), reduction="avg"), ValueError, "avg")
    return OpSpec(name, loss(name), PAIRS, domain=domain, errors=(shape_error,),
                  grad_fn=composite(PAIRS, unreduced) if unreduced else {}, note=COMPOSED if unreduced else "",
                  **options)


OPS = (
    pair_loss("l1_loss", "", away_from=(0.0,)),
    pair_loss("smooth_l1_loss", "", away_from=(0.0,)),
    OpSpec("smooth_l1_loss_beta", lambda m, x, y: m.nn.functional.smooth_l1_loss(x, y, beta=0.5), PAIRS[:4],
           away_from=(0.0,)),
    pair_loss("huber_loss", "", away_from=(0.0,)),
    pair_loss("binary_cross_entropy", "", domain=(0.1, 0.9)),
    pair_loss("binary_cross_entropy_with_logits", ""),
    pair_loss("poisson_nll_loss", "", domain=(0.1, 2.0)),
    OpSpec("kl_div", loss("kl_div"), PAIRS[:4] + tuple(s(A(2, 3), A(2, 3), reduction=r) for r in ("sum", "batchmean")),
           domain=(0.1, 2.0)),
    OpSpec("soft_margin_loss", loss("soft_margin_loss"), SOFT_MARGIN),
    OpSpec("hinge_embedding_loss", loss("hinge_embedding_loss"), (s(A(3, 4), SIGNS),) + reductions(T(3, 4), SIGNS),
           away_from=(1.0,), dtypes=("float64",),
           note="float64 only: torch keeps a float32 input's dtype against a float64 target"),
    OpSpec("cross_entropy", loss("cross_entropy"),
           (s(A(3, 4), CLASSES), s(T(3, 4), CLASSES), s(S(3, 4), CLASSES, label_smoothing=0.2), s(A(4), C(2)),
            s(A(0, 4), C(np.zeros(0, dtype=np.int64))), s(A(2, 3, 2), C(np.array([[0, 2], [1, 1]])))) +
           reductions(A(3, 4), CLASSES),
           note="one op; with label smoothing named AddBackward0, as torch's sum of its two terms",
           errors=(Err(lambda m: m.nn.functional.cross_entropy(m.ones(3, 4), m.tensor([0, 1, 4])), IndexError,
                       "out of bounds"),
                   Err(lambda m: m.nn.functional.cross_entropy(m.ones(3, 4), m.tensor([0, 1])), ValueError,
                       "batch_size"))),
    OpSpec("nll_loss", loss("nll_loss"), NLL, note="one op, as torch's",
           errors=(Err(lambda m: m.nn.functional.nll_loss(m.ones(3, 4), m.tensor([0., 1., 2.])), RuntimeError,
                       "Long"),)),
    OpSpec("cosine_similarity", loss("cosine_similarity"),
           (s(A(3, 4), A(3, 4)), s(A(3, 4), A(4), dim=-1), s(T(3, 4), S(3, 4), 0))),
    OpSpec("pairwise_distance", loss("pairwise_distance"),
           (s(A(3, 4), A(3, 4)), s(A(3, 4), A(4), 1.5), s(T(3, 4), S(3, 4), keepdim=True))),
    OpSpec("normalize", loss("normalize"), (s(A(3, 4)), s(T(3, 4), 1.0, 0), s(S(3, 4), 3.0, -1))),
)
