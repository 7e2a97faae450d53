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


# ----------------------------------------------------------------- least squares

@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("driver", ["gels", "gelsd", "gelss"])
@pytest.mark.parametrize("vector", [False, True])
def test_lstsq_residuals_are_differentiable(dtype, driver, vector):
    # ember computed the residuals outside the graph: no gradient reached A or B through them
    torch.manual_seed(0)
    A0, B0 = torch.randn(2, 5, 3, dtype=getattr(torch, dtype)), torch.randn(2, 5, *(() if vector else (2,)),
                                                                             dtype=getattr(torch, dtype))

    def program(lib):
        A = lib.tensor(A0.numpy(), requires_grad=True)
        B = lib.tensor(B0.numpy(), requires_grad=True)
        residuals = lib.linalg.lstsq(A, B, driver=driver).residuals
        return (residuals * lib.arange(1., residuals.shape[-1] + 1, dtype=residuals.dtype)).sum(), [A, B]
    both(grads(program))
