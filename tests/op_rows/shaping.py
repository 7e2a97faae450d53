"""Op-table rows: shaping (moving dims, joining, splitting, repeating, flipping, triangles, diagonals, strided views).

An op that returns several tensors has a row per result it is tested on: the sample's last argument
picks it (``lambda m, x, n, i: m.split(x, n)[i]``).
"""
import numpy as np

from op_spec import A, C, D, Err, FLOATS, HALF, INTS, OpSpec, S, T, getattr_op, in_place, s  # noqa: F401

ALL = FLOATS + INTS + ("bool",)


def method(name: str):
    """``x.<name>(*args, **kwargs)``."""
    return lambda m, x, *args, **kwargs: getattr(x, name)(*args, **kwargs)


def picked(name: str):
    """``lib.<name>(x, *args)[i]``: one result of an op that returns several, ``i`` the sample's last argument."""
    return lambda m, x, *args: getattr(m, name)(x, *args[:-1])[args[-1]]


def joined(name: str):
    """``lib.<name>([tensors])``."""
    return lambda m, *tensors: getattr(m, name)(list(tensors))


SPLITS = (
    OpSpec("split", picked("split"),
           (s(A(5, 3), 2, 0, 0), s(A(5, 3), 2, 0, 2), s(A(3, 5), [1, 4], 1, 1), s(T(4, 3), 2, -1, 1),
            s(S(3, 4), 3, 1, 0),
            s(A(0, 3), 2, 0, 0), s(A(4), 4, 0, 0), s(A(0), 0, 0, 0), s(A(4, 3), [4, 0], 0, 1)),
           dtypes=ALL,
           errors=(Err(lambda m: m.ones(4).split(0), RuntimeError, "split_size"),
                   Err(lambda m: m.ones(4).split(-1), RuntimeError, "non-negative"),
                   Err(lambda m: m.ones(4).split([1, 2]), RuntimeError, "sum exactly to 4"),
                   Err(lambda m: m.tensor(1.0).split(1), RuntimeError, "1-dimensional"),
                   Err(lambda m: m.ones(4).split(2, 1), IndexError, "split"))),
    OpSpec("split_method", lambda m, x, n, dim, i: x.split(n, dim)[i], (s(A(5, 3), 2, 0, 2), s(A(3, 5), [2, 3], 1, 0))),
    OpSpec("chunk", picked("chunk"),
           (s(A(5, 3), 3, 0, 0), s(A(5, 3), 3, 0, 2), s(A(3, 4), 2, -1, 1), s(T(4, 3), 4, 0, 3), s(A(0, 3), 2, 0, 1)),
           dtypes=ALL,
           errors=(Err(lambda m: m.ones(5).chunk(0), RuntimeError, "greater than 0"),
                   Err(lambda m: m.tensor(1.0).chunk(1), RuntimeError, "1-dimensional"))),
    OpSpec("tensor_split", picked("tensor_split"),
           (s(A(5, 3), 3, 0, 0), s(A(5, 3), 3, 0, 2), s(A(3, 5), [1, 4], 1, 1), s(A(5), [3, 1], 0, 1),
            s(A(5), [3, 1], 0, 2), s(A(5), [-2], 0, 1), s(A(5), [7], 0, 1), s(S(3, 4), 2, 1, 1), s(T(4, 3), 5, 0, 4),
            s(A(5, 2), C(np.array([1, 3])), 0, 1), s(A(5, 2), C(np.array(2)), 0, 1)),
           dtypes=ALL,
           errors=(Err(lambda m: m.ones(5).tensor_split(0), RuntimeError, "larger than 0"),
                   Err(lambda m: m.ones(5).tensor_split(m.tensor([1.0, 2.0])), RuntimeError, "dtype of long"),
                   Err(lambda m: m.ones(5).tensor_split(m.tensor([[1, 2]])), RuntimeError, "one-dimensional"),
                   Err(lambda m: m.tensor(1.0).tensor_split(1), RuntimeError, "1-dimensional"))),
    OpSpec("hsplit", picked("hsplit"), (s(A(4, 6), 2, 1), s(A(6), 3, 2), s(A(4, 6), [1, 4], 2), s(T(4, 6), 3, 0)),
           errors=(Err(lambda m: m.hsplit(m.ones(4, 6), 4), RuntimeError, "divisible"),
                   Err(lambda m: m.hsplit(m.tensor(1.0), 1), RuntimeError, "at least 1 dimension"))),
    OpSpec("vsplit", picked("vsplit"), (s(A(4, 6), 2, 1), s(A(4, 6), [3], 0), s(S(4, 3), 4, 3)),
           errors=(Err(lambda m: m.vsplit(m.ones(6), 2), RuntimeError, "at least 2 dimension"),
                   Err(lambda m: m.vsplit(m.ones(5, 2), 2), RuntimeError, "divisible"))),
    OpSpec("dsplit", picked("dsplit"), (s(A(2, 2, 6), 2, 1), s(A(2, 3, 4), [1, 2], 2)),
           errors=(Err(lambda m: m.dsplit(m.ones(2, 6), 2), RuntimeError, "at least 3 dimension"),)),
)

JOINING = (
    OpSpec("hstack", joined("hstack"),
           (s(A(2, 3), A(2, 1)), s(A(3), A(2)), s(A(), A()), s(T(3, 4), S(3, 4)), s(A(2, 0), A(2, 3)),
            s(A(2, 2, 3), A(2, 1, 3))),
           dtypes=FLOATS + INTS,
           errors=(Err(lambda m: m.hstack([]), RuntimeError, "non-empty"),
                   Err(lambda m: m.hstack([m.ones(2, 3), m.ones(3, 3)]), RuntimeError, "Sizes of tensors"),
                   Err(lambda m: m.hstack(m.ones(2)), TypeError))),
    OpSpec("vstack", joined("vstack"),
           (s(A(2, 3), A(1, 3)), s(A(3), A(3)), s(A(), A()), s(T(3, 4), S(1, 4)), s(A(0, 3), A(3))),
           dtypes=FLOATS + INTS,
           errors=(Err(lambda m: m.vstack([]), RuntimeError, "non-empty"),
                   Err(lambda m: m.vstack([m.ones(3), m.ones(2)]), RuntimeError, "Sizes of tensors"))),
    OpSpec("row_stack", joined("row_stack"), (s(A(2, 3), A(1, 3)), s(A(3), A(3))), dtypes=FLOATS + INTS),
    OpSpec("dstack", joined("dstack"),
           (s(A(2, 3), A(2, 3)), s(A(3), A(3)), s(A(), A()), s(A(2, 3, 1), T(2, 3)), s(A(1, 0), A(0))),
           dtypes=FLOATS + INTS,
           errors=(Err(lambda m: m.dstack([]), RuntimeError, "non-empty"),)),
    OpSpec("column_stack", joined("column_stack"),
           (s(A(3), A(3, 2)), s(A(), A()), s(A(2, 3), A(2)), s(T(3, 4), S(3, 4)), s(A(0), A(0, 2))),
           dtypes=FLOATS + INTS,
           errors=(Err(lambda m: m.column_stack([m.ones(3), m.ones(2, 2)]), RuntimeError, "Sizes of tensors"),)),
    OpSpec("atleast_1d", getattr_op("atleast_1d"), (s(A()), s(A(3)), s(A(2, 3)), s(A(0)))),
    OpSpec("atleast_2d", getattr_op("atleast_2d"), (s(A()), s(A(3)), s(A(2, 3)), s(A(0)), s(T(3, 4)))),
    OpSpec("atleast_3d", getattr_op("atleast_3d"), (s(A()), s(A(3)), s(A(2, 3)), s(A(2, 3, 4)), s(S(2, 3)))),
    OpSpec("atleast_2d_many", lambda m, x, y, i: m.atleast_2d(x, y)[i], (s(A(3), A(), 0), s(A(3), A(), 1))),
    OpSpec("atleast_3d_list", lambda m, x, y, i: m.atleast_3d([x, y])[i], (s(A(3), A(2, 2), 0), s(A(3), A(2, 2), 1))),
    OpSpec("broadcast_tensors", lambda m, x, y, i: m.broadcast_tensors(x, y)[i],
           (s(A(3, 1), A(4), 0), s(A(3, 1), A(4), 1), s(A(2, 3), A(), 1), s(A(0, 1), A(3), 0), s(T(3, 4), A(4), 0)),
           dtypes=ALL,
           errors=(Err(lambda m: m.broadcast_tensors(m.ones(2), m.ones(3)), RuntimeError, "size of tensor a"),)),
    OpSpec("broadcast_to_method", lambda m, x, shape: x.broadcast_to(shape), (s(A(3, 1), (2, 3, 4)), s(A(), (2,)))),
    OpSpec("meshgrid_ij", lambda m, x, y, i: m.meshgrid(x, y, indexing="ij")[i],
           (s(A(2), A(3), 0), s(A(2), A(3), 1), s(A(), A(3), 0), s(A(0), A(3), 1), s(S(2), A(3), 0)), dtypes=ALL,
           errors=(Err(lambda m: m.meshgrid(m.ones(2, 2), m.ones(3), indexing="ij"), RuntimeError, "meshgrid"),
                   Err(lambda m: m.meshgrid(m.ones(2), m.ones(3), indexing="foo"), RuntimeError, "meshgrid"),
                   Err(lambda m: m.meshgrid(m.ones(2), m.ones(3, dtype=m.float64), indexing="ij"), RuntimeError,
                       "meshgrid"),
                   Err(lambda m: m.meshgrid(indexing="ij"), RuntimeError, "meshgrid"))),
    OpSpec("meshgrid_xy", lambda m, x, y, z, i: m.meshgrid([x, y, z], indexing="xy")[i],
           (s(A(2), A(3), A(4), 0), s(A(2), A(3), A(4), 1), s(A(2), A(3), A(4), 2))),
)

MOVING = (
    OpSpec("unflatten", getattr_op("unflatten"),
           (s(A(4, 6), 1, (2, 3)), s(A(4, 6), -1, (2, -1)), s(A(6), 0, (3, 2, 1)), s(T(6, 4), 0, (2, 3)),
            s(A(0, 4), 1, (2, 2)), s(A(4, 6), 0, [4])),
           errors=(Err(lambda m: m.ones(4, 6).unflatten(1, (4, -1)), RuntimeError, "multiply up"),
                   Err(lambda m: m.ones(4, 6).unflatten(1, ()), RuntimeError, "non-empty"),
                   Err(lambda m: m.ones(4, 6).unflatten(1, (2, 2)), RuntimeError, "multiply up"),
                   Err(lambda m: m.ones(4, 6).unflatten(2, (2, 3)), IndexError, "Dimension out of range"))),
    OpSpec("adjoint", getattr_op("adjoint"), (s(A(2, 3)), s(A(2, 3, 4)), s(T(3, 4)), s(A(0, 2))),
           errors=(Err(lambda m: m.ones(3).adjoint(), RuntimeError, "adjoint"),)),
    OpSpec("movedim", getattr_op("movedim"),
           (s(A(2, 3, 4), 0, -1), s(A(2, 3, 4), (0, 1), (2, 0)), s(A(), 0, 0), s(T(3, 4), 1, 0), s(A(0, 3), 0, 1),
            s(A(2, 3), 0, 0)),
           errors=(Err(lambda m: m.ones(2, 3).movedim((0, 1), (0,)), RuntimeError, "movedim"),
                   Err(lambda m: m.ones(2, 3).movedim((0, 0), (0, 1)), RuntimeError, "repeated dim"),
                   Err(lambda m: m.ones(2, 3).movedim(0, 2), IndexError, "out of range"))),
    OpSpec("moveaxis", getattr_op("moveaxis"), (s(A(2, 3, 4), 2, 0), s(S(2, 3), -1, 0))),
    OpSpec("mH", lambda m, x: x.mH, (s(A(2, 3)), s(A(2, 3, 4)), s(T(3, 4)), s(A(0, 2))),
           errors=(Err(lambda m: m.ones(3).mH, RuntimeError, "mH"),)),
    OpSpec("H", lambda m, x: x.H, (s(A(2, 3)), s(S(3, 4)), s(A(0, 2))),
           errors=(Err(lambda m: m.ones(3).H, RuntimeError, "H"), Err(lambda m: m.ones(2, 3, 4).H, RuntimeError, "H"))),
    OpSpec("ravel", getattr_op("ravel"), (s(A(2, 3)), s(A()), s(A(0, 3)), s(T(3, 4)), s(S(2, 3))), dtypes=ALL),
    OpSpec("view_as", lambda m, x, other: x.view_as(other), (s(A(2, 6), C(np.zeros(12))), s(A(), C(np.zeros((1, 1))))),
           errors=(Err(lambda m: m.ones(2, 6).view_as(3), TypeError, "view_as"),
                   Err(lambda m: m.ones(2, 6).view_as(m.ones(5)), RuntimeError, "view"))),
    OpSpec("reshape_as", lambda m, x, other: x.reshape_as(other),
           (s(A(2, 6), C(np.zeros((3, 4)))), s(T(3, 4), C(np.zeros(12)))),
           errors=(Err(lambda m: m.ones(2, 6).reshape_as(3), TypeError, "reshape_as"),)),
)

REPEATING = (
    OpSpec("repeat", lambda m, x, *sizes: x.repeat(*sizes),
           (s(A(2, 3), 2, 1), s(A(2, 3), 2, 2, 3), s(A(), 2, 3), s(A(2, 3), (1, 0)), s(T(3, 4), 1, 2),
            s(S(2, 3), 3, 1, 1),
            s(A(0, 3), 2, 2), s(A(), ())),
           dtypes=ALL,
           errors=(Err(lambda m: m.ones(2, 3).repeat(2), RuntimeError, "repeat"),
                   Err(lambda m: m.ones(2, 3).repeat(2, -1), RuntimeError, "negative dimension"),
                   Err(lambda m: m.ones(2, 3).repeat(), TypeError, "repeat"))),
    OpSpec("tile", getattr_op("tile"),
           (s(A(2, 3), (2,)), s(A(2, 3), (2, 1, 2)), s(A(), (3,)), s(A(2, 3), ()), s(T(3, 4), (2, 1))), dtypes=ALL,
           errors=(Err(lambda m: m.ones(2, 3).tile(-1), RuntimeError, "negative dimension"),)),
    OpSpec("tile_method", lambda m, x, *dims: x.tile(*dims), (s(A(2, 3), 2), s(A(2, 3), 2, 1, 2), s(A(2, 3), (2, 2)))),
    OpSpec("repeat_interleave", getattr_op("repeat_interleave"),
           (s(A(2, 3), 2), s(A(2, 3), 2, 0), s(A(2, 3), 3, -1), s(A(), 3), s(A(0, 3), 2, 1), s(T(3, 4), 2, 1),
            s(S(2, 3), 0, 1), s(A(2, 3), C(np.array([1, 0, 2])), 1), s(A(2, 3), C(np.array([2])), 1),
            s(A(2, 3), C(np.array([1, 2, 0, 1, 1, 3]))), s(A(2, 3), C(np.array(2)), 0),
            s(A(2, 3), 2, 1, output_size=6), s(A(2, 3), C(np.array([1, 2, 3])), 1, output_size=6)),
           dtypes=FLOATS + INTS,
           errors=(Err(lambda m: m.ones(2, 3).repeat_interleave(2, dim=1, output_size=5), RuntimeError, "output_size"),
                   Err(lambda m: m.ones(2, 3).repeat_interleave(m.tensor([1, 2]), dim=1), RuntimeError, "same size"),
                   Err(lambda m: m.ones(2, 3).repeat_interleave(m.tensor([1, -2, 3]), dim=1), RuntimeError, "negative"),
                   Err(lambda m: m.ones(2, 3).repeat_interleave(-1), RuntimeError, "non-negative"),
                   Err(lambda m: m.ones(2, 3).repeat_interleave(2, dim=2), IndexError, "out of range"),
                   Err(lambda m: m.ones(2, 3).repeat_interleave(m.tensor([1.0, 2, 3]), dim=1), NotImplementedError,
                       "repeat_interleave"),
                   Err(lambda m: m.repeat_interleave(m.tensor([[1, 2]])), RuntimeError, "1D vector"))),
    OpSpec("repeat_interleave_counts", lambda m, x: m.repeat_interleave(x.long()), (s(A(4)), s(A(0))),
           domain=(0.0, 3.0), dtypes=("int64",), differentiable=False),
)

FLIPPING = (
    OpSpec("flip", getattr_op("flip"),
           (s(A(2, 3), (0,)), s(A(2, 3, 4), (0, 2)), s(A(), ()), s(A(2, 3), ()), s(T(3, 4), (-1,)), s(S(2, 3), [0, 1]),
            s(A(0, 3), [1])),
           dtypes=ALL,
           errors=(Err(lambda m: m.ones(2, 3).flip((0, 0)), RuntimeError, "multiple times"),
                   Err(lambda m: m.flip(m.ones(2, 3), 0), TypeError, "flip"),
                   Err(lambda m: m.ones(2, 3).flip(2), IndexError, "out of range"))),
    OpSpec("flip_method", lambda m, x, *dims: x.flip(*dims), (s(A(2, 3), 0, 1), s(A(2, 3), (1,)), s(A(2, 3), 1))),
    OpSpec("fliplr", getattr_op("fliplr"), (s(A(2, 3)), s(A(2, 3, 4)), s(T(3, 4))), dtypes=ALL,
           errors=(Err(lambda m: m.ones(3).fliplr(), RuntimeError, "2-d"),)),
    OpSpec("flipud", getattr_op("flipud"), (s(A(2, 3)), s(A(3)), s(S(2, 3))), dtypes=ALL,
           errors=(Err(lambda m: m.tensor(1.0).flipud(), RuntimeError, "1-d"),)),
    OpSpec("roll", getattr_op("roll"),
           (s(A(2, 3), 1), s(A(2, 3), -4, 1), s(A(2, 3), (1, 2), (0, 1)), s(A(), 3), s(A(0, 3), 1, 0), s(T(3, 4), 2),
            s(S(2, 3), (1, 1), (1, 1))),
           dtypes=ALL,
           errors=(Err(lambda m: m.ones(2, 3).roll(1, (0, 1)), RuntimeError, "must align"),
                   Err(lambda m: m.ones(2, 3).roll((1, 2)), RuntimeError, "must align"),
                   Err(lambda m: m.ones(2, 3).roll(1, 2), IndexError, "out of range"),
                   Err(lambda m: m.tensor(1.0).roll(1, 0), IndexError, "no dimensions"))),
    OpSpec("rot90", getattr_op("rot90"),
           (s(A(2, 3)), s(A(2, 3), 2), s(A(2, 3), -1), s(A(2, 3), 4), s(A(2, 3, 4), 1, (2, 0)), s(T(3, 4), 3, (0, -1)),
            s(A(0, 3), 1)),
           dtypes=ALL,
           errors=(Err(lambda m: m.ones(2, 3).rot90(1, (0,)), RuntimeError, "rotation dims == 2"),
                   Err(lambda m: m.ones(2, 3).rot90(1, (0, 0)), RuntimeError, "different"),
                   Err(lambda m: m.ones(2, 3).rot90(1, (0, 2)), IndexError, "out of range"),
                   Err(lambda m: m.ones(3).rot90(), RuntimeError, "total dims >= 2"))),
)

TRIANGLES = (
    OpSpec("tril", getattr_op("tril"),
           (s(A(3, 4)), s(A(3, 4), 1), s(A(3, 4), -2), s(A(2, 3, 3), -1), s(T(3, 4)), s(S(3, 4), 10), s(A(0, 3))),
           dtypes=ALL, inplace=in_place("tril_"),
           errors=(Err(lambda m: m.ones(3).tril(), RuntimeError, "at least 2 dimensions"),)),
    OpSpec("triu", getattr_op("triu"),
           (s(A(3, 4)), s(A(3, 4), 1), s(A(3, 4), -2), s(A(2, 3, 3), -1), s(T(3, 4)), s(S(3, 4), -10), s(A(0, 3))),
           dtypes=ALL, inplace=in_place("triu_"),
           errors=(Err(lambda m: m.ones(3).triu(), RuntimeError, "at least 2 dimensions"),)),
    OpSpec("tril_indices", lambda m, *args, **kwargs: m.tril_indices(*args, **kwargs),
           (s(3, 3), s(3, 4, 1), s(3, 4, -5), s(0, 3), s(4, 3, -1, dtype=D("int32"))), differentiable=False,
           dtypes=("int64",),
           errors=(Err(lambda m: m.tril_indices(-1, 3), RuntimeError, "non-negative"),
                   Err(lambda m: m.tril_indices(3, 3, dtype=m.float32), NotImplementedError, "tril_indices"))),
    OpSpec("triu_indices", lambda m, *args, **kwargs: m.triu_indices(*args, **kwargs),
           (s(3, 3), s(3, 4, -1), s(3, 4, 5), s(2, 0)), differentiable=False, dtypes=("int64",),
           errors=(Err(lambda m: m.triu_indices(3, -2), RuntimeError, "non-negative"),)),
)

DIAGONALS = (
    OpSpec("diag", getattr_op("diag"),
           (s(A(3)), s(A(3), 1), s(A(3), -2), s(A(3, 4)), s(A(3, 4), 1), s(A(3, 4), -3), s(A(3, 4), 5), s(T(3, 4), -1),
            s(S(3)), s(A(0))),
           dtypes=ALL,
           errors=(Err(lambda m: m.ones(2, 3, 4).diag(), RuntimeError, "diag"),
                   Err(lambda m: m.tensor(1.0).diag(), RuntimeError, "diag"))),
    OpSpec("diagonal", getattr_op("diagonal"),
           (s(A(3, 4)), s(A(3, 4), 1), s(A(3, 4), -2), s(A(3, 4), 4), s(A(2, 3, 4), 1, 2, 0), s(T(3, 4), 0, -1, -2),
            s(S(3, 4), -1), s(A(0, 3))),
           dtypes=ALL,
           errors=(Err(lambda m: m.ones(2, 3).diagonal(0, 0, 0), RuntimeError, "cannot be identical"),
                   Err(lambda m: m.ones(3).diagonal(), IndexError, "out of range"))),
    OpSpec("diag_embed", getattr_op("diag_embed"),
           (s(A(2, 3)), s(A(2, 3), 1, 0, 2), s(A(3), -1), s(A(2, 3), 0, -1, 0), s(T(3, 4), 2), s(A(0, 3)), s(S(2, 3))),
           dtypes=ALL,
           errors=(Err(lambda m: m.ones(2, 3).diag_embed(1, 0, 0), RuntimeError, "cannot be identical"),
                   Err(lambda m: m.ones(2, 3).diag_embed(0, 0, 3), IndexError, "out of range"))),
    OpSpec("diagflat", getattr_op("diagflat"), (s(A(3)), s(A(2, 2), -1), s(A()), s(T(3, 2), 2), s(A(0))), dtypes=ALL),
)

STRIDED = (
    OpSpec("as_strided", getattr_op("as_strided"),
           (s(A(6), (2, 2), (1, 2)), s(A(6), (2, 2), (1, 2), 2), s(A(3, 4), (3, 3), (4, 1)), s(T(3, 4), (2, 3), (1, 3)),
            s(A(3, 4), (0, 2), (1, 1)), s(A(), (1,), (0,)), s(S(3, 4), (2, 2), (2, 4))),
           errors=(Err(lambda m: m.ones(6).as_strided((2, 2), (1, -2)), RuntimeError, "Negative strides"),
                   Err(lambda m: m.ones(6).as_strided((2, 2), (3, 3)), RuntimeError, "out of bounds"),
                   Err(lambda m: m.ones(6).as_strided((2, 2), (1,)), RuntimeError, "mismatch in length"),
                   Err(lambda m: m.ones(6).as_strided((2,), (1,), -1), RuntimeError, "storage offset"))),
    OpSpec("as_strided_of_a_view", lambda m, x: x[1:].as_strided((2, 2), (1, 3)), (s(A(3, 4)), s(T(3, 4)))),
    # A view whose elements share memory is cloned: torch writes into such a view element by element, so
    # an element seen twice is changed twice, which the generic test of writes through views would compare.
    OpSpec("as_strided_overlapping", lambda m, x, *args: x.as_strided(*args).clone(),
           (s(A(3, 4), (4, 2), (1, 0)), s(A(6), (3, 2), (1, 1)), s(A(), (2,), (0,)))),
    OpSpec("unfold", lambda m, x, *args: x.unfold(*args),
           (s(A(2, 6), 1, 2, 2), s(A(6), 0, 2, 3), s(T(3, 4), 1, 2, 2), s(S(3, 4), -1, 4, 1), s(A(2, 6), 1, 0, 1),
            s(A(), 0, 1, 1), s(A(5), 0, 2, 2), s(A(0, 3), 1, 3, 1)),
           dtypes=ALL,
           errors=(Err(lambda m: m.ones(2, 6).unfold(1, 7, 1), RuntimeError, "maximum size"),
                   Err(lambda m: m.ones(2, 6).unfold(1, 2, 0), RuntimeError, "step"),
                   Err(lambda m: m.ones(2, 6).unfold(1, -1, 1), RuntimeError, "size"),
                   Err(lambda m: m.ones(2, 6).unfold(2, 2, 1), IndexError, "out of range"))),
    OpSpec("unfold_overlapping", lambda m, x, *args: x.unfold(*args).clone(),
           (s(A(2, 6), 1, 2, 1), s(A(2, 6), 1, 3, 2), s(A(2, 6), 0, 2, 1), s(T(3, 4), 0, 2, 1))),
)


def _in_place_shape(name: str):
    return lambda x, *args: getattr(x, name)(*args)


RESHAPING_IN_PLACE = (
    OpSpec("unsqueeze_form", getattr_op("unsqueeze"), (s(A(3, 4), 0), s(A(), 0), s(T(3, 4), -1)),
           inplace=_in_place_shape("unsqueeze_"),
           errors=(Err(lambda m: m.ones(2, 3).unsqueeze_(3), IndexError, "unsqueeze"),)),
    OpSpec("squeeze_form", lambda m, x, *dim: x.squeeze(*dim), (s(A(3, 1, 4)), s(A(1, 3), 0), s(A(1, 3, 1), (0, 2))),
           inplace=_in_place_shape("squeeze_"),
           errors=(Err(lambda m: m.ones(2, 3).squeeze_(5), IndexError, "squeeze"),)),
    OpSpec("t_form", lambda m, x: x.t(), (s(A(3, 4)), s(A(3)), s(T(3, 4))), inplace=_in_place_shape("t_"),
           errors=(Err(lambda m: m.ones(2, 3, 4).t_(), RuntimeError, "t_"),)),
    OpSpec("transpose_form", getattr_op("transpose"), (s(A(2, 3, 4), 0, 2), s(S(3, 4), 1, 0)),
           inplace=_in_place_shape("transpose_")),
    OpSpec("swapaxes_form", getattr_op("swapaxes"), (s(A(2, 3, 4), 0, 2),), inplace=_in_place_shape("swapaxes_")),
    OpSpec("swapdims_form", getattr_op("swapdims"), (s(A(2, 3, 4), -1, 0),), inplace=_in_place_shape("swapdims_")),
    OpSpec("as_strided_form", getattr_op("as_strided"), (s(A(6), (2, 2), (1, 2)), s(A(3, 4), (3, 2), (4, 1), 1)),
           inplace=_in_place_shape("as_strided_"),
           errors=(Err(lambda m: m.ones(6).as_strided_((2, 2), (3, 3)), RuntimeError, "out of bounds"),)),
)

OPS = SPLITS + JOINING + MOVING + REPEATING + FLIPPING + TRIANGLES + DIAGONALS + STRIDED + RESHAPING_IN_PLACE
