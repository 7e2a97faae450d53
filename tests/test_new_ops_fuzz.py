"""Short random programs over the newer ops, run by torch and by ember: everything observable must agree.

The ops: cat / concat / concatenate, stack, unbind and iteration, index_put /
index_put_, indexing and setitem, clamp_min / clamp_max / clip_, the in-place
log_ abs_ sign_ floor_ ceil_ trunc_ round_ negative_ absolute_, clone / to /
contiguous with memory formats, and tensor() of lists holding tensors; with a
few plain ones between them (+, *, sum(dim), t(), slicing, exp).

Hypothesis draws the leaves' shapes and 3 to 8 steps. Each step picks earlier
values by index and a number ``k`` that chooses its dims, indices and
variants (read against the operands' shapes, so it fits them or, sometimes,
does not: then both libraries must raise the same type of error). In-place
steps change an earlier value, directly or through a view of it. After the
steps, both must show the same values, dtypes, shapes, versions and
``_base is not None`` of every value, the strides of every copy, and the same
first and second derivatives of ``sum(weights * last)``.

Writes of values that require grad into tensors that do not are drawn too: a view made before such a write
must then carry the gradient (``v = x[0]; x[1] = w; v * 2``), as in torch.
"""
import warnings

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from twins import assert_same, both, both_raise, leaf

_SHAPES = [(3,), (2, 3), (3, 2), (2, 2), (2, 1, 3), (1, 3), (2, 1, 2, 3)]


def _dim(k, x, extra=0):
    """A dim of ``x`` (or of ``x`` with ``extra`` new ones) chosen by ``k``, negative half of the time."""
    n = max(x.dim() + extra, 1)
    return k % n - (n if k // n % 2 else 0)


def _rows(x):
    return max(x.shape[0], 1) if x.dim() else 1


def _index(lib, k, x):
    """An index tensor into dim 0 of ``x``: two entries, which may repeat."""
    n = _rows(x)
    return lib.tensor([k % n, k // 3 % n], dtype=lib.int64)


def _through(lib, k, x):
    """What an in-place step changes: ``x`` itself, or a view of it (k picks which)."""
    way = k // 11 % 5
    if way == 1 and x.dim():
        return x[k % _rows(x):]
    if way == 2 and x.dim() == 2:
        return x.t()
    if way == 3 and x.dim():
        return x.select(0, k % _rows(x))
    if way == 4 and x.dim():
        return list(x)[k % _rows(x)]  # one of unbind's views: refused under grad
    return x


def _setitem(lib, k, x, y):
    key = [k % _rows(x), slice(k % 2, None), _index(lib, k, x), (x > 0) if k % 3 else Ellipsis][k // 5 % 4]
    value = [y.sum() * 0.5, 1.5, x[key] * 2 if k % 2 else -0.25][k // 7 % 3]
    x[key] = value
    return x


def _index_put(lib, k, x, y, in_place):
    values = [y.sum() * 0.5, x[_index(lib, k, x)] * 1.5, lib.tensor(2.0, dtype=lib.float64)][k // 5 % 3]
    accumulate = bool(k % 2)
    if in_place:
        target = _through(lib, k, x)
        return target.index_put_((_index(lib, k, x),), values, accumulate=accumulate)
    return lib.index_put(x, (_index(lib, k, x),), values, accumulate)


_FORMATS = ["preserve_format", "contiguous_format", "channels_last"]


def _copy(lib, k, x):
    """clone / to / contiguous, each with a memory format or none; of x or of a transposed view of x."""
    source = x.transpose(0, -1) if k % 2 and x.dim() else x
    fmt = getattr(lib, _FORMATS[k // 2 % 3])
    return [lambda: source.clone(),
            lambda: source.clone(memory_format=fmt),
            lambda: source.to(lib.float64, copy=True),
            lambda: source.to(memory_format=fmt),
            lambda: source.contiguous(),
            lambda: source.contiguous(memory_format=fmt),
            lambda: source.to(lib.float32).to(lib.float64)][k // 6 % 7]()


_STEPS = {  # name: (how many operands, the step)
    # plain ops
    "add": (2, lambda lib, k, a, b: a + b),
    "mul": (2, lambda lib, k, a, b: a * b),
    "sum_dim": (1, lambda lib, k, a: a.sum(_dim(k, a))),
    "t": (1, lambda lib, k, a: a.t()),
    "slice": (1, lambda lib, k, a: a[k % 2:]),
    "exp": (1, lambda lib, k, a: (a * 0.3).exp()),
    # joining
    "cat": (2, lambda lib, k, a, b: lib.cat([a, b], _dim(k, a))),
    "cat_self": (1, lambda lib, k, a: [lib.cat, lib.concat, lib.concatenate][k % 3]([a, a * 2], _dim(k // 3, a))),
    "cat_empty": (1, lambda lib, k, a: lib.cat([lib.zeros(0, dtype=lib.float64), a][::1 - 2 * (k % 2)], 0)),
    "stack": (2, lambda lib, k, a, b: lib.stack([a, b], _dim(k, a, 1))),
    "stack_self": (1, lambda lib, k, a: lib.stack([a, a.exp(), a], _dim(k, a, 1))),
    "unbind": (1, lambda lib, k, a: a.unbind(_dim(k, a))[k // 7 % max(1, a.shape[_dim(k, a)] if a.dim() else 1)]),
    "unbind_restack": (1, lambda lib, k, a: lib.stack(list(a)[::-1] if k % 2 else lib.unbind(a, -1), 0)),
    "iterate_sum": (1, lambda lib, k, a: sum(row * (i + 1) for i, row in enumerate(a))),
    # indexing
    "index": (1, lambda lib, k, a: a[_index(lib, k, a)]),
    "index_mask": (1, lambda lib, k, a: a[a > 0]),
    "index_put": (2, lambda lib, k, a, b: _index_put(lib, k, a, b, in_place=False)),
    "index_put_": (2, lambda lib, k, a, b: _index_put(lib, k, a, b, in_place=True)),
    "setitem": (2, lambda lib, k, a, b: _setitem(lib, k, _through(lib, k, a), b)),
    # clamps and in-place unary ops
    "clamp_min": (1, lambda lib, k, a: a.clamp_min(-0.25)),
    "clamp_max": (1, lambda lib, k, a: lib.clamp_max(a, 0.5)),
    "clamp_min_tensor": (2, lambda lib, k, a, b: a.clamp_min(b)),
    "clip_": (1, lambda lib, k, a: _through(lib, k, a).clip_(-0.5, [0.5, None][k % 2])),
    "clamp_max_": (1, lambda lib, k, a: _through(lib, k, a).clamp_max_(0.25)),
    "unary_": (1, lambda lib, k, a: getattr(_through(lib, k, a), _UNARY[k % len(_UNARY)])()),
    "round_decimals_": (1, lambda lib, k, a: _through(lib, k, a).round_(decimals=k % 3)),
    # copies and tensor()
    "copy": (1, lambda lib, k, a: _copy(lib, k, a)),
    "tensor_of_tensors": (2, lambda lib, k, a, b: lib.tensor([[a.sum(), b.amax()], [1.5, a.amin() * 2]])),
    "tensor_of_rows": (1, lambda lib, k, a: lib.tensor(list(a) if k % 5 == 0 else [list(r) if r.dim() else r for r in a])),
}
_UNARY = ["log_", "abs_", "sign_", "floor_", "ceil_", "trunc_", "round_", "negative_", "absolute_"]
_IN_PLACE = {"index_put_", "setitem", "clip_", "clamp_max_", "unary_", "round_decimals_"}
_COPIES = {"copy", "cat", "cat_self", "stack", "stack_self", "index_put"}  # their strides are compared too


@st.composite
def _programs(draw):
    shapes = [draw(st.sampled_from(_SHAPES)) for _ in range(draw(st.integers(1, 3)))]
    steps = []
    for i in range(draw(st.integers(3, 8))):
        name = draw(st.sampled_from(sorted(_STEPS)))
        start = len(shapes) if name in _IN_PLACE and draw(st.integers(0, 9)) else 0  # seldom a leaf: that fails
        picks = [draw(st.integers(start, 2 * len(shapes) + i - 1)) for _ in range(_STEPS[name][0])]
        steps.append((name, draw(st.integers(0, 999)), picks))
    return shapes, steps


def _start(lib, shapes):
    """The leaves, and a value made of each, which in-place steps may change."""
    rng = np.random.default_rng(len(shapes))
    leaves = [lib.tensor(np.round(rng.uniform(-2, 2, s), 2), dtype=lib.float64, requires_grad=True) for s in shapes]
    return leaves, leaves + [x * 1.5 for x in leaves]


def _look(name, v):
    """What is compared of one value."""
    strides = tuple(v.stride()) if name in _COPIES else None
    return v.detach().numpy().copy(), str(v.dtype).split(".")[-1], tuple(v.shape), strides, v._base is not None


def _error(e: Exception) -> tuple:
    return ("error", type(e).__name__)


def _run(lib, program):
    shapes, steps = program
    leaves, values = _start(lib, shapes)
    names, seen = ["start"] * len(values), []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            for name, k, picks in steps:
                values.append(_STEPS[name][1](lib, k, *[values[p] for p in picks]))
                names.append(name)
                seen.append(_look(name, values[-1]))
            seen.append([_look(n, v) + (v._version,) for n, v in zip(names, values)])
            seen.append(_gradients(lib, leaves, values[-1]))
        except Exception as e:  # noqa: BLE001 - any error must be the other library's too
            seen.append(_error(e))
    return seen


def _weights(lib, shape, seed):
    return lib.tensor(np.random.default_rng(seed).uniform(0.5, 1.5, shape), dtype=lib.float64)


def _gradients(lib, leaves, last):
    if not last.requires_grad or last.dtype != lib.float64:
        return "no gradient"
    out = (_weights(lib, tuple(last.shape), 1) * last).sum()
    grads = lib.autograd.grad(out, leaves, create_graph=True, allow_unused=True, materialize_grads=True)
    total = sum((_weights(lib, tuple(g.shape), 2) * g * g).sum() for g in grads)
    if not total.requires_grad:
        return [g.numpy(force=True) for g in grads]
    second = lib.autograd.grad(total, leaves, allow_unused=True, materialize_grads=True)
    return [g.numpy(force=True) for g in grads + second]  # force: torch's zero gradients may be ZeroTensors


@settings(max_examples=250, deadline=None)
@given(_programs())
def test_programs_of_new_ops_agree_with_torch(program):
    assert_same(_run(torch, program), _run(ember, program))


# ---------------------------------------------------------------- what the fuzzer found, one test each


def test_index_put_refuses_a_leaf_before_checking_its_indices():
    for view in (False, True):
        def program(lib):
            x = leaf(lib, [1.0, 2.0, 3.0])
            (x[1:] if view else x).index_put_((lib.tensor([5]),), lib.tensor(2.0, dtype=lib.float64))

        both_raise(program, RuntimeError, "leaf Variable that requires grad")
    both_raise(lambda lib: leaf(lib, [1.0]).index_put_((lib.tensor([0]),), 2.0), TypeError, "must be Tensor")


def test_clamp_with_tensor_bounds_refuses_a_bound_changed_in_place_at_backward():
    for bounds in ("min", "max", "both"):
        def program(lib):
            x, b = leaf(lib, [1.0, -2.0, 0.5]), leaf(lib, [0.0, 0.0, 1.0])
            low = b * 1
            y = {"min": lambda: x.clamp_min(low), "max": lambda: x.clamp_max(low),
                 "both": lambda: x.clamp(low, low + 1)}[bounds]()
            low.add_(1)
            y.sum().backward()

        both_raise(program, RuntimeError, "modified by an inplace operation")


def test_cat_and_stack_lay_out_their_result_as_torch():
    # row-major whatever the inputs' strides, but channels last when every input looks so (sliced ones too)
    def program(lib):
        t = lib.ones(2, 3, dtype=lib.float64).t()
        last = lib.ones(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)
        row_major = lib.ones(2, 3, 4, 5)
        one_channel = lib.ones(2, 1, 4, 5).contiguous(memory_format=lib.channels_last)
        made = [lib.cat([t, t], 0), lib.cat([t, t], 1), lib.cat([last, last], 1), lib.cat([last, row_major], 1),
                lib.cat([last[:, :, :2], last], 2), lib.cat([one_channel, one_channel], 1),
                lib.cat([last.permute(0, 1, 3, 2)] * 2)]
        made += [lib.stack([t, t.exp()], d) for d in (0, 1, 2)] + [lib.stack([last, last], d) for d in (0, 2, 4)]
        made.append(lib.cat([last, lib.zeros(0)]))  # an empty 1-d input is left out, but its layout counts
        return [tuple(m.stride()) for m in made]

    both(program)


def test_to_a_memory_format_copies_unless_the_strides_suggest_it_as_torch():
    def program(lib):
        x = lib.ones(2, 3, 4, 5)
        last = x.contiguous(memory_format=lib.channels_last)
        t = lib.ones(3, 2).t()
        return [tuple(x.to(memory_format=lib.channels_last).stride()), last.to(memory_format=lib.channels_last) is last,
                tuple(last.to(memory_format=lib.contiguous_format).stride()),
                t.to(memory_format=lib.contiguous_format) is t]  # a transposed matrix suggests no other format

    both(program)
    both_raise(lambda lib: lib.ones(3).to(memory_format=lib.channels_last), RuntimeError,
               "required rank 4 tensor to use channels_last format")


def test_index_put_keeps_the_strides_of_its_input_as_torch():
    both(lambda lib: lib.index_put(lib.ones(3, 2).t(), (lib.tensor([0]),), lib.tensor(2.0)).stride())


def test_unbinds_views_of_a_tensor_that_requires_no_grad_refuse_a_recorded_change():
    def program(lib, change):
        x, w = lib.ones(2, 3), leaf(lib, [1.0, 2.0, 3.0])
        change(x.unbind()[0], w)

    for change in (lambda row, w: row.add_(w), lambda row, w: row[1:].mul_(w[1:]),
                   lambda row, w: row.__setitem__(0, w[0])):
        both_raise(lambda lib: program(lib, change), RuntimeError, "^A view was created in no_grad mode",
                   "returns multiple views")
    both(lambda lib: lib.ones(2, 3).unbind()[0].add_(1))  # nothing recorded: allowed


def test_a_stale_view_among_unbinds_is_refused_once_its_base_changed_in_place():
    def program(lib, use):
        y = leaf(lib, [[1.0, 2.0], [3.0, 4.0]]) * 1.5
        rows = y.unbind()
        y.mul_(2)
        use(rows)

    for use in (lambda rows: rows[0] * 2, lambda rows: rows[1].grad_fn, lambda rows: rows[0][1:].clone()):
        both_raise(lambda lib: program(lib, use), RuntimeError,
                   r"^Output \d of Unbind is a view and its base or another view of its base has been modified inplace")


def test_index_put_checks_the_values_before_the_indices_bounds():
    def put(how):
        def program(lib):
            x, index = lib.ones(2, dtype=lib.float64), lib.tensor([2, 1])
            {"put_": lambda v: x.index_put_((index,), v), "put": lambda v: lib.index_put(x, (index,), v),
             "setitem": lambda v: x.__setitem__(index, v)}[how](lib.ones(2, 2, dtype=lib.float64))
        return program

    for how in ("put_", "put", "setitem"):
        both_raise(put(how), RuntimeError, r"shape mismatch: value tensor of shape \[2, 2\] cannot be broadcast")
    both_raise(lambda lib: lib.ones(2, dtype=lib.float64).index_put_((lib.tensor([2]),), lib.ones(1)), RuntimeError,
               "Index put requires the source and destination dtypes match")


def test_clamps_give_a_zero_gradient_outside_their_bounds_even_for_an_infinite_gradient():
    def program(lib, clamp):
        x = leaf(lib, [-2.0, 0.0, 2.0])
        bound = leaf(lib, [0.0, -1.0, 3.0])
        clamp(lib, x, bound).abs().log().sum().backward()  # log's gradient is inf where a clamp gave 0
        return x.grad, bound.grad

    for clamp in (lambda lib, x, b: x.clamp_min(0.0), lambda lib, x, b: (-x).clamp_max(0.0),
                  lambda lib, x, b: (x * 1).clip_(0.0, 1.0), lambda lib, x, b: x.clamp(0.0, 1.0),
                  lambda lib, x, b: x.clamp_min(b), lambda lib, x, b: (-x).clamp_max(-b), lambda lib, x, b: x.clamp(b, b + 1)):
        both(lambda lib: program(lib, clamp))
