"""Tensor basics, proved against PyTorch 2.13: metadata, creation, conversion, views, in-place ops, repr.

Each program is written once against a module ``lib`` and run with torch and
with ember; results (values, dtypes, shapes, versions, reprs with 'torch.'
read as 'ember.') must agree.
"""
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
import twins
from twins import both_raise, normalise


# ---------------------------------------------------------------- helpers


def both(program):
    """``twins.both`` comparing dtypes, sizes, devices and reprs too, in ember's spelling."""
    return twins.both(program, prepare=normalise)


# ---------------------------------------------------------------- dtypes and metadata


DTYPE_NAMES = [
    "float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool",
    "float", "double", "half", "long", "int", "short",
]


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtypes_are_exposed_under_torchs_names(name):
    both(lambda lib: (getattr(lib, name), getattr(lib, name).is_floating_point, lib.zeros(1, dtype=getattr(lib, name)).dtype))


def test_default_dtype_and_inferred_dtypes():
    both(lambda lib: (lib.get_default_dtype(), lib.tensor(1.0).dtype, lib.tensor(1).dtype, lib.tensor(True).dtype,
                      lib.tensor([1, 2.5]).dtype, lib.tensor(np.float64(1)).dtype, lib.ones(2).dtype))


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 0, 4)])
def test_shape_size_dim_numel(shape):
    def program(lib):
        t = lib.zeros(shape)
        sizes = [t.size(d) for d in range(-t.dim(), t.dim())]
        return t.shape, t.size(), sizes, t.dim(), t.ndim, t.numel(), len(t.shape), t.shape == shape, t.device

    both(program)


def test_size_is_a_tuple_with_numel_and_repr():
    def program(lib):
        s = lib.Size([2, 3, 4])
        return s, repr(s), s.numel(), s[1:], isinstance(s, tuple), s == (2, 3, 4), tuple(s)

    both(program)


def test_size_of_a_dimension_out_of_range_is_an_error():
    both_raise(lambda lib: lib.zeros(2, 3).size(2), IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)")


@pytest.mark.parametrize("method", ["size", "stride"])
@pytest.mark.parametrize("make,dim,message", [
    (lambda lib: lib.tensor(1.0), 0, r"Dimension specified as 0 but tensor has no dimensions"),
    (lambda lib: lib.tensor(1.0), -1, r"Dimension specified as -1 but tensor has no dimensions"),
    (lambda lib: lib.zeros(0, 3), 5, r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 5\)"),
])
def test_size_and_stride_of_a_missing_dimension_are_errors_like_torch(method, make, dim, message):
    # ember's stride used to index a Python tuple for empty and 0-d tensors ("tuple index out of range")
    both_raise(lambda lib: getattr(make(lib), method)(dim), IndexError, message)


def test_stride_of_an_empty_tensor_takes_negative_dims_like_torch():
    both(lambda lib: (lib.zeros(0, 3).stride(-1), lib.zeros(0, 3).stride(-2), lib.zeros(0, 3).stride()))


def test_fresh_tensor_autograd_metadata():
    def program(lib):
        t = lib.ones(2)
        return t.is_leaf, t.grad, t.grad_fn, t.requires_grad

    assert both(program) == (True, None, None, False)


def test_requires_grad_is_settable_on_leaves():
    def program(lib):
        t = lib.ones(2)
        t.requires_grad = True
        first = t.requires_grad
        t.requires_grad_(False)
        second = t.requires_grad
        returned = t.requires_grad_()
        return first, second, returned is t, t.requires_grad, t.is_leaf, repr(t)

    both(program)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "uint8"])
def test_requires_grad_on_a_non_float_tensor_is_an_error(dtype):
    def program(lib):
        lib.zeros(2, dtype=getattr(lib, dtype)).requires_grad = True

    both_raise(program, RuntimeError, "only Tensors of floating point (and complex )?dtype can require gradients")


def test_requires_grad_argument_on_an_integer_tensor_is_an_error():
    both_raise(lambda lib: lib.tensor([1, 2], requires_grad=True), RuntimeError, "(?i)only Tensors of floating point")


@pytest.mark.parametrize("value", [True, False])
def test_requires_grad_on_a_non_leaf_is_an_error(value):
    def program(lib):
        (lib.ones(2, requires_grad=True) * 2).requires_grad = value

    both_raise(program, RuntimeError, "you can only change requires_grad flags of leaf variables")


def test_requires_grad_underscore_on_a_non_leaf():
    def program(lib):
        h = lib.ones(2, requires_grad=True) * 2
        same = h.requires_grad_() is h
        with pytest.raises(RuntimeError, match="leaf variables"):
            h.requires_grad_(False)
        return same, h.requires_grad

    assert both(program) == (True, True)


# ---------------------------------------------------------------- .data and detach


def test_data_shares_memory_but_not_the_version_counter():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        d = x.data
        d.mul_(5)
        return x, x._version, d._version, d.requires_grad, d.is_leaf, d.grad_fn

    both(program)


def test_data_of_a_non_leaf_hides_changes_from_autograd():
    """Changing ``.data`` is invisible to the version check: the gradient uses the new values (as torch)."""

    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        y = a * b
        b.data.mul_(10)
        y.sum().backward()
        return a.grad, b._version

    both(program)


def test_setting_data_replaces_the_contents():
    def program(lib):
        x = lib.ones(2, requires_grad=True)
        x.data = lib.zeros(3)
        return x, x.requires_grad, x.shape

    both(program)


def test_detach_shares_memory_and_the_version_counter():
    def program(lib):
        a = lib.ones(3, requires_grad=True)
        x = a * 2
        d = x.detach()
        d.add_(1)
        return x, x._version, d._version, d.requires_grad, d.is_leaf, d.grad_fn

    both(program)


def test_detach_makes_the_saved_tensor_check_fire():
    def program(lib):
        a = lib.ones(3, requires_grad=True)
        x = a * 1
        y = x * x
        x.detach().add_(1)
        y.sum().backward()

    both_raise(program, RuntimeError, "modified by an inplace operation")


def test_detach_in_place():
    def program(lib):
        x = lib.ones(2, requires_grad=True) * 2
        returned = x.detach_()
        return returned is x, x.requires_grad, x.grad_fn, x.is_leaf

    both(program)


# ---------------------------------------------------------------- creation


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.tensor([[1, 2], [3, 4]]),
        lambda lib: lib.tensor(2.5),
        lambda lib: lib.tensor([]),
        lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float64),
        lambda lib: lib.tensor([True, False]),
        lambda lib: lib.tensor(np.arange(4, dtype=np.int32)),
        lambda lib: lib.tensor([[1.5], [2.5]], requires_grad=True),
        lambda lib: lib.zeros(2, 3),
        lambda lib: lib.zeros((2, 3), dtype=lib.int64),
        lambda lib: lib.ones(3, dtype=lib.bool),
        lambda lib: lib.ones([2]),
        lambda lib: lib.ones(()),
        lambda lib: lib.full((2, 2), 7),
        lambda lib: lib.full((2,), 7.5),
        lambda lib: lib.full((2,), True),
        lambda lib: lib.empty(2, 3).shape,
        lambda lib: lib.empty(0),
        lambda lib: lib.arange(5),
        lambda lib: lib.arange(1, 4),
        lambda lib: lib.arange(0, 1, 0.25),
        lambda lib: lib.arange(5.0),
        lambda lib: lib.arange(10, 0, -3),
        lambda lib: lib.linspace(0, 1, 5),
        lambda lib: lib.linspace(-1, 1, 1),
        lambda lib: lib.eye(3),
        lambda lib: lib.eye(2, 3, dtype=lib.int64),
        lambda lib: lib.zeros_like(lib.ones(2, dtype=lib.int32)),
        lambda lib: lib.ones_like(lib.zeros(2, 2, dtype=lib.float64)),
        lambda lib: lib.full_like(lib.zeros(3), 2.5),
        lambda lib: lib.empty_like(lib.zeros(2, 3)).shape,
        lambda lib: lib.zeros_like(lib.ones(2, requires_grad=True)).requires_grad,
        lambda lib: lib.ones_like(lib.ones(2), requires_grad=True).requires_grad,
        lambda lib: lib.rand(2, 3).shape,
        lambda lib: lib.randn(4).dtype,
        lambda lib: lib.randint(0, 5, (3,)).dtype,
        lambda lib: lib.randint(3, (2, 2)).shape,
        lambda lib: lib.rand_like(lib.zeros(2, dtype=lib.float64)).dtype,
        lambda lib: lib.randn_like(lib.zeros(3)).shape,
    ],
)
def test_creation_functions(make):
    both(make)


def test_random_values_are_in_range():
    ember.manual_seed(0)
    u = ember.rand(1000).numpy()
    assert u.min() >= 0 and u.max() < 1 and 0.4 < u.mean() < 0.6
    n = ember.randn(5000).numpy()
    assert abs(n.mean()) < 0.1 and 0.9 < n.std() < 1.1
    r = ember.randint(2, 5, (1000,)).numpy()
    assert set(np.unique(r)) == {2, 3, 4}


def test_manual_seed_reproducibility():
    ember.manual_seed(42)
    first = [ember.rand(3).tolist(), ember.randn(2, 2).tolist(), ember.randint(0, 100, (4,)).tolist()]
    ember.manual_seed(42)
    second = [ember.rand(3).tolist(), ember.randn(2, 2).tolist(), ember.randint(0, 100, (4,)).tolist()]
    assert first == second
    assert ember.rand(3).tolist() != first[0]


def test_generator_objects_are_independent_of_the_global_seed():
    g = ember.Generator().manual_seed(7)
    a = ember.rand(4, generator=g).tolist()
    ember.manual_seed(0)
    ember.rand(10)
    g2 = ember.Generator()
    g2.manual_seed(7)
    assert ember.rand(4, generator=g2).tolist() == a


def test_rng_state_round_trip():
    state = ember.get_rng_state()
    a = ember.randn(3).tolist()
    ember.set_rng_state(state)
    assert ember.randn(3).tolist() == a


def test_from_numpy_shares_memory_both_ways():
    def program(lib):
        array = np.zeros(3)
        t = lib.from_numpy(array)
        array[0] = 5
        t[1] = 2
        return t, array.tolist(), t.dtype

    both(program)


def test_as_tensor_shares_memory_and_tensor_copies():
    def program(lib):
        array = np.zeros(3, dtype=np.float32)
        shared = lib.as_tensor(array)
        copied = lib.tensor(array)
        array[0] = 5
        converted = lib.as_tensor(array, dtype=lib.float64)
        array[1] = 7
        return shared, copied, converted

    both(program)


def test_legacy_tensor_constructor():
    def program(lib):
        return lib.Tensor(2, 3).shape, lib.Tensor([1, 2]), lib.Tensor(lib.Size([4])).shape, lib.Tensor(), lib.Tensor([[1.5]]).dtype

    both(program)


@settings(max_examples=25, deadline=None)
@given(data=st.lists(st.one_of(st.integers(-100, 100), st.floats(-1e3, 1e3, allow_nan=False)), min_size=0, max_size=6))
def test_tensor_from_python_lists(data):
    both(lambda lib: lib.tensor(data))


# ---------------------------------------------------------------- conversion


def test_numpy_shares_memory():
    def program(lib):
        t = lib.ones(3)
        array = t.numpy()
        array[0] = 5
        return t, array.tolist()

    both(program)


def test_numpy_refuses_a_tensor_that_requires_grad():
    both_raise(lambda lib: lib.ones(2, requires_grad=True).numpy(), RuntimeError, r"Can't call numpy\(\) on Tensor that requires grad")


@pytest.mark.filterwarnings("ignore:__array_wrap__ must accept context:DeprecationWarning")  # torch's, not ember's
@pytest.mark.parametrize("case", ["tensor_times_array", "exp", "add_number", "compare", "int_sqrt", "zero_d"])
def test_numpy_functions_of_a_tensor_give_a_tensor_back(case):
    """As torch: NumPy computes, and the result comes back as a tensor with no history (bool as uint8)."""
    def program(lib):
        t = lib.tensor([1.0, 2.0])
        result = {
            "tensor_times_array": lambda: t * np.array([3.0, 4.0]),
            "exp": lambda: np.exp(t),
            "add_number": lambda: np.add(t, 1),
            "compare": lambda: np.greater(t, 1.5),
            "int_sqrt": lambda: np.sqrt(lib.tensor([4, 9])),
            "zero_d": lambda: np.exp(lib.tensor(1.0)),
        }[case]()
        return type(result).__name__, result, result.requires_grad, result.is_leaf

    both(program)


def test_numpy_functions_refuse_a_tensor_that_requires_grad():
    both_raise(lambda lib: np.exp(lib.ones(2, requires_grad=True)), RuntimeError, r"Can't call numpy\(\) on Tensor")


def test_tolist_and_item():
    both(lambda lib: (lib.tensor([[1, 2], [3, 4]]).tolist(), lib.tensor(3.5).item(), lib.tensor([7]).item(),
                      lib.tensor(2.0).tolist(), type(lib.tensor(1).item()).__name__, type(lib.tensor(True).item()).__name__))


def test_item_of_several_elements_is_an_error():
    both_raise(lambda lib: lib.ones(2).item(), RuntimeError, "a Tensor with 2 elements cannot be converted to Scalar")


def test_dtype_conversions():
    def program(lib):
        t = lib.tensor([1.7, -1.7, 0.0])
        return (t.to(lib.float64), t.float(), t.double(), t.long(), t.int(), t.bool(), t.half(),
                lib.tensor([1, 2]).float(), t.to(lib.float32) is t, t.to(dtype=lib.int64))

    both(program)


def test_conversions_are_differentiable():
    def program(lib):
        x = lib.tensor([1.5, 2.5], requires_grad=True)
        y = x.double() * 2
        y.sum().backward()
        return y.grad_fn.next_functions[0][0].name(), x.grad

    both(program)


def test_clone_copies_memory_and_records():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        c = x.clone()
        with lib.no_grad():
            c.mul_(5)
        (c * 2).sum().backward()
        return x, c, repr(c), x.grad

    both(program)


def test_contiguous():
    def program(lib):
        t = lib.arange(6.0).view(2, 3).t()
        c = t.contiguous()
        c.mul_(2)
        return t.is_contiguous(), c.is_contiguous(), t, c, t.contiguous().is_contiguous()

    both(program)


# ---------------------------------------------------------------- views


VIEWS = {
    "view": lambda x: x.view(6),
    "view_minus_one": lambda x: x.view(3, -1),
    "reshape_contiguous": lambda x: x.reshape(3, 2),
    "t": lambda x: x.t(),
    "transpose": lambda x: x.transpose(0, 1),
    "permute": lambda x: x.permute(1, 0),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "squeeze": lambda x: x.unsqueeze(0).squeeze(0),
    "row": lambda x: x[1],
    "column": lambda x: x[:, 1],
    "slice_step": lambda x: x[:, ::2],
    "ellipsis_none": lambda x: x[..., None],
    "narrow": lambda x: x.narrow(1, 1, 2),
    "select": lambda x: x.select(1, 0),
    "negative_index": lambda x: x[-1],
    "chained": lambda x: x[:, 1:].t()[0].unsqueeze(0),
}


@pytest.mark.parametrize("case", sorted(VIEWS))
def test_views_share_memory_and_version_counter(case):
    def program(lib):
        x = lib.zeros(2, 3) + lib.arange(6.0).view(2, 3)  # a fresh base
        v = VIEWS[case](x)
        v.mul_(10)
        after_view_change = (x.tolist(), x._version, v._version)
        x.add_(1)
        return after_view_change, v, v._version, v._base is x, v.is_contiguous()

    both(program)


def test_expand_is_a_view_that_sees_changes_of_its_base():
    def program(lib):
        x = lib.zeros(1, 3)
        e = x.expand(4, 3)
        x.add_(lib.tensor([1.0, 2.0, 3.0]))
        return e, e._version, e._base is x, e.stride()

    both(program)


def test_in_place_on_an_expanded_tensor_is_an_error():
    both_raise(lambda lib: lib.zeros(1, 3).expand(2, 3).mul_(2), RuntimeError, "more than one element of the written-to tensor refers to a single memory location")


def test_reshape_copies_when_it_cannot_view():
    def program(lib):
        x = lib.zeros(2, 3)
        r = x.t().reshape(6)
        r.add_(1)
        return x, r, x._version

    both(program)


def test_view_of_a_non_contiguous_tensor_is_an_error():
    both_raise(lambda lib: lib.zeros(2, 3).t().view(6), RuntimeError, "view size is not compatible with input tensor's size and stride")


def test_indexing_every_dimension_gives_a_view():
    def program(lib):
        x = lib.zeros(2, 3)
        v = x[1, 2]
        v.add_(5)
        return x, v.shape, v._version, v._base is x

    both(program)


@pytest.mark.parametrize("key", [1, (slice(None), 1), slice(1, None), (1, 2), (Ellipsis, None), [0], (0, slice(None, None, 2))])
def test_grad_fn_names_of_indexing(key):
    def program(lib):
        x = lib.ones(2, 3, requires_grad=True) * 1
        return x[key].grad_fn.name()

    both(program)


def test_views_share_memory_with_numpy():
    x = ember.zeros(2, 3)
    assert np.shares_memory(x.t().numpy(), x.numpy())
    assert np.shares_memory(x[1].numpy(), x.numpy())


# ---------------------------------------------------------------- in-place ops bump the version


IN_PLACE = {
    "add_": lambda lib, x: x.add_(2),
    "add_tensor_alpha": lambda lib, x: x.add_(lib.ones(3), alpha=3),
    "sub_": lambda lib, x: x.sub_(lib.tensor([1.0, 2.0, 3.0])),
    "mul_": lambda lib, x: x.mul_(3),
    "div_": lambda lib, x: x.div_(4),
    "zero_": lambda lib, x: x.zero_(),
    "fill_": lambda lib, x: x.fill_(2.5),
    "fill_tensor": lambda lib, x: x.fill_(lib.tensor(4.0)),
    "copy_": lambda lib, x: x.copy_(lib.tensor([7, 8, 9])),
    "copy_broadcast": lambda lib, x: x.copy_(lib.tensor([7.0])),
    "clamp_": lambda lib, x: x.clamp_(0.5, 1.5),
    "clamp_min": lambda lib, x: x.clamp_(min=1.0),
    "iadd": lambda lib, x: x.__iadd__(1),
    "isub": lambda lib, x: x.__isub__(lib.ones(3)),
    "imul": lambda lib, x: x.__imul__(2),
    "itruediv": lambda lib, x: x.__itruediv__(2),
    "setitem_int": lambda lib, x: x.__setitem__(0, 9.0),
    "setitem_slice": lambda lib, x: x.__setitem__(slice(1, None), lib.tensor([5.0, 6.0])),
    "setitem_mask": lambda lib, x: x.__setitem__(x > 0.5, 0.0),
    "setitem_index_list": lambda lib, x: x.__setitem__([0, 2], -1.0),
}


@pytest.mark.parametrize("case", sorted(IN_PLACE))
def test_in_place_ops_write_and_bump_the_version(case):
    def program(lib):
        x = lib.tensor([0.0, 1.0, 2.0])
        before = x._version
        result = IN_PLACE[case](lib, x)
        return x, x._version - before, result is x if result is not None else None, x.dtype

    both(program)


@pytest.mark.parametrize("case", ["uniform_", "normal_"])
def test_random_in_place_ops_bump_the_version(case):
    x = ember.zeros(1000)
    getattr(x, case)()
    assert x._version == 1 and x.numpy().std() > 0.1


def test_augmented_assignment_keeps_the_object():
    def program(lib):
        x = lib.ones(2)
        original = x
        x += 1
        x *= 3
        x -= lib.tensor([1.0, 2.0])
        x /= 2
        return x is original, x, x._version

    both(program)


def test_in_place_result_type_that_cannot_be_cast_is_an_error():
    both_raise(lambda lib: lib.ones(2, dtype=lib.int64).mul_(1.5), RuntimeError, "result type Float can't be cast to the desired output type Long")


def test_in_place_broadcast_that_changes_the_shape_is_an_error():
    both_raise(lambda lib: lib.ones(3).add_(lib.ones(2, 3)), RuntimeError, r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]")


@pytest.mark.parametrize("source_shape,message", [
    ((2,), r"size of tensor a \(3\) must match the size of tensor b \(2\) at non-singleton dimension 0"),
    ((2, 3), r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"),
])
def test_copy_from_a_source_that_does_not_fit_raises_like_torch(source_shape, message):
    # ember used to let NumPy's ValueError through, naming no op
    both_raise(lambda lib: lib.zeros(3).copy_(lib.ones(*source_shape)), RuntimeError, message)
    with pytest.raises(RuntimeError, match="^copy_: "):
        ember.zeros(3).copy_(ember.ones(*source_shape))


# ---------------------------------------------------------------- repr


REPRS = {
    "leaf_requires_grad": lambda lib: lib.tensor([1.0, 2.0], requires_grad=True),
    "grad_fn": lambda lib: lib.tensor([1.0, 2.0], requires_grad=True) * 2,
    "float64_grad_fn": lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True).exp(),
    "float64_requires_grad": lambda lib: lib.tensor([1.5], dtype=lib.float64, requires_grad=True),
    "int": lambda lib: lib.tensor([1, 2]),
    "int32": lambda lib: lib.tensor([1, 2], dtype=lib.int32),
    "bool": lambda lib: lib.tensor([True, False]),
    "scalar": lambda lib: lib.tensor(3.25),
    "scalar_grad_fn": lambda lib: lib.tensor([1.0, 2.0], requires_grad=True).sum(),
    "empty": lambda lib: lib.zeros(0),
    "empty_2d": lambda lib: lib.zeros(0, 3),
    "half": lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float16),
    "to_copy": lambda lib: lib.tensor([1.0], requires_grad=True).double(),
    "detached": lambda lib: lib.tensor([1.0], requires_grad=True).detach(),
    "matrix_grad_fn": lambda lib: lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True).t(),
    "view_grad_fn": lambda lib: (lib.tensor([[1.0, 2.0]], requires_grad=True) * 1).view(2),
}


@pytest.mark.parametrize("case", sorted(REPRS))
def test_repr_matches_torch(case):
    both(lambda lib: repr(REPRS[case](lib)))


def test_strides_of_an_empty_tensor_are_row_major_as_torch():
    for shape in [(0, 3), (2, 0, 4), (0,)]:
        assert ember.zeros(*shape).stride() == torch.zeros(*shape).stride()


def test_legacy_type_names_and_casts_match_torch():
    for dtype in ["float32", "float64", "int64", "uint8", "bool"]:
        e, t = ember.ones(2, dtype=getattr(ember, dtype)), torch.ones(2, dtype=getattr(torch, dtype))
        assert e.type() == t.type().replace("torch.", "ember.")
    assert ember.ones(2).type(ember.float64).dtype == ember.float64
    assert ember.ones(2).type("torch.LongTensor").dtype == ember.int64
    with pytest.raises(ValueError, match="invalid type"):
        ember.ones(2).type("ember.NoSuchTensor")


def test_the_mean_of_nothing_is_nan_without_a_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(ember.tensor([]).mean().item())
        assert ember.zeros(0, 3).mean(0).shape == torch.zeros(0, 3).mean(0).shape


# ---------------------------------------------------------------- subclasses: repr and pickling, as torch


def _subclass(lib):
    class Tagged(lib.Tensor):
        pass

    return Tagged


def test_a_subclass_prints_under_its_own_name():
    for rows in ([1.0, 2.0], [[1.0, 2.0], [3.0, 4.0]]):
        expected = repr(torch.tensor(rows).as_subclass(_subclass(torch)))
        assert repr(ember.tensor(rows).as_subclass(_subclass(ember))) == expected


def test_a_parameter_still_prints_as_tensor():
    assert repr(ember.nn.Parameter(ember.ones(2))) == repr(torch.nn.Parameter(torch.ones(2)))


class Tagged(ember.Tensor):  # pickle finds classes by name, so this one lives at module level
    pass


def test_pickling_keeps_a_subclass_and_its_attributes():
    import pickle

    t = ember.tensor([1.0, 2.0], requires_grad=True).as_subclass(Tagged)
    t.requires_grad_(True)
    t.note = "calibrated"
    copy = pickle.loads(pickle.dumps(t))
    assert type(copy) is Tagged and copy.note == "calibrated" and copy.requires_grad
    assert copy.tolist() == [1.0, 2.0] and copy.is_leaf and copy.grad is None


def test_pickling_a_plain_tensor_gives_a_plain_leaf():
    import pickle

    y = ember.tensor([1.0, 2.0], requires_grad=True) * 2
    copy = pickle.loads(pickle.dumps(y))
    assert type(copy) is ember.Tensor and copy.is_leaf and copy.requires_grad and copy.tolist() == [2.0, 4.0]


# ---------------------------------------------------------------- arguments that must not be dropped silently


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"])
def test_like_functions_refuse_another_device(name):
    with pytest.raises(RuntimeError, match="CPU only; device 'cuda' is not available"):
        getattr(ember, name)(ember.ones(2), device="cuda")
    assert getattr(ember, name)(ember.ones(2), device="cpu").shape == (2,)


def test_full_like_refuses_another_device():
    with pytest.raises(RuntimeError, match="CPU only"):
        ember.full_like(ember.ones(2), 3.0, device="cuda")


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
def test_only_the_strided_layout_is_accepted(name):
    assert getattr(ember, name)(2, layout=ember.strided).layout is ember.strided
    with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'layout' must be ember.layout, not str .*ember.strided"):
        getattr(ember, name)(2, layout="sparse_coo")


def test_grad_only_inputs_false_warns_as_torch():
    for lib in (torch, ember):
        x = lib.ones(1, requires_grad=True)
        with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
            lib.autograd.grad((x * 2).sum(), x, only_inputs=False)


def test_variable_volatile_warns_as_torch():
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            lib.autograd.Variable(lib.ones(1), volatile=True)


@pytest.mark.parametrize("dtype, value", [
    ("uint8", -1), ("uint8", -255), ("int8", -128), ("int8", 127), ("int32", 2.9), ("int32", -2.9), ("bool", 5),
    ("uint8", True), ("float16", float("inf")), ("float16", 65504.0), ("float64", 1e300),
])
def test_fill_converts_the_value_as_torch(dtype, value):
    """Negative integers wrap into unsigned dtypes (-1 is 255), floats truncate toward zero for integer dtypes."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        both(lambda lib: lib.tensor([1, 2], dtype=getattr(lib, dtype)).fill_(value))


@pytest.mark.parametrize("dtype, value", [
    ("int8", 200), ("uint8", 300), ("uint8", -256), ("uint8", -1.5), ("int64", 2 ** 63), ("int32", float("nan")),
    ("float16", 1e6), ("float16", 65520.0), ("float32", 1e300),
])
def test_fill_refuses_a_value_the_dtype_cannot_hold_as_torch(dtype, value):
    both_raise(lambda lib: lib.tensor([1, 2], dtype=getattr(lib, dtype)).fill_(value), RuntimeError,
               "cannot be converted to type")


@pytest.mark.parametrize("key", [slice(None, None, -1), slice(None, None, -2), slice(1, 2, -1), slice(None, None, 0)])
def test_slices_with_a_step_below_one_are_refused_as_torch(key):
    """NumPy would reverse; a tensor cannot (no negative strides), so torch refuses, and ember with it."""
    both_raise(lambda lib: lib.ones(3)[key], ValueError, "step")

    def assign(lib):
        lib.ones(3)[key] = 0

    both_raise(assign, ValueError, "step")


@pytest.mark.parametrize("start, length, error", [(-5, 1, IndexError), (4, 0, IndexError), (1, -1, RuntimeError),
                                                  (1, 5, RuntimeError)])
def test_narrow_out_of_range_raises_as_torch(start, length, error):
    both_raise(lambda lib: lib.ones(3).narrow(0, start, length), error)


@pytest.mark.parametrize("start, length", [(-3, 1), (3, 0), (0, 3)])
def test_narrow_at_the_edges(start, length):
    both(lambda lib: lib.ones(3).narrow(0, start, length))


CREATION_CORNERS = [
    # Python integers for an integer dtype: unsigned ones take small negatives (they wrap), anything else must fit
    "lib.tensor([-1], dtype=lib.uint8)", "lib.tensor(-1, dtype=lib.uint8)", "lib.tensor([[1, -1]], dtype=lib.uint8)",
    "lib.tensor([300], dtype=lib.uint8)", "lib.tensor([-129], dtype=lib.int8)", "lib.tensor([1.5e3], dtype=lib.int8)",
    "lib.tensor([float('nan')], dtype=lib.int32)", "lib.tensor([1.7, -1.7], dtype=lib.int64)",
    "lib.tensor([True, False], dtype=lib.uint8)", "lib.tensor([], dtype=lib.int8)",
    # integers beyond 64 bits, and floats
    "lib.tensor([2 ** 63])", "lib.tensor([2 ** 64], dtype=lib.uint8)", "lib.tensor([-2 ** 63])",
    "lib.tensor([2 ** 63], dtype=lib.float32)", "lib.tensor([1.5, 2 ** 70])", "lib.tensor([1e10], dtype=lib.float16)",
    # what cannot be a tensor
    "lib.tensor([1, None])", "lib.tensor(object())", "lib.tensor('a')", "lib.tensor(['a'])",
    # full checks its value as fill_ does
    "lib.full((2,), 300, dtype=lib.uint8)", "lib.full((2,), -1, dtype=lib.uint8)", "lib.full((2,), 1e6, dtype=lib.float16)",
    "lib.full((2,), 2.5, dtype=lib.int64)",
    # sizes and bounds
    "lib.eye(-1)", "lib.eye(2, -1)", "lib.eye(0)", "lib.linspace(0, 1, -1)", "lib.linspace(0, 1, 0)",
    "lib.randint(5, 5, (2,))", "lib.randint(3, 1, (2,))",
    # random floats need a floating dtype
    "lib.rand(2, dtype=lib.int64)", "lib.randn(2, dtype=lib.int64)", "lib.rand(2, dtype=lib.bool)",
    "lib.rand_like(lib.ones(2, dtype=lib.int64))", "lib.randn_like(lib.ones(2, dtype=lib.int64))",
    "lib.rand(2, dtype=lib.float64).dtype", "lib.randn_like(lib.ones(2, dtype=lib.int64), dtype=lib.float16).dtype",
]


@pytest.mark.parametrize("expression", CREATION_CORNERS)
def test_creation_corners_match_torch(expression):
    """Values and dtypes as torch's, or an error of the same type: never an answer where torch refuses."""

    def program(lib):
        return eval(expression, {"lib": lib})

    try:
        program(torch)
    except Exception as error:  # noqa: BLE001 - the test is that ember raises the same type
        with pytest.raises(type(error)):
            program(ember)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # torch converts quietly: so must ember
        both(program)


@pytest.mark.parametrize("key, error", [("a", TypeError), (1.5, IndexError), ({}, IndexError)])
def test_indexing_with_what_is_not_an_index_raises_as_torch(key, error):
    both_raise(lambda lib: lib.ones(2, 3)[key], error)


@pytest.mark.parametrize("key", [[0.5], [0, 1.5], [True, 0.5], [-0.5], [2.7], [[0.5, 1.2]]])
def test_a_list_of_floats_indexes_as_its_values_truncated_as_torch(key):
    def program(lib):
        x = lib.arange(12.0, requires_grad=True)
        y = x.view(3, 4)[key]
        y.sum().backward()
        return y, x.grad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's deprecation of non-tuple sequences as keys
        both(program)


@pytest.mark.parametrize("key", [
    [[0, 1], [1, 2]], [0, slice(1, 3)], [None, 0], [Ellipsis, 1], [[0, 2]], [[True, False, True]], [0, [1, 2]],
])
def test_a_short_list_holding_sequences_slices_or_none_indexes_as_a_tuple_with_a_warning(key):
    def program(lib):
        x = lib.arange(12.0).view(3, 4)
        with pytest.warns(UserWarning, match="non-tuple sequence for multidimensional indexing") as caught:
            y = x[key]
        assert caught[0].filename == __file__  # the warning points at the indexing line
        x[key] = -1.0
        return y, x

    both(program)


@pytest.mark.parametrize("key", [[0, 1e30], [float("nan")], [float("inf")], [-2.0 ** 63 - 4096]])
def test_a_list_of_floats_out_of_int64_range_is_an_error_as_torch(key):
    both_raise(lambda lib: lib.ones(3, 4)[key], RuntimeError, "cannot be converted to type int64 without overflow")


@pytest.mark.parametrize("recorded", [False, True])
@pytest.mark.parametrize("dtype, value", [
    ("float16", 1e39), ("float16", 70000.0), ("float16", 65519.0), ("float16", 7), ("float32", 1e300),
    ("float32", float("nan")), ("float64", -1e300), ("uint8", -1), ("uint8", -300), ("int64", 2.7), ("int64", -2.7),
    ("int64", float("inf")), ("int8", 300), ("bool", 2), ("bool", 0.0), ("int32", True),
])
def test_a_number_stored_by_setitem_is_converted_as_torch(dtype, value, recorded):
    if recorded and not dtype.startswith("float"):
        pytest.skip("only floating tensors record")

    def program(lib):
        x = lib.zeros(2, dtype=getattr(lib, dtype), requires_grad=recorded)
        y = x * 1 if recorded else x
        y[0] = value
        return y.detach()

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # torch converts quietly (or raises): so must ember
        try:
            program(torch)
        except RuntimeError:
            both_raise(program, RuntimeError, "cannot be converted to type .* without overflow")
            return
        both(program)


@pytest.mark.parametrize("view", [
    "x", "x[1:, 2:]", "x.t()[1]", "x[:, 1]", "x[1:].detach()", "x[2:].data", "x.expand(2, 3, 4)[1, 2]",
    "x[1:].contiguous()", "x[1:].reshape(8)", "x.t().contiguous()", "x[::2, 1::2]", "x.view(12)[5:].view(7)",
    "x[1] * 2",
])
def test_storage_offset_as_torch(view):
    both(lambda lib: eval(view, {"x": lib.arange(12.0).view(3, 4)}).storage_offset())


@pytest.mark.parametrize("call", [
    "x.new_tensor([1, 2])", "x.new_tensor([1, 2], dtype=lib.int64)", "x.new_zeros(2, 3)", "x.new_zeros((2,))",
    "x.new_ones(2, dtype=lib.int8)", "x.new_full((2,), 3)", "x.new_full((2, 1), True)", "x.new_empty(0, 2).shape",
    "x.new_ones(3, requires_grad=True).requires_grad", "x.ndimension()",
])
def test_new_tensors_take_the_dtype_of_the_tensor_as_torch(call):
    both(lambda lib: eval(call, {"lib": lib, "x": lib.ones(2, 2, dtype=lib.float64)}))


@pytest.mark.parametrize("call", [
    "repr(lib.finfo(lib.float32))", "repr(lib.finfo(lib.float16))", "repr(lib.finfo(lib.float64))", "repr(lib.finfo())",
    "repr(lib.iinfo(lib.int8))", "repr(lib.iinfo(lib.uint8))", "repr(lib.iinfo(lib.int64))",
    "[getattr(lib.finfo(lib.float64), a) for a in ('bits', 'eps', 'max', 'min', 'tiny', 'smallest_normal', 'resolution', 'dtype')]",
    "[getattr(lib.iinfo(lib.int16), a) for a in ('bits', 'max', 'min', 'dtype')]",
    "[lib.can_cast(a, b) for a in (lib.bool, lib.uint8, lib.int64, lib.float16, lib.float64) "
    "for b in (lib.bool, lib.int8, lib.int32, lib.float32)]",
])
def test_type_info_matches_torch(call):
    both(lambda lib: eval(call, {"lib": lib}))


@pytest.mark.parametrize("call", ["lib.iinfo(lib.float32)", "lib.finfo(lib.int32)", "lib.finfo(lib.bool)"])
def test_type_info_of_the_wrong_kind_of_dtype_is_a_type_error_as_torch(call):
    both_raise(lambda lib: eval(call, {"lib": lib}), TypeError, "requires a")


@pytest.mark.parametrize("call", [
    "format(lib.tensor(0.1))", "f'{lib.tensor(0.1)}'", "f'{lib.tensor(0.1):.3f}'", "format(lib.tensor([0.1, 0.2]))",
    "f'{lib.tensor(7)}'", "'{}'.format(lib.tensor(True))", "format(lib.nn.Parameter(lib.tensor(0.5)))",
])
def test_a_plain_0_d_tensor_formats_as_its_number_as_torch(call):
    both(lambda lib: eval(call, {"lib": lib}))


def test_a_subclass_does_not_format_as_a_number_as_torch():
    both_raise(lambda lib: f"{lib.nn.Parameter(lib.tensor(0.5)):.2f}", TypeError)


@pytest.mark.parametrize("value", [0, 1, None, 1.0])
def test_requires_grad_takes_only_a_bool_as_torch(value):
    both_raise(lambda lib: lib.ones(2).requires_grad_(value), TypeError, "must be bool")


@pytest.mark.parametrize("make", ["lib.ones(2, requires_grad=True)", "lib.nn.Parameter(lib.ones(2))"])
def test_data_of_a_tensor_that_requires_grad_must_stay_floating_as_torch(make):
    def program(lib):
        t = eval(make, {"lib": lib})
        t.data = lib.ones(2, dtype=lib.int64)

    both_raise(program, RuntimeError, "data set to a tensor that requires gradients must be floating point")


def test_data_of_a_tensor_without_grad_may_change_dtype_as_torch():
    def program(lib):
        t = lib.ones(2)
        t.data = lib.ones(2, dtype=lib.int64)
        return t

    both(program)


def _near_half_midpoints() -> np.ndarray:
    """Doubles just off the midpoints between neighbouring halves: a single rounds them onto the midpoint."""
    halves = np.arange(2 ** 16, dtype=np.uint16).view(np.float16)
    halves = np.sort(halves[np.isfinite(halves)].astype(np.float64))
    midpoints = (halves[:-1] + halves[1:]) / 2
    return np.concatenate([midpoints * (1 + 2.0 ** -30), midpoints * (1 - 2.0 ** -30)])


@pytest.mark.parametrize("how", ["tensor", "to", "half", "full", "fill_", "setitem", "add", "rsub", "clamp", "lt"])
def test_a_double_becomes_half_through_single_as_torch(how):
    """torch makes a half from a single: a double is rounded twice, where NumPy rounds once."""
    values = _near_half_midpoints()
    few = values[:: len(values) // 200]  # the per-number ways, on a sample

    def program(lib):
        half = lib.float16
        if how == "tensor":
            return lib.tensor(values, dtype=half)
        if how == "to":
            return lib.tensor(values).to(half)
        if how == "half":
            return lib.tensor(values.tolist(), dtype=lib.float64).half()
        results = []
        for v in few.tolist():
            if how == "full":
                results.append(lib.full((1,), v, dtype=half))
            elif how == "fill_":
                results.append(lib.zeros(1, dtype=half).fill_(v))
            elif how == "setitem":
                t = lib.zeros(1, dtype=half)
                t[0] = v
                results.append(t)
            else:
                x = lib.tensor([v], dtype=half)  # the half nearest to v, either side of it
                results.append({"add": lambda: x + v, "rsub": lambda: v - x, "clamp": lambda: x.clamp(min=v),
                                "lt": lambda: x < v}[how]())
        return results

    def as_array(result) -> np.ndarray:
        return np.concatenate([t.numpy() for t in result]) if isinstance(result, list) else result.numpy()

    np.testing.assert_array_equal(as_array(program(ember)), as_array(program(torch)))


# ---------------------------------------------------------------- tensors as Python objects, and with NumPy, as torch


@pytest.mark.parametrize("convert", ["int", "float", "complex", "math.floor"])
@pytest.mark.parametrize("values", [[1.0, 2.0], []])
def test_a_number_from_other_than_one_element_is_a_value_error_as_torch(convert, values):
    import math

    both_raise(lambda lib: eval(convert, {"math": math})(lib.tensor(values)), ValueError,
               "only one element tensors can be converted to Python scalars")


@pytest.mark.parametrize("values, fragment", [([], "with no values is ambiguous"),
                                              ([1, 2], "with more than one value is ambiguous")])
def test_truth_of_other_than_one_element_is_ambiguous_as_torch(values, fragment):
    both_raise(lambda lib: bool(lib.tensor(values)), RuntimeError, "Boolean value of Tensor " + fragment)


@pytest.mark.parametrize("case", [
    "2 in lib.tensor([1, 2, 3])", "5 in lib.tensor([1, 2, 3])", "2.0 in lib.tensor([1, 2, 3])",
    "True in lib.tensor([0, 1])", "lib.tensor(2) in lib.tensor([1, 2, 3])", "3 in lib.tensor(3)",
    "lib.tensor([1, 2]) in lib.tensor([[1, 2], [3, 4]])", "lib.tensor([1, 3]) in lib.tensor([[1, 2], [3, 4]])",
    "np.float32(4) in lib.tensor([[1, 2], [3, 4]])", "float('nan') in lib.tensor([float('nan')])",
    "1.0 in lib.tensor([1.0, 2.0], requires_grad=True)", "1.0 in lib.tensor([[1.0, 2.0]], requires_grad=True) * 2",
])
def test_in_asks_whether_any_element_equals_as_torch(case):
    both(lambda lib: eval(case, {"lib": lib, "np": np}))


@pytest.mark.parametrize("element", ["'a'", "None", "[1]"])
def test_in_takes_only_a_tensor_or_a_number_as_torch(element):
    both_raise(lambda lib: eval(element) in lib.tensor([1, 2]), RuntimeError,
               r"__contains__ only supports Tensor or scalar, but you passed in a <class")


@pytest.mark.parametrize("convert", [
    "np.array(t)", "np.array(t, copy=True)", "np.array(t, dtype=np.float64)", "np.asarray(t)",
    "np.asarray(t, dtype=np.float32)", "np.asarray(t, dtype=np.float64)", "t.numpy()", "t.__array__()",
    "t.__array__(np.float32)", "t.__array__('int32')",
])
def test_numpy_arrays_of_a_tensor_copy_or_share_as_torch(convert):
    """np.array copies (NumPy asks __array__ for a copy); np.asarray shares unless the dtype changes."""
    def program(lib):
        t = lib.tensor([1.0, 2.0])
        array = eval(convert, {"np": np, "t": t})
        array[0] = 9
        return type(array).__name__, array.dtype.str, t

    both(program)


@pytest.mark.parametrize("case", [
    "t == np.array([1.0, 3.0])", "np.array([1.0, 3.0]) == t", "t == np.array(2.0)", "lib.tensor([1, 2]) == np.array([1, 0])",
    "np.array([3.0, 4.0]) / t", "np.array([3, 4]) / lib.tensor([1, 2])", "np.array(3.0) / t",
    "t @ np.array([3.0, 4.0])", "t @ np.ones((2, 2), dtype=np.float32)",
])
def test_binary_operators_with_an_ndarray_give_a_tensor_as_torch(case):
    def program(lib):
        t = lib.tensor([1.0, 2.0])
        result = eval(case, {"lib": lib, "np": np, "t": t})
        return type(result).__name__, result

    both(program)


@pytest.mark.parametrize("case", ["t @ 'a'", "'a' @ t", "t @ 2", "np.ones(2) @ t", "t @ [1.0, 2.0]"])
def test_matmul_with_an_operand_it_cannot_take_is_pythons_unsupported_operand_error_as_torch(case):
    both_raise(lambda lib: eval(case, {"np": np, "t": lib.ones(2)}), TypeError, r"unsupported operand type\(s\) for @")


@pytest.mark.parametrize("call", ["lib.matmul(t, np.ones(2))", "lib.matmul(np.ones(2), t)", "lib.matmul(t, 'a')"])
def test_the_function_matmul_with_a_non_tensor_names_the_argument_as_torch(call):
    both_raise(lambda lib: eval(call, {"lib": lib, "np": np, "t": lib.ones(2)}), TypeError,
               r"matmul\(\): argument '(input|other)' \(position [12]\) must be Tensor, not (numpy\.)?(ndarray|str)")


def test_an_ndarray_divided_by_a_tensor_that_requires_grad_is_refused_as_torch():
    both_raise(lambda lib: np.array([1.0, 2.0]) / lib.ones(2, requires_grad=True), RuntimeError,
               r"Can't call numpy\(\) on Tensor that requires grad")


def test_conversions_to_a_number_warn_once_for_a_tensor_that_requires_grad_as_torch():
    """float(t), complex(t) of a tensor that requires grad, and from_numpy of a read-only array: one warning
    each for the life of the program (run in a fresh interpreter, since torch's are shown only once)."""
    import subprocess
    import sys

    script = (
        "import warnings, numpy as np, {lib} as lib\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    x = lib.tensor([2.5], requires_grad=True)\n"
        "    int(x), bool(x), x.item(), x.tolist(), x.detach().__float__()\n"
        "    float(x), float(x * 2), complex(x)\n"
        "    a = np.ones(2)\n"
        "    a.flags.writeable = False\n"
        "    lib.from_numpy(a), lib.from_numpy(a), lib.as_tensor(a)\n"
        "print([' '.join(str(w.message).split()[:4]) for w in caught])\n"
    )
    seen = [subprocess.run([sys.executable, "-c", script.format(lib=lib.__name__)], capture_output=True, text=True,
                           check=True, timeout=120).stdout for lib in (torch, ember)]
    assert seen[0] == seen[1] == "['Converting a tensor with', 'The given NumPy array']\n"


@pytest.mark.parametrize("make", ["lib.tensor(t)", "lib.tensor(t, dtype=lib.float64)", "t.new_tensor(t)"])
def test_a_tensor_made_from_a_tensor_warns_as_torch(make):
    for lib in (torch, ember):
        t = lib.ones(2, requires_grad=True)
        with pytest.warns(UserWarning, match="To copy construct from a tensor"):
            copy = eval(make, {"lib": lib, "t": t})
        assert copy.is_leaf and not copy.requires_grad


def test_an_array_of_another_byte_order_is_a_value_error_as_torch():
    for make in ("lib.from_numpy(a)", "lib.as_tensor(a)", "lib.tensor(a)"):
        both_raise(lambda lib: eval(make, {"lib": lib, "a": np.array([1.0, 2.0], dtype=">f8")}), ValueError,
                   "byte order")


@pytest.mark.parametrize("dtype", [object, str])
def test_an_array_of_an_unsupported_type_is_refused_with_numpys_type_name_as_torch(dtype):
    both_raise(lambda lib: lib.from_numpy(np.array([1, 2], dtype=dtype)), TypeError,
               r"can't convert np.ndarray of type numpy\.(object_|str_)\. The only supported types are")


@pytest.mark.parametrize("case", ["container", "offset", "expanded", "grad", "only_the_view"])
def test_deepcopy_keeps_memory_shared_between_the_tensors_copied_together_as_torch(case):
    import copy

    def program(lib):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0])
        if case == "container":
            x2, v = copy.deepcopy([x, x[1:3]])
            x2[1] = 100.0  # the copied view sees the copied base change, the original does not
            return v, x, v.storage_offset()
        if case == "offset":
            v = copy.deepcopy(x.view(2, 2)[1])
            return v, v.storage_offset(), v.stride()
        if case == "expanded":
            e = copy.deepcopy(x[:1].expand(2, 3))
            return e, e.stride()
        if case == "grad":
            w = lib.ones(2, requires_grad=True)
            w.grad = lib.full((2,), 3.0)
            w2, g2 = copy.deepcopy([w, w.grad])
            g2.add_(1)
            return w2.grad, w2.requires_grad, w2.is_leaf, w.grad
        v = x[2:]
        v2 = copy.deepcopy(v)
        v2[0] = 7.0
        return v2, x, v2.storage_offset()

    both(program)


def test_deepcopy_copies_a_tensors_own_attributes_deeply_as_torch():
    import copy

    def program(lib):
        t = lib.ones(2)
        t.notes = ["a"]
        c = copy.deepcopy(t)
        c.notes.append("b")
        return t.notes, c.notes

    both(program)


@pytest.mark.parametrize("expression", [
    "s + (4,)", "(4,) + s", "s + s", "s * 2", "2 * s", "s * 0", "s[1:]", "s[::-1]", "s[0]",
    "[type(v).__name__ for v in (s + (4,), (4,) + s, s * 2, 2 * s, s[1:])]",
])
def test_size_arithmetic_gives_sizes_as_torch(expression):
    both(lambda lib: eval(expression, {"s": lib.Size([2, 3])}))


@pytest.mark.parametrize("expression", ["s + [4]", "[4] + s", "s + 4"])
def test_size_concatenates_only_tuples_as_torch(expression):
    both_raise(lambda lib: eval(expression, {"s": lib.Size([2, 3])}), TypeError, "can only concatenate|unsupported operand")


def test_tensor_type_and_byte_attributes_as_torch():
    both(lambda lib: (repr(type(lib.ones(2))), lib.ones(2, 3).itemsize, lib.ones(2, 3, dtype=lib.float64).nbytes,
                      lib.ones(2, dtype=lib.int16)[::2].nbytes, lib.ones(2).is_cpu))


@pytest.mark.parametrize("items", ["[lib.tensor(1.), lib.tensor(2.)]", "[lib.ones(1), lib.ones(1, 1)]",
                                   "[[lib.tensor(1.), 2.], [3., lib.tensor(4)]]", "[lib.tensor(1), lib.tensor(2.5)]",
                                   "[lib.tensor(True), 2]"])
def test_tensors_inside_a_sequence_are_taken_as_the_numbers_they_hold_as_torch(items):
    twins.both(lambda lib: lib.tensor(eval(items, {"lib": lib})))


@pytest.mark.parametrize("items", ["[lib.ones(2), lib.ones(2)]", "(lib.ones(2),)", "[lib.ones(0)]",
                                   "[[1., lib.zeros(2, 1)]]"])
def test_a_tensor_of_several_elements_inside_a_sequence_is_refused_as_torch(items):
    both_raise(lambda lib: lib.tensor(eval(items, {"lib": lib})), ValueError,
               "only one element tensors can be converted to Python scalars")


@pytest.mark.parametrize("call,error,fragment", [
    ("lib.zeros(2, dtype=lib.int64).uniform_()", NotImplementedError, "\"check_uniform_bounds\" not implemented for 'Long'"),
    ("lib.zeros(2, dtype=lib.bool).normal_()", NotImplementedError, "\"normal_kernel_cpu\" not implemented for 'Bool'"),
    ("lib.zeros(2).uniform_(2, 1)", RuntimeError, r"uniform_ expects to return a \[from, to\) range, but found from=2 > to=1"),
    ("lib.zeros(2).normal_(std=-1)", RuntimeError, "normal expects std >= 0.0, but found std -1"),
    ("lib.zeros(2).uniform_(0, math.inf)", RuntimeError, "to is out of bounds for"),
    ("lib.zeros(2).uniform_(math.nan, 1)", RuntimeError, "from is out of bounds for"),
    ("lib.zeros(2, dtype=lib.float16).uniform_(0, 1e6)", RuntimeError, "to is out of bounds for"),
])
def test_random_fills_refuse_what_torch_refuses(call, error, fragment):
    import math

    both_raise(lambda lib: eval(call, {"lib": lib, "math": math}), error, fragment)


def test_random_fills_take_equal_bounds_and_a_zero_std_as_torch():
    both(lambda lib: (lib.zeros(2).uniform_(1, 1), lib.zeros(2).normal_(3, 0)))


@pytest.mark.parametrize("sizes", [(2,), (1, 2), (1, 1, 2)])
def test_an_expand_that_repeats_nothing_can_be_written_through(sizes):
    def program(lib):
        x = lib.zeros(2)
        view = x.expand(*sizes)
        view.add_(1)
        return x, view.stride(), view._version

    both(program)


def test_an_expand_that_repeats_refuses_writes():
    both_raise(lambda lib: lib.zeros(1).expand(3).add_(1), RuntimeError, "more than one element of the written-to")


@pytest.mark.parametrize("make", [
    "x[1:]", "x.view(12)", "x.t()", "x.detach()", "x[[0]]", "x.clone()", "x.t().reshape(12)", "x.unbind()[0]",
    "x[1:][1:]", "x.contiguous()", "x.data", "x[None]", "x.to(lib.float32)", "lib.nn.Parameter(x)",
])
def test_is_view_and_base_as_torch(make):
    def program(lib):
        x = lib.arange(12.).reshape(3, 4)
        v = eval(make, {"x": x, "lib": lib})
        return v._is_view(), v._base is x, v._base is None

    both(program)


def test_numpy_of_a_tensor_that_requires_grad_is_allowed_under_no_grad_as_in_torch():
    import numpy as np
    import torch

    def outcomes(lib):
        x = lib.ones(2, requires_grad=True)
        calls = (lambda: x.numpy(), lambda: np.asarray(x), lambda: x[:1].numpy(), lambda: (x * 2).numpy())
        found = []
        for call in calls:
            for grad_off in (True, False):
                try:
                    if grad_off:
                        with lib.no_grad():
                            found.append(call().tolist())
                    else:
                        found.append(call().tolist())
                except RuntimeError as error:
                    found.append(str(error))
        return found

    assert outcomes(ember) == outcomes(torch)
