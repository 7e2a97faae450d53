"""Complex pointwise ops against torch, and what their complex checks cost real tensors.

Two panels, each op timed in interleaved rounds (``_timing.compare``: CPU time, median of per-round ratios):

* complex128, 1,000 elements: ``op(z)`` forward, and ``op(z)`` with ``backward`` of its real part's sum;
* float32, 4x4 (the hot path): the same ops on real tensors, forward alone and with backward. With
  ``--before SRC``, this panel's ember figures are also taken for this tree and for the ember of ``SRC`` (an
  earlier ``src`` tree), each in fresh interpreters, alternating for ``--rounds`` rounds; the median of the
  rounds' ratios, now / before, says what the complex checks (a dtype test, a conjugate that leaves real
  values alone) cost.

Run: ``python bench/bench_complex_pointwise.py [--before /path/to/earlier/src] [--rounds 3] [--repeats 7]``.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import compare  # noqa: E402

OPS = {
    "exp": lambda lib, x, y: x.exp(), "log": lambda lib, x, y: x.log(), "sqrt": lambda lib, x, y: x.sqrt(),
    "sin": lambda lib, x, y: x.sin(), "tanh": lambda lib, x, y: x.tanh(), "sigmoid": lambda lib, x, y: x.sigmoid(),
    "reciprocal": lambda lib, x, y: x.reciprocal(), "x * y": lambda lib, x, y: x * y,
    "x / y": lambda lib, x, y: x / y, "x ** 2": lambda lib, x, y: x ** 2, "x ** y": lambda lib, x, y: x ** y,
    "lerp": lambda lib, x, y: lib.lerp(x, y, 0.3), "addcmul": lambda lib, x, y: lib.addcmul(x, x, y),
}
REAL_ONLY = {"x > y": lambda lib, x, y: x > y, "relu": lambda lib, x, y: x.relu(),
             "clamp": lambda lib, x, y: x.clamp(-0.5, 0.5)}


def _inputs(lib, dtype: str, shape: tuple, grad: bool) -> tuple:
    rng = np.random.default_rng(0)
    values = [rng.uniform(0.5, 1.5, shape) for _ in range(4)]
    if dtype.startswith("complex"):
        values = [values[0] + 1j * values[1], values[2] - 1j * values[3]]
    return tuple(lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=grad) for v in values[:2])


def _programs(lib, op, dtype: str, shape: tuple, backward: bool):
    x, y = _inputs(lib, dtype, shape, backward)
    if not backward:
        return lambda: op(lib, x, y)

    def step():
        out = op(lib, x, y)
        (out.real if out.dtype.is_complex else out).sum().backward()
    return step


def panel(libs: dict, ops: dict, dtype: str, shape: tuple, repeats: int, number: int) -> dict:
    """{"op, forward" or "op, with backward": {"<a>_ms": ..., "<a>/<b>": ...}} for the libraries ``libs``."""
    rows = {}
    for name, op in ops.items():
        for backward in (False, True):
            if backward and name in ("x > y",):
                continue
            programs = {label: _programs(lib, op, dtype, shape, backward) for label, lib in libs.items()}
            rows[f"{name}, {'with backward' if backward else 'forward'}"] = compare(programs, repeats, number)
    return rows


def _real_panel_json(repeats: int) -> str:
    import ember

    return json.dumps(panel({"ember": ember}, {**OPS, **REAL_ONLY}, "float32", (4, 4), repeats, 2000))


def _fresh_panel(src: str, repeats: int) -> dict:
    """The real panel's ember figures for the ember of ``src``, in a fresh interpreter."""
    here = os.path.dirname(os.path.abspath(__file__))
    code = (f"import sys; sys.path[:0] = [{src!r}, {here!r}]; import bench_complex_pointwise as b; "
            f"print(b._real_panel_json({repeats}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def now_over_before(before_src: str, rounds: int, repeats: int) -> dict:
    """Per op, the median over ``rounds`` of (this tree's ember ms / ``before_src``'s), run alternately."""
    import ember

    now_src = os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))
    ratios: dict = {}
    for _ in range(rounds):
        now, before = _fresh_panel(now_src, repeats), _fresh_panel(before_src, repeats)
        for name in now:
            ratios.setdefault(name, []).append(now[name]["ember_ms"] / before[name]["ember_ms"])
    return {name: statistics.median(values) for name, values in ratios.items()}


def table(title: str, rows: dict, columns: list) -> str:
    lines = [f"### {title}", "", "| op | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for name, row in rows.items():
        lines.append(f"| `{name}` | " + " | ".join(f"{row[c]:.3f}" if c in row else "" for c in columns) + " |")
    return "\n".join(lines)


def main() -> None:
    import torch

    import ember

    torch.set_num_threads(1)
    repeats = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 7
    libs = {"ember": ember, "torch": torch}
    complex_rows = panel(libs, OPS, "complex128", (1000,), repeats, 200)
    print(table("complex128, 1,000 elements", complex_rows, ["ember_ms", "torch_ms", "ember/torch"]))
    real_rows = panel(libs, {**OPS, **REAL_ONLY}, "float32", (4, 4), repeats, 2000)
    if "--before" in sys.argv:
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
        changes = now_over_before(os.path.abspath(sys.argv[sys.argv.index("--before") + 1]), rounds, repeats)
        for name, row in real_rows.items():
            row["now/before"] = changes[name]
    print()
    print(table("float32, 4x4", real_rows, ["ember_ms", "torch_ms", "ember/torch", "now/before"]))
    for title, rows in (("complex128", complex_rows), ("float32", real_rows)):
        ratios = sorted(row["ember/torch"] for row in rows.values())
        print(f"\n{title}: median ember/torch {ratios[len(ratios) // 2]:.3f}, worst {ratios[-1]:.3f}")
    if "--before" in sys.argv:
        changes = sorted(row["now/before"] for row in real_rows.values())
        print(f"float32 now/before: median {changes[len(changes) // 2]:.3f}, worst {changes[-1]:.3f}")


if __name__ == "__main__":
    main()
