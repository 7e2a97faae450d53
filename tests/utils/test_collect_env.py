"""ember.utils.collect_env: the report's system facts agree with torch.utils.collect_env's, and it runs as
``python -m ember.utils.collect_env``."""
import os
import subprocess
import sys
from importlib import metadata

import numpy
import torch.utils.collect_env as theirs

import ember
import ember.utils.collect_env as ours


def test_system_facts_as_torch_reports_them():
    assert ours.get_os() == theirs.get_os(theirs.run)
    assert ours.get_libc_version() == theirs.get_libc_version()
    assert ours.get_env_info().python_platform == theirs.get_python_platform()
    assert ours.get_python_version() == f"{sys.version} ({sys.maxsize.bit_length() + 1}-bit runtime)"


def test_versions_are_embers_and_numpys():
    env = ours.get_env_info()
    assert (env.ember_version, env.numpy_version) == (ember.__version__, numpy.__version__)
    assert env.num_threads == ember.get_num_threads()
    assert env.cpu_capability == ember.backends.cpu.get_cpu_capability()


def test_extras_report_what_is_installed():
    for extra, distribution, version in ours.get_extras():
        try:
            installed = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            installed = None
        assert version == installed, extra
    report = ours.get_pretty_env_info()
    assert f"[bfloat16] ml_dtypes=={metadata.version('ml_dtypes')}" in report


def test_no_gpu_fields_that_pretend():
    report = ours.get_pretty_env_info()
    assert "CUDA" not in report and "cuDNN" not in report
    assert "CPU only" in report


def test_runs_as_a_program_in_torchs_layout():
    src = os.path.dirname(os.path.dirname(ember.__file__))
    environment = dict(os.environ, PYTHONPATH=src)
    printed = subprocess.run([sys.executable, "-m", "ember.utils.collect_env"], capture_output=True, text=True,
                             env=environment, timeout=120, check=True)
    lines = printed.stdout.splitlines()
    assert lines[0] == "Collecting environment information..."
    assert f"ember version: {ember.__version__}" in lines and f"OS: {ours.get_os()}" in lines
    assert "Warning" not in printed.stderr


def test_lazily_reached_from_ember_utils():
    assert ember.utils.collect_env is ours
