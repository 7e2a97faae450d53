"""PyTorch's DDP tutorial program, run by test_spawn_tcp.py under torch and under ember.

Run as ``python tcp_ddp_tutorial.py <torch|ember> <port> <result.npz>``. The program is the tutorial's, with
the framework, the port and a result file as arguments: rank 0 saves the final parameters so that the test can
compare the two frameworks' results. The frameworks are imported inside the functions, so that collecting
this file (pytest imports it for its doctests) runs nothing.
"""
import importlib
import os
import sys

import numpy as np


def modules(framework: str) -> tuple:
    """torch (or ember), its distributed, its multiprocessing and DistributedDataParallel."""
    torch = importlib.import_module(framework)
    return (torch, importlib.import_module(f"{framework}.distributed"),
            importlib.import_module(f"{framework}.multiprocessing"),
            importlib.import_module(f"{framework}.nn.parallel").DistributedDataParallel)


def setup(dist, rank, world_size, port):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = port
    dist.init_process_group("gloo", rank=rank, world_size=world_size)


def toy_model(nn):
    class ToyModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.net1 = nn.Linear(10, 10)
            self.relu = nn.ReLU()
            self.net2 = nn.Linear(10, 5)

        def forward(self, x):
            return self.net2(self.relu(self.net1(x)))
    return ToyModel()


def demo_basic(rank, world_size, framework, port, result):
    torch, dist, _, DDP = modules(framework)
    setup(dist, rank, world_size, port)
    torch.manual_seed(0)
    model = toy_model(torch.nn)
    ddp_model = DDP(model)
    loss_fn = torch.nn.MSELoss()
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.001)
    optimizer.zero_grad()
    torch.manual_seed(rank)
    outputs = ddp_model(torch.randn(20, 10))
    loss_fn(outputs, torch.randn(20, 5)).backward()
    optimizer.step()
    if rank == 0:
        np.savez(result, **{name: p.detach().numpy() for name, p in model.named_parameters()})
    dist.destroy_process_group()


if __name__ == "__main__":
    framework, port, result = sys.argv[1:4]
    modules(framework)[2].spawn(demo_basic, args=(2, framework, port, result), nprocs=2, join=True)
