"""Every OpInfo's error inputs (the calls torch refuses, with the exception type and a regex of its message)
through ember: where torch still raises as stated, ember must raise the same type (or a subclass) with a message
of the same substance. That is torch's regex matching ember's message regardless of case (dtypes and layouts
named ``ember.*`` where torch's are ``torch.*``), or, for the cases of ``SAME_SUBSTANCE``, where torch's regex
is only its own phrasing, a regex of the same facts. The cases of ``MESSAGE_GAPS`` (ember refuses them with the
right exception, its message lacking torch's facts) are expected failures. Error inputs that cannot be given
to ember (meta tensors, sparse layouts, tensors sharing
memory, which the conversion copies apart) are counted and not compared."""
import re
import warnings

import pytest
import torch

from opinfo_samples import Unconvertible, describe_sample, ember_callable, op_db, op_id, skip_reason, to_ember

OPS = [info for info in op_db() if info.error_inputs_func is not None]

# (op, torch's regex) -> (the regex ember's message must match instead, why torch's does not apply)
SAME_SUBSTANCE: dict[tuple[str, str], tuple[str, str]] = {
    ('dot', 'dot : expected both vectors to have same dtype'):
        (r"dot: expected both operands to have the same dtype, but got ember\.float32 and ember\.float16",
         "the one dtype check of ember's products, naming the dtypes"),
    ('vdot', 'dot : expected both vectors to have same dtype'):
        (r"vdot: expected both operands to have the same dtype, but got ember\.float32 and ember\.float16",
         "the one dtype check of ember's products, naming the dtypes (and vdot, where torch names dot)"),
    ('complex', 'Expected both inputs to be Half, Float or Double tensors but got Float and Int'):
        (r"expected both inputs to be float32 or float64 tensors, but got ember\.float32 and ember\.int32",
         "ember has no complex32, so it names the two dtypes it takes"),
    ('complex', 'Expected object of scalar type Float but got scalar type Double for second argument'):
        (r"expected object of scalar type Float but got scalar type Double for argument 'imag'",
         "ember names the argument, where torch gives its position"),
    **{(op, 'received an invalid combination of arguments - got \\(int, int, float'):
       (rf"{op.split('.')[0]}\(\): argument 'steps' must be int, not float",
        "ember names the one argument of the wrong type, where torch lists the arguments' types")
       for op in ('linspace', 'linspace.tensor_overload', 'logspace', 'logspace.tensor_overload')},
    ('masked_scatter', 'masked_scatter_ only supports boolean masks'):
        (r"masked_scatter\(\): only supports boolean masks, but got mask with dtype ember\.(float32|uint8)",
         "torch names its in-place form; ember the function called, and the mask's dtype"),
    ('nn.functional.adaptive_avg_pool1d', "'output_size' should contain one int"):
        (r"output_size must be 1 int, but got \[\]", "the words of the 2-d and 3-d pools' message, with the size"),
    ('nn.functional.adaptive_max_pool1d', "'output_size' should contain one int"):
        (r"output_size must be 1 int, but got \[\]", "the words of the 2-d and 3-d pools' message, with the size"),
    ('nn.functional.adaptive_max_pool2d', 'internal error'):
        (r"output_size must be 2 ints, but got \[\]", "torch's message is an internal assertion's"),
    ('nn.functional.adaptive_max_pool3d', 'internal error'):
        (r"output_size must be 3 ints, but got \[\]", "torch's message is an internal assertion's"),
    **{(f'nn.functional.adaptive_max_pool{n}d', 'Trying to create tensor with negative dimension'):
       (rf"adaptive_max_pool{n}d: elements of output_size must be greater than or equal to 0 but received \{{-1",
        "torch fails making the result; ember names the negative output_size, as adaptive_avg_pool does")
       for n in (1, 2, 3)},
    ('nn.functional.conv1d', 'weight should have at least three dimensions'):
        (r"conv1d: expected weight to be 3-dimensional .*but got weight of size \[1, 2\]",
         "the same fault, with the weight's size"),
    ('nn.functional.conv2d', 'Expected 3-dimensional input for 3-dimensional weight'):
        (r"conv2d: expected weight to be 4-dimensional .*but got weight of size \[1, 2, 2\]",
         "torch asks the input to fit the weight; conv2d's weight is what has the wrong number of dims"),
    ('nn.functional.conv3d', 'Expected 4-dimensional input for 4-dimensional weight'):
        (r"conv3d: expected weight to be 5-dimensional .*but got weight of size \[1, 1, 4, 3\]",
         "torch asks the input to fit the weight; conv3d's weight is what has the wrong number of dims"),
    ('nn.functional.max_pool1d', 'Invalid computed output size: -2'):
        (r"max_pool1d: Given input size: \[2\]\. Calculated output size: \[-2\]\. Output size is too small",
         "the words of the 2-d and 3-d pools' message, with the input's size"),
    ('narrow_copy', 'narrow\\(\\) cannot be applied to a 0-dim tensor\\.'):
        (r"narrow_copy\(\) cannot be applied to a 0-dim tensor\.", "ember names narrow_copy, where torch names narrow"),
    ('narrow_copy', 'Expected dim < static_cast<int64_t>\\(self_sizes.size\\(\\)\\) to be true, but got false\\.'):
        (r"narrow_copy: Expected dim < 3, the input's number of dims, but got dim 3",
         "torch's message is an internal assertion's"),
    ('narrow_copy', 'start \\(0\\) \\+ length \\(-1\\) exceeds dimension size \\(10\\)\\.'):
        (r"length must be non-negative\. Got length=-1 with start=0 in a dimension of size 10",
         "the fault is the negative length (narrow's message), with the same three numbers"),
    **{(op, 'received an invalid combination of arguments.'):
       (rf"{op}\(\): argument 'indices_or_sections' must be int, a sequence of ints or a tensor, not str",
        "ember names the argument of the wrong type, where torch lists the arguments' types")
       for op in ('hsplit', 'vsplit')},
    **{(op, "Expected the dtype for input and out to match, but got Float for input's dtype and Int for out's "
            "dtype."):
       (rf"{op}: Expected out tensor to have dtype float, but got int instead; pass an out of dtype ember\.float32",
        "the out= dtype check of ember's reductions: the input's dtype is the one out must have")
       for op in ('amax', 'amin')},
    ('nn.functional.gaussian_nll_loss', 'abc is not valid'):
        (r"abc is not a valid value for reduction; use one of none, mean, sum",
         "the reduction check of ember's losses, with the valid values"),
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
    return re.sub(r"torch(\\?\.)(?=u?int|float|bfloat|complex|bool|sparse|strided)", r"ember\1", regex)


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
            return "compared", (f"ember raised {type(error).__name__} ({error}) where torch raises "
                                f"{expected_type.__name__}")
        return _compare_message(op_id(info), regex, str(error))
    return "compared", f"ember answered where torch raises {expected_type.__name__} ({regex})"


def _compare_message(name: str, regex: str, message: str) -> tuple[str, str | None]:
    key = (name, regex)
    if key in SAME_SUBSTANCE:
        ours, _ = SAME_SUBSTANCE[key]
        found = re.search(ours, message, re.IGNORECASE)
        return "compared", None if found else f"ember's message {message!r} does not match {ours!r}"
    found = re.search(_in_ember_terms(regex), message, re.IGNORECASE)
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
