"""ember.distributed's speed, on MPI: all_reduce bandwidth against raw mpi4py, and a DDP step's overhead.

Run: python bench/bench_distributed.py [--nproc N]   (it starts itself under mpiexec with N ranks, default 2)

1. all_reduce of a 64 MB float32 tensor against mpi4py's ``Allreduce`` of the same NumPy buffer.
2. A training step of an MLP (4 layers of 1024 x 1024) on the same per-rank batch: alone (no DDP), under
   DDP with buckets of 4 MB (all-reduces start during backward), and under DDP with one bucket of the
   whole model (the all-reduce starts when backward is over: no overlap); then with buckets of 4 MB and
   fp16_compress_hook (half the bytes on the wire, plus two casts), and with gradient_as_bucket_view
   (no copy of the averaged gradients out of the buckets).
Times are wall-clock (``time.perf_counter``): communication waits, which process time would not count.
Each figure is the median of several repeats.
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


def ddp_steps(dist, ember, MPI, repeats=7):
    from ember import nn
    comm = MPI.COMM_WORLD

    def model():
        ember.manual_seed(0)
        return nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(1024, 1024), nn.ReLU())])

    x = ember.randn(64, 1024)

    def step(net):
        def run():
            net.zero_grad()
            net(x).square().mean().backward()
        return run

    from ember.distributed.algorithms.ddp_comm_hooks.default_hooks import fp16_compress_hook
    DDP = nn.parallel.DistributedDataParallel
    nets = {"alone": model(), "bucketed": DDP(model(), bucket_cap_mb=4),
            "one bucket": DDP(model(), bucket_cap_mb=1024), "bucketed, fp16_compress_hook": DDP(model(), bucket_cap_mb=4),
            "bucketed, gradient_as_bucket_view": DDP(model(), bucket_cap_mb=4, gradient_as_bucket_view=True)}
    nets["bucketed, fp16_compress_hook"].register_comm_hook(None, fp16_compress_hook)
    for net in nets.values():
        step(net)()  # warm up
    return {name: median_time(step(net), repeats, comm.Barrier) for name, net in nets.items()}


def main():
    import ember
    import ember.distributed as dist
    from mpi4py import MPI

    dist.init_process_group("mpi")
    raw, ours = bandwidth(dist, ember, MPI)
    steps = ddp_steps(dist, ember, MPI)
    if dist.get_rank() == 0:
        size = dist.get_world_size()
        mb = 64.0
        print(f"ranks: {size}")
        print(f"all_reduce 64 MB float32: mpi4py Allreduce {raw * 1e3:.1f} ms ({mb / raw:.0f} MB/s), "
              f"ember all_reduce {ours * 1e3:.1f} ms ({mb / ours:.0f} MB/s): {raw / ours:.2f} x mpi4py's bandwidth")
        alone = steps["alone"]
        for name, t in steps.items():
            print(f"MLP step, {name}: {t * 1e3:.1f} ms ({t / alone:.2f} x alone)")
    dist.destroy_process_group()


if __name__ == "__main__":
    if "OMPI_COMM_WORLD_RANK" in os.environ or "PMI_RANK" in os.environ:
        main()
    else:
        nproc = sys.argv[sys.argv.index("--nproc") + 1] if "--nproc" in sys.argv else "2"
        sys.exit(subprocess.call([sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", nproc,
                                  __file__]))
