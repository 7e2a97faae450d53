"""DDP's communication hooks, bucket views, static_graph and Join in a world of one process, against torch.

torch's DDP runs beside ember's on gloo with a world of one (a file store), so both see the same program.
The multi-process behaviour is checked under mpiexec (mpi_ddp_hooks_join.py).
"""
import numpy as np
import pytest
import torch
import torch.distributed as tdist

import ember
import ember.distributed as dist
from ember.distributed.algorithms.join import Join, Joinable


@pytest.fixture(scope="module")
def worlds(tmp_path_factory):
    dist.init_process_group("mpi")
    tdist.init_process_group("gloo", init_method=f"file://{tmp_path_factory.mktemp('store') / 'file'}",
                             rank=0, world_size=1)
    yield
    tdist.destroy_process_group()
    dist.destroy_process_group()


def pair(**options):
    ember.manual_seed(0)
    mine = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Tanh(), ember.nn.Linear(4, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    with torch.no_grad():
        for t, e in zip(theirs.parameters(), mine.parameters()):
            t.copy_(torch.from_numpy(e.detach().numpy().copy()))
    return (ember.nn.parallel.DistributedDataParallel(mine, **options),
            torch.nn.parallel.DistributedDataParallel(theirs, **options))


def backward(fw, model, x):
    model(fw.from_numpy(x)).square().sum().backward()


def test_hook_registration_errors_are_torchs(worlds):
    for model in pair():
        with pytest.raises(TypeError, match="Communication hook must be callable"):
            model.register_comm_hook(None, 3)
        model.register_comm_hook(None, lambda state, bucket: None)
        with pytest.raises(RuntimeError, match="can only be called once"):
            model.register_comm_hook(None, lambda state, bucket: None)


def test_a_hook_that_returns_no_future_is_named(worlds):
    mine, _ = pair()  # torch crashes the process here
    mine.register_comm_hook(None, lambda state, bucket: bucket.buffer())
    with pytest.raises(TypeError, match="returned Tensor; it must return an ember.futures.Future"):
        backward(ember, mine, np.ones((1, 3), np.float32))


def test_a_hook_may_hand_back_a_new_tensor_through_set_buffer(worlds):
    def doubled(state, bucket):
        bucket.set_buffer(bucket.buffer() * 2)
        state.append(bucket.index())
        fut = ember.futures.Future()
        fut.set_result(bucket.buffer())
        return fut
    seen = []
    mine, plain = pair()[0], pair()[0]
    mine.register_comm_hook(seen, doubled)
    x = np.ones((2, 3), np.float32)
    backward(ember, mine, x)
    backward(ember, plain, x)
    for p, q in zip(mine.parameters(), plain.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), 2 * q.grad.numpy(), rtol=1e-6)
    assert seen == list(range(len(mine.reducer.buckets)))
    with pytest.raises(ValueError, match=r"set_buffer: expected a tensor of shape"):
        dist.GradBucket(0, ember.zeros(3), [], [], True).set_buffer(ember.zeros(2))


def test_bucket_views_accumulate_in_place_as_torchs(worlds):
    """Two backwards without zero_grad add up; zero_grad(set_to_none=False) zeroes the buckets in place."""
    mine, theirs = pair(gradient_as_bucket_view=True)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    for fw, model in ((ember, mine), (torch, theirs)):
        backward(fw, model, x)
        backward(fw, model, 2 * x)
    memory = [p.grad.numpy() for p in mine.parameters()]
    for p, q in zip(mine.parameters(), theirs.parameters()):
        # sums of terms near 1 in float32 that cancel to near 0 (a bias's -0.02): rounding differs in absolute terms
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)
    buffers = [b.buffer for b in mine.reducer.buckets]
    assert all(any(np.shares_memory(m, b) for b in buffers) for m in memory)
    mine.zero_grad(set_to_none=False)
    assert not any(b.any() for b in buffers)
    backward(ember, mine, x)
    assert all(np.shares_memory(p.grad.numpy(), m) for p, m in zip(mine.parameters(), memory))


def test_static_graph_searches_for_unused_parameters_once(worlds):
    class Spare(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.used, self.spare = ember.nn.Linear(2, 1), ember.nn.Linear(2, 1)

        def forward(self, x):
            return self.used(x)
    model = ember.nn.parallel.DistributedDataParallel(Spare(), static_graph=True)
    for _ in range(3):
        model(ember.ones(1, 2)).sum().backward()
    assert model.reducer.used_searches == 1
    assert model.module.spare.weight.grad is None and model.module.used.bias.grad.tolist() == [3.0]


def test_work_futures_hold_the_written_tensors(worlds):
    t = ember.tensor([1.0, 2.0])
    fut = dist.all_reduce(t, async_op=True).get_future()
    assert fut.wait()[0] is t and fut.done()


def test_join_needs_joinables_that_call_joinables_init(worlds):
    with pytest.raises(ValueError, match="requires at least one joinable"):
        Join([])

    class Forgetful(Joinable):
        def __init__(self):
            pass
    with pytest.raises(RuntimeError, match="must call Joinable.__init__"):
        Join.notify_join_context(Forgetful())
    mine, _ = pair()
    with mine.join():
        backward(ember, mine, np.ones((2, 3), np.float32))
    assert mine.module[0].weight.grad is not None
