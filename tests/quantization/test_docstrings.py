"""The examples in the docstrings of the quantization functions run and show what they say.

The public functions are defined under the ``ember`` namespace (``__module__ == "ember"``), where pytest's
module doctests do not look, so this runs them."""
import doctest

import numpy as np
import pytest

import ember
from ember._ops import quantize

FUNCTIONS = [
    ember.fake_quantize_per_tensor_affine, ember.fake_quantize_per_channel_affine,
    ember._fake_quantize_learnable_per_tensor_affine, ember._fake_quantize_learnable_per_channel_affine,
    ember.fused_moving_avg_obs_fake_quant,
    ember.quantize_per_tensor, ember.quantize_per_channel, ember.quantize_per_tensor_dynamic, ember.dequantize,
    ember.int_repr, ember.q_scale, ember.q_zero_point, ember.q_per_channel_scales, ember.q_per_channel_zero_points,
    ember.q_per_channel_axis, ember.empty_quantized, quantize.choose_qparams, ember.quantized_max_pool2d,
    ember.quantized_batch_norm, ember._make_per_tensor_quantized_tensor, ember._make_per_channel_quantized_tensor,
]


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_docstring_examples(function):
    finder, runner = doctest.DocTestFinder(recurse=False), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    globs = {"ember": ember, "np": np, **vars(quantize)}
    tests = finder.find(function, function.__name__, globs=globs)
    assert tests and tests[0].examples, f"{function.__name__} has no example"
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{function.__name__}: {runner.failures} example(s) failed (output above)"

