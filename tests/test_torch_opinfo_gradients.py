"""Every differentiable OpInfo of torch's test suite: on its first two samples in float64 (and complex128 where
torch's backward supports it), ember's gradients against torch's: the vector-Jacobian product of a fixed
random grad_output, the Jacobian-vector product of a fixed random tangent (where torch's OpInfo supports forward
AD), and on the first sample the double backward (where it supports gradgrad). Values within float64's
tolerance, the same dtypes and shapes, None where torch gives None. Random ops, and those unique only up to sign
or phase, compare all but the values; ``TORCH_GRADIENTS_DIFFER`` lists where torch's gradient is wrong, or
no better than ember's different one.

Only two samples a dtype: the database has ~600 differentiable OpInfos, and the forward comparison
(``test_torch_opinfo_samples.py``) already covers more samples of each."""
import warnings

import pytest
import torch

from opinfo_gradients import Pair, gradgrad_difference, jvp_difference, vjp_difference
from opinfo_samples import (Unconvertible, describe_sample, callable_or_skip, op_db, op_id, samples,
                            values_comparable)

SAMPLES_PER_DTYPE = 2

# (OpInfo, check) pairs where torch's answer is wrong or no better than ember's different one, with the reason:
# there only the dtypes and shapes of the gradients both give are compared
TORCH_GRADIENTS_DIFFER = {
    ("triangular_solve", "jvp"): "torch's tangent takes the whole tangent of A, not only the triangle the solve "
                                 "reads (a central difference agrees with ember's, off torch's by 4 to 34)",
    ("native_batch_norm", "jvp"): "torch gives the saved mean and inverse deviation no tangent, though both "
                                  "depend on the input; ember gives theirs",
    ("nn.functional.linear_cross_entropy.chunked", "gradgrad"):
        "torch's chunked path gives no second derivative for the input, which the cross entropy's curvature "
        "makes nonzero (its unchunked path, which ember's matches, gives it)",
    ("linalg.norm.subgradients_at_zero", "gradgrad"):
        "the 2-norm's second derivative does not exist at zero: torch gives nan, ember keeps its first "
        "derivative's convention there (the subgradient 0, constant around it along each ray) and gives 0",
    ("nn.functional.rrelu", "gradgrad"): "random slopes times the input: its gradient does not depend on the "
                                         "input, ember gives None where torch gives zeros",
    **dict.fromkeys([("linalg.lstsq", "gradgrad"), ("linalg.lstsq.grad_oriented", "gradgrad")],
                    "the empty residuals' grad_output: ember gives an empty gradient, torch None"),
}

OPS = [info for info in op_db() if info.supports_autograd]  # (imported once per worker, at collection)


def _dtypes(info) -> list:
    return [dtype for dtype in (torch.float64, torch.complex128) if dtype in info.supported_backward_dtypes("cpu")]


def _checks(info, index: int) -> list:
    found = [("vjp", vjp_difference)]
    if info.supports_forward_ad:
        found.append(("jvp", jvp_difference))
    if index == 0 and info.supports_gradgrad:
        found.append(("gradgrad", gradgrad_difference))
    return found


@pytest.mark.parametrize("info", OPS, ids=op_id)
def test_gradients_match_torch(info):
    fn = callable_or_skip(info)
    values = values_comparable(info)
    failures, compared = [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dtype in _dtypes(info):
            for index, sample in enumerate(samples(info, dtype, SAMPLES_PER_DTYPE, requires_grad=True)):
                try:
                    pair = Pair(sample)
                except Unconvertible:
                    continue
                for name, check in _checks(info, index):
                    trusted = (op_id(info), name) not in TORCH_GRADIENTS_DIFFER
                    failure = check(info, fn, pair, values and trusted, nones=trusted)
                    compared += failure is not False
                    if failure:
                        failures.append(f"{name}, {str(dtype).split('.')[-1]} sample {index} "
                                        f"({describe_sample(sample)}): {failure}")
    assert not failures, "\n".join(failures)
    if not compared:
        pytest.skip("no sample whose gradient torch computes")
