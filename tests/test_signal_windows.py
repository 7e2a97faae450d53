"""ember.signal.windows against torch.signal.windows: values, dtypes and errors over lengths and both sym values."""
import itertools

import numpy as np
import pytest
import torch

import ember

WINDOWS = [
    ("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {}), ("exponential", {"tau": 2.5}),
    ("gaussian", {}), ("gaussian", {"std": 0.7}), ("general_cosine", {"a": [0.46, 0.23, 0.31]}),
    ("general_hamming", {}), ("general_hamming", {"alpha": 0.6}), ("hamming", {}), ("hann", {}), ("kaiser", {}),
    ("kaiser", {"beta": 3.0}), ("nuttall", {}),
]


def window(lib, name, M, **kwargs):
    return getattr(lib.signal.windows, name)(M, **kwargs)


@pytest.mark.parametrize("name,options", WINDOWS, ids=lambda v: str(v))
def test_values_and_dtypes_as_torch(name, options):
    for M, sym, dtype in itertools.product((0, 1, 2, 5, 8), (True, False), ("float32", "float64", None)):
        kwargs = dict(options, sym=sym, **({} if dtype is None else {"dtype": getattr(ember, dtype)}))
        ours = window(ember, name, M, **kwargs)
        kwargs.update({} if dtype is None else {"dtype": getattr(torch, dtype)})
        theirs = window(torch, name, M, **kwargs)
        assert str(ours.dtype) == str(theirs.dtype).replace("torch", "ember")
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-7, err_msg=f"{name} {kwargs}")


@pytest.mark.parametrize("sym", [True, False])
def test_exponential_with_a_center(sym):
    for M in (1, 2, 5, 8):
        kwargs = dict(center=1.5, tau=0.8, sym=sym, dtype="float64")
        call = (lambda lib: window(lib, "exponential", M, **dict(kwargs, dtype=lib.float64)))
        if sym:
            with pytest.raises(ValueError, match="Center must be None"):
                call(torch)
            with pytest.raises(ValueError, match="Center must be None"):
                call(ember)
        else:
            np.testing.assert_allclose(call(ember).numpy(), call(torch).numpy(), rtol=1e-12)


def test_general_cosine_of_one_point_ignores_its_coefficients_as_torch():
    for lib in (torch, ember):
        assert lib.signal.windows.general_cosine(1, a=[]).tolist() == [1.0]


def test_requires_grad_layout_and_device():
    w = ember.signal.windows.hann(4, requires_grad=True, device="cpu", layout=ember.strided)
    assert w.requires_grad and w.is_leaf
    assert torch.signal.windows.hann(4, requires_grad=True).requires_grad


ERRORS = [
    ("hann", dict(M=-1), ValueError, "non-negative window length"),
    ("hann", dict(M=3, dtype="int64"), ValueError, "expects float32 or float64"),
    ("hann", dict(M=3, layout="sparse_coo"), ValueError, "strided tensors only"),
    ("exponential", dict(M=3, tau=0.), ValueError, "Tau must be positive"),
    ("gaussian", dict(M=3, std=-1.), ValueError, "Standard deviation must be positive"),
    ("kaiser", dict(M=3, beta=-1.), ValueError, "beta must be non-negative"),
    ("general_cosine", dict(M=3, a=0.5), TypeError, "must be a list/tuple"),
    ("general_cosine", dict(M=3, a=[]), ValueError, "cannot be empty"),
]


@pytest.mark.parametrize("name,kwargs,error,message", ERRORS, ids=lambda v: str(v))
def test_errors_as_torch(name, kwargs, error, message):
    for lib in (torch, ember):
        given = {k: getattr(lib, v) if k in ("dtype", "layout") else v for k, v in kwargs.items()}
        with pytest.raises(error, match=message):
            getattr(lib.signal.windows, name)(given.pop("M"), **given)


def test_reached_from_ember():
    assert ember.signal.windows.__all__ == torch.signal.windows.__all__
