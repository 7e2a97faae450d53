"""Every ModuleInfo of torch's test suite: its first module inputs (``module_samples.INPUTS_PER_MODE`` of each,
in float64 and float32, in training and in eval mode) built as a torch module and as ember's module of the same
name, ember's loaded with torch's ``state_dict``. Compared: the state's names, order and shapes, ``repr``, the
forward's result (values within the dtype's tolerance, dtypes, shapes), the gradients of the inputs and of every
parameter after a backward of the same random ``grad_output``, and the buffers after the forward (running
statistics). For random modules (``module_samples.VALUES_NOT_COMPARED``) all but the values. An input torch
refuses is not compared; one ember refuses fails, as does a missing module."""
import warnings

import pytest
import torch

from module_samples import (DTYPES, SKIPPED, compare, describe_input, ember_args, ember_module_class, error_inputs,
                            module_db, refusal_difference,
                            module_inputs, values_comparable)
from opinfo_samples import to_ember

MODULES = module_db()  # (imported once per worker, at collection)


def _compare(info, ember_class, module_input, dtype, training) -> tuple[bool, str | None]:
    made, forward = module_input.constructor_input, module_input.forward_input

    def make_torch():
        return info.module_cls(*made.args, **made.kwargs).to(dtype).train(training)

    def make_ember():
        return ember_class(*ember_args(tuple(made.args)), **ember_args(dict(made.kwargs))).to(
            to_ember(dtype)).train(training)

    return compare(make_torch, make_ember, forward.args, forward.kwargs, info.is_lazy,
                   values_comparable(info))


@pytest.mark.parametrize("info", MODULES, ids=lambda info: info.name)
def test_module_inputs_match_torch(info):
    if info.name in SKIPPED:
        pytest.skip(SKIPPED[info.name])
    ember_class = ember_module_class(info)
    assert ember_class is not None, f"ember has no {info.name}"
    failures, compared = [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dtype in DTYPES:
            for training in (True, False):
                for index, module_input in enumerate(module_inputs(info, dtype, training)):
                    comparable, failure = _compare(info, ember_class, module_input, dtype, training)
                    compared += comparable
                    if failure:
                        mode = "training" if training else "eval"
                        failures.append(f"{str(dtype).split('.')[-1]} {mode} input {index} "
                                        f"({describe_input(module_input)}): {failure}")
    assert not failures, "\n".join(failures)
    if not compared:
        pytest.skip("no input that torch runs and ember can be given")


ERRING = [info for info in MODULES if info.module_error_inputs_func is not None]


@pytest.mark.parametrize("info", ERRING, ids=lambda info: info.name)
def test_module_error_inputs_refused_as_torch(info):
    """Every input the ModuleInfo says torch refuses (at construction or in the forward), in float64 in training
    and eval mode, that torch does refuse: ember refuses it too, with torch's exception type and a message that
    the database's pattern matches where torch's does (unless worded otherwise on purpose,
    ``module_samples.WORDED_OTHERWISE``)."""
    ember_class = ember_module_class(info)
    assert ember_class is not None, f"ember has no {info.name}"
    failures = []
    for training in (True, False):
        for index, error_input in enumerate(error_inputs(info, training)):
            failure = refusal_difference(info, ember_class, error_input, training)
            if failure:
                failures.append(f"{'training' if training else 'eval'} error input {index} "
                                f"({describe_input(error_input.module_error_input)}): {failure}")
    assert not failures, "\n".join(failures)
