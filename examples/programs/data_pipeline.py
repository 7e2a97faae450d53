"""A data pipeline for an imbalanced problem: TensorDataset, random_split with a seeded generator,
a WeightedRandomSampler that balances classes, a Subset, ConcatDataset, and a custom collate_fn."""
import torch
from torch import nn
from torch.utils.data import (ConcatDataset, DataLoader, Subset, TensorDataset, WeightedRandomSampler,
                              random_split)


def main():
    torch.manual_seed(0)
    n_major, n_minor = 900, 100
    x = torch.cat([torch.randn(n_major, 2) + torch.tensor([1.5, 0.0]), torch.randn(n_minor, 2) - torch.tensor([1.5, 0.0])])
    y = torch.cat([torch.zeros(n_major, dtype=torch.long), torch.ones(n_minor, dtype=torch.long)])
    dataset = TensorDataset(x, y)
    print("dataset:", len(dataset), [t.shape for t in dataset[0]])

    train, val = random_split(dataset, [0.8, 0.2], generator=torch.Generator().manual_seed(42))
    print("split sizes:", len(train), len(val))
    print("split is a partition:", sorted(train.indices + val.indices) == list(range(1000)))

    train_labels = y[train.indices]
    counts = torch.bincount(train_labels, minlength=2)
    weights = (1.0 / counts.float())[train_labels]
    sampler = WeightedRandomSampler(weights, num_samples=len(train), replacement=True)
    print("sampler length:", len(sampler))

    def collate(batch):
        features = torch.stack([f for f, _ in batch])
        labels = torch.stack([l for _, l in batch])
        return {"features": features, "labels": labels}

    loader = DataLoader(train, batch_size=100, sampler=sampler, collate_fn=collate)
    seen = torch.zeros(2)
    for batch in loader:
        seen += torch.bincount(batch["labels"], minlength=2)
    print("batch keys:", sorted(batch.keys()), batch["features"].shape)
    print("minority share under the sampler between 0.35 and 0.65:", 0.35 < (seen[1] / seen.sum()).item() < 0.65)

    model = nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(5):
        for batch in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(batch["features"]), batch["labels"]).backward()
            optimizer.step()
    vx, vy = torch.stack([val[i][0] for i in range(len(val))]), torch.stack([val[i][1] for i in range(len(val))])
    with torch.no_grad():
        predicted = model(vx).argmax(1)
    minority_recall = (predicted[vy == 1] == 1).float().mean().item()
    print("minority recall above 0.8:", minority_recall > 0.8)

    first_ten = Subset(dataset, range(10))
    both = ConcatDataset([first_ten, Subset(dataset, [999])])
    print("concat:", len(both), both[10][1].item(), both.cumulative_sizes)
    sequential = DataLoader(first_ten, batch_size=4, shuffle=False, drop_last=False)
    print("batch sizes:", [len(b[0]) for b in sequential])
    print("labels of the first ten:", next(iter(DataLoader(first_ten, batch_size=10)))[1])


if __name__ == "__main__":
    main()
