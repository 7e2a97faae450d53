"""Machine instructions per call, counted by valgrind: a cost that the host's load does not move.

bench_bytecodes.py counts Python bytecodes, which miss what each bytecode costs: an attribute write that
CPython cannot specialise runs five times the instructions of one it can, and a C call (NumPy's) counts as one
bytecode however long it runs. This counts every instruction the process executes during a call, under
valgrind's callgrind, for one or more source trees, so a change to the hot path is judged to a fraction of a
percent on a shared machine where timings move by tens of percent.

Each expression of ``x``, ``w`` (4x4), ``m`` (4x1), ``ones`` (4x4), ``xg`` (4x4, requires grad), ``index`` (4x2
int64, the panel's gather index), ``np``, the
float32 arrays ``A[rows, columns]`` (the small MLP's and the LeNet's Linear shapes), ``h`` (relu's [64, 128]
output), ``hg`` (a gradient of its shape), ``sgd`` (SGD with momentum over the small MLP's parameters, their
gradients set), ``step_mlp`` (the small MLP's whole training step) and ``numpy_step_mlp`` (that step written by
hand in NumPy, as ``bench_mlp.py`` times it) runs ``--calls`` times inside one ``exec``
after a warm-up; callgrind writes a profile after each ``exec``, and a call's figure is that profile's total over
the count (the loop itself adds about 30 instructions). Hashing is seeded and the cyclic collector runs between
loops only (its passes inside a loop would fall where the allocation count says, which depends on what ran
before), so a tree gives the same counts run after run. A count does depend on the other expressions of the run
(the interpreter's type and specialisation caches are shared, and the attribute lookups they miss cost more), so
trees are compared on one set of expressions.

    python bench/bench_instructions.py "x + w" "x.view(16)"                      # this tree
    python bench/bench_instructions.py --trees /old/src,src "x + w" "x[1]"        # side by side, ratios to the first

It needs valgrind on the PATH; each tree takes about 20 s of start-up (ember imported under valgrind).
"""
from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

_CHILD = r"""
import gc, json, sys
import ember
x, w, m, ones = ember.randn(4, 4), ember.randn(4, 4), ember.randn(4, 1), ember.ones(4, 4)
xg = ember.randn(4, 4, requires_grad=True)
index = ember.tensor([[0, 1], [2, 3], [1, 0], [3, 2]])  # bench_panel.py's gather index
import numpy as np
rng = np.random.default_rng(0)
# float32 arrays of a training step's shapes, by shape (A[64, 128]), and relu's output and gradient there
A = {s: rng.standard_normal(s).astype(np.float32) for s in [(64, 64), (64, 128), (128, 64), (128, 128), (64, 10),
                                                             (10, 128), (128, 10), (64, 1568), (10, 1568)]}
h = np.maximum(rng.standard_normal((64, 128)).astype(np.float32), 0)
hg = rng.standard_normal((64, 128)).astype(np.float32)


def small_mlp():
    nn = ember.nn
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))


# sgd: SGD with momentum over the small MLP's parameters, whose gradients stay set; step_mlp(): its whole step
ember.manual_seed(0)
sgd = ember.optim.SGD(small_mlp().parameters(), lr=0.01, momentum=0.9)
for p in sgd.param_groups[0]["params"]:
    p.grad = ember.randn(p.shape) * 1e-3
model = small_mlp()
trainer = ember.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
batch, targets = ember.randn(64, 64), ember.randint(0, 10, (64,))


def step_mlp():
    trainer.zero_grad()
    ember.nn.functional.cross_entropy(model(batch), targets).backward()
    trainer.step()


sys.path.insert(0, sys.argv[3])
import bench_mlp  # numpy_step_mlp(): the same step written by hand in NumPy, the target's yardstick
numpy_step_mlp = bench_mlp._numpy_step((64, 128, 128, 10), 64)
names = dict(ember=ember, x=x, w=w, m=m, ones=ones, xg=xg, index=index, np=np, A=A, h=h, hg=hg, sgd=sgd,
             step_mlp=step_mlp, numpy_step_mlp=numpy_step_mlp)
calls, expressions = int(sys.argv[1]), json.loads(sys.argv[2])
loops = [compile(f"for _ in range({calls}):\n    {e}\n", "<measured>", "exec") for e in expressions]
for e in expressions:  # warm up: the specialising interpreter and ember's caches settle first
    call = eval("lambda: " + e, names)
    for _ in range(50):
        call()
gc.collect()
gc.disable()  # the collector's passes fall where the allocation count says, which differs from set to set
exec("pass", names)  # a profile boundary: what came before (the import, the warm-up) ends here
for loop in loops:
    exec(loop, names)
    exec("gc.collect()", dict(gc=gc))  # a profile of its own: each loop starts with nothing left to collect
"""


def instructions(src: str, expressions: list, calls: int) -> list:
    """Instructions per call of each expression with ``src`` first on the path."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "callgrind.out")
        env = dict(os.environ, PYTHONPATH=os.path.abspath(src), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   PYTHONHASHSEED="0")  # the same dict layouts, run after run
        subprocess.run(["valgrind", "--tool=callgrind", "--dump-after=builtin_exec", f"--callgrind-out-file={out}",
                        sys.executable, "-c", _CHILD, str(calls), json.dumps(expressions), HERE],
                       env=env, capture_output=True, check=True)
        dumps = sorted(glob.glob(out + ".*"), key=lambda name: int(name.rsplit(".", 1)[1]))
        measured = dumps[-2 * len(expressions)::2]  # each loop's profile, then its collection's
        return [_total(dump) / calls for dump in measured]


def _total(dump: str) -> int:
    with open(dump) as profile:
        text = profile.read()
    found = re.search(r"^(?:summary|totals):\s*(\d+)", text, re.M)
    return int(found.group(1))


def report(trees: list, expressions: list, calls: int) -> str:
    counts = {tree: instructions(tree, expressions, calls) for tree in trees}
    lines = ["| call | " + " | ".join(trees) + " |", "|---" * (len(trees) + 1) + "|"]
    for k, text in enumerate(expressions):
        first = counts[trees[0]][k]
        cells = [f"{counts[trees[0]][k]:,.0f}"]
        cells += [f"{counts[tree][k]:,.0f} ({counts[tree][k] / first:.3f})" for tree in trees[1:]]
        lines.append(f"| `{text}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list) -> None:
    trees, calls = [os.path.join(os.path.dirname(HERE), "src")], 1000
    if "--trees" in argv:
        at = argv.index("--trees")
        trees = argv[at + 1].split(",")
        argv = argv[:at] + argv[at + 2:]
    if "--calls" in argv:
        at = argv.index("--calls")
        calls = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    print(report(trees, argv or ["x + w", "x.view(16)"], calls))


if __name__ == "__main__":
    main(sys.argv[1:])
