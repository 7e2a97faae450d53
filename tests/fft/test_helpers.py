"""fftfreq, rfftfreq, fftshift and ifftshift against torch."""
import numpy as np
import pytest
import torch

import ember
from fft._twins import close
from twins import both, both_raise, leaf


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n,d", [(1, 1.0), (4, 1.0), (5, 0.5), (8, 0.1), (0, 1.0), (7, 3)])
def test_frequencies_match_torch(name, n, d):
    for dtype in (None, "float64", "float16"):
        option = {} if dtype is None else {"dtype": getattr(torch, dtype)}
        mine = getattr(ember.fft, name)(n, d, **{k: getattr(ember, dtype) for k in option})
        close(mine, getattr(torch.fft, name)(n, d, **option), 0)


def test_frequencies_options():
    assert ember.fft.fftfreq(4, requires_grad=True).requires_grad
    out = ember.empty(3, dtype=ember.float64)
    assert ember.fft.rfftfreq(4, out=out) is out
    close(out, torch.fft.rfftfreq(4, out=torch.empty(3, dtype=torch.float64)), 0)
    np.testing.assert_equal(ember.fft.fftfreq(3, d=0).numpy(), torch.fft.fftfreq(3, d=0).numpy())


@pytest.mark.parametrize("program,error,fragment", [
    (lambda lib: lib.fft.fftfreq(4.0), TypeError, "argument 'n' .* must be int, not float"),
    (lambda lib: lib.fft.fftfreq(-1), RuntimeError, "negative dimension -1"),
    (lambda lib: lib.fft.rfftfreq(4, dtype=lib.int64), RuntimeError, "requires a floating point"),
    (lambda lib: lib.fft.fftfreq(4, dtype=lib.complex64), NotImplementedError, "\"arange_cpu\" not implemented"),
    (lambda lib: lib.fft.rfftfreq(4, dtype=lib.complex128), NotImplementedError, "'ComplexDouble'"),
])
def test_frequency_errors_as_torch(program, error, fragment):
    both_raise(program, error, fragment)


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1), [1]])
def test_shifts_match_torch_with_gradients(name, dim):
    def program(lib):
        x = leaf(lib, np.arange(15.0).reshape(3, 5))
        y = getattr(lib.fft, name)(x, dim=dim)
        (y * lib.arange(15.0, dtype=lib.float64).reshape(3, 5)).sum().backward()
        return y, x.grad

    both(program)


def test_shifts_undo_each_other_and_keep_the_dtype():
    x = ember.arange(7)
    assert ember.fft.ifftshift(ember.fft.fftshift(x)).equal(x)
    assert ember.fft.fftshift(x).dtype == ember.int64
    both_raise(lambda lib: lib.fft.fftshift(lib.ones(3), dim=1), IndexError, "Dimension out of range")


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
@pytest.mark.parametrize("dim", [0, -1, (0,), (0, 1)])
def test_shifts_of_a_0d_tensor_over_a_named_dim_are_an_index_error_as_torch(name, dim):
    both_raise(lambda lib: getattr(lib.fft, name)(lib.tensor(1.0), dim=dim), IndexError,
               r"^Dimension specified as -?\d but tensor has no dimensions")


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts_of_a_0d_tensor_over_every_dim_are_refused_as_torch(name):
    both_raise(lambda lib: getattr(lib.fft, name)(lib.tensor(1.5)), RuntimeError, "`shifts` required")
