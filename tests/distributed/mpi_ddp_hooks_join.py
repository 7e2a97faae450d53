"""Run under mpiexec by test_mpi.py: communication hooks, gradient_as_bucket_view, static_graph and Join.

Each rank trains the same model in ember's DDP (on MPI) and in torch's DDP (on gloo, through a file store),
from the same weights on the same data, and compares the parameters after training. Join runs with a
different number of batches per rank (rank r has 3 + 2r), and is also compared with one process that
computes what torch's semantics define: while a rank has joined, the others' gradients are divided by the
initial world size (or by the number of ranks still training).
"""
import contextlib

import numpy as np

STEPS = 4
BATCH = 4


def build(fw, nn, norm=False):
    layers = [nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)]
    return nn.Sequential(*(layers[:2] + [nn.BatchNorm1d(8)] + layers[2:] if norm else layers))


def same_start(ember, torch, norm=False):
    """An ember model and a torch model with equal weights (seeded: equal on every rank)."""
    ember.manual_seed(0)
    mine = build(ember, ember.nn, norm)
    theirs = build(torch, torch.nn, norm)
    with torch.no_grad():
        for t, e in zip(theirs.state_dict().values(), mine.state_dict().values()):
            t.copy_(torch.from_numpy(e.numpy().copy()))
    return mine, theirs


def batches(rank, count, seed=5):
    rng = np.random.default_rng(seed + 100 * rank)
    return [(rng.standard_normal((BATCH, 6)).astype(np.float32), rng.standard_normal((BATCH, 3)).astype(np.float32))
            for _ in range(count)]


def train(fw, model, data, accumulate=False):
    """SGD over ``data``; with ``accumulate``, every other backward runs under no_sync, without a step."""
    opt = fw.optim.SGD(model.parameters(), lr=0.1)
    for k, (x, y) in enumerate(data):
        local = accumulate and k % 2 == 0
        with model.no_sync() if local else contextlib.nullcontext():
            fw.nn.functional.mse_loss(model(fw.from_numpy(x)), fw.from_numpy(y)).backward()
        if not local:
            opt.step()
            opt.zero_grad()
    return model


def close(mine, theirs, what, rtol=1e-5):
    for (name, a), b in zip(mine.named_parameters(), theirs.parameters()):
        a, b = a.detach().numpy(), b.detach().numpy()
        scale = max(np.abs(b).max(), 1e-12)
        if not np.abs(a - b).max() <= rtol * scale:
            raise AssertionError(f"{what}, {name}: ember and torch differ by {np.abs(a - b).max() / scale:.3g}")


class Checks:
    def __init__(self, ember, torch):
        import ember.distributed as edist
        from torch.nn.parallel import DistributedDataParallel as TorchDDP
        self.ember, self.torch, self.TorchDDP = ember, torch, TorchDDP
        self.EmberDDP = ember.nn.parallel.DistributedDataParallel
        self.rank, self.size = edist.get_rank(), edist.get_world_size()
        self.count = 0

    def pair(self, norm=False, **options):
        mine, theirs = same_start(self.ember, self.torch, norm)
        return self.EmberDDP(mine, **options), self.TorchDDP(theirs, **options)

    def hooks(self):
        from ember.distributed.algorithms.ddp_comm_hooks import default_hooks as ours
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks as torchs
        data = batches(self.rank, STEPS)
        named = {"allreduce_hook": lambda m: m.allreduce_hook, "fp16_compress_hook": lambda m: m.fp16_compress_hook,
                 "fp16_compress_wrapper": lambda m: m.fp16_compress_wrapper(m.allreduce_hook)}
        for name, rtol in (("allreduce_hook", 1e-5), ("fp16_compress_hook", 2e-3), ("fp16_compress_wrapper", 2e-3)):
            mine, theirs = self.pair(bucket_cap_mb=0.0001)
            mine.register_comm_hook(None, named[name](ours))
            theirs.register_comm_hook(None, named[name](torchs))
            close(train(self.ember, mine, data).module, train(self.torch, theirs, data).module, name, rtol)
            self.count += 1
        exact, _ = self.pair()
        compressed, _ = self.pair()
        compressed.register_comm_hook(None, ours.fp16_compress_hook)
        train(self.ember, exact, data)
        train(self.ember, compressed, data)
        difference = max(float((a - b).detach().abs().max()) for a, b in zip(exact.parameters(), compressed.parameters()))
        assert 0 < difference < 1e-2, f"fp16 compression must round, a little: {difference}"
        self.count += 1

    def bucket_contract(self):
        """A custom hook sees every bucket once per backward, in order, as views of its buffer."""
        seen = []

        def summed(state, bucket):
            state.append((bucket.index(), bucket.is_last(), len(bucket.parameters())))
            for g, p in zip(bucket.gradients(), bucket.parameters()):
                assert tuple(g.shape) == tuple(p.shape) and np.shares_memory(g.numpy(), bucket.buffer().numpy())
            ember = self.ember
            return ember.distributed.all_reduce(bucket.buffer(), async_op=True).get_future().then(
                lambda fut: fut.value()[0])
        mine, theirs = self.pair(bucket_cap_mb=0.0001)
        mine.register_comm_hook(seen, summed)
        theirs.register_comm_hook(None, lambda state, bucket: self.torch.distributed.all_reduce(
            bucket.buffer(), async_op=True).get_future().then(lambda fut: fut.value()[0]))
        data = batches(self.rank, 2)
        close(train(self.ember, mine, data).module, train(self.torch, theirs, data).module, "a summing hook")
        n = len(mine.reducer.buckets)
        assert n > 1 and seen == 2 * [(k, k == n - 1, len(b.indices)) for k, b in enumerate(mine.reducer.buckets)]
        self.count += 1

    def bucket_view(self):
        data = batches(self.rank, STEPS)
        mine, theirs = self.pair(gradient_as_bucket_view=True, bucket_cap_mb=0.0001)
        close(train(self.ember, mine, data).module, train(self.torch, theirs, data).module, "gradient_as_bucket_view")
        x, y = data[0]
        self.ember.nn.functional.mse_loss(mine(self.ember.from_numpy(x)), self.ember.from_numpy(y)).backward()
        buffers = [b.buffer for b in mine.reducer.buckets]
        for p in mine.module.parameters():
            assert sum(np.shares_memory(p.grad.numpy(), b) for b in buffers) == 1, "a grad is a bucket view"
        self.count += 1

    def static(self):
        """static_graph: a layer no rank uses is accepted without find_unused_parameters, searched for once."""
        ember, torch = self.ember, self.torch

        def with_spare(fw, model):
            class Spare(fw.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.body, self.spare = model, fw.nn.Linear(2, 2)  # spare: never used

                def forward(self, x):
                    return self.body(x)
            return Spare()
        mine, theirs = same_start(ember, torch)
        mine, theirs = with_spare(ember, mine), with_spare(torch, theirs)
        with torch.no_grad():
            theirs.spare.weight.copy_(torch.from_numpy(mine.spare.weight.detach().numpy().copy()))
            theirs.spare.bias.copy_(torch.from_numpy(mine.spare.bias.detach().numpy().copy()))
        mine = self.EmberDDP(mine, static_graph=True)
        theirs = self.TorchDDP(theirs, static_graph=True)
        data = batches(self.rank, STEPS)
        close(train(ember, mine, data).module, train(torch, theirs, data).module, "static_graph")
        assert mine.reducer.used_searches == 1 and mine.module.spare.weight.grad is None
        self.count += 1

    def join(self):
        data = batches(self.rank, 3 + 2 * self.rank)
        for divide, unused in ((True, False), (False, True)):
            mine, theirs = self.pair(norm=True, find_unused_parameters=unused)
            with mine.join(divide_by_initial_world_size=divide):
                train(self.ember, mine, data)
            with theirs.join(divide_by_initial_world_size=divide):
                train(self.torch, theirs, data)
            close(mine.module, theirs.module, f"join, divide_by_initial_world_size={divide}")
            close(mine.module, self.joined_reference(divide), f"join against one process ({divide})")
            self.count += 2
        mine, theirs = self.pair(norm=True)
        for fw, model in ((self.ember, mine), (self.torch, theirs)):
            with model.join():
                train(fw, model, data, accumulate=True)
        close(mine.module, theirs.module, "join with no_sync every other batch")
        self.count += 1

    def joined_reference(self, divide):
        """One process: each step, the ranks that still have batches; their mean loss summed, over N or M."""
        ember = self.ember
        model, _ = same_start(ember, self.torch, norm=True)
        opt = ember.optim.SGD(model.parameters(), lr=0.1)
        per_rank = [batches(r, 3 + 2 * r) for r in range(self.size)]
        for step in range(3 + 2 * (self.size - 1)):
            active = [r for r in range(self.size) if step < len(per_rank[r])]
            opt.zero_grad()
            for r in active:
                x, y = per_rank[r][step]
                loss = ember.nn.functional.mse_loss(model(ember.from_numpy(x)), ember.from_numpy(y))
                (loss / (self.size if divide else len(active))).backward()
            opt.step()
        return model

    def custom_joinable(self):
        """A Joinable of one's own: each iteration an all-reduce of ones; a joined rank answers with zeros."""
        def counter(fw, join_module):
            class Counter(join_module.Joinable):
                def __init__(self):
                    super().__init__()
                    self.sums, self.shadowed, self.last = [], 0, None

                def step(self):
                    join_module.Join.notify_join_context(self)
                    t = fw.ones(1)
                    fw.distributed.all_reduce(t)
                    self.sums.append(int(t.item()))

                def join_hook(self, **kwargs):
                    outer = self

                    class Hook(join_module.JoinHook):
                        def main_hook(self):
                            outer.shadowed += 1
                            fw.distributed.all_reduce(fw.zeros(1))

                        def post_hook(self, is_last_joiner):
                            outer.last = is_last_joiner
                    return Hook()

                @property
                def join_device(self):
                    return fw.device("cpu")

                @property
                def join_process_group(self):
                    return fw.distributed.group.WORLD
            return Counter()
        import ember.distributed.algorithms.join as ours
        import torch.distributed.algorithms.join as torchs
        results = []
        for fw, module in ((self.ember, ours), (self.torch, torchs)):
            joinable = counter(fw, module)
            with module.Join([joinable]):
                for _ in range(2 + self.rank):
                    joinable.step()
            results.append((joinable.sums, joinable.shadowed, joinable.last))
        assert results[0] == results[1], results
        assert results[0][0] == [self.size, self.size] + [self.size - k for k in range(1, self.size)][:self.rank]
        self.count += 1

    def early_termination(self):
        mine, _ = self.pair()
        try:
            with mine.join(throw_on_early_termination=True):
                train(self.ember, mine, batches(self.rank, 1 + self.rank))
        except RuntimeError as error:
            expected = "exhausted all inputs" if self.rank == 0 else "Detected at least one rank that exhausted"
            assert expected in str(error), error
        else:
            raise AssertionError("throw_on_early_termination must raise on every rank")
        self.count += 1


def main():
    from worlds import ember_and_torch_worlds  # beside this file, which mpiexec runs as a script

    with ember_and_torch_worlds() as (ember, torch):
        checks = Checks(ember, torch)
        for check in (checks.hooks, checks.bucket_contract, checks.bucket_view, checks.static, checks.join,
                      checks.custom_joinable, checks.early_termination):
            check()
    print(f"rank {checks.rank}: {checks.count} hook and join checks passed", flush=True)


if __name__ == "__main__":
    main()
