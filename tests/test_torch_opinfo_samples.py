"""Every OpInfo of torch's test suite: its first samples in float64, int64, complex128, bool and float32 through
ember and torch, the results compared: values within the dtype's tolerance, dtypes, shapes and layouts (for
random ops, and those unique only up to sign, all but the values). A sample torch refuses is not compared; one
ember refuses where torch answers fails, as does a missing op. OpInfos that cannot be compared are skipped with
the reason (``opinfo_samples.skip_reason``); so are the dtypes of ``opinfo_samples.SKIPPED_DTYPES``."""
import warnings

import pytest

from opinfo_samples import (DTYPES, Unconvertible, describe_sample, difference, callable_or_skip, op_db, op_id,
                            plain, samples, to_ember, values_comparable)

OPS = op_db()  # (imported once per worker, at collection)


def _compare(info, fn, sample, values: bool) -> tuple[bool, str | None]:
    """Whether ``sample`` could be compared (torch computes it, and ember can be given it), and what went wrong
    with ember on it (None if nothing did)."""
    try:
        expected = plain(info.op(sample.input, *sample.args, **sample.kwargs))
    except Exception:  # (torch refuses it)
        return False, None
    try:
        args, kwargs = to_ember((sample.input, *sample.args)), to_ember(dict(sample.kwargs))
    except Unconvertible:
        return False, None
    try:
        got = plain(fn(*args, **kwargs))
    except Exception as error:
        return True, f"ember raised {type(error).__name__}: {error}"
    return True, difference(expected, got, values)


@pytest.mark.parametrize("info", OPS, ids=op_id)
def test_samples_match_torch(info):
    fn = callable_or_skip(info)
    failures, compared, values = [], 0, values_comparable(info)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dtype in DTYPES:
            for index, sample in enumerate(samples(info, dtype)):
                comparable, failure = _compare(info, fn, sample, values)
                compared += comparable
                if failure:
                    failures.append(f"{str(dtype).split('.')[-1]} sample {index} ({describe_sample(sample)}): "
                                    f"{failure}")
    assert not failures, "\n".join(failures)
    if not compared:
        pytest.skip("no sample that torch computes and ember can be given")
