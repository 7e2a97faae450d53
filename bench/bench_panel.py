"""The speed panel: everyday ops against torch 2.13 and against hand-written NumPy, in one run, as ratios.

Five tables, each timed in interleaved repeats (ember, then the reference, back to back); a row's
ratio is the median of the per-repeat ratios, and a table's figure the median over its rows:

1. forward alone on 4x4 float32 tensors that need no gradient (nothing recorded), against torch;
2. in-place ops on 4x4 tensors, against torch;
3. basic indexing with a tuple key, against torch;
4. ``op(x).sum().backward()`` on 16 elements that require grad, against torch;
5. large inputs (1,000,000 float32 elements, 512x512 matmul, a 100,000-element sort), forward plus
   backward, against the same computation written by hand in NumPy.

Times are CPU time of the process (``time.process_time``), which other jobs on a shared machine do not
inflate as they inflate wall time. BLAS runs on one thread, as in the other benchmarks: OpenBLAS's
worker thread keeps spinning for about a tenth of a second after a product, and CPU time would charge that
spin to whichever row came next (a sort timed after the matmul rows showed twice its cost). An op that ember lacks (it raises AttributeError or NotImplementedError on the first call) is skipped
and listed as missing, so the panel runs on any tree; rerun it once the op exists.

    python bench/bench_panel.py            # every table
    python bench/bench_panel.py forward    # one table: forward, inplace, indexing, loss, large
"""
from __future__ import annotations

import gc
import os
import statistics
import sys
import time
import timeit
import types

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads OpenBLAS; see the docstring
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def _inputs(lib, requires_grad: bool = False) -> types.SimpleNamespace:
    """The operands, made by ``lib`` from the same NumPy values, so both libraries compute the same thing."""
    rng = np.random.default_rng(0)
    values = {
        "x": rng.standard_normal((4, 4)), "w": rng.standard_normal((4, 4)), "m": rng.standard_normal((4, 1)),
        "p": rng.uniform(0.5, 2.0, (4, 4)), "ones": np.ones((4, 4)),
    }
    v = {name: lib.tensor(a.astype(np.float32)) for name, a in values.items()}
    if requires_grad:
        for name in ("x", "p", "m"):
            v[name].requires_grad_(True)
    v["mask"] = lib.tensor(values["x"] > 0)
    v["index"] = lib.tensor([[0, 1], [2, 3], [1, 0], [3, 2]])
    v["rows"] = lib.tensor([2, 0])
    return types.SimpleNamespace(lib=lib, **v)


# (label, function of the inputs): the ops a model is made of. Each library's own spelling is the same.
_FORWARD = (
    ("x + w", lambda v: v.x + v.w),
    ("x - w", lambda v: v.x - v.w),
    ("x * w", lambda v: v.x * v.w),
    ("x / w", lambda v: v.x / v.w),
    ("x * 2.0", lambda v: v.x * 2.0),
    ("x + m (broadcast)", lambda v: v.x + v.m),
    ("x ** 2", lambda v: v.x ** 2),
    ("-x", lambda v: -v.x),
    ("x > w", lambda v: v.x > v.w),
    ("where(x > 0, x, w)", lambda v: v.lib.where(v.mask, v.x, v.w)),
    ("x.exp()", lambda v: v.x.exp()),
    ("p.log()", lambda v: v.p.log()),
    ("p.sqrt()", lambda v: v.p.sqrt()),
    ("x.sin()", lambda v: v.x.sin()),
    ("x.cos()", lambda v: v.x.cos()),
    ("x.tanh()", lambda v: v.x.tanh()),
    ("x.sigmoid()", lambda v: v.x.sigmoid()),
    ("x.relu()", lambda v: v.x.relu()),
    ("x.abs()", lambda v: v.x.abs()),
    ("x.clamp(-0.5, 0.5)", lambda v: v.x.clamp(-0.5, 0.5)),
    ("x.sum()", lambda v: v.x.sum()),
    ("x.mean()", lambda v: v.x.mean()),
    ("x.sum(0)", lambda v: v.x.sum(0)),
    ("x.mean(1)", lambda v: v.x.mean(1)),
    ("x.amax(1)", lambda v: v.x.amax(1)),
    ("x.max(1) (values and indices)", lambda v: v.x.max(1)),
    ("x.var()", lambda v: v.x.var()),
    ("x.softmax(1)", lambda v: v.x.softmax(1)),
    ("x.log_softmax(1)", lambda v: v.x.log_softmax(1)),
    ("x.cumsum(1)", lambda v: v.x.cumsum(1)),
    ("x.sort(1)", lambda v: v.x.sort(1)),
    ("x @ w", lambda v: v.x @ v.w),
    ("einsum('ij,jk->ik', x, w)", lambda v: v.lib.einsum("ij,jk->ik", v.x, v.w)),
    ("x.gather(1, index)", lambda v: v.x.gather(1, v.index)),
    ("x.index_select(0, rows)", lambda v: v.x.index_select(0, v.rows)),
    ("cat([x, w])", lambda v: v.lib.cat([v.x, v.w])),
    ("stack([x, w])", lambda v: v.lib.stack([v.x, v.w])),
    ("x[:, 1:3]", lambda v: v.x[:, 1:3]),
    ("x[1]", lambda v: v.x[1]),
    ("x[mask]", lambda v: v.x[v.mask]),
    ("x.view(16)", lambda v: v.x.view(16)),
    ("x.reshape(2, 8)", lambda v: v.x.reshape(2, 8)),
    ("x.t()", lambda v: v.x.t()),
    ("x.permute(1, 0)", lambda v: v.x.permute(1, 0)),
    ("x.unsqueeze(0)", lambda v: v.x.unsqueeze(0)),
    ("m.expand(4, 4)", lambda v: v.m.expand(4, 4)),
    ("x.clone()", lambda v: v.x.clone()),
)

# ops that change x: a tensor of ones keeps the values where they are, however often they run
_INPLACE = (
    ("x.add_(w)", lambda v: v.x.add_(v.w)),
    ("x.sub_(w)", lambda v: v.x.sub_(v.w)),
    ("x.mul_(ones)", lambda v: v.x.mul_(v.ones)),
    ("x.div_(ones)", lambda v: v.x.div_(v.ones)),
    ("x.mul_(1.0)", lambda v: v.x.mul_(1.0)),
    ("x.add_(w, alpha=0.5)", lambda v: v.x.add_(v.w, alpha=0.5)),
    ("x.zero_()", lambda v: v.x.zero_()),
    ("x.fill_(1.0)", lambda v: v.x.fill_(1.0)),
    ("x.copy_(w)", lambda v: v.x.copy_(v.w)),
    ("x.clamp_(-0.5, 0.5)", lambda v: v.x.clamp_(-0.5, 0.5)),
    ("x += w", lambda v: v.x.__iadd__(v.w)),
)

_INDEXING = (
    ("x[:, 1:3]", lambda v: v.x[:, 1:3]),
    ("x[0, 1]", lambda v: v.x[0, 1]),
    ("x[..., 0]", lambda v: v.x[..., 0]),
    ("x[1:3, None]", lambda v: v.x[1:3, None]),
    ("x[1]", lambda v: v.x[1]),
    ("x[1:3]", lambda v: v.x[1:3]),
)

# op(x).sum().backward(): every op above that has a gradient (a scalar result is its own loss)
_LOSS_OPS = (
    "x + w", "x * w", "x / w", "x * 2.0", "x + m (broadcast)", "x ** 2", "-x", "where(x > 0, x, w)", "x.exp()",
    "p.log()", "p.sqrt()", "x.sin()", "x.cos()", "x.tanh()", "x.sigmoid()", "x.relu()", "x.abs()",
    "x.clamp(-0.5, 0.5)", "x.sum()", "x.mean()", "x.sum(0)", "x.mean(1)", "x.amax(1)", "x.var()", "x.softmax(1)",
    "x.log_softmax(1)", "x.cumsum(1)", "x @ w", "einsum('ij,jk->ik', x, w)", "x.gather(1, index)",
    "x.index_select(0, rows)", "cat([x, w])", "x[:, 1:3]", "x[mask]", "x.view(16)", "x.t()", "m.expand(4, 4)",
)
_LOSS = tuple((f"{label}", fn) for label, fn in _FORWARD if label in _LOSS_OPS) + (
    ("x.max(1).values", lambda v: v.x.max(1).values),
    ("x.sort(1).values", lambda v: v.x.sort(1).values),
)


_SCALARS = {"x.sum()", "x.mean()", "x.var()"}  # already a loss: backward() on them as they are


def _with_loss(label: str, fn):
    if label in _SCALARS:
        return lambda v: fn(v).backward()
    return lambda v: fn(v).sum().backward()


def _large_inputs(lib) -> types.SimpleNamespace:
    rng = np.random.default_rng(1)
    a = rng.standard_normal(1_000_000).astype(np.float32)
    b = rng.standard_normal(1_000_000).astype(np.float32)
    m = rng.standard_normal((512, 512)).astype(np.float32)
    n = rng.standard_normal((512, 512)).astype(np.float32)
    s = rng.standard_normal(100_000).astype(np.float32)
    if lib is np:
        return types.SimpleNamespace(a=a, b=b, m=m, n=n, s=s, g=np.ones_like(a), g2=np.ones_like(m))
    v = {name: lib.tensor(value, requires_grad=True) for name, value in (("a", a), ("b", b), ("m", m), ("n", n),
                                                                          ("s", s))}
    return types.SimpleNamespace(lib=lib, g=lib.ones(1_000_000), g2=lib.ones(512, 512), **v)


def _backward(lib_out, grad, *leaves) -> None:
    """``lib_out.backward(grad)`` with fresh ``.grad`` on the leaves, as a training step sees them after zero_grad."""
    for leaf in leaves:
        leaf.grad = None
    lib_out.backward(grad)


def _np_softmax(v):
    e = np.exp(v.m - v.m.max(1, keepdims=True))
    y = e / e.sum(1, keepdims=True)
    return y, y * (v.g2 - (v.g2 * y).sum(1, keepdims=True))


def _np_amax(v):
    """The largest of each row; its gradient shared evenly among the row's ties, as torch's is."""
    y = v.m.max(1, keepdims=True)
    ties = v.m == y
    return y[:, 0], ties * (v.g2[0][:, None] / ties.sum(1, keepdims=True))


def _np_sort(v):
    order = np.argsort(v.s, kind="stable")
    values = v.s[order]
    grad = np.zeros_like(v.s)
    grad[order] = np.ones_like(values)
    return values, grad


def _np_cumsum(v):
    return np.cumsum(v.a), np.cumsum(v.g[::-1])[::-1]


# (label, ember's forward + backward, NumPy's forward + backward written by hand, each on its own inputs)
_LARGE = (
    ("a + b", lambda v: _backward(v.a + v.b, v.g, v.a, v.b), lambda v: (v.a + v.b, v.g.copy(), v.g.copy())),
    ("a * b", lambda v: _backward(v.a * v.b, v.g, v.a, v.b), lambda v: (v.a * v.b, v.g * v.b, v.g * v.a)),
    ("a * 2.0", lambda v: _backward(v.a * 2.0, v.g, v.a), lambda v: (v.a * np.float32(2.0), v.g * np.float32(2.0))),
    ("a.exp()", lambda v: _backward(v.a.exp(), v.g, v.a), lambda v: (lambda y: (y, v.g * y))(np.exp(v.a))),
    ("a.tanh()", lambda v: _backward(v.a.tanh(), v.g, v.a),
     lambda v: (lambda y: (y, v.g * (1 - y * y)))(np.tanh(v.a))),
    ("a.sigmoid()", lambda v: _backward(v.a.sigmoid(), v.g, v.a),
     lambda v: (lambda y: (y, v.g * y * (1 - y)))(1 / (1 + np.exp(-v.a)))),
    ("a.relu()", lambda v: _backward(v.a.relu(), v.g, v.a),
     lambda v: (np.maximum(v.a, 0), np.where(v.a > 0, v.g, 0))),
    ("a.sin()", lambda v: _backward(v.a.sin(), v.g, v.a), lambda v: (np.sin(v.a), v.g * np.cos(v.a))),
    ("a.sum()", lambda v: _backward(v.a.sum(), None, v.a), lambda v: (v.a.sum(), np.ones_like(v.a))),
    ("a.mean()", lambda v: _backward(v.a.mean(), None, v.a),
     lambda v: (v.a.mean(), np.full_like(v.a, 1 / v.a.size))),
    ("m.sum(1)", lambda v: _backward(v.m.sum(1), v.g2[0], v.m),
     lambda v: (v.m.sum(1), np.broadcast_to(v.g2[0][:, None], v.m.shape).copy())),
    ("m.amax(1)", lambda v: _backward(v.m.amax(1), v.g2[0], v.m), _np_amax),
    ("m.softmax(1)", lambda v: _backward(v.m.softmax(1), v.g2, v.m), _np_softmax),
    ("a.cumsum(0)", lambda v: _backward(v.a.cumsum(0), v.g, v.a), _np_cumsum),
    ("m @ n (512x512)", lambda v: _backward(v.m @ v.n, v.g2, v.m, v.n),
     lambda v: (v.m @ v.n, v.g2 @ v.n.T, v.m.T @ v.g2)),
    ("einsum('ij,jk->ik', m, n)", lambda v: _backward(v.lib.einsum("ij,jk->ik", v.m, v.n), v.g2, v.m, v.n),
     lambda v: (np.einsum("ij,jk->ik", v.m, v.n), v.g2 @ v.n.T, v.m.T @ v.g2)),
    ("s.sort() (100,000)", lambda v: _backward(v.s.sort().values, v.g[:100_000], v.s), _np_sort),
)


def _missing(fn, v) -> str | None:
    """Why ember cannot run ``fn`` yet (it lacks the op), or None if it can."""
    try:
        fn(v)
    except (AttributeError, NotImplementedError) as error:
        return f"{type(error).__name__}: {error}"
    return None


def _time(fn, v, number: int) -> float:
    """µs per call, in CPU time of this process: on a shared machine, other jobs' time slices then do not count.

    BLAS worker threads spin for a while after a matrix product; the pause first lets them stop, so that
    their time is not charged to the row after the matmul.
    """
    time.sleep(0.01)
    return min(timeit.repeat(lambda: fn(v), number=number, repeat=3, timer=time.process_time)) / number * 1e6


def _compare(rows, ember_inputs, other_inputs, repeats: int, number: int, other_rows=None) -> tuple:
    """Per row: ember's and the reference's median µs and the median of the per-repeat ratios; and the missing."""
    other_rows = other_rows or {label: fn for label, fn in rows}
    gc.collect()  # what the tables before left behind is not collected inside this one's timings
    present, missing = [], {}
    for label, fn in rows:
        why = _missing(fn, ember_inputs)
        if why is None:
            present.append((label, fn, other_rows[label]))
        else:
            missing[label] = why
    samples = {label: ([], []) for label, _, _ in present}
    for _ in range(repeats):
        for label, mine, theirs in present:
            samples[label][0].append(_time(mine, ember_inputs, number))
            samples[label][1].append(_time(theirs, other_inputs, number))
    results = {}
    for label, (mine, theirs) in samples.items():
        ratios = [e / t for e, t in zip(mine, theirs)]
        results[label] = {"ember_us": statistics.median(mine), "other_us": statistics.median(theirs),
                          "ratio": statistics.median(ratios)}
    return results, missing


def run_small(table: str, repeats: int = 7, number: int = 200) -> tuple:
    """One of the 4x4 tables against torch: 'forward', 'inplace', 'indexing' or 'loss'."""
    import ember
    import torch

    rows = {"forward": _FORWARD, "inplace": _INPLACE, "indexing": _INDEXING,
            "loss": tuple((label, _with_loss(label, fn)) for label, fn in _LOSS)}[table]
    grad = table == "loss"
    if table == "inplace":  # torch refuses in-place changes of a leaf that requires grad; so would ember
        grad = False
    return _compare(rows, _inputs(ember, grad), _inputs(torch, grad), repeats, number)


def run_large(repeats: int = 7, number: int = 3) -> tuple:
    """Forward plus backward on large inputs, against the same computation written by hand in NumPy."""
    import ember

    rows = tuple((label, mine) for label, mine, _ in _LARGE)
    theirs = {label: fn for label, _, fn in _LARGE}
    return _compare(rows, _large_inputs(ember), _large_inputs(np), repeats, number, theirs)


_TARGETS = {
    "forward": ("forward alone, nothing recorded (4x4)", "torch", "median ≤ 1.0, none above 1.5", 1.0, 1.5),
    "inplace": ("in-place (4x4)", "torch", "≤ 1.0 each", 1.0, 1.0),
    "indexing": ("basic indexing with a tuple key (4x4)", "torch", "≤ 1.0 each", 1.0, 1.0),
    "loss": ("op(x).sum().backward() (16 elements)", "torch", "median ≤ 0.25, none above 0.5", 0.25, 0.5),
    "large": ("large inputs, forward + backward", "NumPy", "≤ 1.2 each", 1.2, 1.2),
}


def report(table: str, results: dict, missing: dict) -> str:
    what, other, target, median_limit, each_limit = _TARGETS[table]
    lines = [f"| {what} | ember µs | {other} µs | ember / {other} |", "|---|---|---|---|"]
    for label, r in results.items():
        flag = " (above)" if r["ratio"] > each_limit else ""
        lines.append(f"| `{label}` | {r['ember_us']:.2f} | {r['other_us']:.2f} | {r['ratio']:.3f}{flag} |")
    ratios = [r["ratio"] for r in results.values()]
    if ratios:
        median, worst = statistics.median(ratios), max(ratios)
        met = median <= median_limit and worst <= each_limit
        lines.append(f"| median over {len(ratios)} ops (worst {worst:.3f}) | | | {median:.3f} |")
        lines.append(f"\nTarget: {target}: {'met' if met else 'not met'}.")
    if missing:
        lines.append(f"\nMissing from ember (skipped): {', '.join(f'`{label}`' for label in missing)}.")
    return "\n".join(lines)


def main(tables: list) -> None:
    for table in tables or list(_TARGETS):
        results, missing = run_large() if table == "large" else run_small(table)
        print(f"\n### {_TARGETS[table][0]}\n")
        print(report(table, results, missing))


if __name__ == "__main__":
    main(sys.argv[1:])
