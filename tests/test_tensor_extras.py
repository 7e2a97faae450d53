"""slice_inverse and the deprecated out-of-place resize and resize_as against torch."""
import warnings

import numpy as np
import pytest
from twins import both, both_raise

import ember


def test_slice_inverse_as_torch():
    def program(lib):
        base = lib.arange(12.0, dtype=lib.float64).reshape(3, 4).requires_grad_()
        whole = lib.slice_inverse(base[:, 1:3], base.detach(), 1, 1, 3)
        rows = base[1:].slice_inverse(base.detach(), 0, 1)
        (grad,) = lib.autograd.grad((whole * lib.arange(12.0, dtype=lib.float64).reshape(3, 4)).sum(), base)
        return whole, rows, grad, whole._base is base

    both(program)
    both_raise(lambda lib: lib.slice_inverse([1.0], lib.ones(2)), TypeError, "slice_inverse\\(\\)")


def test_resize_and_resize_as_as_torch():
    def program(lib):
        x = lib.arange(6.0, dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y, z = x.resize(2, 3), x.resize_as(lib.ones(3, 2))
        (grad,) = lib.autograd.grad((y * lib.arange(6.0, dtype=lib.float64).reshape(2, 3)).sum() + z.sum(), x)
        return y, z.shape == (3, 2), grad, [str(w.message) for w in caught], y._base is x

    both(program)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        both_raise(lambda lib: lib.ones(4).resize(2), RuntimeError,
                   "requested resize to 2 \\(2 elements in total\\), but the given tensor has a size of 4")
    x = ember.ones(4)
    with pytest.warns(UserWarning):
        assert np.shares_memory(x.resize(2, 2).numpy(), x.numpy())  # a view, as torch's
