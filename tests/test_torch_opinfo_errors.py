"""Every OpInfo's error inputs (the calls torch refuses, with the exception type and a regex of its message)
through ember: where torch still raises as stated, ember must raise the same type (or a subclass) with a message
of the same substance. That is torch's regex matching ember's message (dtypes named ``ember.*`` where torch's
are ``torch.*``), or, for the cases of ``SAME_SUBSTANCE``, where torch's regex is only its own phrasing, a regex
of the same facts. Error inputs that cannot be given to ember (meta tensors, sparse layouts, tensors sharing
memory, which the conversion copies apart) are counted and not compared."""
import re
import warnings

import pytest
import torch

from opinfo_samples import Unconvertible, describe_sample, ember_callable, op_db, op_id, skip_reason, to_ember

OPS = [info for info in op_db() if info.error_inputs_func is not None]

# (op, torch's regex) -> (the regex ember's message must match instead, why torch's does not apply)
SAME_SUBSTANCE: dict[tuple[str, str], tuple[str, str]] = {
}

# (op, torch's regex) -> why ember's message does not yet carry the facts torch's names; the case fails once it
# does, so that the entry is removed
MESSAGE_GAPS: dict[tuple[str, str], str] = {
}


def _shares_memory(sample) -> bool:
    """Whether the sample's tensors overlap in memory (one aliasing another, or an expanded out=): the
    conversion copies each tensor, so ember would not see the overlap the error input is about."""
    tensors = [t for t in _tensors((sample.input, sample.args, sample.kwargs)) if t.layout == torch.strided]
    storages = [t.untyped_storage().data_ptr() for t in tensors if t.numel()]
    expanded = any(stride == 0 and size > 1 for t in tensors for size, stride in zip(t.shape, t.stride()))
    return expanded or len(storages) != len(set(storages))


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        yield from _tensors(list(value.values()))


def _in_ember_terms(regex: str) -> str:
    """torch's regex with its dtypes' and layouts' module named as ember's (``torch.int64`` -> ``ember.int64``)."""
    return re.sub(r"torch(\\?\.)", r"ember\1", regex)


def _check(info, fn, error_input) -> tuple[str, str | None]:
    """What became of one error input: ("skipped", why), ("gap", why the message differs), or ("compared", what went
    wrong with ember, None if nothing did)."""
    sample, expected_type, regex = error_input.sample_input, error_input.error_type, error_input.error_regex
    try:
        info.op(sample.input, *sample.args, **sample.kwargs)
    except expected_type:
        pass
    except Exception as error:
        return "skipped", f"torch now raises {type(error).__name__}, not {expected_type.__name__}"
    else:
        return "skipped", "torch no longer raises"
    if _shares_memory(sample):
        return "skipped", "its tensors share memory"
    try:
        args, kwargs = to_ember((sample.input, *sample.args)), to_ember(dict(sample.kwargs))
    except Unconvertible as reason:
        return "skipped", f"unconvertible: {reason}"
    try:
        fn(*args, **kwargs)
    except Exception as error:
        if not isinstance(error, expected_type):
            return "compared", f"ember raised {type(error).__name__} ({error}) where torch raises {expected_type.__name__}"
        return _compare_message(op_id(info), regex, str(error))
    return "compared", f"ember answered where torch raises {expected_type.__name__} ({regex})"


def _compare_message(name: str, regex: str, message: str) -> tuple[str, str | None]:
    key = (name, regex)
    if key in SAME_SUBSTANCE:
        ours, _ = SAME_SUBSTANCE[key]
        found = re.search(ours, message)
        return "compared", None if found else f"ember's message {message!r} does not match {ours!r}"
    found = re.search(_in_ember_terms(regex), message)
    if key in MESSAGE_GAPS:
        return ("compared", f"now matches: remove {key} from MESSAGE_GAPS") if found else ("gap", MESSAGE_GAPS[key])
    return "compared", None if found else f"ember's message {message!r} does not match torch's {regex!r}"


@pytest.mark.parametrize("info", OPS, ids=op_id)
def test_error_inputs_match_torch(info):
    reason = skip_reason(info)
    if reason:
        pytest.skip(reason)
    fn = ember_callable(info)
    assert fn is not None, f"ember has no {info.name}"
    failures, gaps, skipped, compared = [], [], [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for index, error_input in enumerate(info.error_inputs_func(info, "cpu")):
            outcome, detail = _check(info, fn, error_input)
            where = f"error input {index} ({describe_sample(error_input.sample_input)})"
            if outcome == "skipped":
                skipped.append(f"{where}: {detail}")
            elif outcome == "gap":
                gaps.append(f"{where}: {detail}")
            else:
                compared += 1
                if detail:
                    failures.append(f"{where}: {detail}")
    assert not failures, "\n".join(failures)
    if gaps:
        pytest.xfail("ember's message lacks torch's facts: " + "; ".join(gaps))
    if not compared:
        pytest.skip("no error input torch refuses and ember can be given: " + "; ".join(skipped))
