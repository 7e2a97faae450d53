"""The *_copy ops, as_strided_scatter and empty_permuted against torch: values, fresh memory, gradients, out=."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from twins import both, both_raise

import ember
from ember.autograd import gradcheck, gradgradcheck

# (name, input shape, arguments): each op on a shape where its arguments apply
CASES = [
    ("alias_copy", (2, 3), ()),
    ("alias_copy", (), ()),
    ("as_strided_copy", (3, 4), ((2, 2), (1, 3), 1)),
    ("diagonal_copy", (3, 4), (1,)),
    ("diagonal_copy", (2, 3, 4), (-1, 2, 0)),
    ("expand_copy", (3, 1), ((2, 3, 4),)),
    ("expand_copy", (), ((2,),)),
    ("permute_copy", (2, 3, 4), ((2, 0, 1),)),
    ("select_copy", (3, 4), (1, -1)),
    ("slice_copy", (4, 5), (1, 1, None, 2)),
    ("slice_copy", (4, 5), (0, -100, 100)),
    ("slice_copy", (0, 5), (0,)),
    ("split_copy", (5, 2), (2,)),
    ("split_with_sizes_copy", (2, 5), ([1, 0, 4], 1)),
    ("squeeze_copy", (1, 2, 1), ()),
    ("squeeze_copy", (1, 2, 1), ((0, 2),)),
    ("squeeze_copy", (1, 2, 1), (-1,)),
    ("squeeze_copy", (), ()),
    ("t_copy", (3, 4), ()),
    ("t_copy", (3,), ()),
    ("transpose_copy", (2, 3, 4), (0, -1)),
    ("unbind_copy", (3, 2), (1,)),
    ("unfold_copy", (4, 5), (1, 2, 2)),
    ("unsqueeze_copy", (3,), (-1,)),
    ("unsqueeze_copy", (), (0,)),
    ("view_copy", (3, 4), ((2, -1),)),
    ("view_copy", (0, 4), ((4, 0),)),
]
IDS = [f"{name}{shape}{args}" for name, shape, args in CASES]


def _input(lib, shape, transposed=False):
    values = np.random.default_rng(sum(shape) + len(shape)).standard_normal(shape)
    if transposed and len(shape) >= 2:  # the same values, through a non-contiguous view
        base = lib.tensor(np.ascontiguousarray(np.swapaxes(values, 0, 1)), dtype=lib.float64)
        return base.transpose(0, 1).requires_grad_()
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def _outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("name, shape, args", CASES, ids=IDS)
def test_values_and_gradients_as_torch(name, shape, args, transposed):
    def program(lib):
        x = _input(lib, shape, transposed)
        outs = _outputs(getattr(lib, name)(x, *args))
        weights = [lib.arange(float(o.numel()), dtype=lib.float64).reshape(o.shape) for o in outs]
        loss = sum(((o * w).sum() for o, w in zip(outs, weights)), lib.zeros((), dtype=lib.float64))
        grad = lib.autograd.grad(loss, x, allow_unused=True)[0] if loss.requires_grad else None
        return outs, [o.is_contiguous() for o in outs], grad

    both(program)


@pytest.mark.parametrize("name, shape, args", CASES, ids=IDS)
def test_results_have_their_own_memory_and_gradcheck(name, shape, args):
    x = _input(ember, shape, transposed=True)
    outs = _outputs(getattr(ember, name)(x, *args))
    for out in outs:
        assert out._base is None and not np.shares_memory(out.detach().numpy(), x.detach().numpy())
    assert gradcheck(lambda a: getattr(ember, name)(a, *args), (x,))
    assert gradgradcheck(lambda a: getattr(ember, name)(a, *args), (x,))


def test_detach_copy_and_view_copy_to_a_dtype():
    x = ember.ones(2, 3, requires_grad=True)
    copied = ember.detach_copy(x)
    assert not copied.requires_grad and not np.shares_memory(copied.numpy(), x.detach().numpy())
    both(lambda lib: lib.view_copy(lib.arange(6.0).reshape(2, 3).t(), lib.int32))
    both(lambda lib: lib.view_copy(lib.arange(4, dtype=lib.int16), lib.int32))
    both(lambda lib: lib.view_copy(lib.arange(2, dtype=lib.float64), lib.int16))
    both_raise(lambda lib: lib.view_copy(lib.ones(3, dtype=lib.int16), lib.int32), RuntimeError, "divisible by 2")


@pytest.mark.parametrize("name, args, error, fragment", [
    ("t_copy", (), RuntimeError, r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D"),
    ("transpose_copy", (0, 5), IndexError, "Dimension out of range"),
    ("select_copy", (0, 5), IndexError, "index 5 out of range for tensor of size \\[2, 3, 4\\] at dimension 0"),
    ("expand_copy", ((3, 3, 4),), RuntimeError, "must match the existing size \\(2\\) at non-singleton dimension 0"),
    ("view_copy", ((5,),), RuntimeError, "shape '\\[5\\]' is invalid for input of size 24"),
    ("unfold_copy", (0, 3, 1), RuntimeError, "maximum size for tensor at dimension 0 is 2 but size is 3"),
    ("slice_copy", (0, 0, 1, 0), RuntimeError, "slice step must be positive"),
    ("as_strided_copy", ((100,), (1,)), RuntimeError, "out of bounds for storage of size 96"),
    ("diagonal_copy", (0, 0, 0), RuntimeError, "diagonal dimensions cannot be identical 0, 0"),
    ("split_with_sizes_copy", ([1, 2],), RuntimeError, "split_sizes to sum exactly to 2"),
])
def test_errors_as_torch(name, args, error, fragment):
    both_raise(lambda lib: getattr(lib, name)(lib.ones(2, 3, 4), *args), error, fragment)
    both_raise(lambda lib: getattr(lib, name)(1.0, *args), TypeError, f"{name}\\(\\)")


def test_out_writes_into_the_given_tensors():
    def program(lib):
        x = lib.arange(12.0).reshape(3, 4)
        one, pieces = lib.empty(4, 3), [lib.empty(3, 2), lib.zeros(3, 2, dtype=lib.int64)]
        returned = lib.t_copy(x, out=one)
        nothing = lib.split_copy(x, 2, 1, out=pieces)
        return returned is one, one, nothing, pieces

    both(program)
    both_raise(lambda lib: lib.unbind_copy(lib.ones(2, 3), out=[lib.empty(3)]), RuntimeError,
               "expected an out= argument of size 2, got size 1")
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.t_copy(ember.ones(2, requires_grad=True), out=ember.empty(2))  # torch: an out whose backward fails


def test_under_vmap():
    from ember.func import vmap

    x = ember.randn(3, 4, 5)
    for fn in (lambda a: ember.t_copy(a), lambda a: ember.select_copy(a, 1, 2), lambda a: ember.slice_copy(a, 1, 1),
               lambda a: ember.split_copy(a, 2, 1)[1], lambda a: ember.unsqueeze_copy(a, 0),
               lambda a: ember.view_copy(a, (5, 4)), lambda a: ember.diagonal_copy(a)):
        assert ember.equal(vmap(fn)(x), ember.stack([fn(x[i]) for i in range(3)]))


SCATTER_CASES = [((6,), (2,), (2,), None), ((3, 4), (2, 2), (4, 1), 1), ((3, 4), (2, 3), (1, 4), None),
                 ((4,), (0,), (1,), None)]


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("shape, size, stride, offset", SCATTER_CASES)
def test_as_strided_scatter_as_torch(shape, size, stride, offset, transposed):
    def program(lib):
        x = _input(lib, shape, transposed)
        src = lib.tensor(np.random.default_rng(1).standard_normal(size), requires_grad=True)
        y = x.detach().as_strided_scatter(src, size, stride, offset)
        weight = lib.arange(float(y.numel()), dtype=lib.float64).reshape(y.shape)
        return y, None if transposed else lib.autograd.grad((y * weight).sum(), src)

    # torch 2.13's gradients fail its own gradcheck for some inputs, and for src on a non-contiguous input: those
    # are checked by gradcheck only
    both(program)
    x = _input(ember, shape, transposed)
    src = ember.randn(size, dtype=ember.float64, requires_grad=True)
    scatter = lambda a, b: ember.as_strided_scatter(a, b, size, stride, offset)  # noqa: E731
    assert gradcheck(scatter, (x, src)) and gradgradcheck(scatter, (x, src))


def test_as_strided_scatter_errors_and_casts():
    both_raise(lambda lib: lib.as_strided_scatter(lib.zeros(6), lib.ones(3), (2,), (2,)), RuntimeError,
               r"expected src to have a size equal to the slice of self. src size = \[3\], slice size = \[2\]")
    both_raise(lambda lib: lib.as_strided_scatter(lib.zeros(6), lib.ones(7), (7,), (1,)), RuntimeError,
               "out of bounds for storage")
    both(lambda lib: lib.as_strided_scatter(lib.zeros(6), lib.ones(2, dtype=lib.int64), (2,), (5,)))


def test_empty_permuted_as_torch():
    def program(lib):
        t = lib.empty_permuted((2, 3, 4), (2, 0, 1), dtype=lib.float64, requires_grad=True)
        return t.shape, t.stride(), t.dtype, t.requires_grad, t.is_leaf

    both(program, prepare=lambda v: tuple(str(i).replace("torch.", "ember.") for i in v))
    both_raise(lambda lib: lib.empty_permuted((2, 3), (0, 0)), RuntimeError, "Duplicate dim not allowed")
    both_raise(lambda lib: lib.empty_permuted((2, 3), (0,)), RuntimeError, "len\\(size\\) = 2 is not equal to "
               "len\\(physical_layout\\) = 1")
    both_raise(lambda lib: lib.empty_permuted((2, 3), (0, -1)), RuntimeError, "but got -1 at index 1")


@st.composite
def _shape_and_dims(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=4)))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    other = draw(st.integers(-len(shape), len(shape) - 1))
    start, end = draw(st.integers(-5, 5)), draw(st.integers(-5, 5))
    return shape, dim, other, start, end, draw(st.integers(1, 3))


@given(_shape_and_dims())
def test_random_shapes_as_torch(case):
    shape, dim, other, start, end, step = case

    def program(lib):
        x = lib.tensor(np.arange(float(np.prod(shape))).reshape(shape))
        outs = [lib.slice_copy(x, dim, start, end, step), lib.transpose_copy(x, dim, other),
                lib.split_copy(x, step, dim), lib.unsqueeze_copy(x, dim), lib.squeeze_copy(x, dim)]
        if shape[dim]:
            outs.append(lib.select_copy(x, dim, start % shape[dim]))
        return outs

    both(program)
