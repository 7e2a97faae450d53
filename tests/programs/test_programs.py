"""The corpus: every ``examples/programs/*.py`` runs under torch and under ember and prints the same lines.

A program marked ``# corpus: slow`` near its top runs only when ``EMBER_SLOW_PROGRAMS=1`` (``make test`` sets it).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "examples" / "programs").glob("*.py"))
AS_EMBER = Path(__file__).with_name("as_ember.py")
SLOW_MARK = "# corpus: slow"
TIMEOUT = 300  # seconds; a program is meant to take a few
# the one permitted difference: a repr names its package, `ember.Size([2])` where torch prints `torch.Size([2])`
PACKAGE_PREFIX = re.compile(r"\bember\.")


def as_torch_names(text: str) -> list[str]:
    """ember's printed lines with the package prefix spelled as torch's."""
    return PACKAGE_PREFIX.sub("torch.", text).splitlines()


def is_slow(program: Path) -> bool:
    head = program.read_text().splitlines()[:10]
    return any(line.strip() == SLOW_MARK for line in head)


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    # the two runs share a machine with the rest of the suite: one BLAS thread each keeps them comparable
    env.setdefault("OMP_NUM_THREADS", "1")
    return subprocess.run([sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)


def describe(name: str, result: subprocess.CompletedProcess) -> str:
    return f"{name} exited with {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


def cases():
    slow_on = os.environ.get("EMBER_SLOW_PROGRAMS") == "1"
    for program in PROGRAMS:
        skip = pytest.mark.skip(reason="slow program: set EMBER_SLOW_PROGRAMS=1 to run it")
        marks = [skip] if is_slow(program) and not slow_on else []
        yield pytest.param(program, id=program.stem, marks=marks)


def test_corpus_is_not_empty():
    assert len(PROGRAMS) >= 25, f"expected at least 25 programs in examples/programs, found {len(PROGRAMS)}"


@pytest.mark.parametrize("program", list(cases()))
def test_program_prints_the_same_under_torch_and_ember(program: Path, tmp_path: Path):
    # each run gets its own directory, so a checkpoint one writes is never read by the other
    (tmp_path / "torch").mkdir()
    (tmp_path / "ember").mkdir()
    under_torch = run([str(program)], tmp_path / "torch")
    assert under_torch.returncode == 0, describe("torch", under_torch)
    under_ember = run([str(AS_EMBER), str(program)], tmp_path / "ember")
    assert under_ember.returncode == 0, describe("ember", under_ember)
    torch_lines, ember_lines = under_torch.stdout.splitlines(), as_torch_names(under_ember.stdout)
    assert torch_lines, f"{program.name} printed nothing under torch: there is nothing to compare"
    for number, (want, got) in enumerate(zip(torch_lines, ember_lines), start=1):
        assert got == want, f"{program.name}, line {number}:\n torch: {want!r}\n ember: {got!r}"
    assert len(ember_lines) == len(torch_lines), (
        f"{program.name}: torch printed {len(torch_lines)} lines, ember {len(ember_lines)}\n"
        f"--- torch\n{under_torch.stdout}\n--- ember\n{under_ember.stdout}")
