"""ember.linalg against torch.linalg on the inputs users give it: mixed dtypes, batches, shapes to refuse."""
import numpy as np
import pytest

from twins import both, both_raise

RNG = np.random.default_rng(21)
UPPER = np.triu(RNG.standard_normal((3, 3))) + 2 * np.eye(3)
RIGHT_SIDES = RNG.standard_normal((2, 3, 3))
TALL = RNG.standard_normal((2, 4, 3))


def t(lib, values, dtype="float64"):
    return lib.tensor(np.asarray(values), dtype=getattr(lib, dtype))


def rounded(result):
    """Results computed in single precision, compared at single precision's accuracy."""
    return np.round(result.detach().numpy().astype(np.complex128), 5)


@pytest.mark.parametrize("a_dtype, b_dtype", [("float64", "float32"), ("float32", "float64"),
                                              ("complex64", "float64"), ("float64", "int64")])
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_solves_in_the_dtype_of_A_whatever_the_dtype_of_B(a_dtype, b_dtype, left):
    def program(lib):
        x = lib.linalg.solve_triangular(t(lib, UPPER, a_dtype), t(lib, RIGHT_SIDES, b_dtype), upper=True, left=left)
        return str(x.dtype).split(".")[-1], rounded(x)
    both(program)


def test_solve_triangular_with_B_of_another_dtype_differentiates_into_both():
    def program(lib):
        a = t(lib, UPPER).requires_grad_()
        b = t(lib, RIGHT_SIDES, "float32").requires_grad_()
        lib.linalg.solve_triangular(a, b, upper=True).pow(2).sum().backward()
        return str(b.grad.dtype).split(".")[-1], rounded(a.grad), rounded(b.grad)
    both(program)


@pytest.mark.parametrize("tau_shape", [(1, 2), (3, 2)])
def test_householder_product_refuses_tau_whose_batch_differs_from_the_input(tau_shape):
    both_raise(lambda lib: lib.linalg.householder_product(t(lib, TALL), t(lib, np.full(tau_shape, 0.5))),
               RuntimeError, r"Expected batch dimensions of tau to be equal to input.shape\[:-2\], but got \[\d\]")


def test_householder_product_of_a_batch():
    both(lambda lib: lib.linalg.householder_product(t(lib, TALL), t(lib, [[0.5, 1.2], [0.3, 0.1]])))
