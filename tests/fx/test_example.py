"""examples/fx_trace.py prints under ember the code torch.fx generates for the same program."""
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "fx_trace.py"
NO_TABLE = "import torch.fx; torch.fx.Graph.print_tabular = lambda self: print('(table)')\n"


def run(source: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def without_table(output: str) -> str:
    return re.sub(r"== graph\n.*?== code", "== graph\n== code", output, flags=re.S)


def test_fx_example_prints_what_torch_prints():
    source = EXAMPLE.read_text()
    in_ember = run(source)
    torch_source = source.replace("import ember as torch\nimport ember.fx\n", "import torch\n" + NO_TABLE)
    in_torch = run(torch_source)
    # torch binds F.gelu from C++ as torch._C._nn.gelu; ember's is ember.nn.functional.gelu
    expected = without_table(in_torch).replace("torch._C._nn.gelu", "ember.nn.functional.gelu")
    assert without_table(in_ember) == expected.replace("torch.", "ember.")
    assert "call_module    features_0  features.0" in in_ember
    assert in_ember.count(": True") == 2
