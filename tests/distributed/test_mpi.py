"""Multi-process tests: each launches one program under ``mpiexec`` that runs many checks on every rank."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ember.distributed.run import find_mpiexec

HERE = Path(__file__).parent
SRC = HERE.parents[1] / "src"


def launch(n, program, *args, env=None, timeout=120):
    environment = {**os.environ, "PYTHONPATH": str(SRC), **(env or {})}
    command = [find_mpiexec(), "-n", str(n), sys.executable, str(HERE / program), *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=environment)


def passed(result, n, marker):
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert result.stdout.count(marker) == n, result.stdout


@pytest.mark.parametrize("n", [2, 3])
def test_every_collective_matches_torch_gloo(n, tmp_path):
    passed(launch(n, "mpi_collectives.py", tmp_path / "store"), n, "checks passed")


@pytest.mark.parametrize("n", [2, 4])
def test_ddp_matches_one_process_on_the_whole_batch(n):
    passed(launch(n, "mpi_ddp.py"), n, "DDP checks passed")


def test_a_failing_rank_takes_the_job_down_with_its_message_and_rank():
    start = time.monotonic()
    result = launch(2, "mpi_faults.py", "raise", timeout=60)
    assert result.returncode != 0
    assert "rank 1 (of 2) failed with ValueError: the data file is corrupt" in result.stderr, result.stderr
    assert time.monotonic() - start < 30


def test_a_rank_that_never_joins_times_out():
    result = launch(2, "mpi_faults.py", "timeout", timeout=60)
    assert result.returncode != 0
    assert "[rank 0] all_reduce timed out after 2 s" in result.stderr, result.stderr


def test_mismatched_collectives_are_named_under_the_debug_flag():
    result = launch(2, "mpi_faults.py", "mismatch", env={"EMBER_DISTRIBUTED_DEBUG": "DETAIL"}, timeout=60)
    assert result.returncode != 0
    assert "rank 0: all_reduce(3,):ember.float32" in result.stderr, result.stderr
    assert "rank 1: all_reduce(4,):ember.float32" in result.stderr


def test_launcher_sets_torchrun_variables_and_passes_arguments():
    command = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2",
               str(HERE / "mpi_faults.py"), "environment"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(SRC)})
    assert result.returncode == 0, result.stderr
    for rank in (0, 1):
        assert f"RANK={rank} WORLD_SIZE=2 LOCAL_RANK={rank} args=['environment'] rank={rank}" in result.stdout


def test_comm_hooks_bucket_views_static_graph_and_join_match_torch_ddp(tmp_path):
    passed(launch(2, "mpi_ddp_hooks_join.py", tmp_path / "store"), 2, "hook and join checks passed")


@pytest.mark.parametrize("n", [2, 3])
def test_sync_batchnorm_matches_one_process_on_the_whole_batch(n):
    passed(launch(n, "mpi_sync_batchnorm.py"), n, "sync batchnorm checks passed")
