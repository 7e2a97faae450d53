"""ember.multiprocessing.spawn and the TCP backend: several processes on one machine, without MPI.

Start-up is the cost of each job, so every spawned job runs many checks. Collective jobs start with
``fork`` (the children share the test's imports); the tutorial program runs as torch users run it, with
``spawn``, under both torch and ember.
"""
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

import ember
import ember.distributed as dist
import ember.multiprocessing as emp

HERE = Path(__file__).parent
SRC = HERE.parents[1] / "src"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_job(fn, nprocs, *args):
    """``fn(rank, nprocs, *args)`` on ``nprocs`` forked processes; a child's failure is raised here."""
    emp.start_processes(fn, args=(nprocs, *args), nprocs=nprocs, start_method="fork")


# ---- spawn's exceptions, next to torch's

def raise_on_rank_1(rank):
    if rank == 1:
        raise ValueError("the data file is corrupt")
    time.sleep(60)  # stopped by the parent once rank 1 has failed


def exit_on_rank_1(rank):
    if rank == 1:
        sys.exit(3)
    time.sleep(60)


def killed_on_rank_1(rank):
    if rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)


def failure_of(module, fn):
    start = time.monotonic()
    with pytest.raises((module.ProcessRaisedException, module.ProcessExitedException)) as caught:
        module.start_processes(fn, nprocs=2, start_method="fork")
    assert time.monotonic() - start < 30  # the sleeping rank was stopped, not waited for
    return caught.value


def test_spawn_reports_a_failing_process_as_torch_does():
    import torch.multiprocessing as tmp

    for fn in (raise_on_rank_1, exit_on_rank_1, killed_on_rank_1):
        mine, theirs = failure_of(emp, fn), failure_of(tmp, fn)
        assert type(mine).__name__ == type(theirs).__name__
        assert mine.error_index == theirs.error_index == 1
        assert getattr(mine, "exit_code", None) == getattr(theirs, "exit_code", None)
        assert getattr(mine, "signal_name", None) == getattr(theirs, "signal_name", None)
        if isinstance(theirs, tmp.ProcessRaisedException):  # the child's traceback, framed as torch frames it
            assert str(mine).splitlines()[:3] == str(theirs).splitlines()[:3]
            assert str(mine).splitlines()[-1] == str(theirs).splitlines()[-1] == "ValueError: the data file is corrupt"
        else:
            assert str(mine) == str(theirs)


def test_spawn_returns_none_and_a_context_when_not_joining():
    assert emp.spawn(print, args=("spawned",), nprocs=2) is None
    context = emp.start_processes(time.sleep, args=(), nprocs=1, join=False, start_method="fork")
    assert len(context.pids()) == 1 and all(isinstance(p, int) for p in context.pids())
    while not context.join(timeout=30):
        pass
    assert context.join() is True


def test_multiprocessing_reexports_the_standard_module_and_sharing_strategies():
    import torch.multiprocessing as tmp

    assert emp.Queue is multiprocessing.Queue and emp.get_context is multiprocessing.get_context
    assert emp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert emp.get_sharing_strategy() == tmp.get_sharing_strategy()
    emp.set_sharing_strategy("file_system")
    assert emp.get_sharing_strategy() == "file_system"
    emp.set_sharing_strategy("file_descriptor")
    with pytest.raises(AssertionError, match="invalid sharing strategy 'shared_ram'"):
        emp.set_sharing_strategy("shared_ram")


# ---- the tutorial program

def test_ddp_tutorial_program_ends_with_torchs_parameters(tmp_path):
    runs = {}
    for framework in ("torch", "ember"):  # both at once: most of the time goes into importing
        command = [sys.executable, str(HERE / "tcp_ddp_tutorial.py"), framework, str(free_port()),
                   str(tmp_path / f"{framework}.npz")]
        runs[framework] = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                           env={**os.environ, "PYTHONPATH": str(SRC)})
    results = {}
    for framework, run in runs.items():
        _, errors = run.communicate(timeout=180)
        assert run.returncode == 0, errors[-3000:]
        results[framework] = dict(np.load(tmp_path / f"{framework}.npz"))
    assert results["ember"].keys() == results["torch"].keys()
    for name, expected in results["torch"].items():
        np.testing.assert_allclose(results["ember"][name], expected, rtol=1e-6, atol=1e-7, err_msg=name)


# ---- every collective over TCP, against the same values computed here

REDUCTIONS = {"SUM": np.add, "PRODUCT": np.multiply, "MIN": np.minimum, "MAX": np.maximum,
              "BAND": np.bitwise_and, "BOR": np.bitwise_or, "BXOR": np.bitwise_xor}
BOOL_REDUCTIONS = {"SUM": np.logical_or, "MAX": np.logical_or, "BOR": np.logical_or, "PRODUCT": np.logical_and,
                   "MIN": np.logical_and, "BAND": np.logical_and, "BXOR": np.logical_xor}
OPS_OF = {"float32": ["SUM", "AVG", "PRODUCT", "MIN", "MAX"], "float64": ["SUM", "AVG"],
          "int64": ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"],
          "bool": ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]}


def value_of(rank, dtype, shape=(2, 3), salt=0):
    """What ``rank`` contributes: small exact values that differ from rank to rank."""
    data = np.random.default_rng(100 * rank + salt).integers(1, 5, size=shape)
    return (data % 2).astype(bool) if dtype == "bool" else data.astype(dtype)


def reduced(size, dtype, op, shape=(2, 3), salt=0):
    values = [value_of(r, dtype, shape, salt) for r in range(size)]
    if op == "AVG":
        return np.add.reduce(values) / size
    table = BOOL_REDUCTIONS if dtype == "bool" else REDUCTIONS
    total = values[0]
    for value in values[1:]:
        total = table[op](total, value)
    return total


def same(tensor, expected):
    np.testing.assert_array_equal(tensor.numpy(), np.asarray(expected).astype(tensor.numpy().dtype))


def check_reductions(rank, size):
    for dtype, ops in OPS_OF.items():
        for op in ops:
            t = ember.from_numpy(value_of(rank, dtype))
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
            same(t, reduced(size, dtype, op))
            t = ember.from_numpy(value_of(rank, dtype))
            dist.reduce(t, dst=size - 1, op=getattr(dist.ReduceOp, op))
            same(t, reduced(size, dtype, op) if rank == size - 1 else value_of(rank, dtype))
    view = ember.from_numpy(value_of(rank, "float32", (3, 2))).t()  # not contiguous: written through
    dist.all_reduce(view)
    same(view, reduced(size, "float32", "SUM", (3, 2)).T)
    work = dist.all_reduce(ember.from_numpy(value_of(rank, "int64")), async_op=True)
    assert work.wait() and work.is_completed()
    out = ember.zeros(2, 3, dtype=ember.int64)
    pieces = [ember.from_numpy(value_of(rank, "int64", salt=j)) for j in range(size)]
    dist.reduce_scatter(out, pieces, op=dist.ReduceOp.MAX)
    same(out, reduced(size, "int64", "MAX", salt=rank))
    whole = ember.from_numpy(np.concatenate([value_of(rank, "float32", salt=j) for j in range(size)]))
    out = ember.zeros(2, 3)
    dist.reduce_scatter_tensor(out, whole)
    same(out, reduced(size, "float32", "SUM", salt=rank))


def check_data_movement(rank, size):
    mine = ember.from_numpy(value_of(rank, "float64"))
    t = mine.clone()
    dist.broadcast(t, src=1)
    same(t, value_of(1, "float64"))
    gathered = [ember.zeros(r + 1, dtype=ember.int64) for r in range(size)]  # sizes differ per rank
    dist.all_gather(gathered, ember.arange(rank + 1) * 10 + rank)
    for r, g in enumerate(gathered):
        same(g, np.arange(r + 1) * 10 + r)
    into = ember.zeros(size * 2, 3, dtype=ember.float64)
    dist.all_gather_into_tensor(into, mine)
    same(into, np.concatenate([value_of(r, "float64") for r in range(size)]))
    root = size - 1
    gather_list = [ember.zeros(2, 3, dtype=ember.float64) for _ in range(size)] if rank == root else None
    dist.gather(mine, gather_list, dst=root)
    if rank == root:
        for r, g in enumerate(gather_list):
            same(g, value_of(r, "float64"))
    out = ember.zeros(2, 3, dtype=ember.float64)
    scatter_list = [ember.from_numpy(value_of(r, "float64", salt=7)) for r in range(size)] if rank == 0 else None
    dist.scatter(out, scatter_list, src=0)
    same(out, value_of(rank, "float64", salt=7))
    outs = [ember.zeros(3, dtype=ember.int32) for _ in range(size)]
    ins = [ember.full((3,), 10 * rank + j, dtype=ember.int32) for j in range(size)]
    dist.all_to_all(outs, ins)
    for j, o in enumerate(outs):
        same(o, np.full(3, 10 * j + rank))
    single = ember.zeros(size, dtype=ember.int64)
    dist.all_to_all_single(single, ember.arange(size) + 100 * rank)
    same(single, np.arange(size) * 100 + rank)
    dist.barrier()


REPLY = 100  # the tag of the replies to rank 0


def check_point_to_point_and_objects(rank, size):
    if rank == 0:
        for peer in range(1, size):
            dist.send(ember.full((4,), float(peer)), dst=peer, tag=peer)
        got = ember.zeros(2, dtype=ember.int64)
        # from any rank: recv says which. (The replies have a tag of their own: a rank that has replied goes on to
        # the ring below, whose message to rank 0, of tag 0, could otherwise be the one an any-source recv takes.)
        senders = sorted(dist.recv(got, tag=REPLY) for _ in range(1, size))
        assert senders == list(range(1, size))
    else:
        t = ember.zeros(4)
        assert dist.recv(t, src=0, tag=rank) == 0
        same(t, np.full(4, float(rank)))
        dist.send(ember.tensor([rank, rank]), dst=0, tag=REPLY)
    right, left = (rank + 1) % size, (rank - 1) % size
    incoming = ember.zeros(3)
    works = [dist.isend(ember.full((3,), float(rank)), dst=right), dist.irecv(incoming, src=left)]
    for work in works:
        work.wait()
    same(incoming, np.full(3, float(left)))
    objects = [{"from": 1, "step": [1, 2]}, "text"] if rank == 1 else [None, None]
    dist.broadcast_object_list(objects, src=1)
    assert objects == [{"from": 1, "step": [1, 2]}, "text"]
    everyone = [None] * size
    dist.all_gather_object(everyone, ("rank", rank))
    assert everyone == [("rank", r) for r in range(size)]


def check_subgroup(rank, size):
    members = [0, size - 1]
    group = dist.new_group(members)
    if rank not in members:
        assert group is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(group) == -1
        return
    assert dist.get_rank(group) == members.index(rank) and dist.get_world_size(group) == 2
    assert dist.get_process_group_ranks(group) == members and dist.get_backend(group) == "gloo"
    t = ember.from_numpy(value_of(rank, "int64"))
    dist.all_reduce(t, group=group)
    same(t, value_of(0, "int64") + value_of(size - 1, "int64"))
    t = ember.zeros(2)
    dist.broadcast(ember.full((2,), 5.0) if rank == size - 1 else t, src=size - 1, group=group)
    if rank == 0:
        same(t, np.full(2, 5.0))


def collectives_job(rank, size, store_path):
    dist.init_process_group("gloo", init_method=f"file://{store_path}", rank=rank, world_size=size,
                            timeout=timedelta(seconds=60))
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (rank, size, "gloo")
    check_reductions(rank, size)
    check_data_movement(rank, size)
    check_point_to_point_and_objects(rank, size)
    check_subgroup(rank, size)
    dist.destroy_process_group()
    assert not dist.is_initialized()


@pytest.mark.parametrize("size", [2, 3])
def test_every_collective_over_tcp_matches_the_values_computed_here(size, tmp_path):
    run_job(collectives_job, size, tmp_path / "store")


# ---- failures: a collective that some rank never joins, a rank that ends

def failures_job(rank, size, store_path, rank_1_done):
    dist.init_process_group("gloo", init_method=f"file://{store_path}", rank=rank, world_size=size,
                            timeout=timedelta(seconds=1))
    if rank == 0:
        start = time.monotonic()
        with pytest.raises(RuntimeError, match=r"\[rank 0\] all_reduce timed out after 1 s"):
            dist.all_reduce(ember.ones(3))  # rank 1 does not take part
        assert time.monotonic() - start < 10
        rank_1_done.wait(30)
        start = time.monotonic()
        work = dist.irecv(ember.zeros(2), src=1)  # rank 1 ends without sending
        while not work.is_completed():
            time.sleep(0.01)
        assert not work.is_success()
        with pytest.raises(dist.DistNetworkError, match=r"\[rank 0\] recv failed: rank 1 closed its connection"):
            work.wait()
        with pytest.raises(dist.DistNetworkError, match=r"\[rank 0\] all_reduce failed: rank 1 closed"):
            dist.all_reduce(ember.ones(3))
        assert time.monotonic() - start < 10
    else:
        time.sleep(5)  # long enough for rank 0's all_reduce to time out (after 1 s), even on a loaded host
        rank_1_done.set()
        os._exit(0)  # without leaving the group: rank 0 sees the connection end


def test_a_timeout_and_an_ended_peer_raise_with_the_ops_name(tmp_path):
    run_job(failures_job, 2, tmp_path / "store", multiprocessing.get_context("fork").Event())


# ---- stores, next to torch's

def store_calls(store):
    """What torch's Store API answers, call by call."""
    store.set("a", "x")
    answers = [store.get("a"), store.add("n", 2), store.add("n", 3), store.get("n"),
               store.compare_set("a", "x", "y"), store.compare_set("a", "zz", "w"), store.compare_set("new", "", "v"),
               store.compare_set("missing", "q", "v"), store.check(["a", "n"]), store.check(["nothing"]),
               store.delete_key("a"), store.delete_key("a"), store.check(["a"])]
    store.set("bytes", b"\x00\xff")
    answers.append(store.get("bytes"))
    return answers


def test_stores_answer_as_torchs(tmp_path):
    import torch.distributed as tdist

    pairs = [(dist.HashStore(), tdist.HashStore()),
             (dist.FileStore(str(tmp_path / "ember"), 1), tdist.FileStore(str(tmp_path / "torch"), 1)),
             (dist.TCPStore("127.0.0.1", 0, 1, True, timedelta(seconds=5)),
              tdist.TCPStore("127.0.0.1", 0, 1, True, timedelta(seconds=5))),
             (dist.PrefixStore("p", dist.HashStore()), tdist.PrefixStore("p", tdist.HashStore()))]
    for mine, theirs in pairs:
        assert store_calls(mine) == store_calls(theirs), type(mine).__name__
        mine.set_timeout(timedelta(seconds=0.2))
        theirs.set_timeout(timedelta(seconds=0.2))
        for store in (mine, theirs):
            with pytest.raises(RuntimeError, match="(?i)timeout"):  # torch's stores word it each their way
                store.get("late")
        with pytest.raises(dist.DistStoreError, match="wait timeout after 200ms, keys: /(p/)?late"):
            mine.wait(["late"])
    mine, theirs = pairs[2]
    assert mine.port > 0 and mine.host == "127.0.0.1"


def test_a_tcp_store_client_waits_for_a_key_another_process_sets():
    server = dist.TCPStore("127.0.0.1", 0, 2, True, timedelta(seconds=30), wait_for_workers=False)
    port = server.port

    def set_later(rank, size):
        client = dist.TCPStore("127.0.0.1", port, size, False, timedelta(seconds=30))
        time.sleep(0.3)
        client.set("ready", "yes")
        assert client.wait(["ready"]) is None

    context = emp.start_processes(set_later, args=(2,), nprocs=1, join=False, start_method="fork")
    assert server.get("ready") == b"yes"
    while not context.join(30):
        pass


def test_backends_and_rendezvous_errors_name_the_fix(monkeypatch):
    import torch.distributed as tdist

    with pytest.raises(RuntimeError, match="Distributed package doesn't have NCCL built in"):
        dist.init_process_group("nccl", rank=0, world_size=1)
    for name in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    for module in (dist, tdist):
        with pytest.raises(ValueError, match="env:// rendezvous: environment variable RANK expected, but not set"):
            module.init_process_group("gloo")
        with pytest.raises(RuntimeError, match="No rendezvous handler for weird://"):
            module.init_process_group("gloo", init_method="weird://x", rank=0, world_size=1)
    assert not dist.is_initialized()
    assert dist.is_available() and dist.is_gloo_available() and not dist.is_nccl_available()


def test_a_world_of_one_over_a_user_store():
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        t = ember.tensor([1.0, 2.0])
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        same(t, [1.0, 2.0])
        assert dist.get_backend() == "gloo" and dist.get_rank() == 0
    finally:
        dist.destroy_process_group()
