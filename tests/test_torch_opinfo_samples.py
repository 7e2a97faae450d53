"""Every OpInfo of torch's test suite: its first samples in float64, int64, complex128, bool and float32 through
ember and torch, the results compared: values within the dtype's tolerance, dtypes, shapes and layouts (for
random ops, and those unique only up to sign, all but the values). A sample torch refuses is not compared; one
ember refuses where torch answers fails, as does a missing op. OpInfos that cannot be compared are skipped with
the reason (``opinfo_samples.skip_reason``); so are the dtypes of ``opinfo_samples.SKIPPED_DTYPES``."""
import warnings

import pytest

from opinfo_samples import (DTYPES, callable_or_skip, compare_sample, describe_sample, op_db, op_id, samples,
                            values_comparable)

OPS = op_db()  # (imported once per worker, at collection)


@pytest.mark.parametrize("info", OPS, ids=op_id)
def test_samples_match_torch(info):
    fn = callable_or_skip(info)
    failures, compared, values = [], 0, values_comparable(info)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dtype in DTYPES:
            for index, sample in enumerate(samples(info, dtype)):
                comparable, failure = compare_sample(info, fn, sample, values)
                compared += comparable
                if failure:
                    failures.append(f"{str(dtype).split('.')[-1]} sample {index} ({describe_sample(sample)}): "
                                    f"{failure}")
    assert not failures, "\n".join(failures)
    if not compared:
        pytest.skip("no sample that torch computes and ember can be given")
