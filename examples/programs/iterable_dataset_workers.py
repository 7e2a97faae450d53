"""Streaming data with an IterableDataset split across DataLoader worker processes by
get_worker_info, a map-style dataset loaded by two workers with a worker_init_fn, and the order
and contents that come back."""
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info


class NumberStream(IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            lo, hi = self.start, self.end
        else:
            per_worker = -(-(self.end - self.start) // info.num_workers)
            lo = self.start + info.id * per_worker
            hi = min(lo + per_worker, self.end)
        for i in range(lo, hi):
            yield torch.tensor([float(i), float(i) ** 2])


class Squares(Dataset):
    def __len__(self):
        return 20

    def __getitem__(self, i):
        info = get_worker_info()
        return torch.tensor(i), torch.tensor(i * i), info.id if info is not None else -1


def seed_worker(worker_id):
    torch.manual_seed(1000 + worker_id)


def main():
    torch.manual_seed(0)
    stream = NumberStream(0, 10)
    in_process = torch.cat(list(DataLoader(stream, batch_size=4)))
    print("in-process batches:", in_process.shape, in_process[:, 0].tolist())

    loader = DataLoader(stream, batch_size=3, num_workers=2)
    batches = list(loader)
    values = sorted(torch.cat(batches)[:, 0].tolist())
    print("two workers, each item once:", values == [float(i) for i in range(10)])
    print("batch sizes:", sorted(len(b) for b in batches))

    loader = DataLoader(Squares(), batch_size=5, num_workers=2, worker_init_fn=seed_worker, shuffle=False)
    batches = list(loader)
    indices = torch.cat([b[0] for b in batches])
    print("map-style order kept with workers:", indices.tolist() == list(range(20)))
    print("squares:", torch.cat([b[1] for b in batches])[:6])
    print("both workers used:", sorted({int(w) for b in batches for w in b[2]}))
    print("worker info outside a worker:", get_worker_info())


if __name__ == "__main__":
    main()
