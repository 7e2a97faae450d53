"""Op-table rows: gather, scatter, index and mask ops.

Index tensors are constants (``C``, int64 unless said). Where an op writes, its samples' indices do not repeat
within what one write covers (torch leaves the winner of a repeated index unspecified), except for the ops that
add or reduce, whose samples repeat them on purpose.
"""
import numpy as np

from op_spec import FLOATS, INTS, MASK_3x4, A, C, D, Err, OpSpec, S, T, in_place, s  # noqa: F401


def _i(*values, dtype=np.int64) -> C:
    return C(np.array(values, dtype))


ZERO_D = C(np.array(0))  # a 0-d index
EMPTY_INDEX = C(np.zeros(0, np.int64))
ROW_MASK = C(np.array([True, False, True, True]))


def _bad_index(op) -> tuple:
    """Errors every gather/scatter-like op shares: an index out of bounds, of a float dtype, of another rank."""
    return (Err(lambda m: op(m, m.ones(2, 3), 1, m.tensor([[0], [3]])), RuntimeError, "index 3 is out of bounds"),
            Err(lambda m: op(m, m.ones(2, 3), 1, m.tensor([[0.], [1.]])), RuntimeError, "int32/int64"),
            Err(lambda m: op(m, m.ones(2, 3), 2, m.tensor([[0], [1]])), IndexError),
            Err(lambda m: op(m, m.ones(2, 3), 1, m.tensor([0, 1])), RuntimeError, "same number of dimensions"),
            Err(lambda m: op(m, m.ones(2, 3), 1, m.tensor([[0], [1], [2]])), RuntimeError, "no larger than self"))


def _gather(m, x, dim, index, **kwargs):
    return m.gather(x, dim, index, **kwargs)


def _scatter(m, x, dim, index, *src, **kwargs):
    return m.scatter(x, dim, index, *src, **kwargs)


def _scatter_add(m, x, dim, index, src):
    return m.scatter_add(x, dim, index, src)


def _scatter_reduce(m, x, dim, index, src, reduce, include_self=True):
    return m.scatter_reduce(x, dim, index, src, reduce, include_self=include_self)


def _index_reduce(m, x, dim, index, source, reduce, include_self=True):
    return m.index_reduce(x, dim, index, source, reduce, include_self=include_self)


def _put(m, x, index, source, accumulate=False):
    return m.put(x, index, source, accumulate)


GATHER_INDEX = _i([0, 1], [2, 0], [3, 3])
SCATTER_INDEX = _i([0, 2], [1, 3], [3, 0])  # no repeats within a row: scatter along dim 1 writes each once

SCATTER_SAMPLES = (
    s(A(3, 4), 1, SCATTER_INDEX, A(3, 2)),
    s(A(3, 4), 0, _i([2, 0, 1, 1]), A(1, 4)),
    s(A(3, 4), -2, _i([2, 0, 1, 1]), A(2, 5)),  # src larger than the index: only its first part is read
    s(A(), 0, _i(0), A()),
    s(A(), 0, ZERO_D, A()),
    s(A(0, 3), 1, C(np.zeros((0, 2), np.int64)), A(0, 2)),
    s(T(3, 4), 1, SCATTER_INDEX, S(3, 2)),
)
REDUCE_SAMPLES = (
    s(A(4, 3), 1, _i([0, 0], [1, 2], [2, 2], [1, 1]), A(4, 2)),
    s(A(3, 4), 0, _i([2, 0, 2, 2], [2, 1, 2, 0]), A(2, 4)),
    s(A(), 0, _i(0), A()),
    s(A(0, 3), 1, C(np.zeros((0, 2), np.int64)), A(0, 2)),
    s(T(3, 4), 1, _i([1, 1], [0, 3], [3, 3]), S(3, 2)),
)
INDEX_REDUCE_SAMPLES = (
    s(A(3, 4), 0, _i(0, 2, 0), A(3, 4)),
    s(A(3, 4), 1, _i(1, 1), A(3, 2)),
    s(A(), 0, _i(0), A()),
    s(T(3, 4), 1, _i(3, 0, 3), S(3, 3)),
)


def _reduce_rows(op: str, fn, reductions: tuple, samples: tuple) -> tuple:
    """One row per reduction and include_self, for scatter_reduce and index_reduce (``op``)."""
    return tuple(
        OpSpec(f"{op}_{reduce}_{'with' if include_self else 'without'}_self", fn,
               tuple(s(*sample.args, reduce, include_self=include_self) for sample in samples),
               dtypes=FLOATS + INTS, inplace=in_place(op + "_"), domain=(0.5, 2.0) if reduce == "prod" else (-2.0, 2.0))
        for reduce in reductions for include_self in (True, False))


MASK_SAMPLES_COUNT = 7  # the True elements of MASK_3x4

OPS = (
    OpSpec("gather", _gather,
           (s(A(3, 4), 1, GATHER_INDEX), s(A(3, 4), 0, _i([2, 0, 1, 1], [0, 0, 2, 1])), s(A(3, 4), 0, _i([1, 2])),
            s(A(), 0, _i(0)), s(A(), 0, _i(0, 0)), s(A(), 0, ZERO_D), s(A(3), 0, ZERO_D),
            s(A(0, 3), 1, C(np.zeros((0, 2), np.int64))),
            s(A(3, 4), 1, C(np.zeros((3, 0), np.int64))), s(T(3, 4), -1, GATHER_INDEX),
            s(S(3, 4), 1, _i([0], [2], [1], dtype=np.int32))),
           dtypes=FLOATS + INTS, errors=_bad_index(_gather)),
    OpSpec("scatter", _scatter, SCATTER_SAMPLES[:2] + SCATTER_SAMPLES[3:], dtypes=FLOATS + INTS,
           inplace=in_place("scatter_"),
           errors=_bad_index(lambda m, x, d, i: m.scatter(x, d, i, m.ones(2, 3))) + (
               Err(lambda m: m.ones(2, 3).scatter(1, m.tensor([[0], [1]]), m.ones(2, 1, dtype=m.float64)), RuntimeError,
                   "dtype"),
               Err(lambda m: m.ones(2, 3).scatter(1, m.tensor([[0, 1]]), m.ones(1, 1)), RuntimeError, "src"),
               Err(lambda m: m.ones(2, 3).scatter(1, m.tensor([[0]]), 1.0, reduce="mean"), RuntimeError,
                   "add or multiply"))),
    OpSpec("scatter_src_larger", _scatter, (SCATTER_SAMPLES[2],), dtypes=FLOATS + INTS, differentiable=False,
           note="src's gradient would have the index's shape: an error in torch too"),
    OpSpec("scatter_value", _scatter,
           (s(A(3, 4), 1, SCATTER_INDEX, 2.5), s(A(3, 4), 0, _i([2, 0, 1, 1]), value=-1), s(A(), 0, _i(0), 3),
            s(A(0, 3), 1, C(np.zeros((0, 2), np.int64)), 1.0), s(S(3, 4), 1, _i([1], [0], [1]), True)),
           dtypes=FLOATS + INTS, inplace=in_place("scatter_")),
    OpSpec("scatter_legacy_reduce", _scatter,
           (s(A(3, 4), 1, _i([0, 0], [1, 3], [3, 3]), A(3, 2), reduce="add"),
            s(A(3, 4), 1, _i([0, 0], [1, 3], [3, 3]), A(3, 2), reduce="multiply"),
            s(T(3, 4), 0, _i([2, 2, 1, 1]), 2.0, reduce="multiply"), s(A(), 0, _i(0), 1.5, reduce="add")),
           dtypes=FLOATS + INTS, differentiable=False,
           note="torch records no derivative (grad_fn NotImplemented); test_scatter checks backward raises"),
    OpSpec("scatter_add", _scatter_add, REDUCE_SAMPLES + (s(A(3, 4), 1, _i([0, 0], [3, 3]), A(2, 2)),),
           dtypes=FLOATS + INTS, inplace=in_place("scatter_add_"),
           errors=_bad_index(lambda m, x, d, i: m.scatter_add(x, d, i, m.ones(2, 3))) + (
               Err(lambda m: m.ones(2, 3).scatter_add(1, m.tensor([[0]]), 2.0), TypeError, "src"),)),
    *_reduce_rows("scatter_reduce", _scatter_reduce, ("sum", "prod", "mean", "amax", "amin"), REDUCE_SAMPLES),
    OpSpec("index_select", lambda m, x, d, i: m.index_select(x, d, i),
           (s(A(3, 4), 0, _i(2, 0, 2)), s(A(3, 4), 1, _i(3)), s(A(3, 4), -1, _i(1, dtype=np.int32)),
            s(A(), 0, _i(0)), s(A(), 0, ZERO_D), s(A(3, 4), 0, ZERO_D), s(A(0, 3), 1, _i(1, 1)),
            s(T(3, 4), 1, _i(0, 3)), s(S(3, 4), 0, EMPTY_INDEX)),
           dtypes=FLOATS + INTS,
           errors=(Err(lambda m: m.ones(2, 3).index_select(0, m.tensor([2])), IndexError, "index 2"),
                   Err(lambda m: m.ones(2, 3).index_select(0, m.tensor([-1])), IndexError, "index -1"),
                   Err(lambda m: m.ones(2, 3).index_select(0, m.tensor([[0]])), IndexError, "vector"),
                   Err(lambda m: m.ones(2, 3).index_select(0, m.tensor([0.])), RuntimeError, "int32/int64"),
                   Err(lambda m: m.ones(2, 3).index_select(2, m.tensor([0])), IndexError))),
    OpSpec("index_add", lambda m, x, d, i, src, **k: m.index_add(x, d, i, src, **k),
           (s(A(3, 4), 0, _i(0, 2, 0), A(3, 4)), s(A(3, 4), 1, _i(1, 1), A(3, 2), alpha=2),
            s(A(3, 4), 1, _i(3, dtype=np.int32), A(3, 1), alpha=-0.5), s(A(), 0, _i(0), A()),
            s(A(0, 3), 1, _i(2), A(0, 1)), s(T(3, 4), 1, _i(0, 3), S(3, 2))),
           dtypes=FLOATS + INTS, inplace=in_place("index_add_"),
           errors=(Err(lambda m: m.ones(2, 3).index_add(0, m.tensor([2]), m.ones(1, 3)), RuntimeError, "index 2"),
                   Err(lambda m: m.ones(2, 3).index_add(0, m.tensor([0, 1]), m.ones(3, 3)), RuntimeError, "shape"),
                   Err(lambda m: m.ones(2, 3).index_add(0, m.tensor([0]), m.ones(1, 2)), RuntimeError, "shape"),
                   Err(lambda m: m.ones(2, 3).index_add(0, m.tensor([0]), m.ones(1, 3, dtype=m.float64)),
                       RuntimeError, "index_add"),
                   Err(lambda m: m.ones(2, 3).index_add(0, m.tensor([[0]]), m.ones(1, 3)), IndexError, "vector"),
                   Err(lambda m: m.ones(2, 3).index_add(0, m.tensor([0.]), m.ones(1, 3)), RuntimeError, "int32"))),
    OpSpec("index_copy", lambda m, x, d, i, src: m.index_copy(x, d, i, src),
           (s(A(3, 4), 0, _i(2, 0), A(2, 4)), s(A(3, 4), 1, _i(3), A(3, 1)), s(A(), 0, _i(0), A()),
            s(A(0, 3), 1, _i(2, 0), A(0, 2)), s(T(3, 4), 1, _i(0, 3), S(3, 2))),
           dtypes=FLOATS + INTS, inplace=in_place("index_copy_"),
           errors=(Err(lambda m: m.ones(2, 3).index_copy(0, m.tensor([2]), m.ones(1, 3)), IndexError, "index 2"),
                   Err(lambda m: m.ones(2, 3).index_copy(0, m.tensor([0], dtype=m.int32), m.ones(1, 3)),
                       RuntimeError, "int64"),
                   Err(lambda m: m.ones(2, 3).index_copy(0, m.tensor([0]), m.ones(1, 3, dtype=m.int64)), RuntimeError,
                       "index_copy"))),
    OpSpec("index_fill", lambda m, x, d, i, value: m.index_fill(x, d, i, value),
           (s(A(3, 4), 1, _i(0, 2), 1.5), s(A(3, 4), 0, _i(-1, 0), 2.0), s(A(3, 4), 0, _i(1, 0), A()),
            s(A(3, 4), 0, EMPTY_INDEX, 2),
            s(A(), 0, _i(0), A()), s(A(), 0, _i(0), -1), s(A(0, 3), 1, _i(2), 0.5), s(T(3, 4), 1, _i(3, 3), 0),
            s(S(3, 4), 0, _i(1), True)),
           dtypes=FLOATS + INTS, inplace=in_place("index_fill_"),
           errors=(Err(lambda m: m.ones(2, 3).index_fill(0, m.tensor([2]), 1.0), (IndexError, RuntimeError), "index 2"),
                   Err(lambda m: m.ones(2, 3).index_fill(0, m.tensor([0], dtype=m.int32), 1.0), IndexError, "int64"),
                   Err(lambda m: m.ones(2, 3).index_fill(0, m.tensor([0]), m.ones(2)), RuntimeError, "0-dim"))),
    *_reduce_rows("index_reduce", _index_reduce, ("prod", "mean", "amax", "amin"), INDEX_REDUCE_SAMPLES),
    OpSpec("masked_fill", lambda m, x, mask, value: m.masked_fill(x, mask, value),
           (s(A(3, 4), MASK_3x4, 1.5), s(A(3, 4), MASK_3x4, A()), s(A(4), MASK_3x4, 2), s(A(3, 4), ROW_MASK, A()),
            s(A(), C(np.array(True)), A()), s(A(0, 3), C(np.zeros((0, 3), bool)), 1.0), s(T(3, 4), MASK_3x4, 0),
            s(S(3, 4), ROW_MASK, -2.5), s(A(3, 1), MASK_3x4, A())),
           dtypes=FLOATS + INTS, inplace=in_place("masked_fill_"),
           errors=(Err(lambda m: m.ones(2, 3).masked_fill(m.ones(2, 3), 1.0), RuntimeError, "boolean"),
                   Err(lambda m: m.ones(2, 3).masked_fill(m.ones(2, dtype=m.bool), 1.0), RuntimeError),
                   Err(lambda m: m.ones(2, 3).masked_fill(m.ones(3, dtype=m.bool), m.ones(2)), RuntimeError, "0-dim"),
                   Err(lambda m: m.ones(3).masked_fill_(m.ones(2, 3, dtype=m.bool), 1.0), RuntimeError),
                   Err(lambda m: m.ones(3, dtype=m.int32).masked_fill(m.ones(3, dtype=m.bool), 2 ** 40), RuntimeError,
                       "overflow"))),
    OpSpec("masked_scatter", lambda m, x, mask, source: m.masked_scatter(x, mask, source),
           (s(A(3, 4), MASK_3x4, A(MASK_SAMPLES_COUNT)), s(A(3, 4), MASK_3x4, A(2, 5)), s(A(4), MASK_3x4, A(12)),
            s(A(3, 4), ROW_MASK, A(3, 3)), s(A(), C(np.array(True)), A(1)), s(A(0, 3), C(np.zeros((0, 3), bool)), A(2)),
            s(T(3, 4), MASK_3x4, S(3, 4))),
           inplace=in_place("masked_scatter_"), dtypes=FLOATS + INTS,
           errors=(Err(lambda m: m.ones(4).masked_scatter(m.ones(4, dtype=m.bool), m.ones(3)), RuntimeError,
                       "source"),
                   Err(lambda m: m.ones(4).masked_scatter(m.ones(4, dtype=m.bool), m.ones(4, dtype=m.int64)),
                       RuntimeError, "masked_scatter"),
                   Err(lambda m: m.ones(4).masked_scatter(m.ones(4, dtype=m.uint8), m.ones(4)), RuntimeError,
                       "boolean"))),
    OpSpec("masked_select", lambda m, x, mask: m.masked_select(x, mask),
           (s(A(3, 4), MASK_3x4), s(A(4), MASK_3x4), s(A(3, 1), MASK_3x4), s(A(3, 4), ROW_MASK),
            s(A(), C(np.array(True))), s(A(), C(np.array(False))), s(A(0, 3), C(np.zeros((0, 3), bool))),
            s(T(3, 4), MASK_3x4), s(S(3, 4), ROW_MASK)),
           dtypes=FLOATS + INTS,
           errors=(Err(lambda m: m.ones(4).masked_select(m.ones(4, dtype=m.uint8)), RuntimeError, "bool"),
                   Err(lambda m: m.ones(4).masked_select(m.ones(3, dtype=m.bool)), RuntimeError))),
    OpSpec("take", lambda m, x, i: m.take(x, i),
           (s(A(3, 4), _i([0, 11], [-1, 5])), s(A(3, 4), ZERO_D), s(A(), _i([0, 0, -1])), s(A(0, 3), EMPTY_INDEX),
            s(T(3, 4), _i(1, 4, 5)), s(S(3, 4), _i(0, -12))),
           dtypes=FLOATS + INTS,
           errors=(Err(lambda m: m.ones(4).take(m.tensor([4])), IndexError, "index 4"),
                   Err(lambda m: m.ones(4).take(m.tensor([-5])), IndexError, "index -5"),
                   Err(lambda m: m.ones(4).take(m.tensor([0], dtype=m.int32)), RuntimeError, "int64"))),
    OpSpec("put", _put,
           (s(A(3, 4), _i(0, 5, -1), A(3)), s(A(3, 4), _i(0, 0, 5), A(3), accumulate=True),
            s(A(3, 4), _i([1, 2]), A(1, 2)), s(A(), _i(0), A()), s(A(), _i(0, 0), A(2), accumulate=True),
            s(A(0, 3), EMPTY_INDEX, A(0)), s(T(3, 4), _i(1, 4), S(2))),
           dtypes=FLOATS + INTS, inplace=in_place("put_"),
           errors=(Err(lambda m: m.ones(4).put(m.tensor([4]), m.ones(1)), IndexError, "index 4"),
                   Err(lambda m: m.ones(4).put(m.tensor([0, 1]), m.ones(1)), IndexError, "same number of elements"),
                   Err(lambda m: m.ones(4).put(m.tensor([0]), m.ones(1, dtype=m.int64)), RuntimeError, "dtype"),
                   Err(lambda m: m.ones(4).put(m.tensor([0], dtype=m.int32), m.ones(1)), RuntimeError, "int64"))),
    OpSpec("take_along_dim", lambda m, x, i, *dim: m.take_along_dim(x, i, *dim),
           (s(A(3, 4), _i([0], [1], [3]), 1), s(A(3, 4), _i([0, 1, 2, 3, 0]), 1), s(A(3, 4), _i([0, 11, 5])),
            s(A(3, 4), _i([-1, 0], [-4, 3], [2, -2]), 1),
            s(A(1, 4), _i([0], [1], [3]), 1), s(A(3, 4), _i([2, 1, 0, 0]), -2), s(A(), _i(0, 0)),
            s(A(0, 3), C(np.zeros((0, 1), np.int64)), 1), s(T(3, 4), _i([2, 1, 0, 0]), 0),
            s(S(3, 4), _i([1], [0], [2]), 1)),
           dtypes=FLOATS + INTS,
           errors=(Err(lambda m: m.ones(3, 4).take_along_dim(m.tensor([1]), 0), RuntimeError, "dimensions"),
                   Err(lambda m: m.ones(3, 4).take_along_dim(m.tensor([[1]], dtype=m.int32), 0), RuntimeError,
                       "int64"),
                   Err(lambda m: m.ones(3, 4).take_along_dim(m.tensor([[0], [1]]), 1), RuntimeError),
                   Err(lambda m: m.ones(3, 4).take_along_dim(m.tensor([[-1]])), RuntimeError, "index -1"),
                   Err(lambda m: m.tensor(1.).take_along_dim(m.tensor(0), 0), IndexError))),
    OpSpec("nonzero", lambda m, x, **k: m.nonzero(x, **k),
           (s(A(3, 4)), s(A()), s(A(0, 3)), s(T(3, 4)), s(S(2, 3)), s(A(5))), domain=(-1.0, 1.0), integer_valued=True,
           dtypes=FLOATS + INTS + ("bool",), differentiable=False),
    OpSpec("nonzero_as_tuple", lambda m, x, d: m.nonzero(x, as_tuple=True)[d],
           (s(A(3, 4), 0), s(A(3, 4), 1), s(A(), 0), s(A(0, 3), 1), s(T(3, 4), 1)), domain=(-1.0, 1.0),
           integer_valued=True, dtypes=FLOATS + INTS + ("bool",), differentiable=False),
    OpSpec("nonzero_static", lambda m, x, **k: m.nonzero_static(x, **k),
           (s(A(3, 4), size=5), s(A(3, 4), size=30, fill_value=7), s(A(), size=2), s(A(0, 3), size=1),
            s(T(3, 4), size=0)),
           domain=(-1.0, 1.0), integer_valued=True, dtypes=FLOATS + INTS + ("bool",), differentiable=False,
           errors=(Err(lambda m: m.nonzero_static(m.ones(2), size=-1), RuntimeError, "size"),)),
    OpSpec("select_scatter", lambda m, x, src, dim, index: m.select_scatter(x, src, dim, index),
           (s(A(3, 4), A(4), 0, 1), s(A(3, 4), A(3), 1, -1), s(A(3), A(), 0, 2), s(A(0, 3), A(0), 1, 0),
            s(T(3, 4), S(3), -1, 3)),
           dtypes=FLOATS + INTS,
           errors=(Err(lambda m: m.select_scatter(m.ones(3, 4), m.ones(3), 0, 1), RuntimeError, "size"),
                   Err(lambda m: m.select_scatter(m.ones(3, 4), m.ones(4), 0, 3), IndexError, "index 3"),
                   Err(lambda m: m.select_scatter(m.tensor(1.), m.tensor(1.), 0, 0), IndexError, "0-dim"))),
    OpSpec("slice_scatter", lambda m, x, src, *args, **kwargs: m.slice_scatter(x, src, *args, **kwargs),
           (s(A(3, 4), A(3, 2), 1, 0, 4, 2), s(A(3, 4), A(1, 4), start=-1), s(A(3, 4), A(3, 4)),
            s(A(3, 4), A(0, 4), 0, 5, 9), s(A(0, 3), A(0, 1), 1, 2), s(T(3, 4), S(2, 4), 0, 1, None, 1)),
           dtypes=FLOATS + INTS,
           errors=(Err(lambda m: m.slice_scatter(m.ones(3, 4), m.ones(3, 1), 1, 0, 4, 2), RuntimeError, "size"),
                   Err(lambda m: m.slice_scatter(m.ones(3, 4), m.ones(3, 4), step=0), RuntimeError, "step"))),
    OpSpec("diagonal_scatter", lambda m, x, src, *args: m.diagonal_scatter(x, src, *args),
           (s(A(3, 4), A(3)), s(A(3, 4), A(2), 2), s(A(3, 4), A(2), -1), s(A(2, 3, 4), A(3, 2), 0, 0, 2),
            s(A(2, 3, 4), A(4, 2), -1, 1, 0), s(A(3, 4), A(0), 4), s(T(3, 4), S(3))),
           dtypes=FLOATS + INTS,
           errors=(Err(lambda m: m.diagonal_scatter(m.ones(3, 4), m.ones(4)), RuntimeError, "size"),
                   Err(lambda m: m.diagonal_scatter(m.ones(3, 4), m.ones(3), 0, 1, 1), RuntimeError),
                   Err(lambda m: m.diagonal_scatter(m.ones(3, 4), m.ones(3), 0, 0, 2), IndexError))),
    OpSpec("argwhere", lambda m, x: m.argwhere(x), (s(A(3, 4)), s(A()), s(A(0, 3)), s(T(3, 4))), domain=(-1.0, 1.0),
           integer_valued=True, dtypes=FLOATS + INTS + ("bool",), differentiable=False),
)
