"""torch's older, dict-based module and criterion tests (``common_nn``'s ``module_tests``,
``get_new_module_tests()`` and ``criterion_tests``): each spec's module built by torch and, from the same
constructor over ember.nn, by ember (loaded with torch's ``state_dict``), run on the spec's input (and target)
under its default dtype and under float32, in training and in eval mode, and compared as
``test_torch_module_samples`` compares (state, ``repr``, forward, gradients of the input and the parameters,
buffers); the gradients' values not where ember differs on purpose
(``module_samples.GRADIENTS_DIFFERENT_ON_PURPOSE``). A spec torch refuses is not compared; one ember refuses
fails, as does a missing module."""
import contextlib
import warnings

import pytest
import torch

import ember
from module_samples import (GRADIENTS_DIFFERENT_ON_PURPOSE, SPECS_RANDOM_IN_TRAINING, compare, ember_spec_module,
                            nn_specs, spec_arguments, spec_dtypes, spec_id, torch_spec_module)
from opinfo_samples import to_ember

SPECS = nn_specs()  # (imported once per worker, at collection)


@contextlib.contextmanager
def _default_dtype(dtype: torch.dtype):
    before, ours_before = torch.get_default_dtype(), ember.get_default_dtype()
    torch.set_default_dtype(dtype)
    ember.set_default_dtype(to_ember(dtype))
    try:
        yield
    finally:
        torch.set_default_dtype(before)
        ember.set_default_dtype(ours_before)


def _compare(spec: dict, criterion: bool, dtype: torch.dtype, training: bool) -> tuple[bool, str | None]:
    with warnings.catch_warnings(), _default_dtype(dtype):
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        args = spec_arguments(spec, criterion)
        values = not (training and spec.get("module_name") in SPECS_RANDOM_IN_TRAINING)
        return compare(lambda: torch_spec_module(spec).train(training),
                       lambda: ember_spec_module(spec).train(training), args, {}, values=values,
                       gradient_values=spec_id(spec) not in GRADIENTS_DIFFERENT_ON_PURPOSE)


@pytest.mark.parametrize("spec, criterion", SPECS, ids=[spec_id(spec) for spec, _ in SPECS])
def test_spec_matches_torch(spec, criterion):
    failures, compared = [], 0
    for dtype in spec_dtypes(spec):
        for training in (True, False):
            comparable, failure = _compare(spec, criterion, dtype, training)
            compared += comparable
            if failure:
                failures.append(f"{str(dtype).split('.')[-1]} {'training' if training else 'eval'}: {failure}")
    assert not failures, "\n".join(failures)
    if not compared:
        pytest.skip("torch refuses the spec's input, or ember cannot be given it")
