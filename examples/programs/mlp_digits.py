# corpus: slow
"""An MLP classifier on scikit-learn's handwritten digits: a Dataset, a DataLoader, a learning-rate
schedule, early stopping on validation loss and a checkpoint of the best model."""
import os
import tempfile

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset
from sklearn.datasets import load_digits


class Digits(Dataset):
    def __init__(self, images, labels):
        self.images = torch.tensor(images / 16.0, dtype=torch.float32)
        self.labels = torch.tensor(labels, dtype=torch.long)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.images[i], self.labels[i]


def evaluate(model, loader, loss_fn):
    model.eval()
    total, correct, loss = 0, 0, 0.0
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            loss += loss_fn(logits, y).item() * len(y)
            correct += (logits.argmax(dim=1) == y).sum().item()
            total += len(y)
    return loss / total, correct / total


def main():
    torch.manual_seed(0)
    digits = load_digits()
    order = np.random.default_rng(0).permutation(len(digits.target))
    split = int(0.8 * len(order))
    train = Digits(digits.data[order[:split]], digits.target[order[:split]])
    val = Digits(digits.data[order[split:]], digits.target[order[split:]])
    print("train/val sizes:", len(train), len(val))
    x0, y0 = train[0]
    print("one sample:", x0.shape, x0.dtype, y0.dtype)

    train_loader = DataLoader(train, batch_size=64, shuffle=True)
    val_loader = DataLoader(val, batch_size=256)
    xb, yb = next(iter(train_loader))
    print("one batch:", tuple(xb.shape), tuple(yb.shape))

    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.1), nn.Linear(128, 10))
    print(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.5)
    loss_fn = nn.CrossEntropyLoss()

    path = os.path.join(tempfile.mkdtemp(), "best.pt")
    best, patience, bad_epochs = float("inf"), 3, 0
    for epoch in range(30):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        scheduler.step()
        val_loss, _ = evaluate(model, val_loader, loss_fn)
        if val_loss < best - 1e-4:
            best, bad_epochs = val_loss, 0
            torch.save({"epoch": epoch, "model": model.state_dict(), "val_loss": val_loss}, path)
        else:
            bad_epochs += 1
            if bad_epochs >= patience:
                break
    print("learning rate after 4 epochs halves:", scheduler.get_last_lr()[0] < 0.1)

    checkpoint = torch.load(path)
    restored = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.1), nn.Linear(128, 10))
    restored.load_state_dict(checkpoint["model"])
    print("checkpoint keys:", sorted(checkpoint["model"].keys()))
    val_loss, accuracy = evaluate(restored, val_loader, loss_fn)
    print("restored model matches the best val loss:", abs(val_loss - checkpoint["val_loss"]) < 1e-5)
    print("validation accuracy above 0.93:", accuracy > 0.93)


if __name__ == "__main__":
    main()
