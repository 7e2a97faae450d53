"""A run forked from a zygote behaves as the same run in a new interpreter: the two are run side by side."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .test_programs import needs_own_process, run_env, runs_code_before_importing_torch
from .zygote import Zygote


@pytest.fixture(scope="module")
def zygotes(tmp_path_factory):
    import_dir = str(tmp_path_factory.mktemp("programs"))
    started = {library: Zygote(library, import_dir=import_dir, env=run_env()) for library in ("torch", "ember")}
    yield started
    for zygote in started.values():
        zygote.close()


def both_ways(source: str, tmp_path: Path, zygote: Zygote, *args: str, timeout: float = 120):
    """The program run plainly, then forked from the zygote, each in a directory of its own."""
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent(source))
    runs = []
    for way in ("plain", "forked"):
        cwd = tmp_path / way
        cwd.mkdir()
        argv = [str(program), str(cwd), *args]
        if way == "plain":
            runs.append(subprocess.run([sys.executable, *argv], cwd=cwd, env=run_env(), capture_output=True,
                                       text=True, timeout=timeout, stdin=subprocess.DEVNULL))
        else:
            runs.append(zygote.run(argv, cwd, timeout=timeout))
    return runs


PROCESS_STATE = """
import atexit, io, multiprocessing, os, pickle, sys, warnings
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor([2.0]))

def square(x):
    return x * x

def warn():
    warnings.warn("said once per place", UserWarning)

if __name__ == "__main__":  # (not in the spawned workers, whose exit races the pool's terminate)
    atexit.register(lambda: print("atexit ran"))
    here = os.path.dirname(os.path.abspath(__file__))
    print(__name__, sys.argv[2:], sys.path[0] == here, os.getcwd() == sys.argv[1], sys.stdin.read() == "")
    print("torch imported once:", "torch" in sys.modules, torch.tensor([1, 2]).sum().item())
    buffer = io.BytesIO()
    torch.save(Net(), buffer)  # pickles the class by reference to __main__
    buffer.seek(0)
    print("whole module back:", type(torch.load(buffer, weights_only=False)).__name__)
    for method in ("fork", "spawn"):  # spawn re-imports __main__ from its file
        with multiprocessing.get_context(method).Pool(1) as pool:
            print(method, pool.map(square, [1, 2, 3]))
    loader = torch.utils.data.DataLoader(list(range(6)), batch_size=2, num_workers=2)
    print("loader workers:", [batch.tolist() for batch in loader])
    for _ in range(3):
        warn()
    with open("written.txt", "w") as f:
        f.write("in the working directory")
    sys.stdout.write("no newline at the end")
"""


def test_a_forked_run_sees_the_process_a_new_interpreter_sees(tmp_path, zygotes):
    plain, forked = both_ways(PROCESS_STATE, tmp_path, zygotes["torch"], "--flag")
    assert plain.returncode == 0, plain.stderr
    assert (forked.returncode, forked.stdout) == (plain.returncode, plain.stdout)
    assert plain.stderr.count("UserWarning: said once per place") == 1
    assert forked.stderr == plain.stderr
    assert (tmp_path / "forked" / "written.txt").read_text() == "in the working directory"


@pytest.mark.parametrize("source", [
    "print('fine')",
    "raise SystemExit(3)",
    "import sys; print('out'); sys.exit('a message for stderr')",
    "print('before'); raise ValueError('boom')",
    "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
], ids=["exits_0", "exit_code", "exit_message", "uncaught_exception", "killed_by_a_signal"])
def test_the_exit_status_and_output_are_a_plain_runs(source, tmp_path, zygotes):
    plain, forked = both_ways(source, tmp_path, zygotes["torch"])
    assert (forked.returncode, forked.stdout) == (plain.returncode, plain.stdout)
    # a traceback has the zygote's frames above the program's: compare what the program itself put last
    assert forked.stderr.splitlines()[-1:] == plain.stderr.splitlines()[-1:]
    assert ("Traceback" in forked.stderr) == ("Traceback" in plain.stderr)


def test_the_ember_zygote_resolves_torch_to_ember(tmp_path, zygotes):
    source = "import sys, torch, torch.nn.functional as F; print(torch.__name__, F is sys.modules['ember.nn.functional'])"
    forked = both_ways(source, tmp_path, zygotes["ember"])[1]
    assert (forked.returncode, forked.stdout) == (0, "ember True\n"), forked.stderr


def test_each_run_draws_its_own_numpy_seed(tmp_path, zygotes):
    source = "import numpy; print(numpy.random.randint(2 ** 62))"
    (tmp_path / "program.py").write_text(source)
    draws = {zygotes["torch"].run([str(tmp_path / "program.py")], tmp_path, timeout=60).stdout for _ in range(2)}
    assert len(draws) == 2, draws


def test_a_run_past_its_timeout_is_killed_and_the_zygote_serves_on(tmp_path, zygotes):
    (tmp_path / "slow.py").write_text("import time; print('started', flush=True); time.sleep(600)")
    with pytest.raises(subprocess.TimeoutExpired) as expired:
        zygotes["torch"].run([str(tmp_path / "slow.py")], tmp_path, timeout=2)
    assert expired.value.output == "started\n"
    (tmp_path / "quick.py").write_text("print('still serving')")
    assert zygotes["torch"].run([str(tmp_path / "quick.py")], tmp_path, timeout=60).stdout == "still serving\n"


def test_a_changed_environment_starts_a_new_zygote(tmp_path, zygotes):
    (tmp_path / "program.py").write_text("import os; print(os.environ.get('ZYGOTE_PROBE'))")
    printed = [zygotes["ember"].run([str(tmp_path / "program.py")], tmp_path, timeout=60,
                                    env=dict(run_env(), ZYGOTE_PROBE=value)).stdout for value in ("one", "two")]
    assert printed == ["one\n", "two\n"]
    assert os.environ.get("ZYGOTE_PROBE") is None


@pytest.mark.parametrize("source, own_process", [
    ('"""Docstring."""\nimport math\nfrom torch import nn\nx = 1\n', False),
    ("import os\nos.environ['OMP_NUM_THREADS'] = '4'\nimport torch\n", True),
    ("import warnings\nwarnings.simplefilter('error')\nimport torch.nn as nn\n", True),
    ("def main():\n    import torch\n", True),
])
def test_a_program_that_runs_code_before_importing_torch_gets_a_new_interpreter(source, own_process, tmp_path,
                                                                                 monkeypatch):
    monkeypatch.delenv("EMBER_CORPUS_FORK", raising=False)
    program = tmp_path / "program.py"
    program.write_text(source)
    assert runs_code_before_importing_torch(program) is own_process
    assert needs_own_process(program) is (own_process or not sys.platform.startswith("linux"))


def test_pytests_per_test_variable_reaches_the_run_without_a_new_zygote(tmp_path, zygotes):
    (tmp_path / "program.py").write_text("import os; print(os.environ['PYTEST_CURRENT_TEST'])")
    printed, zygote_pids = [], []
    for value in ("first test (call)", "second test (call)"):
        env = dict(run_env(), PYTEST_CURRENT_TEST=value)
        printed.append(zygotes["ember"].run([str(tmp_path / "program.py")], tmp_path, timeout=60, env=env).stdout)
        zygote_pids.append(zygotes["ember"].process.pid)
    assert printed == ["first test (call)\n", "second test (call)\n"]
    assert zygote_pids[0] == zygote_pids[1]
