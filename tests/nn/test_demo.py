"""examples/demo.py (what ``make demo`` runs) works, with and without tqdm, and says what it promises."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.py"
NO_TQDM = "import sys, runpy; sys.modules['tqdm'] = None; runpy.run_path(sys.argv[1], run_name='__main__')"


@pytest.mark.parametrize("command", [[str(DEMO)], ["-c", NO_TQDM, str(DEMO)]], ids=["as-is", "without-tqdm"])
def test_demo_trains_and_reports_gradcheck(command):
    result = subprocess.run([sys.executable, *command], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    losses = [float(v) for v in re.findall(r"loss (\d+\.\d+)", out)]
    assert len(losses) >= 3 and losses == sorted(losses, reverse=True) and losses[-1] < 1e-2 * losses[0]
    assert "gradcheck(LinearFunction) -> True" in out
    assert "raised GradcheckError" in out and "Jacobian mismatch for output 0 with respect to input 2" in out
