"""A tabular classifier: a custom Dataset of dict rows, a collate_fn that stacks them, a
class-balancing Sampler wrapped in a BatchSampler, one nn.Embedding per categorical column,
bucketized numeric features, BatchNorm1d and Dropout, BCEWithLogitsLoss with pos_weight, early stopping
on a validation split that keeps a deep copy of the best state_dict, and a ROC AUC from ranks."""
import copy

import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, Dataset, Sampler, random_split

CARDINALITIES = {"city": 7, "device": 3, "plan": 4}


def make_table(n, generator):
    city = torch.randint(0, 7, (n,), generator=generator)
    device = torch.randint(0, 3, (n,), generator=generator)
    plan = torch.randint(0, 4, (n,), generator=generator)
    age = torch.rand(n, generator=generator) * 60 + 18
    spend = torch.randn(n, generator=generator).exp() * 20
    score = 0.8 * (plan == 3).float() - 0.5 * (device == 0).float() + 0.04 * (age - 40) + 0.02 * spend - 1.2
    label = (score + 0.3 * torch.randn(n, generator=generator) > 0).float()
    return {"city": city, "device": device, "plan": plan, "age": age, "spend": spend, "label": label}


class TableDataset(Dataset):
    def __init__(self, columns):
        self.columns = columns

    def __len__(self):
        return len(self.columns["label"])

    def __getitem__(self, index):
        return {name: values[index] for name, values in self.columns.items()}


def collate_rows(rows):
    return {name: torch.stack([row[name] for row in rows]) for name in rows[0]}


class BalancedSampler(Sampler):
    """Yields indices so that each class is drawn equally often."""

    def __init__(self, labels, num_samples, generator):
        self.labels = labels
        self.num_samples = num_samples
        self.generator = generator

    def __len__(self):
        return self.num_samples

    def __iter__(self):
        counts = torch.bincount(self.labels.long(), minlength=2).float()
        weights = (1.0 / counts)[self.labels.long()]
        drawn = torch.multinomial(weights, self.num_samples, replacement=True, generator=self.generator)
        return iter(drawn.tolist())


class TabularNet(nn.Module):
    def __init__(self, boundaries, embed=4, hidden=32):
        super().__init__()
        self.embeddings = nn.ModuleDict({name: nn.Embedding(size, embed) for name, size in CARDINALITIES.items()})
        self.register_buffer("age_boundaries", boundaries)
        self.age_bucket = nn.Embedding(len(boundaries) + 1, embed)
        width = embed * (len(CARDINALITIES) + 1) + 2
        self.mlp = nn.Sequential(nn.Linear(width, hidden), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Dropout(0.2),
                                 nn.Linear(hidden, 1))

    def forward(self, batch):
        parts = [self.embeddings[name](batch[name]) for name in CARDINALITIES]
        parts.append(self.age_bucket(torch.bucketize(batch["age"], self.age_boundaries)))
        numeric = torch.stack([(batch["age"] - 40) / 20, torch.log1p(batch["spend"])], dim=1)
        return self.mlp(torch.cat(parts + [numeric], dim=1)).squeeze(1)


def roc_auc(scores, labels):
    ranks = torch.empty_like(scores)
    ranks[scores.argsort()] = torch.arange(1, len(scores) + 1, dtype=scores.dtype)
    positives = labels.bool()
    n_pos, n_neg = positives.sum(), (~positives).sum()
    return ((ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)).item()


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(3)
    table = make_table(1200, generator)
    dataset = TableDataset(table)
    train_set, valid_set = random_split(dataset, [900, 300], generator=torch.Generator().manual_seed(0))
    print("row:", sorted(dataset[0]), dataset[0]["city"].dtype, dataset[0]["age"].dtype)
    print("collated:", {k: tuple(v.shape) for k, v in collate_rows([dataset[0], dataset[1]]).items()})
    print("bucketize:", torch.bucketize(torch.tensor([18.0, 30.0, 30.5, 80.0]), torch.tensor([30.0, 50.0])),
          torch.bucketize(torch.tensor([30.0]), torch.tensor([30.0, 50.0]), right=True))
    print("searchsorted:", torch.searchsorted(torch.tensor([1, 3, 5, 7]), torch.tensor([[3, 6], [0, 9]])))
    boundaries = torch.quantile(table["age"][torch.tensor(train_set.indices)], torch.tensor([0.25, 0.5, 0.75]))
    print("quantile boundaries:", boundaries.shape, boundaries.dtype, bool((boundaries[1:] > boundaries[:-1]).all()))
    print("kthvalue:", torch.tensor([[4.0, 1.0, 3.0], [2.0, 9.0, 5.0]]).kthvalue(2, dim=1))

    train_labels = table["label"][torch.tensor(train_set.indices)]
    sampler = BalancedSampler(train_labels, num_samples=900, generator=torch.Generator().manual_seed(5))
    batches = BatchSampler(sampler, batch_size=100, drop_last=False)
    print("batch sampler:", len(batches), len(next(iter(batches))))
    list_batches = list(BatchSampler(range(10), batch_size=4, drop_last=False))
    print("plain batches:", list_batches, len(BatchSampler(range(10), 4, True)))
    loader = DataLoader(train_set, batch_sampler=batches, collate_fn=collate_rows)
    valid_loader = DataLoader(valid_set, batch_size=150, collate_fn=collate_rows)
    first = next(iter(loader))
    print("balanced batch positive share within 0.2 of 0.5:", abs(first["label"].mean().item() - 0.5) < 0.2)

    model = TabularNet(boundaries)
    print(model.mlp)
    print("buffers:", [name for name, _ in model.named_buffers()])
    positive_share = train_labels.mean()
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0]))
    print("pos_weight loss:", nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0]))(
        torch.tensor([0.5, -1.0, 2.0]), torch.tensor([1.0, 0.0, 1.0])))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    best_auc, best_state, patience, bad_epochs, epochs_run = 0.0, None, 3, 0, 0
    for epoch in range(15):
        model.train()
        for batch in loader:
            loss = criterion(model(batch), batch["label"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            scores = torch.cat([torch.sigmoid(model(batch)) for batch in valid_loader])
            labels = torch.cat([batch["label"] for batch in valid_loader])
        auc = roc_auc(scores, labels)
        epochs_run += 1
        if auc > best_auc + 1e-4:
            best_auc, best_state, bad_epochs = auc, copy.deepcopy(model.state_dict()), 0
        else:
            bad_epochs += 1
            if bad_epochs >= patience:
                break
    print("positive share in (0.2, 0.8):", 0.2 < positive_share.item() < 0.8)
    print("best validation AUC above 0.8:", best_auc > 0.8, "stopped within 15 epochs:", epochs_run <= 15)
    print("copy is independent:", best_state["mlp.1.running_mean"].data_ptr() != model.mlp[1].running_mean.data_ptr())
    model.load_state_dict(best_state)
    print("num_batches_tracked dtype:", best_state["mlp.1.num_batches_tracked"].dtype,
          best_state["mlp.1.num_batches_tracked"].ndim)
    print("AUC on explicit scores:", roc_auc(torch.tensor([0.1, 0.4, 0.35, 0.8]), torch.tensor([0.0, 0.0, 1.0, 1.0])))


if __name__ == "__main__":
    main()
