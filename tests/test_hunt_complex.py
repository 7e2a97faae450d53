"""Mismatches with torch found by a bug hunt of complex autograd and of linalg's edge cases.

Each test here failed before its fix. Gradients are those of a real loss of complex tensors, compared with
torch's (the conjugate Wirtinger convention).
"""
import pytest
import torch

import ember
from twins import both


def grads(program):
    """``program(lib)`` -> (loss, inputs): the loss's gradients with respect to the inputs."""
    def run(lib):
        loss, inputs = program(lib)
        return lib.autograd.grad(loss, inputs)
    return run


# ----------------------------------------------------------------- norms

@pytest.mark.parametrize("ord", [3, 0.5, -1.5])
@pytest.mark.parametrize("values", [[0j, 0j, 0j], [0j, 1 + 2j, -2 + 0j]])
def test_vector_norm_of_complex_zeros_has_torchs_gradient(ord, values):
    # the composed (|x| ** ord).sum() ** (1 / ord) gave nan at a zero entry and at a zero norm
    def program(lib):
        x = lib.tensor(values, dtype=lib.complex128, requires_grad=True)
        return lib.linalg.vector_norm(x, ord), [x]
    both(grads(program))
