"""examples/demo.py (what ``make demo`` runs) trains, checkpoints and plots, with and without tqdm."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sklearn", reason="the demo's data comes from scikit-learn (the demo extra)")
pytest.importorskip("matplotlib", reason="the demo plots with matplotlib (the demo extra)")

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.py"
NO_TQDM = ("import sys, runpy; sys.modules['tqdm'] = None; sys.argv = sys.argv[1:]; "
           "runpy.run_path(sys.argv[0], run_name='__main__')")


@pytest.mark.parametrize("command", [[str(DEMO)], ["-c", NO_TQDM, str(DEMO)]], ids=["as-is", "without-tqdm"])
def test_demo_trains_checkpoints_plots_and_reports_gradcheck(command, tmp_path):
    plot = tmp_path / "curves.png"
    result = subprocess.run([sys.executable, *command, "--epochs", "3", "--plot", str(plot)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "gradcheck(LinearFunction) -> True" in out
    assert "raised GradcheckError" in out and "Jacobian mismatch for output 0 with respect to input 2" in out
    assert out.index("gradcheck(LinearFunction)") < out.index("Training on")  # the Function is checked first
    losses = [float(v) for v in re.findall(r"loss (\d+\.\d+)", out)]
    assert len(losses) == 3 and losses == sorted(losses, reverse=True)
    final = float(re.search(r"^Test accuracy: (\d+\.\d+)%", out, re.M).group(1))
    reloaded = float(re.search(r"Reloaded model's test accuracy: (\d+\.\d+)%", out).group(1))
    assert final >= 95.0 and reloaded == final
    assert f"Learning curves written to {plot}" in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
