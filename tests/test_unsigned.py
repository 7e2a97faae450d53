"""Twin tests for the wide unsigned dtypes (uint16, uint32, uint64): creation, casts, repr, limits, promotion and
its refusals, the ops torch runs on them, hashing's input, and saving, against torch 2.13."""
import io

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from twins import both, both_raise, normalise

UNSIGNED = ["uint16", "uint32", "uint64"]
BITS = {"uint16": 16, "uint32": 32, "uint64": 64}


def _u(lib, name: str, values):
    return lib.tensor(values, dtype=getattr(lib, name))


@pytest.mark.parametrize("name", UNSIGNED)
@pytest.mark.parametrize("program", [
    lambda lib, d: lib.zeros(2, 3, dtype=d),
    lambda lib, d: lib.ones(2, dtype=d),
    lambda lib, d: lib.full((2,), 7, dtype=d),
    lambda lib, d: lib.full((3,), -1, dtype=d),  # a number wraps into the type, as a cast does
    lambda lib, d: lib.empty(0, dtype=d),
    lambda lib, d: lib.tensor(5, dtype=d),
    lambda lib, d: lib.tensor([1.5, 2.7]).to(d),
    lambda lib, d: lib.tensor([-1, 2]).to(d),
    lambda lib, d: lib.tensor([[1, 2], [3, 4]], dtype=d).t().contiguous(),
    lambda lib, d: lib.zeros_like(lib.tensor([1, 2], dtype=d)),
    lambda lib, d: lib.tensor([1, 2], dtype=d).new_zeros(3),
])
def test_creation_and_casts_match_torch(name, program):
    result = both(lambda lib: (lambda t: (t, t.dtype, repr(t), t.element_size(), t.is_signed()))(
        program(lib, getattr(lib, name))), prepare=normalise)
    assert result[1] == f"ember.{name}"


@pytest.mark.parametrize("name", UNSIGNED)
def test_largest_values_round_trip_exactly(name):
    top = 2 ** BITS[name] - 1
    result = both(lambda lib: (lambda t: (t.tolist(), t[0].item(), repr(t), t.to(lib.float64).tolist()))(
        _u(lib, name, [top, 0, 2 ** (BITS[name] - 1)])), prepare=normalise)
    assert result[0][0] == top


@pytest.mark.parametrize("name", UNSIGNED)
def test_iinfo_and_dtype_attributes(name):
    def program(lib):
        d = getattr(lib, name)
        info = lib.iinfo(d)
        return info.bits, info.min, info.max, repr(info), d.is_signed, d.is_floating_point, d.itemsize, str(d)

    assert both(program, prepare=normalise)[2] == 2 ** BITS[name] - 1


@pytest.mark.parametrize("name", UNSIGNED)
def test_numpy_both_ways(name):
    array = np.array([0, 3, 2 ** BITS[name] - 1], dtype=name)
    both(lambda lib: (lambda t: (t, t.dtype, t.numpy().dtype.name))(lib.from_numpy(array.copy())), prepare=normalise)
    both(lambda lib: lib.tensor(array).dtype, prepare=normalise)


@pytest.mark.parametrize("name", UNSIGNED)
@pytest.mark.parametrize("op", [
    lambda a, b: a * b, lambda a, b: a == b, lambda a, b: a != b, lambda a, b: a & b, lambda a, b: a | b,
    lambda a, b: a ^ b, lambda a, b: a / b, lambda a, b: a * 70000, lambda a, b: a * -1, lambda a, b: a | 1,
    lambda a, b: a + 1.5, lambda a, b: a * b.float(), lambda a, b: a.eq(2), lambda a, b: a.sum(),
    lambda a, b: a.prod(), lambda a, b: a.cumsum(0), lambda a, b: a.cumprod(0), lambda a, b: a.sum(dtype=b.int().dtype),
    lambda a, b: a.sort(), lambda a, b: a.argsort(), lambda a, b: a.unique(), lambda a, b: a.any(), lambda a, b: a.all(),
    lambda a, b: a.exp(), lambda a, b: a.sqrt(), lambda a, b: a.floor(), lambda a, b: a.isnan(), lambda a, b: a.clone(),
    lambda a, b: a[a == 2], lambda a, b: a.view(3, 1).expand(3, 2), lambda a, b: a.repeat(2), lambda a, b: a[1],
    lambda a, b: a.to(b.float().dtype), lambda a, b: a.to(b.bool().dtype), lambda a, b: a.eq_(2),
    lambda a, b: a.fill_(4), lambda a, b: a.zero_(), lambda a, b: a.copy_(b.long()), lambda a, b: a.equal(b),
])
def test_the_ops_torch_runs_on_them_match(name, op):
    both(lambda lib: (lambda r: (r, getattr(r, "dtype", None)))(op(_u(lib, name, [3, 2, 0]), _u(lib, name, [1, 2, 5]))),
         prepare=normalise)


@pytest.mark.parametrize("name", UNSIGNED)
def test_joining_and_choosing_keep_the_dtype(name):
    both(lambda lib: (
        lib.cat([_u(lib, name, [1]), _u(lib, name, [2, 3])]),
        lib.stack([_u(lib, name, [1, 2])] * 2),
        lib.where(lib.tensor([True, False]), _u(lib, name, [1, 2]), _u(lib, name, [5, 6])),
        _u(lib, name, [[1, 2], [3, 4]]).diag(),
    ), prepare=normalise)


@pytest.mark.parametrize("name", UNSIGNED)
@pytest.mark.parametrize("other", ["int64", "int32", "uint8", "bool", "complex64"])
def test_promotion_with_other_integers_is_refused_as_in_torch(name, other):
    both_raise(lambda lib: lib.promote_types(getattr(lib, name), getattr(lib, other)), RuntimeError,
               "Promotion for uint16, uint32, uint64 types is not supported")
    both_raise(lambda lib: _u(lib, name, [1, 2]) * lib.ones(2, dtype=getattr(lib, other)), RuntimeError,
               "attempted to promote UInt")


@pytest.mark.parametrize("name", UNSIGNED)
def test_promotion_that_torch_defines(name):
    def program(lib):
        d = getattr(lib, name)
        x = _u(lib, name, [1, 2])
        return (lib.promote_types(d, d), lib.promote_types(d, lib.float16), lib.promote_types(d, lib.float64),
                lib.result_type(x, 1), lib.result_type(x, 1.0), (x * lib.tensor(2)).dtype,
                (lib.tensor(3, dtype=d) + lib.tensor([1, 2], dtype=lib.int32)).dtype, (x + 1j).dtype,
                lib.can_cast(d, lib.int64), lib.can_cast(lib.int64, d), lib.can_cast(lib.float32, d))

    both(program, prepare=normalise)
    both_raise(lambda lib: lib.cat([_u(lib, name, [1]), lib.tensor([1])]), RuntimeError, "UInt")


def test_uint64_takes_ints_up_to_two_to_the_64_and_no_negative_ones():
    both(lambda lib: lib.tensor([2 ** 64 - 1, 2 ** 63], dtype=lib.uint64).tolist())
    both(lambda lib: lib.full((1,), 2 ** 63, dtype=lib.uint64).tolist())
    both_raise(lambda lib: lib.tensor([2 ** 64], dtype=lib.uint64), OverflowError, "int too big to convert")
    both_raise(lambda lib: lib.tensor([-1], dtype=lib.uint64), OverflowError, "can't convert negative int to unsigned")
    both_raise(lambda lib: lib.tensor([70000], dtype=lib.uint16), RuntimeError, "cannot be converted to type uint16")
    both_raise(lambda lib: lib.tensor([1, 2], dtype=lib.uint32).mean(), RuntimeError, "Got: UInt32")
    both_raise(lambda lib: lib.tensor([1.0]).to(lib.uint16).requires_grad_(), RuntimeError, "only Tensors of floating")


@pytest.mark.parametrize("name", UNSIGNED)
def test_legacy_type_names(name):
    both(lambda lib: (_u(lib, name, [1]).type(), lib.tensor([1]).type(f"torch.UInt{name[4:]}Tensor").dtype),
         prepare=normalise)


@pytest.mark.parametrize("name", UNSIGNED)
def test_save_and_load_both_ways(name):
    top = 2 ** BITS[name] - 1
    for writer, reader in ((ember, torch), (torch, ember), (ember, ember)):
        buffer = io.BytesIO()
        tensor = _u(writer, name, [[1, top], [3, 4]])
        writer.save({"plain": tensor, "view": tensor.t(), "kept": writer.nn.Parameter(tensor, requires_grad=False)},
                    buffer)
        buffer.seek(0)
        loaded = reader.load(buffer, weights_only=True) if reader is torch else reader.load(buffer)
        assert repr(loaded["plain"].dtype).endswith(name)
        assert loaded["plain"].tolist() == [[1, top], [3, 4]] and loaded["view"].tolist() == [[1, 3], [top, 4]]
        assert isinstance(loaded["kept"], reader.nn.Parameter) and loaded["kept"].tolist() == [[1, top], [3, 4]]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(UNSIGNED), st.lists(st.integers(0, 2 ** 16 - 1), min_size=1, max_size=6))
def test_values_and_reprs_agree_for_any_values(name, values):
    both(lambda lib: (lambda t: (t, repr(t), t.sum(), (t * t).tolist(), t.sort().values))(_u(lib, name, values)),
         prepare=normalise)


def test_float_ops_are_untouched():
    x = ember.ones(2)
    assert (x + x).dtype is ember.float32 and ember.promote_types(ember.float32, ember.int64) is ember.float32


EVERY = "bool uint8 int8 int16 int32 int64 float16 float32 float64 complex64 complex128 uint16 uint32 uint64".split()


@pytest.mark.parametrize("first", UNSIGNED)
def test_promotion_table_against_every_dtype(first):
    def promoted(lib, second):
        try:
            return repr(lib.promote_types(getattr(lib, first), getattr(lib, second))).split(".")[-1]
        except RuntimeError as error:
            return type(error).__name__

    assert [promoted(ember, d) for d in EVERY] == [promoted(torch, d) for d in EVERY]


@pytest.mark.parametrize("first", UNSIGNED)
@pytest.mark.parametrize("second", EVERY)
def test_mixed_operands_promote_or_refuse_as_torch(first, second):
    def program(lib, ndim_second):
        a = lib.tensor([1, 2], dtype=getattr(lib, first))
        b = lib.ones((2,) if ndim_second else (), dtype=getattr(lib, second))
        try:
            return repr(lib.result_type(a, b)), repr(lib.where(lib.tensor([True, False]), a, b).dtype)
        except RuntimeError as error:
            return type(error).__name__

    for ndim_second in (True, False):
        assert normalise(program(ember, ndim_second)) == normalise(program(torch, ndim_second))
