"""Run under mpiexec by test_mpi.py: SyncBatchNorm against one process normalizing the whole batch.

Rank r holds r + 2 samples (uneven on purpose). Every rank also computes the single-process reference on
the whole batch, so the comparison needs no communication of its own. Checks: outputs, input gradients,
weight and bias gradients summed over ranks, running statistics, a gradient of a gradient, and one step
of DistributedDataParallel over a model whose BatchNorm was converted.
"""
import numpy as np


def close(a, b, what, rtol=1e-9):
    a, b = a.detach().numpy(), b.detach().numpy()
    scale = max(np.abs(b).max(), 1e-12)
    if not np.abs(a - b).max() <= rtol * scale:
        raise AssertionError(f"{what}: differ by {np.abs(a - b).max() / scale:.3g} relative")


def summed(ember, dist, tensor):
    total = tensor.detach().clone()
    dist.all_reduce(total)
    return total


def statistics_and_gradients(ember, nn, dist):
    rank, size = dist.get_rank(), dist.get_world_size()
    counts = [r + 2 for r in range(size)]
    start = sum(counts[:rank])
    rng = np.random.default_rng(3)
    data = rng.standard_normal((sum(counts), 3, 4, 2)) * 2 + 1
    weights = rng.standard_normal(data.shape)
    mine = slice(start, start + counts[rank])

    reference = nn.BatchNorm2d(3).double()
    synced = nn.SyncBatchNorm(3).double()
    for layer in (reference, synced):
        with ember.no_grad():
            layer.weight.copy_(ember.tensor([1.5, -0.5, 2.0]))
            layer.bias.copy_(ember.tensor([0.1, 0.2, -0.3]))
    x_all = ember.tensor(data, requires_grad=True)
    x = ember.tensor(data[mine], requires_grad=True)
    out_all, out = reference(x_all), synced(x)
    close(out, out_all[mine], "output")
    (out_all * ember.tensor(weights)).sum().backward()
    (out * ember.tensor(weights[mine])).sum().backward()
    close(x.grad, x_all.grad[mine], "input gradient")
    close(summed(ember, dist, synced.weight.grad), reference.weight.grad, "weight gradient")
    close(summed(ember, dist, synced.bias.grad), reference.bias.grad, "bias gradient")
    close(synced.running_mean, reference.running_mean, "running mean")
    close(synced.running_var, reference.running_var, "running var")

    # a gradient of a gradient: the squared input gradient, differentiated to the weight
    for layer in (reference, synced):
        layer.weight.grad = None
    g_all, = ember.autograd.grad((reference(x_all) * ember.tensor(weights)).sum(), x_all, create_graph=True)
    g, = ember.autograd.grad((synced(x) * ember.tensor(weights[mine])).sum(), x, create_graph=True)
    close(g, g_all[mine], "input gradient with create_graph")
    (g_all * g_all).sum().backward()
    (g * g).sum().backward()
    close(summed(ember, dist, synced.weight.grad), reference.weight.grad, "weight gradient of a gradient")


def ddp_step(ember, nn, dist):
    rank, size = dist.get_rank(), dist.get_world_size()

    def build():
        ember.manual_seed(0)
        return nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 3))

    reference = build()
    model = nn.parallel.DistributedDataParallel(nn.SyncBatchNorm.convert_sync_batchnorm(build()))
    assert isinstance(model.module[1], nn.SyncBatchNorm)
    rng = np.random.default_rng(5)
    per_rank = 3
    x = ember.from_numpy(rng.standard_normal((per_rank * size, 1, 6, 6)).astype(np.float32))
    y = ember.from_numpy(rng.integers(0, 3, per_rank * size))
    mine = slice(rank * per_rank, (rank + 1) * per_rank)
    opt, ref_opt = ember.optim.SGD(model.parameters(), lr=0.5), ember.optim.SGD(reference.parameters(), lr=0.5)
    for _ in range(3):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x[mine]), y[mine]).backward()
        opt.step()
        ref_opt.zero_grad()
        nn.functional.cross_entropy(reference(x), y).backward()
        ref_opt.step()
    for (name, p), q in zip(model.module.named_parameters(), reference.parameters()):
        close(p, q, f"{name} after 3 steps", rtol=1e-5)
    close(model.module[1].running_var, reference[1].running_var, "running var after 3 steps", rtol=1e-5)


if __name__ == "__main__":
    import ember
    import ember.distributed as dist
    import ember.nn as nn

    dist.init_process_group("mpi")
    statistics_and_gradients(ember, nn, dist)
    ddp_step(ember, nn, dist)
    print(f"rank {dist.get_rank()}: sync batchnorm checks passed", flush=True)
    dist.destroy_process_group()
