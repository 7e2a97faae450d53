"""ember._tensor_str must print tensors exactly as torch 2.13 does.

torch is used here only as an oracle: each case builds a NumPy array, prints it
with ``format_tensor`` and compares with ``repr(torch.from_numpy(array))``
(torch's "torch." dtype prefix swapped for "ember.").
"""

import contextlib
import importlib
import importlib.util
import math
import pathlib
import sys

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODULE_PATH = ROOT / "src" / "ember" / "_tensor_str.py"


def _load_tensor_str():
    """Import ember._tensor_str, falling back to loading the file on its own.

    The module is self-contained, so these tests should not break while the
    rest of the package is missing or half-written.
    """
    with contextlib.suppress(Exception):
        return importlib.import_module("ember._tensor_str")
    if (ROOT / "src" / "ember" / "__init__.py").exists():
        sys.path.insert(0, str(ROOT / "src"))
        with contextlib.suppress(Exception):
            return importlib.import_module("ember._tensor_str")
        sys.path.remove(str(ROOT / "src"))
        for name in [n for n in sys.modules if n == "ember" or n.startswith("ember.")]:
            del sys.modules[name]
    name = "_ember_tensor_str_standalone"
    spec = importlib.util.spec_from_file_location(name, MODULE_PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look the module up while building classes
    spec.loader.exec_module(module)
    return module


tensor_str = _load_tensor_str()

ALL_DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.bool_]
FLOAT_DTYPES = [np.float16, np.float32, np.float64]
NAN, INF = float("nan"), float("inf")


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def ember_name(dtype) -> str:
    return "ember." + np.dtype(dtype).name


def oracle_tensor(array: np.ndarray) -> torch.Tensor:
    # torch.from_numpy rejects negative strides; a copy has the same values.
    return torch.from_numpy(array.copy())


def torch_text(t: torch.Tensor) -> str:
    return repr(t).replace("torch.", "ember.")


def torch_trailing(t: torch.Tensor) -> list:
    if t.grad_fn is not None:
        return [f"grad_fn=<{type(t.grad_fn).__name__}>"]
    return ["requires_grad=True"] if t.requires_grad else []


def ember_text(array: np.ndarray, trailing=(), default="ember.float32") -> str:
    return tensor_str.format_tensor(
        array, dtype_name=ember_name(array.dtype), default_dtype_name=default, trailing=trailing
    )


def assert_matches_torch(array: np.ndarray) -> None:
    assert ember_text(array) == torch_text(oracle_tensor(array))


def assert_tensor_matches(t: torch.Tensor) -> None:
    """Compare a torch tensor (possibly with autograd info) with ember's text for its values."""
    values = t.detach().numpy()
    assert ember_text(values, trailing=torch_trailing(t)) == torch_text(t)


def set_both(**options) -> None:
    torch.set_printoptions(**options)
    tensor_str.set_printoptions(**options)


def torch_printoptions() -> dict:
    return torch._tensor_str.get_printoptions()


@pytest.fixture(autouse=True)
def restore_print_options():
    yield
    set_both(profile="default")
    torch.set_default_dtype(torch.float32)


def arr(values, dtype=np.float32) -> np.ndarray:
    """Build an array of ``dtype``, rounding float literals the way a cast would (overflow gives inf)."""
    exact_dtype = np.float64 if np.dtype(dtype).kind == "f" else dtype
    with np.errstate(over="ignore"):
        return np.array(values, dtype=exact_dtype).astype(dtype)


# --------------------------------------------------------------------------
# Hand-picked cases
# --------------------------------------------------------------------------

rng = np.random.default_rng(1234)

CASES = {
    # Seeds from the spec.
    "seed_2d_float64": arr([[3, 4, 5], [9, 14, 19]], np.float64),
    "seed_single": arr([2.0]),
    "seed_scalar_float64": arr(7.3891, np.float64),
    # Integer-valued floats and zeros.
    "int_valued": arr([2.0, 0.0, -3.0]),
    "all_zero": arr([0.0, 0.0]),
    "negative_zero": arr([-0.0, 2.0]),
    "only_negative_zero": arr([-0.0, 0.0]),
    "negative_zero_fixed": arr([-0.0, 1.5]),
    "negative_zero_sci": arr([-0.0, 1e-7]),
    "int_valued_wide": arr([1.0, -1000.0, 12.0]),
    # Fixed notation and rounding at precision 4.
    "fixed": arr([1.5, -2.25, 3.125]),
    "fixed_tenths": arr([0.1, 0.2, 0.3]),
    "fixed_rounding": arr([0.00015, 0.00025, 1.0], np.float64),
    "fixed_halfway": arr([0.12345, 2.71828, 1.00005], np.float64),
    "fixed_negative_widths": arr([-1.5, 100.0]),
    # Scientific notation triggers and their boundaries.
    "tiny_and_one": arr([1e-5, 1.0]),
    "min_exactly_1e-4_float64": arr([1e-4, 1.0], np.float64),
    "min_about_1e-4_float32": arr([1e-4, 1.0]),
    "ratio_exactly_1000": arr([1000.0, 1.0]),
    "ratio_just_over_1000": arr([1001.0, 1.0]),
    "ratio_fraction_over_1000": arr([1000.5, 1.0], np.float64),
    "ratio_non_integer_1000": arr([999.5, 1.0], np.float64),
    "exactly_1e8": arr([1e8]),
    "exactly_1e8_with_1e6": arr([1e8, 1e6]),
    "just_over_1e8_float64": arr([1e8 + 1], np.float64),
    "just_over_1e8_float32": arr([1e8 + 8]),
    "just_under_1e8": arr([99999999.0, 1e6], np.float64),
    "fraction_over_1e8": arr([1.5e8 + 0.5], np.float64),
    "large_values": arr([1e38, -3.4e38]),
    "huge_float64": arr([1e300, -1e300, 1.0], np.float64),
    "overflowing_ratio": arr([1e308, 1e-308], np.float64),
    "float32_extremes": arr([3.4e38, 1e-38]),
    "denormal_float32": arr([1e-45, 0.0]),
    "denormal_float64": arr([5e-324], np.float64),
    "mixed_magnitudes": arr([1e-3, 12.5, 345.678, -0.5], np.float64),
    "mixed_sci": arr([123456.789, 1e-3, -7.0], np.float64),
    "integral_but_tiny_sign": arr([-1.0, 1e5]),
    # nan and inf.
    "nan_alone": arr([NAN]),
    "inf_pair": arr([INF, -INF]),
    "nan_and_int": arr([1.0, NAN]),
    "zero_and_nan": arr([0.0, NAN]),
    "nan_padded": arr([NAN, 1.5, -200.0]),
    "inf_and_tiny": arr([INF, 1e-5, NAN]),
    "nan_wide_ints": arr([NAN, 12345.0, -INF]),
    "nan_scalar": arr(NAN),
    "neg_inf_scalar": arr(-INF, np.float64),
    # 0-d tensors.
    "scalar_float": arr(3.5),
    "scalar_int_valued": arr(2.0),
    "scalar_negative_zero": arr(-0.0),
    "scalar_sci": arr(1e-5),
    "scalar_large": arr(1e10, np.float64),
    "scalar_int64": arr(5, np.int64),
    "scalar_int32": arr(-5, np.int32),
    "scalar_uint8": arr(200, np.uint8),
    "scalar_bool": arr(True, np.bool_),
    "scalar_float16": arr(0.1, np.float16),
    # Integers and bools.
    "int8_extremes": arr([-128, 0, 127], np.int8),
    "uint8": arr([0, 7, 255], np.uint8),
    "int16": arr([[-32768, 1], [2, 32767]], np.int16),
    "int32": arr([-(2**31), 0, 2**31 - 1], np.int32),
    "int64_extremes": arr([-(2**63), 2**63 - 1], np.int64),
    "int64_small": arr([1, 2, 3], np.int64),
    "bool_pair": arr([True, False], np.bool_),
    "bool_all_true": arr([True, True], np.bool_),
    "bool_2d": arr([[True, False, True], [False, False, True]], np.bool_),
    # Empty tensors.
    "empty_1d": np.zeros(0, np.float32),
    "empty_rows": np.zeros((0, 3), np.float32),
    "empty_cols": np.zeros((3, 0), np.float32),
    "empty_3d_float64": np.zeros((2, 0, 4), np.float64),
    "empty_int64": np.zeros(0, np.int64),
    "empty_bool": np.zeros(0, np.bool_),
    "empty_float64": np.zeros(0, np.float64),
    "empty_2d_int8": np.zeros((0, 0), np.int8),
    "empty_float16_4d": np.zeros((1, 2, 0, 1), np.float16),
    # Summarised tensors (more than 1000 elements).
    "summary_1001_ints": np.arange(1001, dtype=np.int64),
    "summary_floats": np.arange(2000, dtype=np.float32),
    "summary_square": np.arange(10000, dtype=np.int64).reshape(100, 100),
    "summary_wide": np.arange(1200, dtype=np.int64).reshape(2, 600),
    "summary_deep": np.arange(1200, dtype=np.int64).reshape(300, 2, 2),
    "summary_cube": rng.standard_normal((11, 11, 11)).astype(np.float32),
    "summary_4d": rng.standard_normal((8, 8, 8, 8)),
    "summary_hidden_extremes": np.concatenate([np.ones(500), [1e-9, 1e12], np.ones(500)]).astype(np.float32),
    "summary_random_1001": rng.standard_normal(1001).astype(np.float32),
    "summary_bool": rng.random((40, 40)) > 0.5,
    # Long rows that wrap at linewidth 80.
    "wrap_fixed": np.arange(30, dtype=np.float32) * 1.5,
    "wrap_sci": np.geomspace(1e-6, 1e6, 50).astype(np.float64),
    "wrap_ints": np.arange(100, dtype=np.int64) * 37,
    "wrap_2d": (np.arange(120, dtype=np.float32).reshape(3, 40) - 60) / 7,
    "wrap_bool": np.arange(30) % 3 == 0,
    "wrap_int8": np.arange(-64, 64, dtype=np.int8),
    # float16 (printed after widening to float32).
    "float16_fractions": arr([0.1, 0.2, 65504.0], np.float16),
    "float16_tiny": arr([1e-4, 1.0], np.float16),
    "float16_denormal": arr([6e-8, 1.0], np.float16),
    "float16_int_valued": arr([2048.0, 1.0, -3.0], np.float16),
    "float16_nan_inf": arr([NAN, INF, 0.5], np.float16),
    "float16_overflow_to_inf": arr([70000.0, -1.0], np.float16),
    # Non-contiguous views.
    "strided_rows_cols": (np.arange(24, dtype=np.float32).reshape(4, 6) / 4)[::2, 1::2],
    "transposed": np.arange(12, dtype=np.int32).reshape(3, 4).T,
    "reversed": np.arange(10, dtype=np.float64)[::-1] * 0.25,
    "column": np.arange(12, dtype=np.float32).reshape(4, 3)[:, 1],
    "broadcast": np.broadcast_to(np.array([1.5, -2.0], np.float32), (3, 2)),
    "fortran_order": np.asfortranarray(rng.standard_normal((3, 4))),
    # Higher dimensions.
    "3d_ints": np.arange(24, dtype=np.int64).reshape(2, 3, 4),
    "4d_ints": np.arange(16, dtype=np.int64).reshape(2, 2, 2, 2),
    "4d_random": rng.standard_normal((2, 2, 2, 3)).astype(np.float32),
    "5d_ones": np.ones((1, 2, 1, 2, 1), np.float64),
    "3d_singletons": arr([[[1.5]]]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_hand_picked_case_matches_torch(name):
    assert_matches_torch(CASES[name])


@pytest.mark.parametrize("name", ["seed_2d_float64", "scalar_int32", "empty_rows", "empty_float64", "summary_floats"])
@pytest.mark.parametrize("contents", ["", "X", "a" * 75, "a\n" + "b" * 78])
def test_contents_replace_values_and_keep_suffixes(name, contents):
    # torch's Tensor.__repr__(tensor_contents=...) shows the given text in place of the values.
    array = CASES[name]
    expected = oracle_tensor(array).__repr__(tensor_contents=contents).replace("torch.", "ember.")
    got = tensor_str.format_tensor(
        array, dtype_name=ember_name(array.dtype), default_dtype_name="ember.float32", contents=contents
    )
    assert got == expected


def test_docstring_example_matches_torch():
    array = np.array([[1.0, 2.5], [-3.0, 4.0]])
    t = torch.from_numpy(array).requires_grad_()
    assert ember_text(array, trailing=["requires_grad=True"]) == torch_text(t)


# --------------------------------------------------------------------------
# Trailing suffixes (grad_fn / requires_grad)
# --------------------------------------------------------------------------


class LinearFunction(torch.autograd.Function):
    """An autograd function whose long grad_fn name forces suffix wrapping."""

    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, grad):
        return grad


TRAILING_CASES = {
    "grad_fn_single": lambda: torch.tensor([1.0], requires_grad=True) * 2,
    "requires_grad": lambda: torch.tensor([[1.5, 2.0], [3.0, 4.0]], requires_grad=True),
    "requires_grad_float64": lambda: torch.tensor([1.5, 2.0], dtype=torch.float64, requires_grad=True),
    "scalar_grad_fn": lambda: torch.tensor(2.0, requires_grad=True).exp(),
    "seed_linear_float64": lambda: LinearFunction.apply(
        torch.tensor([[3.0, 4, 5], [9, 14, 19]], dtype=torch.float64, requires_grad=True)
    ),
    "seed_linear_float32": lambda: LinearFunction.apply(torch.tensor([[3.0, 4, 5], [9, 14, 19]], requires_grad=True)),
    "wide_rows_wrap_suffix": lambda: LinearFunction.apply(torch.arange(20.0, requires_grad=True).reshape(2, 10)),
    "wide_rows_wrap_both": lambda: LinearFunction.apply(
        torch.arange(20.0, dtype=torch.float64, requires_grad=True).reshape(2, 10)
    ),
    "long_vector": lambda: torch.linspace(-3, 3, 40, requires_grad=True) * 1.5,
    "summarised": lambda: torch.arange(3000.0, requires_grad=True) / 7,
    "float16": lambda: torch.tensor([0.5, 1.25], dtype=torch.float16, requires_grad=True) + 1,
    "empty_requires_grad": lambda: torch.zeros(0, 3, dtype=torch.float64, requires_grad=True),
}


@pytest.mark.parametrize("name", list(TRAILING_CASES))
def test_trailing_suffixes_match_torch(name):
    assert_tensor_matches(TRAILING_CASES[name]())


@pytest.mark.parametrize("linewidth", [20, 40, 53, 54, 55, 56, 60, 81])
def test_suffix_wrapping_at_various_linewidths(linewidth):
    set_both(linewidth=linewidth)
    t = LinearFunction.apply(torch.tensor([[3.0, 4, 5], [9, 14, 19]], dtype=torch.float64, requires_grad=True))
    assert_tensor_matches(t)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_default_dtype_float64(dtype):
    torch.set_default_dtype(torch.float64)
    for t in [torch.tensor([1.5, 2.0], dtype=dtype), torch.zeros(0, dtype=dtype), torch.zeros(2, 0, dtype=dtype)]:
        values = t.numpy()
        assert ember_text(values, default="ember.float64") == torch_text(t)


# --------------------------------------------------------------------------
# Print options
# --------------------------------------------------------------------------

OPTION_CASES = [
    dict(profile="short"),
    dict(profile="full"),
    dict(profile="short", precision=6),
    dict(precision=0),
    dict(precision=2),
    dict(precision=8),
    dict(linewidth=40),
    dict(linewidth=5),
    dict(linewidth=120),
    dict(threshold=5),
    dict(threshold=0),
    dict(edgeitems=1, threshold=10),
    dict(edgeitems=5, threshold=10),
    dict(edgeitems=0),
    dict(edgeitems=0, threshold=3),
    dict(sci_mode=True),
    dict(sci_mode=False),
    dict(sci_mode=True, precision=1),
    dict(sci_mode=False, precision=2, linewidth=50),
]

OPTION_ARRAYS = [
    "seed_2d_float64", "seed_scalar_float64", "int_valued", "all_zero", "fixed", "tiny_and_one",
    "ratio_just_over_1000", "just_over_1e8_float64", "nan_padded", "inf_pair", "negative_zero_sci",
    "scalar_negative_zero", "scalar_sci", "scalar_int64", "int8_extremes", "bool_pair", "empty_rows",
    "empty_1d", "empty_int64", "summary_floats", "summary_square", "summary_deep", "wrap_fixed",
    "wrap_sci", "3d_ints", "float16_tiny", "reversed", "mixed_sci", "huge_float64",
]  # fmt: skip


@pytest.mark.parametrize("options", OPTION_CASES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_print_options_match_torch(options):
    set_both(**options)
    assert tensor_str.get_printoptions() == torch_printoptions()
    for name in OPTION_ARRAYS:
        assert ember_text(CASES[name]) == torch_text(oracle_tensor(CASES[name])), name


OPTION_SEQUENCES = [
    [dict(sci_mode=True), dict(precision=3)],  # sci_mode resets to None when not given
    [dict(linewidth=100), dict(profile="default")],
    [dict(linewidth=100), dict()],
    [dict(profile="full"), dict(edgeitems=1)],
    [dict(profile="short", precision=6), dict(profile="no-such-profile")],
    [dict(threshold=7, edgeitems=1, linewidth=33, precision=5, sci_mode=False)],
]


@pytest.mark.parametrize("calls", OPTION_SEQUENCES)
def test_set_printoptions_semantics_match_torch(calls):
    for options in calls:
        set_both(**options)
        assert tensor_str.get_printoptions() == torch_printoptions()


def test_get_printoptions_defaults_and_copy():
    options = tensor_str.get_printoptions()
    assert options == {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
    options["precision"] = 9  # a copy: changing it must not change printing
    assert tensor_str.get_printoptions()["precision"] == 4


def test_printoptions_context_restores():
    with tensor_str.printoptions(precision=2, sci_mode=True):
        assert tensor_str.get_printoptions()["precision"] == 2
        assert ember_text(arr([1.5])) == "tensor([1.50e+00])"
    assert tensor_str.get_printoptions()["sci_mode"] is None
    assert ember_text(arr([1.5])) == "tensor([1.5000])"


# --------------------------------------------------------------------------
# Property tests
# --------------------------------------------------------------------------

SPECIAL_FLOATS = [0.0, -0.0, NAN, INF, -INF, 1e-4, 1e-5, 0.5, 1000.0, 1001.0, 1e8, 1e8 + 8, 1e-38, 3e38]
MAX_SIDE_BY_NDIM = {0: 1, 1: 40, 2: 12, 3: 6, 4: 4}


def float_elements():
    scaled = st.tuples(st.integers(-999, 999), st.integers(-12, 12)).map(lambda p: p[0] * 10.0 ** p[1])
    return st.one_of(
        st.floats(width=32),
        st.integers(-3000, 3000).map(float),
        scaled,
        st.sampled_from(SPECIAL_FLOATS),
    )


def elements_for(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return float_elements()
    if dtype.kind == "b":
        return st.booleans()
    info = np.iinfo(dtype)
    return st.one_of(st.integers(-20, 20), st.integers(int(info.min), int(info.max))).map(
        lambda v: min(max(v, int(info.min)), int(info.max))
    )


@st.composite
def small_arrays(draw, dtypes=ALL_DTYPES):
    dtype = draw(st.sampled_from(dtypes))
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, MAX_SIDE_BY_NDIM[ndim]), min_size=ndim, max_size=ndim)))
    count = math.prod(shape)
    values = draw(st.lists(elements_for(dtype), min_size=count, max_size=count))
    array = arr(values, dtype).reshape(shape)
    if ndim >= 2 and draw(st.booleans()):
        array = array.T  # non-contiguous view
    return array


@st.composite
def big_arrays(draw):
    """Arrays just above the summary threshold, filled by a seeded NumPy generator for speed."""
    dtype = draw(st.sampled_from(ALL_DTYPES))
    shape = draw(st.sampled_from([(1001,), (3000,), (40, 30), (7, 150), (2, 700), (11, 10, 10), (4, 5, 6, 9)]))
    seed = draw(st.integers(0, 2**32 - 1))
    style = draw(st.sampled_from(["normal", "integers", "spread", "with_specials"]))
    gen = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return gen.random(shape) > 0.5
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return gen.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    values = {
        "normal": lambda: gen.standard_normal(shape),
        "integers": lambda: gen.integers(-500, 500, size=shape).astype(np.float64),
        "spread": lambda: gen.standard_normal(shape) * 10.0 ** gen.integers(-8, 9, size=shape),
        "with_specials": lambda: np.where(gen.random(shape) < 0.3, np.nan, gen.standard_normal(shape)),
    }[style]()
    with np.errstate(over="ignore"):
        return values.astype(dtype)


FAST = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))


@FAST
@given(small_arrays())
def test_random_small_arrays_match_torch(array):
    assert_matches_torch(array)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(big_arrays())
def test_random_summarised_arrays_match_torch(array):
    assert_matches_torch(array)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    small_arrays(),
    st.fixed_dictionaries(
        {},
        optional={
            "precision": st.integers(0, 8),
            "threshold": st.sampled_from([0, 3, 10, 50, 1000, math.inf]),
            "edgeitems": st.integers(0, 4),
            "linewidth": st.integers(10, 150),
            "sci_mode": st.sampled_from([None, True, False]),
            "profile": st.sampled_from(["default", "short", "full"]),
        },
    ),
)
def test_random_print_options_match_torch(array, options):
    set_both(**options)
    try:
        assert_matches_torch(array)
    finally:
        set_both(profile="default")


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(small_arrays(dtypes=FLOAT_DTYPES), st.booleans(), st.integers(20, 100))
def test_random_autograd_suffixes_match_torch(array, through_function, linewidth):
    set_both(linewidth=linewidth)
    try:
        t = oracle_tensor(array).requires_grad_()
        assert_tensor_matches(LinearFunction.apply(t) if through_function else t)
    finally:
        set_both(profile="default")


# --------------------------------------------------------------------------
# Tensor.__repr__ end to end: the same program under torch and under ember
# --------------------------------------------------------------------------


def ember_module():
    """The ember package (these tests need all of it, not just _tensor_str)."""
    return pytest.importorskip("ember")


def assert_same_text(program) -> None:
    """``program(lib)`` returns text; torch's, with "torch." read as "ember.", must equal ember's."""
    expected = program(torch).replace("torch.", "ember.")
    assert program(ember_module()) == expected


def subclass_of(lib, name="MyTensor"):
    return type(name, (lib.Tensor,), {})


def _grad_repr(lib) -> str:
    x = lib.ones(2, 3, requires_grad=True)
    (x * 3).sum().backward()
    return repr(x.grad)


REPR_PROGRAMS = {
    # tensor_contents replaces the values and keeps every suffix.
    "contents": lambda lib: lib.tensor([1.0, 2.0]).__repr__(tensor_contents="hello"),
    "contents_grad_fn": lambda lib: (lib.tensor([1.0, 2.0], requires_grad=True) * 2).__repr__(tensor_contents="[1, 2]"),
    "contents_dtype_and_leaf": lambda lib: lib.ones(2, dtype=lib.float64, requires_grad=True).__repr__(
        tensor_contents="X"
    ),
    "contents_empty": lambda lib: lib.zeros(0, 3).__repr__(tensor_contents="X"),
    "contents_empty_float64": lambda lib: lib.zeros(0, dtype=lib.float64).__repr__(tensor_contents="X"),
    "contents_blank": lambda lib: lib.ones(2, 3, dtype=lib.int32).__repr__(tensor_contents=""),
    "contents_wraps_suffix": lambda lib: lib.ones(2, 3, dtype=lib.int32).__repr__(tensor_contents="a" * 75),
    "contents_multiline": lambda lib: lib.ones(2, dtype=lib.int32).__repr__(tensor_contents="a\n" + "b" * 78),
    "contents_subclass": lambda lib: lib.ones(2).as_subclass(subclass_of(lib)).__repr__(tensor_contents="X"),
    # Plain repr and str of tensors made by ember itself.
    "repr_and_str": lambda lib: repr(lib.tensor([[1.5, 2.0], [3.0, 4.0]])) + str(lib.tensor([1, 2])),
    "scalar_leaf": lambda lib: repr(lib.tensor(2.5, requires_grad=True)),
    "scalar_grad_fn": lambda lib: str(lib.tensor(2.5, requires_grad=True).exp()),
    "empty_grad_fn": lambda lib: repr(lib.zeros(0, 3, requires_grad=True) * 2),
    "transposed_view": lambda lib: repr(lib.arange(24.0).view(2, 3, 4).permute(2, 0, 1)),
    "sliced_view": lambda lib: repr(lib.arange(10, dtype=lib.int32)[::3]),
    "expanded_summary": lambda lib: repr(lib.tensor([1.5, 2.0]).expand(1000, 2)),
    "parameter": lambda lib: repr(lib.nn.Parameter(lib.arange(40.0, dtype=lib.float64).view(2, 20))),
    "parameter_str": lambda lib: str(lib.nn.Parameter(lib.ones(2))),
    "parameter_scalar": lambda lib: repr(lib.nn.Parameter(lib.tensor(3.0))),
    "parameter_int_no_grad": lambda lib: repr(lib.nn.Parameter(lib.arange(3), requires_grad=False)),
    "parameter_empty": lambda lib: repr(lib.nn.Parameter(lib.zeros(0, 2))),
    "subclass_3d": lambda lib: repr(lib.arange(8.0).view(2, 2, 2).as_subclass(subclass_of(lib, "LongSubclassName"))),
    "subclass_empty": lambda lib: repr(lib.zeros(0, 2).as_subclass(subclass_of(lib))),
    "subclass_summary": lambda lib: repr(lib.arange(2000.0).view(2, 1000).as_subclass(subclass_of(lib))),
    "list_of_tensors": lambda lib: repr([lib.tensor(1.0), lib.tensor([1, 2]), lib.tensor([True])]),
    "gradient": lambda lib: _grad_repr(lib),
}


@pytest.mark.parametrize("name", list(REPR_PROGRAMS))
def test_tensor_repr_matches_torch(name):
    assert_same_text(REPR_PROGRAMS[name])


def test_tensor_repr_under_default_float64_matches_torch():
    def program(lib):
        lib.set_default_dtype(lib.float64)
        try:
            return repr([lib.tensor([1.5]), lib.tensor([1.5], dtype=lib.float32), lib.zeros(0, 2), lib.ones(1) * 2])
        finally:
            lib.set_default_dtype(lib.float32)

    assert_same_text(program)


def _build(lib, array: np.ndarray, view: str, autograd: str):
    t = lib.from_numpy(array.copy())
    if view == "transposed" and t.dim() >= 2:
        t = t.transpose(0, 1)
    elif view == "sliced" and t.dim() >= 1:
        t = t[::2]
    if not t.dtype.is_floating_point:
        return lib.nn.Parameter(t, requires_grad=False) if autograd == "parameter" else t
    if autograd == "leaf":
        return t.detach().requires_grad_()
    if autograd == "grad_fn":
        return t.detach().requires_grad_() * 1
    return lib.nn.Parameter(t.detach().contiguous()) if autograd == "parameter" else t


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    small_arrays(),
    st.sampled_from(["none", "transposed", "sliced"]),
    st.sampled_from(["none", "leaf", "grad_fn", "parameter"]),
    st.integers(20, 120),
    st.booleans(),
)
def test_random_tensor_repr_and_str_match_torch(array, view, autograd, linewidth, with_contents):
    set_both(linewidth=linewidth)
    contents = {"tensor_contents": "[...]"} if with_contents and autograd != "parameter" else {}
    try:
        assert_same_text(lambda lib: _build(lib, array, view, autograd).__repr__(**contents))
        assert_same_text(lambda lib: str(_build(lib, array, view, autograd)))
    finally:
        set_both(profile="default")
