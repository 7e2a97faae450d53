"""Every differentiable OpInfo of torch's test suite: on its first two samples in float64 (and complex128 where
torch's backward supports it), ember's gradients against torch's: the vector-Jacobian product of a fixed
random grad_output, the Jacobian-vector product of a fixed random tangent (where torch's OpInfo supports forward
AD), and on the first sample the double backward (where it supports gradgrad). Values within float64's
tolerance, the same dtypes and shapes, None where torch gives None. Random ops, and those unique only up to sign
or phase, compare all but the values; ``GRADIENTS_NOT_COMPARED`` lists where torch's gradient is wrong.

Only two samples a dtype: the database has ~600 differentiable OpInfos, and the forward comparison
(``test_torch_opinfo_samples.py``) already covers more samples of each."""
import warnings

import pytest
import torch

from opinfo_gradients import Pair, gradgrad_difference, jvp_difference, vjp_difference
from opinfo_samples import (Unconvertible, describe_sample, ember_callable, op_db, op_id, samples, skip_reason,
                            values_comparable)

SAMPLES_PER_DTYPE = 2

# OpInfos whose gradients' values are not compared (their dtypes, shapes and None-ness are), with the reason
GRADIENTS_NOT_COMPARED: dict[str, str] = {}

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
    reason = skip_reason(info)
    if reason:
        pytest.skip(reason)
    fn = ember_callable(info)
    assert fn is not None, f"ember has no {info.name}"
    values = values_comparable(info) and op_id(info) not in GRADIENTS_NOT_COMPARED
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
                    failure = check(info, fn, pair, values)
                    compared += failure is not False
                    if failure:
                        failures.append(f"{name}, {str(dtype).split('.')[-1]} sample {index} "
                                        f"({describe_sample(sample)}): {failure}")
    assert not failures, "\n".join(failures)
    if not compared:
        pytest.skip("no sample whose gradient torch computes")
