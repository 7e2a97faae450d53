"""The ``out=`` argument, against PyTorch 2.13: the result lands in the given tensor, or a clear error."""
import warnings

import pytest
import torch

import ember
from twins import both, both_raise, leaf

BINARY = ["add", "sub", "mul", "div", "pow", "eq", "ne", "lt", "le", "gt", "ge"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_ops_write_into_out_and_return_it(name):
    def program(lib):
        out = lib.zeros(2, 3, dtype=lib.float64)
        result = getattr(lib, name)(lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), lib.tensor([2.0, 1.0, 3.0]), out=out)
        return out, result is out, out.dtype == lib.float64

    both(program)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
def test_creation_functions_fill_out_and_keep_its_dtype(name):
    def program(lib):
        out = lib.full((2, 3), 7, dtype=lib.int64)
        result = getattr(lib, name)(2, 3, out=out)
        values = out if name != "empty" else out.shape  # torch's empty leaves whatever was there; ember's writes zeros
        return values, result is out, out.dtype == lib.int64

    both(program, prepare=lambda r: (tuple(r[0]) if name == "empty" else r[0].numpy(), r[1], r[2]))


def test_out_of_another_shape_is_resized_with_a_warning_if_it_had_elements():
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            empty = lib.zeros(0)
            lib.add(lib.ones(2), 1, out=empty)
            silent = len(caught)
            full = lib.zeros(3)
            lib.add(lib.ones(2), 1, out=full)
        return empty, full, silent, "was resized since it had shape [3]" in str(caught[-1].message)

    both(program)


FACTORIES_INTO_OUT = {
    "zeros": lambda lib, out: lib.zeros(2, 2, out=out), "ones": lambda lib, out: lib.ones(3, out=out),
    "full": lambda lib, out: lib.full((2,), 3.0, out=out), "eye": lambda lib, out: lib.eye(2, 3, out=out),
    "linspace": lambda lib, out: lib.linspace(0, 1, 3, out=out), "logspace": lambda lib, out: lib.logspace(0, 1, 3, out=out),
    "randn": lambda lib, out: lib.randn(2, out=out).shape, "randint": lambda lib, out: lib.randint(0, 3, (4,), out=out).shape,
    "normal": lambda lib, out: lib.normal(0.0, 1.0, (2,), out=out).shape,
    "arange": lambda lib, out: lib.arange(5, out=out), "arange with an empty out": lambda lib, out: lib.arange(5, out=lib.empty(0)),
}


@pytest.mark.parametrize("name", sorted(FACTORIES_INTO_OUT))
def test_factories_resize_out_quietly_and_arange_says_so_as_torch(name):
    """torch's factories resize an out of another shape without the deprecation warning of the ops; arange warns
    in its own words."""
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = FACTORIES_INTO_OUT[name](lib, lib.empty(7))
        return result, [str(w.message).split(" (Triggered internally")[0] for w in caught]

    both(program)


def test_div_with_rounding_mode_and_out():
    def program(lib):
        out = lib.zeros(2, dtype=lib.int64)
        lib.div(lib.tensor([-7, 7]), 2, rounding_mode="floor", out=out)
        return out

    both(program)


def test_out_with_an_input_that_requires_grad_is_an_error():
    both_raise(lambda lib: lib.mul(leaf(lib, [1.0]), 2, out=lib.zeros(1, dtype=lib.float64)), RuntimeError,
               r"mul\(\): functions with out=... arguments don't support automatic differentiation")


def test_out_under_no_grad_is_fine():
    def program(lib):
        out = lib.zeros(1, dtype=lib.float64)
        with lib.no_grad():
            lib.mul(leaf(lib, [1.5]), 2, out=out)
        return out, out.requires_grad

    both(program)


def test_a_result_that_cannot_be_cast_to_outs_dtype_is_an_error():
    both_raise(lambda lib: lib.add(lib.ones(2), 1.5, out=lib.zeros(2, dtype=lib.int64)), RuntimeError,
               "result type Float can't be cast to the desired output type Long")
    both_raise(lambda lib: lib.add(lib.ones(2, dtype=lib.int64), 1, out=lib.zeros(2, dtype=lib.bool)), RuntimeError,
               "result type Long can't be cast to the desired output type Bool")


def test_out_that_is_not_a_tensor_is_a_type_error():
    both_raise(lambda lib: lib.add(lib.ones(2), 1, out=[0.0, 0.0]), TypeError, "argument 'out' must be Tensor, not list")


def test_writing_into_out_bumps_its_version():
    def program(lib):
        out = lib.zeros(2)
        before = out._version
        lib.add(lib.ones(2), 1, out=out)
        return out._version - before

    assert both(program) == 1


def test_a_view_as_out_receives_the_result_in_its_base():
    def program(lib):
        base = lib.zeros(4)
        lib.add(lib.ones(2), 1, out=base[::2])
        return base

    both(program)


@pytest.mark.parametrize("name", ["add", "mul", "div", "pow", "eq", "lt"])
def test_an_expanded_out_is_refused_as_torch(name):
    """Several elements of an expanded tensor share one memory location: torch refuses to write into it."""
    both_raise(lambda lib: getattr(lib, name)(lib.ones(2, 3), 2, out=lib.zeros(3).expand(2, 3)), RuntimeError,
               "more than one element .* refers to a single memory location")


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "eq"])
@pytest.mark.parametrize("which", ["input", "other"])
def test_an_out_that_is_also_an_input_is_not_resized(name, which):
    """torch resizes an out of another shape, but not one the op also reads: that is an error."""

    def program(lib):
        small, big = lib.tensor(2.0), lib.ones(2, 3)
        operands = (small, big) if which == "input" else (big, small)
        getattr(lib, name)(*operands, out=small)

    both_raise(program, RuntimeError, r"output with shape \[\] doesn't match the broadcast shape \[2, 3\]")


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons_write_into_out_although_an_argument_requires_grad(name):
    """A comparison is not differentiable, so torch takes inputs and an out that require grad."""

    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        out = lib.zeros(3, dtype=lib.bool)
        getattr(lib, name)(x, 2.0, out=out)
        float_out = lib.zeros(3, requires_grad=True)
        getattr(lib, name)(lib.ones(3), x, out=float_out)
        return out, float_out, float_out.requires_grad

    both(program)


OUT_OF_ONE = ["exp", "log", "sqrt", "reciprocal", "sigmoid", "tanh", "abs", "absolute", "floor", "ceil", "trunc",
              "sign", "neg", "negative", "round"]
INDEX_OUT = {"argmax": lambda lib, x, out: lib.argmax(x, 1, out=out),
             "argmin": lambda lib, x, out: lib.argmin(x, out=out),
             "isin": lambda lib, x, out: lib.isin(x, lib.tensor([0.5, 3.5]), out=out)}


@pytest.mark.parametrize("name", OUT_OF_ONE)
def test_pointwise_functions_of_one_tensor_take_out_as_torchs(name):
    def program(lib):
        x = lib.tensor([[0.5, 1.25, 2.0], [3.5, 0.75, 1.5]])
        out = lib.zeros(2, 3)
        result = getattr(lib, name)(x, out=out)
        return out, result is out

    both(program)
    both_raise(lambda lib: getattr(lib, name)(lib.ones(3), out=lib.zeros(3, dtype=lib.int64)), RuntimeError, "Long")


def test_clamp_clip_where_round_and_narrow_copy_take_out_as_torchs():
    def program(lib):
        x = lib.tensor([[-1.25, 0.5, 2.75], [3.5, -0.75, 1.5]])
        outs = [lib.zeros(2, 3) for _ in range(5)] + [lib.zeros(2, 2)]
        results = [lib.clamp(x, -1, 2, out=outs[0]), lib.clip(x, min=0.0, out=outs[1]),
                   lib.where(x > 0, x, lib.zeros(()), out=outs[2]), lib.round(x, decimals=1, out=outs[3]),
                   lib.clamp(x, max=lib.zeros(3), out=outs[4]), lib.narrow_copy(x, 1, 1, 2, out=outs[5])]
        return outs, [r is o for r, o in zip(results, outs)]

    both(program)


def test_cumsum_cumprod_and_eye_compute_in_outs_dtype_as_torch():
    """torch casts the input to out's dtype first: a cumulative sum into int64 truncates before it adds."""
    def program(lib):
        x = lib.tensor([0.5, 0.7, 1.9])
        outs = [lib.empty(3, dtype=lib.int64), lib.empty(3, dtype=lib.int64), lib.empty(2, 2, dtype=lib.int64)]
        lib.cumsum(x, 0, out=outs[0])
        lib.cumprod(x + 1, 0, out=outs[1])
        lib.eye(2, out=outs[2])
        return outs, [o.dtype == lib.int64 for o in outs]

    both(program)


SUMS_INTO_OUT = {
    "sum into int32": lambda lib, x: lib.sum(x, 1, out=lib.empty(0, dtype=lib.int32)),
    "sum into bool": lambda lib, x: lib.sum(x, (0, 1), keepdim=True, out=lib.empty(0, dtype=lib.bool)),
    "sum of ints into uint8": lambda lib, x: lib.sum((x * 100).long(), 0, out=lib.empty(0, dtype=lib.uint8)),
    "prod into int64": lambda lib, x: lib.prod(x, 1, out=lib.empty(0, dtype=lib.int64)),
    "prod into bool": lambda lib, x: lib.prod(x, 0, out=lib.empty(0, dtype=lib.bool)),
    "prod into int8": lambda lib, x: lib.prod(x * 3, 1, keepdim=True, out=lib.empty(0, dtype=lib.int8)),
    "nansum of ints into bool": lambda lib, x: lib.nansum(x.long(), 1, out=lib.empty(0, dtype=lib.bool)),
    "nansum into float64": lambda lib, x: lib.nansum(x, 1, out=lib.empty(0, dtype=lib.float64)),
    "diff": lambda lib, x: lib.diff(x, out=lib.empty(0)),
    "diff into int64": lambda lib, x: lib.diff((x * 4).long(), n=2, dim=0, out=lib.empty(0, dtype=lib.int64)),
    "diff of bools into int32": lambda lib, x: lib.diff(x > 1, prepend=x[:, :1] > 0, out=lib.empty(0, dtype=lib.int32)),
}


@pytest.mark.parametrize("name", sorted(SUMS_INTO_OUT))
def test_sums_and_products_compute_in_outs_dtype_and_diff_takes_out_as_torch(name):
    """torch casts the input to out's dtype first (as for cumsum): floats summed into an int32 out are truncated,
    then added; and diff writes into out."""
    def program(lib):
        x = lib.tensor([[0.5, -1.5, 2.5], [3.25, 4.0, -5.0], [1.75, 0.0, 2.0]])
        result = SUMS_INTO_OUT[name](lib, x)
        return result, str(result.dtype).split(".")[1]

    both(program)


@pytest.mark.parametrize("call, error, fragment", [
    (lambda lib: lib.sum(lib.ones(2, 3), 1, dtype=lib.float64, out=lib.empty(0)), RuntimeError,
     "Expected out tensor to have dtype double, but got float"),
    (lambda lib: lib.cumsum(lib.ones(2, 3), 1, dtype=lib.float64, out=lib.empty(0, dtype=lib.float16)), RuntimeError,
     "Expected out tensor to have dtype double, but got c10::Half"),
    (lambda lib: lib.prod(lib.ones(2, 3), 1, dtype=lib.int64, out=lib.empty(0, dtype=lib.int32)), RuntimeError,
     "Expected out tensor to have dtype long int, but got int"),
    (lambda lib: lib.cumsum(lib.ones(3), 0, out=lib.empty(0, dtype=lib.bool)), NotImplementedError, "'Bool'"),
    (lambda lib: lib.cumprod(lib.ones(3), 0, dtype=lib.bool), NotImplementedError, "'Bool'"),
    (lambda lib: lib.nansum(lib.ones(3), out=lib.empty(0, dtype=lib.int64)), NotImplementedError, "'Long'"),
    (lambda lib: lib.nansum(lib.ones(3), dtype=lib.complex64), NotImplementedError, "'ComplexFloat'"),
    (lambda lib: lib.prod(lib.ones(3), out=lib.empty(0)), TypeError, "prod()"),
    (lambda lib: lib.sum(lib.ones(3), out=lib.empty(0)), TypeError, "sum()"),
])
def test_sums_refuse_an_out_or_dtype_as_torch(call, error, fragment):
    both_raise(call, error, fragment)


@pytest.mark.parametrize("call, fragment", [
    (lambda lib: lib.all(lib.ones(2), out=lib.empty(())), "bool"),
    (lambda lib: lib.any(lib.ones(2), out=lib.empty(())), "bool"),
    (lambda lib: lib.nonzero(lib.ones(2), out=lib.empty(0)), "Long"),
    (lambda lib: lib.searchsorted(lib.arange(3.), lib.ones(2), out=lib.empty(2)), "out_int32"),
    (lambda lib: lib.bucketize(lib.ones(2), lib.arange(3.), out_int32=True, out=lib.empty(2, dtype=lib.int64)), "int32"),
])
def test_index_and_logical_results_refuse_an_out_of_another_dtype(call, fragment):
    both_raise(call, RuntimeError, fragment)


@pytest.mark.parametrize("name", INDEX_OUT)
def test_argmax_argmin_isin_clamp_min_and_clamp_max_take_out_as_torchs(name):
    def program(lib):
        x = lib.tensor([[0.5, 1.25, 2.0], [3.5, 0.75, 1.5]])
        reference = INDEX_OUT[name](lib, x, None)
        out = lib.empty(tuple(reference.shape), dtype=reference.dtype)
        bounds = [lib.zeros(2, 3), lib.zeros(2, 3)]
        results = [INDEX_OUT[name](lib, x, out), lib.clamp_min(x, 1.0, out=bounds[0]), lib.clamp_max(x, 1.0, out=bounds[1])]
        return out, bounds, [r is o for r, o in zip(results, [out] + bounds)]

    both(program)


@pytest.mark.parametrize("call", [lambda lib: lib.argmax(lib.ones(2, 3), 1, out=lib.empty(2)),
                                  lambda lib: lib.argmin(lib.ones(2, 3), out=lib.empty(())),
                                  lambda lib: lib.isin(lib.ones(2), lib.ones(1), out=lib.empty(2))])
def test_an_index_or_mask_result_takes_only_an_out_of_its_own_dtype(call):
    both_raise(call, RuntimeError, "Expected out tensor to have dtype")


def test_normalize_writes_into_out_with_torchs_checks():
    def program(lib):
        out = lib.empty(7)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # both warn that out is resized
            result = lib.nn.functional.normalize(lib.tensor([[3., 4.]]), out=out)
        return out, result is out

    both(program)
    both_raise(lambda lib: lib.nn.functional.normalize(lib.ones(1, 2), out=lib.empty(1, 2, dtype=lib.int64)),
               RuntimeError, "can't be cast")


def test_clamp_by_tensors_casts_into_a_wider_out_and_clamp_by_numbers_does_not():
    """torch's two overloads of clamp have two rules for out: its dtype need only hold the result (tensors), or
    must be the result's own (numbers)."""
    def program(lib):
        x = lib.tensor([[0.5, -1.5], [3.25, 4.0]])
        outs = [lib.empty(0, dtype=lib.float64) for _ in range(3)]
        lib.clamp(x, x * 0, out=outs[0])
        lib.clamp_min(x, lib.zeros(2), out=outs[1])
        lib.clamp_max(x, lib.tensor(1.0), out=outs[2])
        return outs

    both(program)
    both_raise(lambda lib: lib.clamp(lib.ones(2), 0, 1, out=lib.empty(2, dtype=lib.float64)), RuntimeError,
               "Found dtype Double but expected Float")


@pytest.mark.parametrize("call, error, fragment", [
    (lambda lib: lib.cat([lib.ones(2)], out=lib.empty(0, dtype=lib.int64)), TypeError, "can't be cast"),
    (lambda lib: lib.stack([lib.ones(2)], out=lib.empty(0, dtype=lib.bool)), TypeError, "can't be cast"),
    (lambda lib: lib.signbit(lib.ones(2), out=lib.empty(0)), RuntimeError, ""),
    (lambda lib: lib.bitwise_not(lib.ones(2, dtype=lib.int32), out=lib.empty(0, dtype=lib.int64)), RuntimeError, ""),
    (lambda lib: lib.sort(lib.ones(3), out=(lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int64))),
     RuntimeError, ""),
    (lambda lib: lib.max(lib.ones(2, 3), 1, out=(lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int64))),
     RuntimeError, ""),
    (lambda lib: lib.where(lib.ones(2) > 0, lib.ones(2), lib.ones(2), out=lib.empty(0, dtype=lib.float64)),
     RuntimeError, ""),
    (lambda lib: lib.index_select(lib.ones(2, 3), 1, lib.tensor([0]), out=lib.empty(0, dtype=lib.float64)),
     RuntimeError, ""),
    (lambda lib: lib.amax(lib.ones(2, 3), 1, out=lib.empty(0, dtype=lib.float64)), RuntimeError, ""),
])
def test_outs_of_another_dtype_refused_as_torch_by_joins_selections_and_extrema(call, error, fragment):
    both_raise(call, error, fragment)
