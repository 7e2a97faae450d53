# corpus: slow
"""A small CNN on the 8x8 digits: a Dataset that augments by shifting, ReduceLROnPlateau, early
stopping and a checkpoint that also holds the optimizer's state to resume from."""
import io

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset
from sklearn.datasets import load_digits


class ShiftedDigits(Dataset):
    def __init__(self, images, labels, augment):
        self.images = torch.from_numpy((images / 16.0).astype(np.float32)).reshape(-1, 1, 8, 8)
        self.labels = torch.from_numpy(labels).long()
        self.augment = augment

    def __len__(self):
        return self.labels.shape[0]

    def __getitem__(self, i):
        image = self.images[i]
        if self.augment and torch.rand(()) < 0.5:
            image = torch.roll(image, shifts=1, dims=2)
        return image, self.labels[i]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16 * 2 * 2, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.bn(self.conv2(x))), 2)
        return self.fc(torch.flatten(x, 1))


def main():
    torch.manual_seed(1)
    digits = load_digits()
    order = np.random.default_rng(1).permutation(len(digits.target))
    train_idx, val_idx = order[:1400], order[1400:]
    train = ShiftedDigits(digits.data[train_idx], digits.target[train_idx], augment=True)
    val = ShiftedDigits(digits.data[val_idx], digits.target[val_idx], augment=False)
    loader = DataLoader(train, batch_size=50, shuffle=True, drop_last=True)
    print("batches per epoch:", len(loader))

    model = Net()
    print("parameters:", sum(p.numel() for p in model.parameters()))
    print("output shape:", model(torch.zeros(2, 1, 8, 8)).shape)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=1)

    best_state, best_loss, waited = None, float("inf"), 0
    for epoch in range(7):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            val_loss = F.cross_entropy(model(val.images), val.labels).item()
        scheduler.step(val_loss)
        if val_loss < best_loss:
            best_loss, waited = val_loss, 0
            buffer = io.BytesIO()
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, buffer)
            best_state = buffer.getvalue()
        else:
            waited += 1
            if waited > 3:
                break

    checkpoint = torch.load(io.BytesIO(best_state))
    model = Net()
    model.load_state_dict(checkpoint["model"])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    optimizer.load_state_dict(checkpoint["optimizer"])
    print("optimizer state restored for every parameter:",
          len(optimizer.state_dict()["state"]) == len(list(model.parameters())))
    print("batch-norm buffers saved:", sorted(k for k in checkpoint["model"] if k.startswith("bn.")))
    model.eval()
    with torch.no_grad():
        accuracy = (model(val.images).argmax(1) == val.labels).float().mean().item()
    print("validation accuracy above 0.9:", accuracy > 0.9)


if __name__ == "__main__":
    main()
