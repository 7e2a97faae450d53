"""Run under mpiexec by test_mpi.py: DistributedDataParallel against one process training on the whole batch.

Every rank also trains the single-process reference itself (the whole batch, no DDP), so the comparison
needs no communication of its own. Checks: equal parameters after 20 steps (to 1e-5 relative), with
small and default buckets; the broadcast at construction; no_sync; find_unused_parameters; the error for
an unused parameter without it; broadcast_buffers; state_dict.
"""
import copy

import numpy as np


def build(ember, nn, seed):
    ember.manual_seed(seed)
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 16), nn.Tanh(),
                         nn.Linear(16, 10))


def close(a, b, what, rtol=1e-5):
    a, b = a.detach().numpy(), b.detach().numpy()
    scale = max(np.abs(b).max(), 1e-12)
    if not np.abs(a - b).max() <= rtol * scale:
        raise AssertionError(f"{what}: differ by {np.abs(a - b).max() / scale:.3g} relative")


def equivalence(ember, nn, dist, bucket_cap_mb):
    rank, size = dist.get_rank(), dist.get_world_size()
    reference = build(ember, nn, 0)
    model = nn.parallel.DistributedDataParallel(build(ember, nn, rank), bucket_cap_mb=bucket_cap_mb)
    for p, q in zip(model.module.parameters(), reference.parameters()):
        close(p, q, "parameters after the broadcast at construction", rtol=0)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ref_opt = ember.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(7)
    per_rank = 4
    for _ in range(20):
        x = ember.from_numpy(rng.standard_normal((per_rank * size, 1, 8, 8)).astype(np.float32))
        y = ember.from_numpy(rng.integers(0, 10, per_rank * size))
        loss_fn = nn.CrossEntropyLoss()
        opt.zero_grad()
        loss_fn(model(x[rank * per_rank:(rank + 1) * per_rank]), y[rank * per_rank:(rank + 1) * per_rank]).backward()
        opt.step()
        ref_opt.zero_grad()
        loss_fn(reference(x), y).backward()
        ref_opt.step()
    for (name, p), q in zip(model.module.named_parameters(), reference.parameters()):
        close(p, q, f"{name} after 20 steps (bucket_cap_mb={bucket_cap_mb})")
    return len(model.reducer.buckets)


def accumulation(ember, nn, dist):
    """Two local backwards under no_sync, then one synchronised: the average of all three ranks' sums."""
    rank, size = dist.get_rank(), dist.get_world_size()
    model = nn.parallel.DistributedDataParallel(nn.Linear(3, 2))
    reference = copy.deepcopy(model.module)
    batches = [ember.full((2, 3), float(10 * r + k)) for k in range(3) for r in range(size)]
    with model.no_sync():
        for k in range(2):
            model(batches[k * size + rank]).sum().backward()
    local = model.module.weight.grad.clone()
    model(batches[2 * size + rank]).sum().backward()
    for b in batches:
        reference(b).sum().backward()
    close(model.module.weight.grad, reference.weight.grad / size, "no_sync then a synchronised backward")
    close(model.module.bias.grad, reference.bias.grad / size, "no_sync bias")
    assert not np.allclose(local.numpy(), model.module.weight.grad.numpy()) or size == 1


class TwoHeads:
    """A module whose second head is used only on rank 0, and a third never."""

    @staticmethod
    def make(nn):
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(3, 3)
                self.head = nn.Linear(3, 1)
                self.rank0_only = nn.Linear(3, 1)
                self.never = nn.Linear(3, 1)

            def forward(self, x, use_extra):
                h = self.body(x)
                out = self.head(h)
                return out + self.rank0_only(h) if use_extra else out
        return Model()


def unused(ember, nn, dist):
    rank, size = dist.get_rank(), dist.get_world_size()
    ember.manual_seed(1)
    model = nn.parallel.DistributedDataParallel(TwoHeads.make(nn), find_unused_parameters=True)
    model(ember.ones(2, 3), rank == 0).sum().backward()
    assert model.module.never.weight.grad is None, "a parameter no rank used keeps no gradient"
    reference = copy.deepcopy(model.module)
    reference.zero_grad()
    reference.rank0_only(reference.body(ember.ones(2, 3))).sum().backward()
    close(model.module.rank0_only.weight.grad, reference.rank0_only.weight.grad / size, "used on rank 0 only")
    strict = nn.parallel.DistributedDataParallel(TwoHeads.make(nn))
    strict(ember.ones(2, 3), True).sum().backward()  # rank0_only used, never is not: reduction cannot finish
    try:
        strict(ember.ones(2, 3), True)
    except RuntimeError as error:
        assert "find_unused_parameters=True" in str(error) and "never.weight" in str(error), error
    else:
        raise AssertionError("an unused parameter without find_unused_parameters must raise at the next forward")


def buffers_and_state(ember, nn, dist):
    rank = dist.get_rank()
    net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    model = nn.parallel.DistributedDataParallel(net)
    with ember.no_grad():
        net[1].running_mean.fill_(float(rank + 5))
    model.eval()
    model(ember.ones(3, 2))
    assert float(net[1].running_mean[0]) == 5.0, "broadcast_buffers: rank 0's buffers before each forward"
    assert list(model.state_dict())[0] == "module.0.weight" and model.module is net


def main():
    import ember
    import ember.distributed as dist
    from ember import nn

    dist.init_process_group("mpi")
    many = equivalence(ember, nn, dist, bucket_cap_mb=0.001)
    one = equivalence(ember, nn, dist, bucket_cap_mb=None)
    assert many > one, (many, one)
    accumulation(ember, nn, dist)
    unused(ember, nn, dist)
    buffers_and_state(ember, nn, dist)
    print(f"rank {dist.get_rank()}: DDP checks passed ({many} and {one} buckets)", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
