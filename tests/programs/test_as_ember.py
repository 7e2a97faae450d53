"""The runner behind the corpus: under it ``torch`` and ``torch.<sub>`` are ember's modules, nothing else changes."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AS_EMBER = Path(__file__).with_name("as_ember.py")


def run_under_ember(source: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    program = tmp_path / "program.py"
    program.write_text(source)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, str(AS_EMBER), str(program), *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)


def test_torch_and_its_submodules_are_embers(tmp_path):
    source = """
import sys
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torch import nn
import ember
print(torch is ember, F is ember.nn.functional, nn is ember.nn, DataLoader is ember.utils.data.DataLoader)
print(__name__, sys.argv[1:], sys.path[0] == sys.argv[0].rsplit("/", 1)[0])
"""
    done = run_under_ember(source, tmp_path, "--flag")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True True True True", "__main__ ['--flag'] True"]


def test_a_submodule_ember_lacks_fails_as_a_missing_torch_module(tmp_path):
    done = run_under_ember("import torch.no_such_module\n", tmp_path)
    assert done.returncode != 0
    assert "ModuleNotFoundError: No module named 'torch.no_such_module'" in done.stderr


def test_other_imports_are_untouched(tmp_path):
    done = run_under_ember("import json, torchlike_name_is_not_torch\n", tmp_path)
    assert "No module named 'torchlike_name_is_not_torch'" in done.stderr
