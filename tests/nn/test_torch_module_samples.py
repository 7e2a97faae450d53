"""Every ModuleInfo of torch's test suite: its first module inputs (``module_samples.INPUTS_PER_MODE`` of each,
in float64 and float32, in training and in eval mode) built as a torch module and as ember's module of the same
name, ember's loaded with torch's ``state_dict``. Compared: the state's names, order and shapes, ``repr``, the
forward's result (values within the dtype's tolerance, dtypes, shapes), the gradients of the inputs and of every
parameter after a backward of the same random ``grad_output``, and the buffers after the forward (running
statistics). For random modules (``module_samples.VALUES_NOT_COMPARED``, ``RANDOM_IN_TRAINING``) all but the
values. An input torch refuses is not compared; one ember refuses fails, as does a missing module."""
import warnings

import pytest
import torch

from module_samples import (DTYPES, SKIPPED, compare, describe_input, ember_args, ember_module_class, module_db,
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
                   values_comparable(info, training))


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
