"""PyTorch's DDP tutorial program, run by test_spawn_tcp.py under torch and under ember (argv[1] says which).

The program is the tutorial's, with two additions: the port comes from argv, and rank 0 saves the final
parameters (to argv[3]) so that the test can compare the two frameworks' results.
"""
import importlib
import os
import sys

import numpy as np

torch = importlib.import_module(sys.argv[1])
dist = importlib.import_module(f"{sys.argv[1]}.distributed")
mp = importlib.import_module(f"{sys.argv[1]}.multiprocessing")
nn = torch.nn
optim = torch.optim
DDP = importlib.import_module(f"{sys.argv[1]}.nn.parallel").DistributedDataParallel


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = sys.argv[2]
    dist.init_process_group("gloo", rank=rank, world_size=world_size)


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
    torch.manual_seed(rank)
    outputs = ddp_model(torch.randn(20, 10))
    loss_fn(outputs, torch.randn(20, 5)).backward()
    optimizer.step()
    if rank == 0:
        np.savez(sys.argv[3], **{name: p.detach().numpy() for name, p in model.named_parameters()})
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(demo_basic, args=(2,), nprocs=2, join=True)
