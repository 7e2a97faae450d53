"""CPU autocast, and modules in other dtypes, against torch: the differences a sweep of the op table, nn.functional and
the common layers under ``autocast("cpu", dtype=...)`` found, one test each."""
import torch

import ember
from twins import both, normalise


def test_gelu_gradient_of_a_0_d_float32_input():
    """The in-place steps of gelu's float32 slope met NumPy's scalar that a 0-d product is (and raised TypeError)."""
    def program(lib):
        grads = []
        for approximate in ("none", "tanh"):
            x = lib.tensor(0.5, requires_grad=True)
            lib.nn.functional.gelu(x, approximate=approximate).backward()
            grads.append(x.grad)
        return grads

    both(program)

