"""ember.distributed in a world of one process (no mpiexec): API, errors, the sampler and the launcher."""
import pytest
import torch
from hypothesis import given, strategies as st
from torch.utils.data.distributed import DistributedSampler as TorchSampler

import ember
import ember.distributed as dist
from ember.distributed import run
from ember.utils.data.distributed import DistributedSampler


@pytest.fixture
def world():
    dist.init_process_group("mpi")
    yield
    dist.destroy_process_group()


@given(n=st.integers(0, 23), replicas=st.integers(1, 5), drop_last=st.booleans())
def test_sampler_split_is_torchs(n, replicas, drop_last):
    data = list(range(n))
    for rank in range(replicas):
        ours = DistributedSampler(data, num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(data, num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_shuffled_sampler_partitions_one_order_per_epoch():
    shares = [DistributedSampler(range(10), num_replicas=2, rank=r, seed=3) for r in (0, 1)]
    first = [list(s) for s in shares]
    assert sorted(first[0] + first[1]) == list(range(10))
    for s in shares:
        s.set_epoch(1)
    assert [list(s) for s in shares] != first


def test_sampler_rank_out_of_range_matches_torch():
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        TorchSampler(range(4), num_replicas=2, rank=2)


def test_sampler_without_a_process_group_raises_torchs_error():
    messages = []
    for sampler in (TorchSampler, DistributedSampler):
        with pytest.raises(ValueError) as error:
            sampler(range(4))
        messages.append(str(error.value))
    assert messages[1] == messages[0]


def test_reduce_op_and_uninitialised_errors_read_as_torchs():
    assert repr(dist.ReduceOp.SUM) == repr(torch.distributed.ReduceOp.SUM) == "<RedOpType.SUM: 0>"
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()


def test_errors_name_the_op_and_the_fix(world):
    with pytest.raises(RuntimeError, match="all_reduce: ReduceOp.AVG of a int64 tensor"):
        dist.all_reduce(ember.tensor([1, 2]), op=dist.ReduceOp.AVG)
    with pytest.raises(RuntimeError, match="BAND needs an integer or bool tensor"):
        dist.all_reduce(ember.ones(2), op=dist.ReduceOp.BAND)
    with pytest.raises(ValueError, match=r"broadcast: src=3 is not a rank of this group, whose members are \[0\]"):
        dist.broadcast(ember.ones(2), src=3)
    with pytest.raises(TypeError, match="broadcast: tensor must be a Tensor, got list"):
        dist.broadcast([1.0], src=0)
    with pytest.raises(ValueError, match=r"all_gather: tensor_list must be a list of one tensor per rank"):
        dist.all_gather([ember.ones(1), ember.ones(1)], ember.ones(1))
    with pytest.raises(RuntimeError, match="initialize the default process group twice"):
        dist.init_process_group()
    with pytest.raises(RuntimeError, match="Distributed package doesn't have NCCL built in"):
        dist.new_group(backend="nccl")  # as torch's CPU build
    with pytest.raises(ValueError, match="Invalid backend: 'bogus'"):
        dist.new_group(backend="bogus")


def test_a_collective_on_a_view_writes_through(world):
    base = ember.zeros(3, 2)
    view = base.t()
    dist.broadcast(view, src=0)
    dist.all_reduce(view, op=dist.ReduceOp.MAX)
    assert view.tolist() == base.t().tolist()


def test_differentiable_all_reduce_passes_gradcheck(world):
    from ember.distributed.nn.functional import all_reduce
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: all_reduce(t * t), (x,))
    assert ember.autograd.gradgradcheck(lambda t: all_reduce(t * t), (x,))


def test_launcher_builds_an_mpiexec_command():
    args = run._parser().parse_args(["--nproc-per-node", "3", "--mpi-args", "-launcher fork", "train.py", "--lr", "1"])
    command = run.command(args)
    assert command[1:5] == ["-n", "3", "-launcher", "fork"]
    assert command[-4:] == ["--as-rank", "train.py", "--lr", "1"]
    with pytest.raises(RuntimeError, match="no mpiexec found"):
        run.find_mpiexec("/nonexistent/mpiexec")


def test_shuffled_sampler_is_the_same_for_the_same_epoch():
    a, b = DistributedSampler(range(10), 2, 1, seed=3), DistributedSampler(range(10), 2, 1, seed=3)
    a.set_epoch(4)
    b.set_epoch(4)
    assert list(a) == list(b)
