"""The table of the circular, matrix and bounded families: one row per family and parameterisation.

Rows are ``Case``s of ``cases.py``; ``extra["rtol"]`` loosens the comparison where torch approximates
(VonMises's Bessel functions are polynomial fits in torch, exact in ember).
"""
from __future__ import annotations

import numpy as np

from tests.distributions.cases import Case

_SPD = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]])
_CORR = np.array([[1.0, 0.3, -0.2], [0.3, 1.0, 0.5], [-0.2, 0.5, 1.0]])
_CORR2 = np.array([[1.0, -0.6, 0.1], [-0.6, 1.0, 0.0], [0.1, 0.0, 1.0]])
_CORR_CHOLESKY = np.stack([np.linalg.cholesky(_CORR), np.linalg.cholesky(_CORR2)])
_WISHART_VALUES = np.stack([_SPD * 3, np.diag([1.0, 2.0, 0.5])])

MORE_CASES = [
    Case("VonMises", lambda lib, D, t: D.VonMises(t([0.0, 1.0, -2.0]), t([0.5, 2.0, 8.0])),
         np.array([[0.3, 1.2, -1.0], [3.0, -1.0, 7.0]]), methods=("log_prob", "mean", "mode", "variance"),
         extra={"rtol": 2e-5}),
    Case("VonMises-scalar", lambda lib, D, t: D.VonMises(0.5, 4.0), np.array([0.3, -2.0]),
         methods=("log_prob", "variance"), extra={"rtol": 2e-5}),
    Case("LKJCholesky", lambda lib, D, t: D.LKJCholesky(3, t([0.5, 2.0])), _CORR_CHOLESKY, methods=("log_prob",)),
    Case("LKJCholesky-scalar", lambda lib, D, t: D.LKJCholesky(4, 1.5),
         np.linalg.cholesky(np.eye(4) * 0.6 + 0.4), methods=("log_prob",)),
    Case("Wishart-cov", lambda lib, D, t: D.Wishart(t([6.0, 4.5]), covariance_matrix=t(_SPD)), _WISHART_VALUES,
         reparameterised=True),
    Case("Wishart-precision", lambda lib, D, t: D.Wishart(t(5.0), precision_matrix=t(_SPD)), _WISHART_VALUES,
         methods=("log_prob", "entropy", "mean", "variance")),
    Case("Wishart-tril", lambda lib, D, t: D.Wishart(t([7.0]), scale_tril=t(np.linalg.cholesky(_SPD))),
         _WISHART_VALUES[:1], methods=("log_prob", "entropy", "mean", "mode")),
    Case("HalfCauchy", lambda lib, D, t: D.HalfCauchy(t([1.0, 2.5])), np.array([0.5, 3.0]), cdf=True,
         reparameterised=True),
    Case("InverseGamma", lambda lib, D, t: D.InverseGamma(t([5.0, 4.5]), t([2.0, 0.5])), np.array([0.5, 0.3]),
         cdf=True, reparameterised=True),
    Case("ContinuousBernoulli-probs", lambda lib, D, t: D.ContinuousBernoulli(t([0.2, 0.5, 0.9, 0.4995])),
         np.array([[0.3, 0.3, 0.8, 0.1], [0.0, 1.0, 0.5, 0.9]]), cdf=True, reparameterised=True,
         methods=("log_prob", "entropy", "mean", "variance", "stddev")),
    Case("ContinuousBernoulli-logits", lambda lib, D, t: D.ContinuousBernoulli(logits=t([-1.5, 0.3, 2.0])),
         np.array([0.2, 0.5, 0.95]), cdf=True, reparameterised=True,
         methods=("log_prob", "entropy", "mean", "variance")),
    Case("FisherSnedecor", lambda lib, D, t: D.FisherSnedecor(t([4.0, 10.0]), t([9.0, 12.0])), np.array([0.5, 2.0]),
         methods=("log_prob", "mean", "mode", "variance", "stddev"), reparameterised=True),
    # torch's GeneralizedPareto scores only single precision (it compares with a float32 zero)
    Case("GeneralizedPareto", lambda lib, D, t: D.GeneralizedPareto(
        t([0.0, 1.0, -1.0]).float(), t([1.0, 2.0, 0.5]).float(), t([0.2, 0.0, -0.3]).float()),
         np.array([0.7, 2.5, -0.5], dtype=np.float32), cdf=True, reparameterised=True, extra={"rtol": 1e-5}),
    Case("GeneralizedPareto-scalar", lambda lib, D, t: D.GeneralizedPareto(0.5, 2.0, 0.3),
         np.array([1.0, 4.0], dtype=np.float32), cdf=True, methods=("log_prob", "entropy", "mean", "variance", "mode"),
         extra={"rtol": 1e-5}),
    Case("Kumaraswamy", lambda lib, D, t: D.Kumaraswamy(t([2.0, 5.0, 1.5]), t([3.0, 1.5, 2.0])),
         np.array([0.5, 0.8, 0.1]), cdf=True, reparameterised=True),
    Case("LogisticNormal", lambda lib, D, t: D.LogisticNormal(t([[0.0, 1.0], [0.5, -0.5]]), t([1.0, 0.5])),
         np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]), methods=("log_prob",), reparameterised=True),
]
