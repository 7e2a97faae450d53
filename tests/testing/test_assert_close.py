"""ember.testing.assert_close and make_tensor, against torch.testing."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
import torch

import ember
from twins import LIBS, both


def _message(lib, actual, expected, **options):
    with pytest.raises((AssertionError, TypeError, ValueError)) as info:
        lib.testing.assert_close(actual, expected, **options)
    return type(info.value).__name__, str(info.value).replace(lib.__name__ + ".", "LIB.")


def _same_failure(make, **options):
    """Both libraries fail on ``make(lib)`` with the same error type and message (library names aside)."""
    torch_side, ember_side = [_message(lib, *make(lib), **options) for lib in LIBS]
    assert ember_side == torch_side


@pytest.mark.parametrize("make", [
    lambda lib: (lib.tensor([[1.0, 2.0], [3.0, 4.0]]), lib.tensor([[1.0, 2.5], [3.0, 4.1]])),
    lambda lib: (lib.tensor([1, 2]), lib.tensor([1, 3])),
    lambda lib: (lib.tensor([True]), lib.tensor([False])),
    lambda lib: (lib.tensor(1.0), lib.tensor(2.0)),
    lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 0.0])),
    lambda lib: (lib.tensor([float("nan")]), lib.tensor([float("nan")])),
    lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0], dtype=lib.float64)),
    lambda lib: (lib.ones(2, 2), lib.ones(4)),
    lambda lib: ([lib.ones(2), {"x": lib.ones(2)}], [lib.ones(2), {"x": lib.zeros(2)}]),
    lambda lib: ([lib.ones(1)], [lib.ones(1), lib.ones(1)]),
    lambda lib: ({"x": lib.ones(1)}, {"y": lib.ones(1)}),
    lambda lib: (1.0, 1.1),
    lambda lib: (1, 1.0),
    lambda lib: (lib.ones(2), np.ones(2, np.float32)),
    lambda lib: (lib.ones(2), [1.0, 1.0]),
    lambda lib: (np.array([1.0, 2.0]), np.array([1.0, 2.1])),
    lambda lib: (lib.tensor([1.0, 2.0]).half(), lib.tensor([1.0, 2.0]).double() + 0.01),
])
def test_failure_messages_match_torch(make):
    options = {"check_dtype": False} if "half" in repr(make(ember)[0]) else {}
    _same_failure(make, **options)


def test_explicit_tolerances_and_custom_messages():
    make = lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.01]))  # noqa: E731
    _same_failure(make, rtol=0.0, atol=1e-3)
    _same_failure(make, msg="custom text")
    _same_failure(make, msg=lambda m: "wrapped: " + m[:20])
    _same_failure(make, rtol=1e-3)  # only one of the two: ValueError
    for lib in LIBS:
        lib.testing.assert_close(*make(lib), rtol=0.0, atol=0.02)
        lib.testing.assert_close(lib.tensor([float("nan"), 1.0]), lib.tensor([float("nan"), 1.0]), equal_nan=True)
        lib.testing.assert_close(lib.ones(2), lib.ones(2).double(), check_dtype=False)


def _subclass(lib, values):
    class Marked(lib.Tensor):
        pass

    return lib.tensor(values).as_subclass(Marked)


INF = math.inf


@pytest.mark.parametrize("make, options", [
    # an infinity is close to itself only, however wide the tolerances
    (lambda lib: (INF, -INF), {}),
    (lambda lib: (1.0, INF), {}),
    (lambda lib: (lib.tensor([1.0]), lib.tensor([INF])), {}),
    (lambda lib: (lib.tensor(1.0), lib.tensor(INF)), {}),
    (lambda lib: (lib.tensor([1.0, INF]), lib.tensor([INF, 1.0])), {"rtol": 1.0, "atol": 1.0}),
    (lambda lib: (lib.tensor([complex(1, 0)]), lib.tensor([complex(INF, 0)])), {}),
    (lambda lib: (lib.tensor([INF, 2.0]), lib.tensor([-INF, 2.0])), {"check_dtype": False}),
    # None is compared with None
    (lambda lib: (lib.tensor([1.0]), None), {}),
    (lambda lib: (None, 1), {}),
    (lambda lib: ({"a": None}, {"a": lib.tensor([1.0])}), {}),
    # booleans, Python's and NumPy's alike
    (lambda lib: (True, False), {}),
    (lambda lib: (np.bool_(True), np.bool_(False)), {"msg": "custom"}),
    # subclasses refused on request
    (lambda lib: (_subclass(lib, [1.0]), lib.tensor([1.0])), {"allow_subclasses": False}),
    (lambda lib: (lib.tensor([1.0]), _subclass(lib, [1.0])), {"allow_subclasses": False}),
    # numbers of two types compared by value when dtypes are not checked
    (lambda lib: (1.5, 1), {"check_dtype": False}),
    # the differences reported in the dtype torch promotes to (int64 with float32: float32) ...
    (lambda lib: (lib.tensor([1]), lib.tensor([1.5])), {"check_dtype": False}),
    (lambda lib: (lib.tensor([3]), lib.tensor([7.0], dtype=lib.float16)), {"check_dtype": False}),
    # ... and for 0-d tensors as Python numbers, in double precision
    (lambda lib: (lib.tensor(1), lib.tensor(1.5)), {"check_dtype": False}),
    (lambda lib: (lib.tensor(1.1), lib.tensor(3.3)), {}),
    (lambda lib: (lib.tensor(1.1, dtype=lib.float16), lib.tensor(3.3, dtype=lib.float16)), {}),
    (lambda lib: (lib.tensor(1.1, dtype=lib.bfloat16), lib.tensor(3.3, dtype=lib.bfloat16)), {}),
    (lambda lib: (lib.tensor(3), lib.tensor(7)), {}),
    (lambda lib: (lib.tensor(1.1 + 2j), lib.tensor(3.3 - 1j)), {}),
    (lambda lib: (lib.tensor(True), lib.tensor(False)), {}),
    (lambda lib: (lib.tensor(1, dtype=lib.int8), lib.tensor(3, dtype=lib.float16)), {"check_dtype": False}),
])
def test_edge_failures_match_torch(make, options):
    _same_failure(make, **options)


def test_edge_passes_match_torch():
    for lib in LIBS:
        lib.testing.assert_close(None, None)
        lib.testing.assert_close([None, lib.ones(1)], [None, lib.ones(1)])
        lib.testing.assert_close(np.bool_(True), True)
        lib.testing.assert_close(lib.tensor([INF, -INF]), lib.tensor([INF, -INF]))
        lib.testing.assert_close(_subclass(lib, [1.0]), lib.tensor([1.0]))
        lib.testing.assert_close(1.0, 1, check_dtype=False)


@given(st.sampled_from(["float16", "float32", "float64"]), st.floats(-6, -1), st.integers(1, 5))
def test_default_tolerances_per_dtype_decide_as_torchs(dtype, exponent, size):
    def verdict(lib):
        base = lib.linspace(1.0, 2.0, size, dtype=getattr(lib, dtype))
        nudged = base + 10.0 ** exponent
        try:
            lib.testing.assert_close(nudged, base)
            return True
        except AssertionError:
            return False

    both(verdict)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool", "float16", "int8"])
def test_make_tensor_ranges_and_layout(dtype):
    d = getattr(ember, dtype)
    x = ember.testing.make_tensor(200, dtype=d, device="cpu")
    assert x.dtype is d and x.shape == (200,)
    if dtype.startswith("float"):
        assert -9 <= float(x.min()) and float(x.max()) <= 9
    elif dtype != "bool":
        assert float(x.min()) >= (0 if dtype == "uint8" else -9) and float(x.max()) < 10
    y = ember.testing.make_tensor((3, 4), dtype=d, device="cpu", low=1, high=3, noncontiguous=True,
                                  exclude_zero=True)
    assert not y.is_contiguous() and y.shape == (3, 4) and bool((y != 0).all())


def test_make_tensor_requires_grad_and_errors():
    x = ember.testing.make_tensor(2, 3, dtype=ember.float64, device="cpu", requires_grad=True)
    assert x.requires_grad and x.is_leaf
    for lib in LIBS:
        with pytest.raises(ValueError, match="`low` must be less than `high`, but got 3 >= 1"):
            lib.testing.make_tensor(2, dtype=lib.float32, device="cpu", low=3, high=1)
        with pytest.raises(ValueError, match="`low` and `high` cannot be NaN"):
            lib.testing.make_tensor(2, dtype=lib.float32, device="cpu", low=math.nan)
    with pytest.warns(FutureWarning, match="low==high"):
        assert float(ember.testing.make_tensor((), dtype=ember.float32, device="cpu", low=2, high=2)) == 2


def _make_tensor_failure(lib, dtype: str, **options) -> tuple:
    with pytest.raises(ValueError) as info:
        lib.testing.make_tensor(3, dtype=getattr(lib, dtype), device="cpu", **options)
    return str(info.value).replace(lib.__name__ + ".", "LIB.")


@pytest.mark.parametrize("dtype, options", [
    ("bool", {"low": 2, "high": 5}),  # outside what the dtype holds: refused, not clamped
    ("bool", {"low": 5, "high": 2}),
    ("bool", {"low": 3, "high": 3}),
    ("bool", {"low": math.nan}),
    ("uint8", {"low": 300, "high": 400}),
    ("int8", {"low": -1000, "high": -500}),
    ("float16", {"low": 1e6, "high": 2e6}),
    ("float16", {"low": 65504.0, "high": 1e6}),
    ("float32", {"low": math.nan}),  # the default high reads 9, as in torch
    ("int64", {"requires_grad": True}),
    ("bool", {"requires_grad": True}),
])
def test_make_tensor_errors_match_torch(dtype, options):
    assert _make_tensor_failure(ember, dtype, **options) == _make_tensor_failure(torch, dtype, **options)


@pytest.mark.parametrize("dtype", ["bool", "complex64", "complex128", "float32", "int8"])
def test_make_tensor_0d_noncontiguous_and_complex_requires_grad_as_torch(dtype):
    def program(lib):
        d = getattr(lib, dtype)
        x = lib.testing.make_tensor((), dtype=d, device="cpu", noncontiguous=True)
        grads = d.is_floating_point or d.is_complex
        y = lib.testing.make_tensor((2,), dtype=d, device="cpu", requires_grad=grads)
        return str(x.dtype), x.shape == (), y.requires_grad, y.is_leaf

    assert program(ember) == tuple(v.replace("torch.", "ember.") if isinstance(v, str) else v for v in program(torch))


def test_make_tensor_clamps_bounds_that_overlap_the_dtype_as_torch():
    for lib in LIBS:
        assert bool(lib.testing.make_tensor(50, dtype=lib.bool, device="cpu", low=-1, high=1).logical_not().all())
        x = lib.testing.make_tensor(500, dtype=lib.int8, device="cpu", low=126, high=math.inf)
        assert set(x.tolist()) == {126, 127}  # the dtype's largest value included


@pytest.mark.parametrize("dtype, difference", [("float32", 5e-5), ("float32", 5e-4), ("float16", 5e-4),
                                               ("float64", 5e-6), ("float64", 5e-5)])
def test_deprecated_assert_allclose_keeps_its_own_default_tolerances(dtype, difference):
    """Looser than assert_close's: float32 to 1e-4 relative, float64 to 1e-5, half to 1e-3 absolute."""
    outcomes = []
    for lib in LIBS:
        actual = lib.tensor([1.0 + difference], dtype=getattr(lib, dtype))
        with pytest.warns(FutureWarning):
            try:
                lib.testing.assert_allclose(actual, [1.0])
                outcomes.append("close")
            except AssertionError as error:
                outcomes.append(str(error).splitlines()[-1].replace("torch", "ember"))
    assert outcomes[0] == outcomes[1]
