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
}

# (op, torch's regex) -> why ember's message does not yet carry the facts torch's names; the case fails once it
# does, so that the entry is removed
_OTHER_FAULT = "ember reports another of the input's faults first (torch checks this one earlier)"
_OWN_WORDS = "ember states the same fault in its own words, without torch's phrase"
MESSAGE_GAPS: dict[tuple[str, str], str] = {
    ('dot', 'dot : expected both vectors to have same dtype'): _OTHER_FAULT,
    ('vdot', 'dot : expected both vectors to have same dtype'): _OTHER_FAULT,
    ('vdot', 'inconsistent tensor size'): _OWN_WORDS,
    ('complex', 'Expected both inputs to be Half, Float or Double tensors but got Float and Int'): _OWN_WORDS,
    ('complex', 'Expected object of scalar type Float but got scalar type Double for second argument'): _OWN_WORDS,
    ('cov', 'expected input to have two or fewer dimensions'): _OWN_WORDS,
    ('cov', 'expected fweights to have one or fewer dimensions'): _OWN_WORDS,
    ('cov', 'expected aweights to have one or fewer dimensions'): _OWN_WORDS,
    ('cov', 'expected fweights to have integral dtype'): _OWN_WORDS,
    ('cov', 'expected aweights to have floating point dtype'): _OTHER_FAULT,
    ('cov', 'expected fweights to have the same numel'): _OWN_WORDS,
    ('cov', 'expected aweights to have the same numel'): _OWN_WORDS,
    ('cov', 'fweights cannot be negative'): _OWN_WORDS,
    ('cov', 'aweights cannot be negative'): _OWN_WORDS,
    ('diff', 'order must be non-negative but got -1'): _OWN_WORDS,
    ('linspace', 'received an invalid combination of arguments - got \\(int, int, float'): _OWN_WORDS,
    ('linspace.tensor_overload', 'received an invalid combination of arguments - got \\(int, int, float'): _OWN_WORDS,
    ('logspace', 'received an invalid combination of arguments - got \\(int, int, float'): _OWN_WORDS,
    ('logspace.tensor_overload', 'received an invalid combination of arguments - got \\(int, int, float'): _OWN_WORDS,
    ('masked_scatter', 'masked_scatter_ only supports boolean masks'): _OWN_WORDS,
    ('native_layer_norm', 'Expected normalized_shape to be at least 1-dimensional'): _OWN_WORDS,
    ('nn.functional.adaptive_avg_pool1d', "'output_size' should contain one int"): _OWN_WORDS,
    ('nn.functional.adaptive_max_pool1d', "'output_size' should contain one int"): _OWN_WORDS,
    ('nn.functional.adaptive_max_pool1d', 'Trying to create tensor with negative dimension'): _OWN_WORDS,
    ('nn.functional.adaptive_max_pool2d', 'internal error'): _OWN_WORDS,
    ('nn.functional.adaptive_max_pool2d', 'Trying to create tensor with negative dimension'): _OWN_WORDS,
    ('nn.functional.adaptive_max_pool3d', 'internal error'): _OWN_WORDS,
    ('nn.functional.adaptive_max_pool3d', 'Trying to create tensor with negative dimension'): _OWN_WORDS,
    ('nn.functional.avg_pool3d', 'pad must be non-negative'): _OTHER_FAULT,
    ('nn.functional.avg_pool3d', 'pad should be at most half of effective kernel size'): _OTHER_FAULT,
    ('nn.functional.conv1d', 'non-positive stride is not supported'): _OTHER_FAULT,
    ('nn.functional.conv1d', 'negative padding is not supported'): _OTHER_FAULT,
    ('nn.functional.conv1d', 'weight should have at least three dimensions'): _OWN_WORDS,
    ('nn.functional.conv1d', 'expected weight to be at least 3 at dimension 0'): _OTHER_FAULT,
    ('nn.functional.conv2d', 'non-positive stride is not supported'): _OTHER_FAULT,
    ('nn.functional.conv2d', 'negative padding is not supported'): _OTHER_FAULT,
    ('nn.functional.conv2d', 'Expected 3-dimensional input for 3-dimensional weight'): _OWN_WORDS,
    ('nn.functional.conv2d', 'expected weight to be at least 3 at dimension 0'): _OTHER_FAULT,
    ('nn.functional.conv3d', 'Expected 4-dimensional input for 4-dimensional weight'): _OWN_WORDS,
    ('nn.functional.conv3d', 'expected weight to be at least 3 at dimension 0'): _OTHER_FAULT,
    ('nn.functional.group_norm', 'Expected at least 2 dimensions for input tensor but received'): _OWN_WORDS,
    ('nn.functional.rms_norm', 'Expected normalized_shape to be at least 1-dimensional'): _OWN_WORDS,
    ('nn.functional.soft_margin_loss',
     '(Attempting to broadcast a dimension of length|The size of tensor a \\(4\\) must match the s'
     'ize of tensor b \\(5\\) at non-singleton dimension 1)'): _OTHER_FAULT,
    ('nn.functional.multi_margin_loss',
     'Expected non-empty vector or matrix with optional 0-dim batch size, but got: \\[5, 0\\]'): _OTHER_FAULT,
    ('nn.functional.multi_margin_loss',
     'Expected non-empty vector or matrix with optional 0-dim batch size, but got: \\[0\\]'): _OTHER_FAULT,
    ('nn.functional.multi_margin_loss',
     'target tensor should be 1-D with size equal to.*Expected target size \\[5\\].*but got \\[5, 4'
     '\\]'): _OTHER_FAULT,
    ('nn.functional.multi_margin_loss', 'inconsistent weight size, expected 4 but got \\[5\\]'): _OTHER_FAULT,
    ('nn.functional.multilabel_margin_loss',
     'Expected non-empty vector or matrix with optional 0-dim batch size, but got: \\[5, 0\\]'): _OTHER_FAULT,
    ('nn.functional.multilabel_margin_loss',
     'Expected non-empty vector or matrix with optional 0-dim batch size, but got: \\[0\\]'): _OTHER_FAULT,
    ('nn.functional.multilabel_margin_loss',
     'inconsistent target size: \\[4\\] for input of size: \\[5, 4\\]'): _OTHER_FAULT,
    ('nn.functional.multilabel_margin_loss',
     'inconsistent target size: \\[\\] for input of size: \\[5, 4\\]'): _OTHER_FAULT,
    ('nn.functional.avg_pool2d', 'pad must be non-negative'): _OTHER_FAULT,
    ('nn.functional.avg_pool2d', 'pad should be at most half of effective kernel size'): _OTHER_FAULT,
    ('nn.functional.max_pool1d', 'stride must be greater than zero, but got 0'): _OWN_WORDS,
    ('nn.functional.max_pool1d', 'dilation must be greater than zero, but got 0'): _OWN_WORDS,
    ('nn.functional.max_pool1d', 'Invalid computed output size: -2'): _OWN_WORDS,
    ('nn.functional.max_pool1d', 'kernel_size must be greater than zero'): _OTHER_FAULT,
    ('nn.functional.max_pool1d', 'stride must be greater than zero'): _OWN_WORDS,
    ('nn.functional.max_pool2d', 'pad must be non-negative'): _OTHER_FAULT,
    ('nn.functional.max_pool2d', 'pad should be at most half of effective kernel size'): _OTHER_FAULT,
    ('nn.functional.max_pool3d', 'pad must be non-negative'): _OTHER_FAULT,
    ('nn.functional.max_pool3d', 'pad should be at most half of effective kernel size'): _OTHER_FAULT,
    ('nn.functional.prelu', 'Not allow zero-dim input tensor.'): _OTHER_FAULT,
    ('nn.functional.softshrink', 'lambda must be in range \\[0,.*input dtype.*found -0\\.5'): _OWN_WORDS,
    ('nn.functional.hardtanh', 'min_val cannot be greater than max_val'): _OWN_WORDS,
    ('narrow', 'narrow\\(\\) cannot be applied to a 0-dim tensor\\.'): _OWN_WORDS,
    ('narrow_copy', 'narrow\\(\\) cannot be applied to a 0-dim tensor\\.'): _OWN_WORDS,
    ('narrow_copy',
     'Expected dim < static_cast<int64_t>\\(self_sizes.size\\(\\)\\) to be true, but got false\\.'): _OWN_WORDS,
    ('narrow_copy', 'start \\(0\\) \\+ length \\(-1\\) exceeds dimension size \\(10\\)\\.'): _OWN_WORDS,
    ('view_copy',
     'cannot reshape tensor of 0 elements into shape \\[0, -1\\] because the unspecified dimension'
     ' size -1 can be any value and is ambiguous'): _OWN_WORDS,
    ('hsplit', 'received an invalid combination of arguments.'): _OWN_WORDS,
    ('vsplit', 'received an invalid combination of arguments.'): _OWN_WORDS,
    ('reshape',
     'cannot reshape tensor of 0 elements into shape \\[0, -1\\] because the unspecified dimension'
     ' size -1 can be any value and is ambiguous'): _OWN_WORDS,
    ('view',
     'cannot reshape tensor of 0 elements into shape \\[0, -1\\] because the unspecified dimension'
     ' size -1 can be any value and is ambiguous'): _OWN_WORDS,
    ('gather', 'Size does not match at dimension 0'): _OWN_WORDS,
    ('index_add',
     'source tensor shape must match self tensor shape, excluding the specified dimension. Got s'
     'elf.shape = \\[3, 2\\] source.shape = \\[2\\]'): _OWN_WORDS,
    ('scatter', 'Index tensor must have the same number of dimensions as self tensor'): _OWN_WORDS,
    ('multinomial', 'number of categories cannot exceed'): _OTHER_FAULT,
    ('scatter_add', 'Index tensor must have the same number of dimensions as self tensor'): _OWN_WORDS,
    ('renorm', 'needs at least 2 dimensions, got 0 dimensions'): _OWN_WORDS,
    ('amax',
     "Expected the dtype for input and out to match, but got Float for input's dtype and Int for"
     " out's dtype."): _OWN_WORDS,
    ('amin',
     "Expected the dtype for input and out to match, but got Float for input's dtype and Int for"
     " out's dtype."): _OWN_WORDS,
    ('nn.functional.gaussian_nll_loss', 'abc is not valid'): _OWN_WORDS,
    ('linalg.diagonal', 'diagonal dimensions cannot be identical 1, 1'): _OWN_WORDS,
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
