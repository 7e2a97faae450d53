"""torch's OpInfo *reference* inputs, and noncontiguous copies of its samples, through ember and torch, the
results compared as ``test_torch_opinfo_samples.py`` compares them (values within the dtype's tolerance, NaN
matching NaN, the same dtypes, shapes and layouts).

Reference inputs are the extensive ones: extremal values (inf, nan, -0.0, huge and tiny numbers), large and empty
tensors, every broadcasting pair, mixed dtypes and Python scalars, integer edge cases. They begin with the
OpInfo's own samples, which the other sweep already compares, so those are left out; of the rest every
``STRIDE``-th is compared, starting at an offset that differs by dtype so the dtypes see different samples,
except those with a tensor of more than ``LARGEST`` elements (a million, in the large-tensor cases: ember computes
them as it does small ones, some of its special functions taking seconds over them).
Generating them is most of the cost (the large tensors), so each OpInfo runs in float64 and in one more of
float32, int64 and bool (the one its position in the database picks, among those it supports). The
noncontiguous check runs the first ``NONCONTIGUOUS_SAMPLES`` samples in float64 laid out as torch's
``SampleInput.noncontiguous`` lays them out, with ember's inputs keeping those strides.

A sample torch refuses is not compared; one ember refuses where torch answers fails. Where ember differs on
purpose the case is skipped (``DIFFERENT_ON_PURPOSE``); known gaps are strict expected failures
(``KNOWN_DIFFERENCES``), by OpInfo and case, so an entry fails the sweep once it is fixed."""
import itertools
import warnings

import pytest
import torch

from opinfo_samples import (SKIPPED_DTYPES, callable_or_skip, compare_sample, describe_sample, op_db, op_id,
                            skip_reason, values_comparable)

STRIDE = 4
NONCONTIGUOUS_SAMPLES = 4
LARGEST = 2**16  # elements of a sample's largest tensor
OTHER_DTYPES = (torch.float32, torch.int64, torch.bool)

# (OpInfo, case) where ember differs from torch on purpose, with the reason: skipped
_OVERFLOW_TO_NAN = ("int64 degrees up to 127 overflow float32: torch's recurrence then gives nan (inf - inf), "
                    "ember the overflowed value (inf with its sign, or an exact 0)")
DIFFERENT_ON_PURPOSE = {
    ("special.airy_ai", "float64"): "torch's float64 airy_ai is off by up to 1.2e-6 near x = -2.2; ember's is accurate",
    ("special.bessel_j1", "float64"): "torch's float64 bessel_j1 is off by up to 4e-7 near x = -5; ember's is accurate",
    ("special.bessel_y0", "float64"): "torch's float64 bessel_y0 is off by up to 1e-8 near x = 7; ember's is accurate",
    **{(f"special.{name}", "int64"): _OVERFLOW_TO_NAN for name in (
        "chebyshev_polynomial_u", "hermite_polynomial_h", "legendre_polynomial_p", "shifted_chebyshev_polynomial_v")},
}

# (OpInfo, case) whose comparison fails for a gap not yet closed, with the reason: strict expected failures
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}


def _cases() -> list:
    """(OpInfo, case) pairs: "float64", the one other dtype the OpInfo's position picks, "noncontiguous"."""
    found = []
    for position, info in enumerate(op_db()):
        if info.reference_inputs_func is None or skip_reason(info):
            continue
        supported = info.supported_dtypes("cpu")
        others = [dtype for dtype in OTHER_DTYPES if dtype in supported]
        dtypes = [torch.float64] if torch.float64 in supported else []
        if others:
            dtypes.append(others[position % len(others)])
        found += [(info, _dtype_name(dtype)) for dtype in dtypes if (op_id(info), dtype) not in SKIPPED_DTYPES]
        if torch.float64 in supported:
            found.append((info, "noncontiguous"))
    return [pytest.param(info, case, id=f"{op_id(info)}-{case}", marks=_expected_failure(info, case))
            for info, case in found]


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).split(".")[-1]


def _expected_failure(info, case) -> list:
    if (op_id(info), case) in DIFFERENT_ON_PURPOSE:
        return [pytest.mark.skip(reason=DIFFERENT_ON_PURPOSE[op_id(info), case])]
    reason = KNOWN_DIFFERENCES.get((op_id(info), case))
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


def _reference_samples(info, dtype: torch.dtype) -> list:
    """Every ``STRIDE``-th of the reference inputs beyond the OpInfo's own samples."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        own = sum(1 for _ in info.sample_inputs_func(info, "cpu", dtype, False))
        torch.manual_seed(0)
        found = info.reference_inputs_func(info, "cpu", dtype, False)
        offset = OTHER_DTYPES.index(dtype) + 1 if dtype in OTHER_DTYPES else 0
        return [sample for sample in itertools.islice(found, own + offset % STRIDE, None, STRIDE)
                if _largest(sample) <= LARGEST]


def _largest(sample) -> int:
    tensors = [v for v in (sample.input, *sample.args, *sample.kwargs.values()) if isinstance(v, torch.Tensor)]
    return max((t.numel() for t in tensors), default=0)


def _noncontiguous_samples(info) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        found = info.sample_inputs_func(info, "cpu", torch.float64, False)
        return [sample.noncontiguous() for sample in itertools.islice(found, NONCONTIGUOUS_SAMPLES)]


@pytest.mark.parametrize("info, case", _cases())
def test_reference_inputs_match_torch(info, case):
    fn = callable_or_skip(info)
    noncontiguous = case == "noncontiguous"
    found = _noncontiguous_samples(info) if noncontiguous else _reference_samples(info, getattr(torch, case))
    failures, compared, values = [], 0, values_comparable(info)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for sample in found:
            comparable, failure = compare_sample(info, fn, sample, values, keep_strides=noncontiguous)
            compared += comparable
            if failure:
                failures.append(f"{describe_sample(sample)}: {failure}")
    assert not failures, f"{len(failures)} of {compared} samples differ:\n" + "\n".join(failures)
    if not compared:
        pytest.skip("no sample that torch computes and ember can be given")
