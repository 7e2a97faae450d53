"""Tensor creation and conversion, run on torch and on ember (a differential sweep; see twins.py)."""
import random

import numpy as np
import pytest
import torch

import ember
from ember._ops import copy as ember_copy
from twins import both, both_raise, normalise


def memory_format(lib, name: str):
    """``lib.<name>`` (ember's memory formats live in ember._ops.copy until the package exports them)."""
    return getattr(lib, name, None) or getattr(ember_copy, name)


def layout(t) -> tuple:
    return t.shape, t.stride(), t.is_contiguous(), t


# ---- clone, to, the _like factories: the layout of the input is kept (preserve_format)

LAYOUTS = [
    "lib.arange(6.).view(2, 3).t()",
    "lib.arange(24.).view(2, 3, 4).permute(2, 0, 1)",
    "lib.arange(8.).view(2, 4)[:, ::2]",
    "lib.arange(24.).view(4, 6).t()[::2]",
    "lib.arange(3.).view(1, 3).expand(2, 3)",
    "lib.arange(3.).view(3, 1).t()",
    "lib.arange(6.).view(2, 3)[::2]",
    "lib.arange(6.).view(3, 1, 2).permute(1, 2, 0)",
    "lib.arange(24.).view(4, 3, 2).permute(2, 0, 1)[:, :, ::2]",
    "lib.tensor(2.5)",
]


@pytest.mark.parametrize("source", LAYOUTS)
def test_clone_and_to_keep_the_layout_of_the_input(source):
    both(lambda lib: layout(eval(source, {"lib": lib}).clone()))
    both(lambda lib: layout(eval(source, {"lib": lib}).to(lib.float64)))
    both(lambda lib: layout(eval(source, {"lib": lib}).to(lib.float32, copy=True)))


@pytest.mark.parametrize("source", LAYOUTS)
@pytest.mark.parametrize("make", ["zeros_like", "ones_like", "empty_like", "full_like"])
def test_like_factories_keep_the_layout_of_the_input(source, make):
    def program(lib):
        x = eval(source, {"lib": lib})
        args = (x, 2) if make == "full_like" else (x,)
        made = getattr(lib, make)(*args)
        values = () if make == "empty_like" else (made,)  # torch's empty_like holds garbage
        return made.shape, made.stride(), made.is_contiguous(), values, getattr(lib, make)(*args, dtype=lib.int64).stride()

    both(program)


def test_clone_and_like_with_a_memory_format():
    def program(lib):
        x = lib.arange(6.).view(2, 3).t()
        y = lib.arange(24.).view(1, 2, 3, 4)
        contiguous, last = memory_format(lib, "contiguous_format"), memory_format(lib, "channels_last")
        return (layout(x.clone(memory_format=contiguous)), layout(lib.zeros_like(x, memory_format=contiguous)),
                layout(y.clone(memory_format=last)),
                x.to(lib.float64, memory_format=contiguous).stride(),
                lib.empty(2, 3, 4, 5, memory_format=last).stride())

    both(program)
    both_raise(lambda lib: lib.ones(2, 3).clone(memory_format=memory_format(lib, "channels_last")),
               RuntimeError, "required rank 4 tensor to use channels_last format")
    both_raise(lambda lib: lib.ones(2).clone(memory_format=3), TypeError, "argument 'memory_format' must be")


def test_clone_of_a_transposed_tensor_has_the_gradient_of_a_clone():
    def program(lib):
        x = lib.arange(6., requires_grad=True)
        y = x.view(2, 3).t().clone()
        (y * lib.arange(6.).view(3, 2)).sum().backward()
        return y.stride(), y.grad_fn.name(), x.grad

    both(program)


# ---- to: torch's three forms, positional flags, copy=

def test_to_takes_torch_forms_and_positional_flags():
    def program(lib):
        x = lib.tensor([1.5, -2.5])
        other = lib.zeros(1, dtype=lib.float64)
        return (x.to(lib.float64, True), x.to(lib.float64, False, True), x.to("cpu", lib.float64, False, True),
                x.to(other, True, True), x.to(None), x.to(None, lib.int64), x.to(device=None, dtype=lib.int32),
                x.to(lib.float32) is x, x.to(lib.float32, copy=True) is x, x.to(copy=True) is x,
                x.to(lib.float32, memory_format=memory_format(lib, "contiguous_format")) is x)

    both(program)


@pytest.mark.parametrize("call", [
    "x.to(lib.float64, lib.float32)", "x.to(lib.float64, dtype=lib.float32)", "x.to('cpu', 'cpu')",
    "x.to(lib.zeros(1), lib.float64)", "x.to(lib.float64, device='cpu')", "x.to(copy=1)",
    "x.to(lib.float64, True, True, True)", "x.to(lib.zeros(1), dtype=lib.float32)", "x.to(lib.float64, foo=1)",
])
def test_to_refuses_what_torch_refuses(call):
    both_raise(lambda lib: eval(call, {"lib": lib, "x": lib.ones(2)}), TypeError,
               r"to\(\) received an invalid combination of arguments")


def test_conversions_of_nan_and_overflow_are_quiet():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        both(lambda lib: (lib.tensor([float("nan")]).long(), lib.tensor([1e5, -1e40]).half(),
                          lib.tensor([1e300], dtype=lib.float64).float()))


# ---- zeros / ones / empty / rand / randn: the size argument

@pytest.mark.parametrize("make", ["zeros", "ones", "empty", "rand", "randn"])
def test_size_as_keyword_and_unused_keywords(make):
    def program(lib):
        f = getattr(lib, make)
        return (f(size=(2, 3)).shape, f(size=[2]).shape, f(lib.tensor(3)).shape, f(lib.tensor([3])).shape,
                f((lib.tensor(2), 3)).shape, f(2, pin_memory=False, layout=None).shape, f(2, out=None).shape)

    both(program, prepare=normalise)
    both_raise(lambda lib: getattr(lib, make)(2, size=(2,)), TypeError, make)
    both_raise(lambda lib: getattr(lib, make)(size=2), TypeError, "argument 'size' must be tuple of ints")
    both_raise(lambda lib: getattr(lib, make)(2.0), TypeError, r"argument 'size' \(position 1\) must be tuple of ints")
    both_raise(lambda lib: getattr(lib, make)((2, 3), 4), TypeError, make)


# ---- full and full_like: the fill value

def test_full_infers_the_dtype_of_the_fill_value_as_a_python_number():
    both(lambda lib: (lib.full((2,), np.int32(1)), lib.full((2,), np.float64(1.5)),
                      lib.full((2,), lib.tensor(3, dtype=lib.int32)), lib.full((2,), lib.tensor(1.5, dtype=lib.float64)),
                      lib.full((2,), lib.tensor(True)), lib.full((2,), 1.5, out=None)))


@pytest.mark.parametrize("call, error, message", [
    ("lib.full(2, 1)", TypeError, r"argument 'size' \(position 1\) must be tuple of ints, not int"),
    ("lib.full((2,), lib.tensor([3]))", TypeError, r"argument 'fill_value' \(position 2\) must be Number, not Tensor"),
    ("lib.full((2,), None)", TypeError, "argument 'fill_value' .*must be Number, not NoneType"),
    ("lib.full_like(lib.ones(2), 'a')", TypeError, "argument 'fill_value' .*must be Number, not str"),
    ("lib.full_like(lib.ones(2), None)", TypeError, "argument 'fill_value' .*must be Number, not NoneType"),
    ("lib.full_like(lib.ones(2), lib.tensor([3.]))", TypeError, "must be Number, not Tensor"),
    ("lib.full_like(lib.ones(2, dtype=lib.uint8), 300)", RuntimeError, "value cannot be converted to type"),
    ("lib.full_like(lib.ones(2), 1e40)", RuntimeError, "value cannot be converted to type .* without overflow"),
    ("lib.full_like(lib.ones(2, dtype=lib.int64), float('nan'))", RuntimeError, "value cannot be converted"),
])
def test_full_refuses_what_torch_refuses(call, error, message):
    both_raise(lambda lib: eval(call, {"lib": lib}), error, message)


def test_full_like_wraps_negative_integers_into_unsigned_as_torch():
    both(lambda lib: lib.full_like(lib.ones(2, dtype=lib.uint8), -1))


# ---- eye

def test_eye_arguments():
    both(lambda lib: (lib.eye(np.int64(2)), lib.eye(lib.tensor(2), 3), lib.eye(2, out=None)))
    for call in ("lib.eye(2.0)", "lib.eye(True)", "lib.eye(2, None)", "lib.eye(2, 3.0)"):
        both_raise(lambda lib: eval(call, {"lib": lib}), TypeError)


# ---- arange: torch's count and values, to the last bit

@pytest.mark.parametrize("args, dtype", [
    ((0, 5, 1.5), "int64"), ((0, 5, 1.5), "int32"), ((-2.5, 3), "int64"), ((-2.5, 3), "int32"),
    ((0.5, 3), "int32"), ((0, -3, -1), "uint8"), ((0, 3, 0.5), "uint8"), ((0, 3, 0.5), "float16"),
    ((-1, 9, 0.3), "float16"), ((-98.85761426200472, 0.9, 1), None), ((-72.43843325795585, 25, 1.5), "float32"),
    ((70.24710586597365, -85.18112953696092, -1), None), ((-11.166322226658949, 0.9, 0.1), "float32"),
    ((-28, 0, 0.3), "float64"), ((0, 1, 0.1), None),
])
def test_arange_values_match_torch_bit_for_bit(args, dtype):
    def program(lib):
        return lib.arange(*args, **({} if dtype is None else {"dtype": getattr(lib, dtype)}))

    expected, actual = program(torch).numpy(), program(ember).numpy()
    assert expected.dtype == actual.dtype and np.array_equal(expected, actual), (expected, actual)


def test_arange_random_float_ranges_match_torch_bit_for_bit():
    rng = random.Random(0)
    for _ in range(100):
        start, end = rng.uniform(-60, 60), rng.uniform(-60, 60)
        step = rng.choice([0.1, 0.3, 0.7, 1.5]) * (1 if end > start else -1)
        dtype = rng.choice(["float32", "float64"])
        expected = torch.arange(start, end, step, dtype=getattr(torch, dtype)).numpy()
        actual = ember.arange(start, end, step, dtype=getattr(ember, dtype)).numpy()
        assert np.array_equal(expected, actual), (start, end, step, dtype)


def test_arange_keywords():
    both(lambda lib: (lib.arange(end=3), lib.arange(0, 3, out=None, layout=None, pin_memory=False)))


@pytest.mark.parametrize("call, error, message", [
    ("lib.arange(0, 2.5, 0.5, dtype=lib.int64)", ValueError, "step must be nonzero"),
    ("lib.arange(5, dtype=lib.bool)", NotImplementedError, "arange_cpu.*not implemented for 'Bool'"),
    ("lib.arange(0, 10, -1)", RuntimeError, "upper bound and lower bound inconsistent with step sign"),
    ("lib.arange(float('inf'))", RuntimeError, "unsupported range: 0 -> inf"),
    ("lib.arange(float('nan'))", RuntimeError, "unsupported range: 0 -> nan"),
    ("lib.arange(0, 1e30)", RuntimeError, "invalid size, possible overflow"),
    ("lib.arange()", TypeError, "arange()"),
    ("lib.arange(0, None)", TypeError, "arange()"),
    ("lib.arange('a')", TypeError, "must be Number, not str"),
])
def test_arange_refuses_what_torch_refuses(call, error, message):
    both_raise(lambda lib: eval(call, {"lib": lib}), error, message)


# ---- linspace: torch's symmetric formula (both ends exact)

def test_linspace_values_match_torch_bit_for_bit():
    rng = random.Random(1)
    for _ in range(150):
        dtype = rng.choice(["float32", "float64", "float16", "int64", "int32"])
        steps = rng.choice([1, 2, 3, 7, 9, 11, 16, 33, 100])
        start, end = rng.choice([0, -1, 0.1, -7.3, rng.uniform(-50, 50)]), rng.choice([1, 0.9, 10, rng.uniform(-50, 50)])
        expected = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
        actual = ember.linspace(start, end, steps, dtype=getattr(ember, dtype)).numpy()
        assert expected.dtype == actual.dtype and np.array_equal(expected, actual), (start, end, steps, dtype)


@pytest.mark.parametrize("end, dtype", [(1e39, "float32"), (1e5, "float16"), (65520.0, "float16"), (300, "int8"),
                                        (-129, "int8"), (256, "uint8")])
def test_linspace_refuses_an_end_its_dtype_cannot_hold(end, dtype):
    both_raise(lambda lib: lib.linspace(0, end, 3, dtype=getattr(lib, dtype)), RuntimeError,
               "cannot be converted to type .* without overflow")


def test_linspace_in_half_overflows_to_inf_and_nan_quietly():
    both(lambda lib: lib.linspace(-65000, 65000, 3, dtype=lib.float16))


def test_linspace_arguments():
    both(lambda lib: (lib.linspace(0, 1, 1), lib.linspace(0.1, 0.9, 9), lib.linspace(1, -1, 11),
                      lib.linspace(0, 1, np.int64(3)), lib.linspace(0, 1, lib.tensor(3)),
                      lib.linspace(0, 1, 3, out=None, layout=None, pin_memory=False)))
    both_raise(lambda lib: lib.linspace(lib.tensor([0.]), 1., 3), RuntimeError,
               "linspace only supports 0-dimensional start and end tensors, but got start with 1 dimension")
    both_raise(lambda lib: lib.linspace(0, 1, 3, dtype=lib.bool), NotImplementedError, "linspace_cpu")
    both_raise(lambda lib: lib.linspace(0, 1, 2.0), TypeError)
    both_raise(lambda lib: lib.linspace(0, 1, True), TypeError)


# ---- random factories: API, not values

def test_random_factories_accept_torch_keywords():
    def program(lib):
        g = lib.Generator()
        return (lib.randint(5, size=(3,)).shape, lib.randint(high=5, size=(3,)).shape,
                lib.randint(low=2, high=5, size=(3,)).shape, lib.randint(5, (torch_or_ember_tensor(lib, 3),)).shape,
                lib.randint(5, (3,), out=None, layout=None, pin_memory=False).dtype,
                lib.randint(256, (3,), dtype=lib.uint8).dtype, lib.randint(2, (3,), dtype=lib.bool).dtype,
                lib.rand_like(lib.ones(2), generator=g).shape, lib.randn_like(lib.ones(2), generator=None).shape,
                lib.rand_like(lib.ones(2, 3).t()).stride())

    both(program, prepare=normalise)


def torch_or_ember_tensor(lib, value):
    return lib.tensor(value)


@pytest.mark.parametrize("call, error, message", [
    ("lib.randint(5, 3)", TypeError, "argument 'size' .*must be tuple of ints, not int"),
    ("lib.randint(2.5, (3,))", TypeError, "randint"),
    ("lib.randint(True, (3,))", TypeError, "argument 'high' .*must be int, not bool"),
    ("lib.randint(2**63, (3,))", ValueError, "Overflow when unpacking long long"),
    ("lib.randint(300, (3,), dtype=lib.uint8)", RuntimeError, "to - 1 is out of bounds for"),
    ("lib.randint(-1, 5, (3,), dtype=lib.uint8)", RuntimeError, "from is out of bounds for"),
    ("lib.randint(5, (3,), dtype=lib.bool)", RuntimeError, "to - 1 is out of bounds for"),
    ("lib.rand(2, generator=5)", TypeError, "rand"),
    ("lib.randn(2, generator='a')", TypeError, "randn"),
])
def test_random_factories_refuse_what_torch_refuses(call, error, message):
    both_raise(lambda lib: eval(call, {"lib": lib}), error, message)


def test_seeds_are_64_bit_unsigned_as_in_torch():
    both(lambda lib: (lib.manual_seed(-1).initial_seed(), lib.manual_seed(-2 ** 63).initial_seed(),
                      lib.manual_seed(2 ** 64 - 1).initial_seed(), lib.manual_seed(1.5).initial_seed(),
                      lib.Generator().manual_seed(-5).initial_seed()))
    both_raise(lambda lib: lib.manual_seed(2 ** 64), ValueError, "Overflow when unpacking long long")
    both_raise(lambda lib: lib.manual_seed(-2 ** 63 - 1), ValueError, "Overflow when unpacking long long")
    both_raise(lambda lib: lib.Generator().manual_seed(1.5), RuntimeError, "manual_seed expected a long, but got float")
    torch.manual_seed(0)
    ember.manual_seed(0)


def test_generator_checks_device_and_state():
    both_raise(lambda lib: lib.Generator("foo"), RuntimeError)
    both_raise(lambda lib: lib.Generator().set_state(5), TypeError, "expected a .*ByteTensor")
    both_raise(lambda lib: lib.set_rng_state(5), TypeError, "expected a .*ByteTensor")
    both_raise(lambda lib: lib.Generator().set_state(lib.zeros(3)), TypeError, "RNG state must be a .*ByteTensor")
    for lib in (torch, ember):
        g = lib.Generator().manual_seed(7)
        twin = g.clone_state()
        assert type(twin) is lib.Generator and lib.equal(lib.rand(3, generator=g), lib.rand(3, generator=twin))


# ---- tensor(): sequences and ragged data

def test_tensor_takes_any_sequence():
    both(lambda lib: (lib.tensor(range(3)), lib.tensor([range(3), range(3)]), lib.tensor(range(3), dtype=lib.float64)))


@pytest.mark.parametrize("data, error, message", [
    ([[1, 2], [3]], ValueError, r"expected sequence of length 2 at dim 1 \(got 1\)"),
    ([[1, 2], 3], TypeError, "not a sequence"),
    ([[[1], [2]], [[1], [2, 3]]], ValueError, r"expected sequence of length 1 at dim 2 \(got 2\)"),
    ([1, [2, 3]], TypeError, ""),
])
def test_tensor_explains_ragged_data_as_torch(data, error, message):
    both_raise(lambda lib: lib.tensor(data), error, message)


@pytest.mark.parametrize("program", [
    "repr(lib.ones(2).layout).split('.')[1]", "x.contiguous(memory_format=lib.channels_last).stride()",
    "lib.ones(2).contiguous(memory_format=lib.preserve_format).stride()",
    "pickle.loads(pickle.dumps((lib.strided, lib.channels_last))) == (lib.strided, lib.channels_last)",
    "type(lib.channels_last).__name__, type(lib.strided).__name__",
])
def test_layouts_and_memory_formats_are_exported_and_taken_by_contiguous_as_torch(program):
    import pickle
    both(lambda lib: eval(program, {"lib": lib, "pickle": pickle, "x": lib.ones(2, 3, 4, 5)}))


@pytest.mark.parametrize("program,error,fragment", [
    ("lib.ones(2).type_as([1])", TypeError, r"type_as\(\): argument 'other' \(position 1\) must be Tensor, not list"),
    ("lib.zeros(2, layout='strided')", TypeError, r"zeros\(\): argument 'layout' must be \w+\.layout, not str"),
    ("lib.ones(2, 3).t().contiguous(memory_format=lib.preserve_format)", RuntimeError,
     "preserve memory format is unsupported by the contiguous operator"),
])
def test_bad_layouts_formats_and_type_as_arguments_are_refused_as_torch(program, error, fragment):
    both_raise(lambda lib: eval(program, {"lib": lib}), error, fragment)


@pytest.mark.parametrize("call", ["lib.zeros()", "lib.ones()", "lib.empty()", "lib.rand()", "lib.randn()"])
def test_a_factory_without_a_size_is_refused_as_torch(call):
    both_raise(lambda lib: eval(call, {"lib": lib}), TypeError, r"(missing 1 required positional argument|invalid combination)")


@pytest.mark.parametrize("call", [
    "lib.from_numpy(np.arange(6.)[::-1])", "lib.as_tensor(np.arange(6.).reshape(2, 3)[:, ::-1])",
    "lib.tensor(np.arange(6)[::-2])", "lib.tensor(np.ones((2, 3))[::-1], dtype=lib.float32)",
])
def test_numpy_arrays_with_a_negative_stride_are_refused_as_torch(call):
    """torch takes no array with a negative stride, not even to copy it; a positive step is taken."""
    both_raise(lambda lib: eval(call, {"lib": lib, "np": np}), ValueError, "At least one stride in the given numpy")
    both(lambda lib: lib.tensor(np.arange(6.)[::2]))


@pytest.mark.parametrize("items, error, message", [
    ("[lib.tensor([1, 2]), lib.tensor([3, 4])]", TypeError, "only integer tensors of a single element"),
    ("[lib.tensor([True, False])]", TypeError, "only integer tensors of a single element"),
    ("[lib.tensor([1., 2.]), lib.tensor([3., 4.])]", ValueError, "only one element tensors can be converted"),
])
def test_tensors_of_several_elements_inside_a_list_are_refused_as_torch(items, error, message):
    both_raise(lambda lib: lib.tensor(eval(items, {"lib": lib})), error, message)


@pytest.mark.parametrize("call, message", [
    ("lib.tensor(np.array([1, 2], dtype=object), dtype=lib.float64)", "can't convert np.ndarray of type numpy.object_"),
    ("lib.as_tensor(np.array([1], dtype='datetime64[s]'), dtype=lib.float64)", "numpy.datetime64"),
    ("lib.tensor(np.ones(2, np.longdouble), dtype=lib.float32)", "numpy.longdouble"),
    ("lib.tensor(b'ab')", "invalid data type 'bytes'"), ("lib.tensor(b'ab', dtype=lib.uint8)", "invalid data type 'bytes'"),
    ("lib.tensor('a', dtype=lib.float32)", "invalid data type 'str'"),
])
def test_data_torch_cannot_take_is_refused_whatever_the_dtype(call, message):
    both_raise(lambda lib: eval(call, {"lib": lib, "np": np}), TypeError, message)
