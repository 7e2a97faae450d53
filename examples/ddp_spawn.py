"""PyTorch's DDP tutorial program on ember: two processes on this machine, started by ``spawn``, over TCP.

    python examples/ddp_spawn.py

Only the imports differ from the tutorial: ``import ember as torch`` and its submodules. Each process
joins the process group through ``MASTER_ADDR``/``MASTER_PORT`` (the "gloo" backend: ember's TCP
transport, no MPI needed), wraps the model in DistributedDataParallel, and takes one SGD step on its own
batch; the gradients are averaged over the two processes, so both end with the same parameters, which
each prints.
"""
import os

import ember as torch
import ember.distributed as dist
import ember.multiprocessing as mp
import ember.nn as nn
import ember.optim as optim
from ember.nn.parallel import DistributedDataParallel as DDP


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ.setdefault("MASTER_PORT", "12355")
    dist.init_process_group("gloo", rank=rank, world_size=world_size)


def cleanup():
    dist.destroy_process_group()


class ToyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def demo_basic(rank, world_size):
    setup(rank, world_size)
    torch.manual_seed(0)
    model = ToyModel()
    ddp_model = DDP(model)
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)

    optimizer.zero_grad()
    torch.manual_seed(rank)  # each rank its own batch
    outputs = ddp_model(torch.randn(20, 10))
    loss = loss_fn(outputs, torch.randn(20, 5))
    loss.backward()
    optimizer.step()
    checksum = sum(float(p.detach().double().sum()) for p in model.parameters())
    print(f"rank {rank}: loss {loss.item():.6f}, parameters sum to {checksum:.10f}")
    cleanup()


if __name__ == "__main__":
    mp.spawn(demo_basic, args=(2,), nprocs=2, join=True)
