"""Twin tests of the shaping ops for what the op table cannot express: every result of the ops that return
several, memory shared with the input, in-place changes of shape, keyword forms, warnings, and properties.
"""
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from twins import both, both_raise, grad_fn_name, leaf, normalise


def grid(lib, *shape, dtype="float64"):
    """A tensor of 0, 1, 2 ... of ``shape``."""
    return lib.arange(float(np.prod(shape)), dtype=getattr(lib, dtype)).reshape(shape)


# ----------------------------------------------------------------- ops that return several views


SEVERAL = [
    "x.split(2)", "x.split([1, 3], dim=0)", "x.split(4, dim=1)", "x.chunk(3)", "x.chunk(4, 1)",
    "x.tensor_split(3)", "x.tensor_split([1, 3], dim=1)", "x.tensor_split(L.tensor([2]))", "x.hsplit(3)",
    "x.vsplit([1])", "L.dsplit(x.reshape(2, 2, 6), 3)", "x.unbind(1)", "L.meshgrid(x[0], x[1, :2], indexing='ij')",
    "L.broadcast_tensors(x, x[:1])", "L.atleast_2d(x[0], x[0, 0], x)",
]


@pytest.mark.parametrize("expression", SEVERAL)
def test_every_result_has_torchs_values_and_node(expression):
    def program(L):
        x = grid(L, 4, 6).requires_grad_()
        results = eval(expression, {"L": L, "x": x})
        return [(r, grad_fn_name(r), r._base is not None) for r in results]

    both(program)


@pytest.mark.parametrize("expression", SEVERAL[:11])
def test_gradient_of_all_pieces_together(expression):
    """Weighted pieces summed: each piece's gradient lands in its own place (pieces not used give zeros)."""

    def program(L):
        x = leaf(L, np.linspace(-1, 1, 24).reshape(4, 6))
        pieces = eval(expression, {"L": L, "x": x})
        total = sum((p * p * (i + 1)).sum() for i, p in enumerate(pieces) if i != 1)
        (g,) = L.autograd.grad(total, x, create_graph=True)
        (gg,) = L.autograd.grad((g * g).sum(), x, allow_unused=True, materialize_grads=True)
        return g, gg

    both(program)


@pytest.mark.parametrize("op", ["x.split(2)", "x.chunk(2)", "x.split([1, 3])"])
def test_pieces_of_split_refuse_in_place_changes_under_grad_as_torch(op):
    def program(L):
        x = grid(L, 4, 3).requires_grad_() * 1
        eval(op, {"x": x})[0].mul_(2)

    both_raise(program, RuntimeError, "multiple views")


def test_pieces_of_tensor_split_take_in_place_changes_under_grad_as_torch():
    """tensor_split's pieces are separate slices (torch records each as a SliceBackward0)."""

    def program(L):
        w = leaf(L, np.ones((4, 3)))
        x = w * 1
        x.tensor_split(2)[1].mul_(3)
        x.sum().backward()
        return x, w.grad

    both(program)


def test_pieces_share_memory_and_version_with_their_input():
    def program(L):
        x = grid(L, 4, 3)
        pieces = x.split(2) + x.chunk(4, 1) + x.tensor_split(2, 1)
        versions = [p._version for p in pieces]
        x.add_(1)
        return versions, [p._version for p in pieces], [p.sum() for p in pieces]

    both(program)


# ----------------------------------------------------------------- the views among the new ops


@pytest.mark.parametrize("expression", [
    "x.diagonal(1)", "x.unfold(1, 2, 2)", "x.as_strided((2, 2), (1, 6), 1)", "x.movedim(0, 1)",
    "x.unflatten(1, (2, 3))",
    "x.adjoint()", "x.ravel()", "x[:, 1:].as_strided((2,), (7,))",
])
def test_views_share_memory_and_writes_reach_the_base(expression):
    def program(L):
        x = grid(L, 4, 6)
        y = eval(expression, {"x": x})
        y.mul_(-1)
        return x, y, y.stride(), y.storage_offset(), x._version

    both(program)


@pytest.mark.parametrize("expression", ["x.unfold(1, 3, 1)", "x.as_strided((3, 3), (1, 1))"])
def test_overlapping_views_have_torchs_gradients_of_every_order(expression):
    def program(L):
        x = leaf(L, np.linspace(-1, 1, 24).reshape(4, 6))
        y = eval(expression, {"x": x})
        weights = L.tensor(np.arange(y.numel()).reshape(y.shape) % 5, dtype=L.float64)
        (g,) = L.autograd.grad((y * y * weights).sum(), x, create_graph=True)
        (gg,) = L.autograd.grad((g * g).sum(), x)
        return y, g, gg

    both(program)


def test_as_strided_counts_from_the_start_of_the_memory():
    def program(L):
        x = grid(L, 4, 6)
        view = x[1:, 2:]
        return view.storage_offset(), view.as_strided((2, 2), (6, 1)), view.as_strided((2,), (1,), 0)

    both(program)


def test_diagonal_of_a_diagonal_changes_its_base():
    def program(L):
        x = L.zeros(2, 3, 3)
        x.diagonal(0, 1, 2).diagonal().fill_(5.)
        return x

    both(program)


# ----------------------------------------------------------------- in-place changes of shape


IN_PLACE = ["unsqueeze_(0)", "unsqueeze_(-1)", "squeeze_()", "squeeze_(1)", "squeeze_((0, 1))", "t_()",
            "transpose_(0, 2)", "swapaxes_(0, 1)", "swapdims_(-1, 0)"]


@pytest.mark.parametrize("through_view", [False, True], ids=["direct", "through_view"])
@pytest.mark.parametrize("call", IN_PLACE)
def test_in_place_change_of_shape_as_torch(call, through_view):
    """The same tensor with the new shape, its version moved, its node torch's; a view stays a view of its base."""

    def program(L):
        w = leaf(L, np.linspace(-1, 1, 6).reshape(2, 1, 3) if call != "t_()" else np.ones((2, 3)))
        base = w * 2
        x = base[...] if through_view else base
        version = x._version
        y = eval(f"x.{call}")
        (x * L.arange(x.numel(), dtype=L.float64).reshape(x.shape)).sum().backward()
        return y is x, tuple(x.shape), x.stride(), x._version - version, grad_fn_name(x), base, w.grad, \
            (x._base is base) if through_view else x._base is None

    both(program, prepare=normalise)


@pytest.mark.parametrize("call", ["unsqueeze_(0)", "t_()", "squeeze_()", "transpose_(0, 1)"])
def test_in_place_change_of_shape_refuses_a_leaf_that_requires_grad(call):
    both_raise(lambda L: eval(f"x.{call}", {"x": L.ones(2, 3, requires_grad=True)}), RuntimeError, "leaf Variable")


@pytest.mark.parametrize("expression, fragment", [
    ("x.split(1)[0].unsqueeze_(0)", "multiple views"), ("x.unbind()[0].t_()", "multiple views"),
    ("w.view(6).squeeze_()", "view of a leaf Variable"), ("w[0].transpose_(0, 0)", "view of a leaf Variable"),
])
def test_in_place_change_of_shape_is_refused_where_any_in_place_change_is(expression, fragment):
    def program(L):
        w = L.ones(2, 3, requires_grad=True)
        eval(expression, {"w": w, "x": w * 1})

    both_raise(program, RuntimeError, fragment)


def test_in_place_change_of_shape_without_grad_shares_memory():
    def program(L):
        x = grid(L, 2, 3)
        y = x[0]
        y.unsqueeze_(0)
        y[0, 1] = -1.
        return x, y.shape, y._base is x

    both(program, prepare=normalise)


@pytest.mark.parametrize("call", ["tril_(1)", "triu_(-1)"])
def test_tril_and_triu_in_place_through_a_view_as_torch(call):
    def program(L):
        w = leaf(L, np.linspace(-1, 1, 12).reshape(3, 4))
        x = w * 1
        eval(f"x[1:].{call}")
        (x * x).sum().backward()
        return x, w.grad

    both(program)


@pytest.mark.parametrize("sizes", ["(2, 2)", "(6,)", "(3, 2)", "((2, 3),)", "(0,)"])
def test_resize_within_the_memory_as_torch(sizes):
    def program(L):
        x = grid(L, 2, 3)
        view = x[...]
        y = x.resize_(*eval(sizes))
        y.mul_(-1)
        return y is x, x, view, x._version, x.stride()

    both(program)


def test_resize_beyond_the_memory_keeps_the_old_contents_in_front():
    def program(L):
        x = grid(L, 2, 3)
        x.resize_(3, 3)
        return x.shape, x.flatten()[:6], x._version, x.resize_as_(L.ones(2, 2)).shape

    both(program, prepare=normalise)


def test_resize_refuses_a_tensor_that_requires_grad():
    both_raise(lambda L: L.ones(2, requires_grad=True).resize_(3), RuntimeError, "cannot resize variables that "
               "require grad")


def test_as_strided_in_place_is_recorded_as_torch():
    def program(L):
        w = leaf(L, np.linspace(-1, 1, 6))
        x = w * 1
        x.as_strided_((2, 2), (1, 2), 1)
        (x * x).sum().backward()
        return x, grad_fn_name(x), x._version, w.grad

    both(program)


def test_H_of_a_0_d_tensor_warns_and_gives_it_back():
    for lib in (torch, ember):
        x = lib.tensor(2.0)
        with pytest.warns(UserWarning, match="deprecated"):
            assert x.H is x


# ----------------------------------------------------------------- forms of the calls


KEYWORDS = [
    "L.split(tensor=x, split_size_or_sections=2, dim=1)", "x.split(split_size=2, dim=1)", "L.split(x, L.tensor(2))",
    "L.chunk(input=x, chunks=2, dim=1)", "x.tensor_split(sections=2, dim=1)", "x.tensor_split(indices=[1, 2], dim=1)",
    "x.tensor_split(tensor_indices_or_sections=L.tensor([1]), dim=1)", "x.hsplit(sections=2)", "x.hsplit(indices=[1])",
    "L.vsplit(x, sections=3)", "L.movedim(input=x, source=0, destination=1)",
    "x.movedim(source=(0, 1), destination=(1, 0))", "L.moveaxis(input=x, source=0, destination=1)",
    "L.roll(input=x, shifts=1, dims=0)", "x.roll(shifts=(1,), dims=(1,))", "L.rot90(input=x, k=2, dims=[0, 1])",
    "x.rot90(k=3, dims=(1, 0))", "L.diagonal(input=x, offset=1, dim1=1, dim2=0)", "x.diagonal(offset=-1)",
    "L.diag_embed(input=x, offset=1, dim1=0, dim2=2)", "L.diag(input=x, diagonal=1)", "L.diagflat(input=x, offset=1)",
    "L.tril(input=x, diagonal=-1)", "x.triu(diagonal=1)", "x.unfold(dimension=1, size=2, step=1)",
    "L.as_strided(input=x, size=(2, 2), stride=(1, 2), storage_offset=1)", "L.unflatten(input=x, dim=1, sizes=(2, 2))",
    "L.repeat_interleave(input=x, repeats=2, dim=0, output_size=6)",
    "x.repeat_interleave(repeats=L.tensor([1, 2, 0]), dim=0)", "L.repeat_interleave(repeats=L.tensor([1, 2]))",
    "L.repeat_interleave(L.tensor([1, 2]), output_size=3)", "L.flip(input=x, dims=(0,))", "x.flip(dims=(0,))",
    "x.flip(0, 1)", "x.repeat(repeats=(2, 1))", "L.tile(input=x, dims=(2,))", "x.tile(dims=(2,))", "x.tile(2, 1)",
    "L.fliplr(input=x)", "L.flipud(input=x)", "L.ravel(input=x)", "L.hstack(tensors=[x, x])",
    "L.vstack(tensors=(x, x))", "L.column_stack(tensors=[x, x])", "L.dstack(tensors=[x, x])",
    "L.row_stack(tensors=[x, x])", "L.meshgrid([x[0], x[1]], indexing='xy')", "x.broadcast_to(size=(2, 3, 4))",
    "L.tril_indices(row=3, col=3, offset=1)", "L.triu_indices(3, 3, 1, dtype=L.int32)", "x.view_as(other=x)",
    "x.reshape_as(other=x.t())", "x.clone().unsqueeze_(dim=0)", "x.clone().transpose_(dim0=0, dim1=1)",
    "x.clone().swapaxes_(axis0=0, axis1=1)", "x.clone().tril_(diagonal=1)", "L.atleast_1d()",
    "L.atleast_3d([x, x[0]])", "L.broadcast_shapes((2, 1), (3,), 1)", "L.broadcast_shapes()",
    "L.broadcast_shapes(L.Size([2, 1]), [4])", "L.broadcast_tensors(x)", "L.broadcast_tensors(x, x[0])",
]


@pytest.mark.parametrize("expression", KEYWORDS)
def test_forms_of_the_call_as_torch(expression):
    both(lambda L: eval(expression, {"L": L, "x": grid(L, 3, 4, dtype="float32")}), prepare=normalise)


@pytest.mark.parametrize("op", ["hstack", "vstack", "dstack", "column_stack", "row_stack"])
def test_joining_into_out(op):
    def program(L):
        out = L.zeros(1)
        result = getattr(L, op)([grid(L, 2, 3, dtype="float32"), L.ones(2, 3)], out=out)
        return result is out, out

    both(program)


@pytest.mark.parametrize("expression", ["L.tril(x, 1, out=out)", "L.triu(x, out=out)", "L.diag(x, -1, out=out)",
                                        "L.diag(x[0], out=out)"])
def test_triangles_and_diagonals_into_out(expression):
    def program(L):
        out = L.zeros(2)
        result = eval(expression, {"L": L, "x": grid(L, 3, 4, dtype="float32"), "out": out})
        return result is out, out

    both(program)


def test_a_broadcast_tensor_of_the_common_shape_comes_back_as_it_is():
    def program(L):
        x, y = L.ones(2, 3), L.ones(3)
        a, b = L.broadcast_tensors(x, y)
        return a is x, b is y, b._base is y

    both(program)


def test_meshgrid_without_indexing_warns_and_uses_ij():
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match="indexing"):
            a, b = lib.meshgrid(lib.ones(2), lib.ones(3))
        assert tuple(a.shape) == (2, 3)


def test_adjoint_of_a_0_d_tensor_warns_and_gives_it_back():
    for lib in (torch, ember):
        x = lib.tensor(2.0)
        with pytest.warns(UserWarning, match="deprecated"):
            assert lib.adjoint(x) is x


@pytest.mark.parametrize("expression, error, fragment", [
    ("L.broadcast_shapes((2,), (3,))", RuntimeError, "Attempting to broadcast a dimension of length 3"),
    ("L.broadcast_shapes((-1,), (3,))", ValueError, "negative length"),
    ("L.split(x, [1, 1])", RuntimeError, "split_with_sizes"),
    ("L.atleast_1d(x, 2)", TypeError, "expected Tensor as element 1"),
    ("L.broadcast_tensors([x, x])", TypeError, "expected Tensor as element 0"),
    ("L.repeat_interleave(L.tensor(2))", RuntimeError, "1D vector"),
    ("L.repeat_interleave(L.tensor([1., 2.]))", NotImplementedError, "'Float'"),
    ("L.repeat_interleave(L.tensor([1, 2], dtype=L.uint8))", NotImplementedError, "'Byte'"),
    ("x.repeat_interleave(L.tensor([1, 2, 1], dtype=L.int8), dim=0)", NotImplementedError, "'Char'"),
    ("L.repeat_interleave(L.tensor([1, 2]), output_size=4)", RuntimeError, "allocated size does not match"),
    ("L.tril_indices(3, -1)", RuntimeError, "col must be non-negative"),
    ("L.roll(x, ())", RuntimeError, "`shifts` required"),
    # along a dim of a 0-d tensor s
    ("s.narrow(0, 0, 1)", RuntimeError, "narrow\\(\\) cannot be applied to a 0-dim tensor"),
    ("s.select(0, 0)", IndexError, "select\\(\\) cannot be applied to a 0-dim tensor"),
    ("s.select(-1, 0)", IndexError, "select\\(\\) cannot be applied to a 0-dim tensor"),
    ("s.repeat_interleave(2, dim=0)", IndexError, "Dimension"),
    ("s.repeat_interleave(L.tensor([2]), dim=-1)", IndexError, "Dimension specified as -1"),
])
def test_errors_as_torch(expression, error, fragment):
    both_raise(lambda L: eval(expression, {"L": L, "x": L.ones(3, 4), "s": L.tensor(5.0)}), error, fragment)


def test_repeat_interleave_of_int32_counts_gives_int32_indices():
    both(lambda L: L.repeat_interleave(L.tensor([1, 0, 2], dtype=L.int32), output_size=3), prepare=normalise)


@pytest.mark.parametrize("dims", [[0], [-1], ()])
def test_flip_of_a_0_d_tensor_is_a_copy_with_its_gradient(dims):
    def program(L):
        s = leaf(L, 5.0)
        flipped = L.flip(s, dims)
        flipped.backward(L.tensor(2.0, dtype=L.float64))
        return flipped, s.grad, grad_fn_name(flipped)

    both(program)


# ----------------------------------------------------------------- properties


@st.composite
def split_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=1, max_size=3)))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    kind = draw(st.sampled_from(["split", "chunk", "tensor_split_n", "tensor_split_at"]))
    if kind == "tensor_split_at":
        value = draw(st.lists(st.integers(-7, 7), max_size=4))
    elif kind == "split":
        value = draw(st.integers(1 if shape[dim] else 0, 6))
    else:
        value = draw(st.integers(1, 6))
    return shape, dim, kind, value


@settings(max_examples=80, deadline=None)
@given(split_cases())
def test_splitting_as_torch_and_the_pieces_join_back(case):
    shape, dim, kind, value = case
    name = {"split": "split", "chunk": "chunk"}.get(kind, "tensor_split")

    def program(L):
        x = L.arange(float(np.prod(shape))).reshape(shape)
        pieces = getattr(x, name)(value, dim)
        return list(pieces), L.cat(pieces, dim) if pieces else x

    pieces, joined = both(program)
    if kind != "tensor_split_at" or value == sorted(v % (shape[dim] + 1) for v in value):
        np.testing.assert_array_equal(joined, np.arange(float(np.prod(shape))).reshape(shape))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=3), st.integers(-5, 5), st.integers(-3, 3))
def test_roll_rot90_flip_and_diagonals_as_torch(shape, shift, k):
    shape = tuple(shape)

    def program(L):
        x = L.arange(float(np.prod(shape))).reshape(shape)
        results = [x.roll(shift), x.roll(shift, 0), x.flip(-1), L.repeat_interleave(x, 2, 0)]
        if len(shape) >= 2:
            results += [x.rot90(k), x.rot90(k, (-1, 0)), x.tril(shift), x.triu(k), x.diagonal(shift, 0, -1),
                        x.diag_embed(k), x.unfold(-1, min(shape[-1], 2), 1)]
        return results

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(program)


@pytest.mark.parametrize("make, attr, warning", [
    ("lib.tensor(1.)", "T", "Tensor.T is deprecated on 0-D tensors"), ("lib.ones(3)", "T", "The use of `x.T`"),
    ("lib.ones(2, 3, 4)", "T", "The use of `x.T`"), ("lib.ones(2, 3)", "T", None),
    ("lib.tensor(1.)", "mT", "Tensor.mT is deprecated on 0-D tensors"),
    ("lib.tensor(1.)", "mH", "Tensor.mH is deprecated on 0-D tensors"), ("lib.ones(2, 3, 4)", "mT", None),
])
def test_transposing_properties_warn_and_return_as_torch(make, attr, warning):
    """x.T warns on other than 2-D tensors, and T, mT and mH on 0-d ones (identities), with torch's words (torch
    warns once a process, so its warnings are not compared here)."""
    def program(lib):
        x = eval(make, {"lib": lib})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = getattr(x, attr)
        return (y, y is x, y._is_view()), [str(w.message) for w in caught]

    both(lambda lib: program(lib)[0])
    said = program(ember)[1]
    assert said == [] if warning is None else (len(said) == 1 and said[0].startswith(warning))


@pytest.mark.parametrize("attr", ["mT", "mH"])
def test_batch_transposes_refuse_a_vector_as_torch(attr):
    both_raise(lambda lib: getattr(lib.ones(3), attr), RuntimeError, f"tensor.{attr} is only supported on matrices")
