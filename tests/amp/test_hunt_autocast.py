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


def test_block_diag_promotes_as_torchs_result_type():
    """A 0-d block is a number to the promotion: it lifts the dtype only to a higher category."""
    def program(lib):
        rows, one = lib.ones(2, 3, dtype=lib.bfloat16), lib.ones(3, dtype=lib.bfloat16)
        ints = lib.ones(2, dtype=lib.int32)
        cases = [(rows, lib.tensor(2.0), one), (lib.tensor(2.0), lib.tensor(1.0, dtype=lib.bfloat16)),
                 (ints, lib.tensor(2.0)), (ints, lib.tensor(2)), (rows, lib.ones(1, 2))]
        return [lib.block_diag(*blocks).dtype for blocks in cases]

    both(program, prepare=normalise)
