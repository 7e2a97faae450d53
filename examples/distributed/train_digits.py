"""The demo's digits CNN, trained data-parallel: each process trains on its share of every batch.

    python -m ember.distributed.run --nproc-per-node 2 examples/distributed/train_digits.py

(or ``mpiexec -n 2 python examples/distributed/train_digits.py``). Every rank loads the data, a
DistributedSampler gives each its share, and DistributedDataParallel averages the gradients, so every
rank holds the same model; rank 0 reports. It needs the ``distributed`` and ``demo`` extras.
"""
import argparse
import sys
from pathlib import Path

import ember as torch
import ember.distributed as dist
from ember import nn
from ember.distributed.algorithms.ddp_comm_hooks import default_hooks
from ember.utils.data import DataLoader, TensorDataset
from ember.utils.data.distributed import DistributedSampler

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from demo import accuracy, load_data, make_model  # noqa: E402  (the demo's model and data)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64, help="the global batch, split between the ranks")
    parser.add_argument("--fp16", action="store_true", help="send the gradients as float16 (fp16_compress_hook)")
    args = parser.parse_args(argv)

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    train, test = load_data()
    sampler = DistributedSampler(TensorDataset(*train), shuffle=True, seed=0)
    loader = DataLoader(TensorDataset(*train), batch_size=args.batch_size // world, sampler=sampler)
    torch.manual_seed(rank)  # different on purpose: DDP starts every rank from rank 0's weights
    model = nn.parallel.DistributedDataParallel(make_model())
    if args.fp16:
        model.register_comm_hook(None, default_hooks.fp16_compress_hook)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)  # a new shuffle each epoch, the same on every rank
        for images, labels in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(images), labels)
            loss.backward()  # gradients are averaged over the ranks during backward
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch + 1}: loss {loss.item():.3f}, test accuracy {accuracy(model.module, test):.3f}",
                  flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
