"""ember.distributed's speed, on MPI: all_reduce bandwidth against raw mpi4py, and a DDP step's overhead.

Run: python bench/bench_distributed.py [--nproc N]   (it starts itself under mpiexec with N ranks, default 2)

1. all_reduce of a 64 MB float32 tensor against mpi4py's ``Allreduce`` of the same NumPy buffer.
2. A training step of an MLP (4 layers of 1024 x 1024) on the same per-rank batch: alone (no DDP), under
   DDP with buckets of 4 MB (all-reduces start during backward), and under DDP with one bucket of the
   whole model (the all-reduce starts when backward is over: no overlap); then with buckets of 4 MB and
   fp16_compress_hook (half the bytes on the wire, plus two casts), and with gradient_as_bucket_view
   (no copy of the averaged gradients out of the buckets). The same steps in torch's DDP on gloo, for the
   ratios against torch 2.13.
Times are wall-clock (``time.perf_counter``): communication waits, which process time would not count.
Each figure is the median of several repeats (the DDP steps taken in turn, round after round).
"""
import os
import statistics
import subprocess
import sys
import time

import numpy as np


def median_time(run, repeats, barrier):
    times = []
    for _ in range(repeats):
        barrier()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bandwidth(dist, ember, MPI, repeats=7):
    n = 16 * 1024 * 1024  # 64 MB of float32
    array = np.ones(n, np.float32)
    out = np.empty_like(array)
    tensor = ember.ones(n)
    comm = MPI.COMM_WORLD
    raw = median_time(lambda: comm.Allreduce(array, out), repeats, comm.Barrier)
    ours = median_time(lambda: dist.all_reduce(tensor), repeats, comm.Barrier)
    return raw, ours


def mlp_nets(fw, fp16_compress_hook):
    """The MLP alone and under DDP in each configuration, in ``fw`` (ember or torch)."""
    def model():
        fw.manual_seed(0)
        return fw.nn.Sequential(*[m for _ in range(4) for m in (fw.nn.Linear(1024, 1024), fw.nn.ReLU())])
    DDP = fw.nn.parallel.DistributedDataParallel
    nets = {"alone": model(), "bucketed": DDP(model(), bucket_cap_mb=4),
            "one bucket": DDP(model(), bucket_cap_mb=1024), "bucketed, fp16_compress_hook": DDP(model(), bucket_cap_mb=4),
            "bucketed, gradient_as_bucket_view": DDP(model(), bucket_cap_mb=4, gradient_as_bucket_view=True)}
    nets["bucketed, fp16_compress_hook"].register_comm_hook(None, fp16_compress_hook)
    return nets


def ddp_steps(ember, torch, comm, repeats=9):
    from ember.distributed.algorithms.ddp_comm_hooks.default_hooks import fp16_compress_hook as ours
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import fp16_compress_hook as theirs

    def step(net, x):
        def run():
            net.zero_grad()
            net(x).square().mean().backward()
        return run
    runs = {}
    for fw, hook in ((ember, ours), (torch, theirs)):
        x = fw.randn(64, 1024)
        runs.update({(fw.__name__, name): step(net, x) for name, net in mlp_nets(fw, hook).items()})
    for run in runs.values():
        run()  # warm up
    return interleaved(runs, repeats, comm.Barrier)


def interleaved(runs, repeats, barrier):
    """Median times of several programs run in turn, round after round: on a machine whose load
    changes, each round's load falls on all of them alike."""
    times = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            barrier()
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def main():
    import tempfile

    import torch
    import torch.distributed as tdist

    import ember
    import ember.distributed as dist
    from mpi4py import MPI

    dist.init_process_group("mpi")
    store = MPI.COMM_WORLD.bcast(tempfile.mktemp(prefix="bench_store_") if dist.get_rank() == 0 else None)
    tdist.init_process_group("gloo", init_method=f"file://{store}", rank=dist.get_rank(),
                             world_size=dist.get_world_size())
    torch.set_num_threads(1)  # one core per rank, as the ranks share the machine's
    ember.set_num_threads(1)  # the same for NumPy's BLAS, so both libraries compare like with like
    raw, ours = bandwidth(dist, ember, MPI)
    steps = ddp_steps(ember, torch, MPI.COMM_WORLD)
    if dist.get_rank() == 0:
        size = dist.get_world_size()
        mb = 64.0
        print(f"ranks: {size}")
        print(f"all_reduce 64 MB float32: mpi4py Allreduce {raw * 1e3:.1f} ms ({mb / raw:.0f} MB/s), "
              f"ember all_reduce {ours * 1e3:.1f} ms ({mb / ours:.0f} MB/s): {raw / ours:.2f} x mpi4py's bandwidth")
        alone = {fw: steps[(fw, "alone")] for fw in ("ember", "torch")}
        for (fw, name), t in steps.items():
            print(f"MLP step, {fw}, {name}: {t * 1e3:.1f} ms ({t / alone[fw]:.2f} x alone)"
                  + (f", {t / steps[('torch', name)]:.2f} x torch" if fw == "ember" else ""))
    tdist.destroy_process_group()
    dist.destroy_process_group()


if __name__ == "__main__":
    if "OMPI_COMM_WORLD_RANK" in os.environ or "PMI_RANK" in os.environ:
        main()
    else:
        nproc = sys.argv[sys.argv.index("--nproc") + 1] if "--nproc" in sys.argv else "2"
        sys.exit(subprocess.call([sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", nproc,
                                  __file__]))
