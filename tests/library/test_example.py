"""examples/custom_op.py prints under ember what the same program prints under torch."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "custom_op.py"


def run(source: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_custom_op_example_prints_what_torch_prints():
    source = EXAMPLE.read_text()
    in_ember = run(source)
    in_torch = run(source.replace("import ember as torch", "import torch").replace("from ember import", "from torch import"))
    assert in_ember == in_torch
    assert "gradcheck: True" in in_ember and in_ember.count("SUCCESS") == 4
