"""The corpus: every ``examples/programs/*.py`` runs under torch and under ember and prints the same lines.

A program marked ``# corpus: slow`` near its top runs only when ``EMBER_SLOW_PROGRAMS=1`` (``make test`` sets it).

Each run is forked from a zygote that has imported its library already (zygote.py says why that is the same as
a new interpreter), which saves the import twice per program. A program marked ``# corpus: own-process``, or
one that runs code before its first ``import torch`` (code that could change how the import goes: environment
variables, warning filters, ``sys.modules``), runs in a new interpreter instead, as every program does with
``EMBER_CORPUS_FORK=0``.
"""
from __future__ import annotations

import os
import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .zygote import LIBRARIES, Zygote

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "examples" / "programs").glob("*.py"))
AS_EMBER = Path(__file__).with_name("as_ember.py")
SLOW_MARK = "# corpus: slow"
OWN_PROCESS_MARK = "# corpus: own-process"
TIMEOUT = 300  # seconds; a program is meant to take a few
# the one permitted difference: a repr names its package, `ember.Size([2])` where torch prints `torch.Size([2])`
PACKAGE_PREFIX = re.compile(r"\bember\.")


def as_torch_names(text: str) -> list[str]:
    """ember's printed lines with the package prefix spelled as torch's."""
    return PACKAGE_PREFIX.sub("torch.", text).splitlines()


def has_mark(program: Path, mark: str) -> bool:
    head = program.read_text().splitlines()[:10]
    return any(line.strip() == mark for line in head)


def is_slow(program: Path) -> bool:
    return has_mark(program, SLOW_MARK)


def imports_torch(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Import):
        names = [alias.name for alias in statement.names]
    elif isinstance(statement, ast.ImportFrom):
        names = [statement.module or ""]
    else:
        return False
    return any(name == "torch" or name.startswith("torch.") for name in names)


def runs_code_before_importing_torch(program: Path) -> bool:
    """True unless everything before the first top-level torch import is the docstring and other imports."""
    body = ast.parse(program.read_text()).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    for statement in body:
        if imports_torch(statement):
            return False
        if not isinstance(statement, (ast.Import, ast.ImportFrom)):
            return True
    return True  # no top-level torch import: whatever imports it runs first


def needs_own_process(program: Path) -> bool:
    forking = os.environ.get("EMBER_CORPUS_FORK", "1") != "0" and sys.platform.startswith("linux")
    return not forking or has_mark(program, OWN_PROCESS_MARK) or runs_code_before_importing_torch(program)


def run_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    # the two runs share a machine with the rest of the suite: one BLAS thread each keeps them comparable
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], cwd=cwd, env=run_env(), capture_output=True, text=True,
                          timeout=TIMEOUT)


@pytest.fixture(scope="session")
def zygotes():
    """A zygote per library for this worker, each started on its first run."""
    import_dir = str(ROOT / "examples" / "programs")
    started = {library: Zygote(library, import_dir=import_dir, env=run_env()) for library in LIBRARIES}
    yield started
    for zygote in started.values():
        zygote.close()


def run_program(library: str, program: Path, cwd: Path, zygotes: dict[str, Zygote]) -> subprocess.CompletedProcess:
    if needs_own_process(program):
        return run([str(program)] if library == "torch" else [str(AS_EMBER), str(program)], cwd)
    return zygotes[library].run([str(program)], cwd, timeout=TIMEOUT, env=run_env())


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
def test_program_prints_the_same_under_torch_and_ember(program: Path, tmp_path: Path, zygotes):
    # each run gets its own directory, so a checkpoint one writes is never read by the other
    (tmp_path / "torch").mkdir()
    (tmp_path / "ember").mkdir()
    under_torch = run_program("torch", program, tmp_path / "torch", zygotes)
    assert under_torch.returncode == 0, describe("torch", under_torch)
    under_ember = run_program("ember", program, tmp_path / "ember", zygotes)
    assert under_ember.returncode == 0, describe("ember", under_ember)
    torch_lines, ember_lines = under_torch.stdout.splitlines(), as_torch_names(under_ember.stdout)
    assert torch_lines, f"{program.name} printed nothing under torch: there is nothing to compare"
    for number, (want, got) in enumerate(zip(torch_lines, ember_lines), start=1):
        assert got == want, f"{program.name}, line {number}:\n torch: {want!r}\n ember: {got!r}"
    assert len(ember_lines) == len(torch_lines), (
        f"{program.name}: torch printed {len(torch_lines)} lines, ember {len(ember_lines)}\n"
        f"--- torch\n{under_torch.stdout}\n--- ember\n{under_ember.stdout}")
