# corpus: slow
"""Linear probing: pretrain a small network on one task, freeze it (requires_grad_(False), eval mode),
extract features under torch.inference_mode, and fit only a new linear head for another task."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from sklearn.datasets import load_digits


def main():
    torch.manual_seed(0)
    digits = load_digits()
    x = torch.tensor(digits.data / 16.0, dtype=torch.float32)
    y = torch.tensor(digits.target)
    order = torch.from_numpy(np.random.default_rng(0).permutation(len(y)))
    train, test = order[:1300], order[1300:]

    backbone = nn.Sequential(nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
    pretrain_head = nn.Linear(32, 10)
    pretrain = nn.Sequential(backbone, pretrain_head)
    optimizer = torch.optim.Adam(pretrain.parameters(), lr=3e-3)
    for epoch in range(10):
        for idx in train[torch.randperm(len(train))].split(64):
            optimizer.zero_grad()
            F.cross_entropy(pretrain(x[idx]), y[idx]).backward()
            optimizer.step()

    backbone.requires_grad_(False)
    backbone.eval()
    print("trainable backbone parameters:", sum(p.numel() for p in backbone.parameters() if p.requires_grad))
    running_mean = backbone[1].running_mean.clone()
    with torch.inference_mode():
        features = backbone(x)
    print("features:", features.shape, "requires grad:", features.requires_grad)
    features = features.clone()  # a normal tensor again, usable in autograd
    backbone.zero_grad(set_to_none=True)  # drop the gradients left from pretraining

    # new task: is the digit even?
    parity = (y % 2 == 0).long()
    probe = nn.Linear(32, 2)
    optimizer = torch.optim.LBFGS(probe.parameters(), lr=0.5, max_iter=100)

    def closure():
        optimizer.zero_grad()
        loss = F.cross_entropy(probe(features[train]), parity[train]) + 1e-3 * probe.weight.pow(2).sum()
        loss.backward()
        return loss

    optimizer.step(closure)
    with torch.no_grad():
        accuracy = (probe(features[test]).argmax(1) == parity[test]).float().mean().item()
    print("probe accuracy above 0.85:", accuracy > 0.85)
    print("frozen backbone got no gradients:", all(p.grad is None for p in backbone.parameters()))
    print("batch-norm statistics unchanged in eval mode:", torch.equal(running_mean, backbone[1].running_mean))

    # fine-tuning the last layer only, by a parameter group with a smaller rate
    backbone[3].requires_grad_(True)
    model = nn.Sequential(backbone, probe)
    optimizer = torch.optim.SGD([{"params": backbone[3].parameters(), "lr": 1e-3},
                                 {"params": probe.parameters()}], lr=1e-2)
    print("optimizer groups:", [len(g["params"]) for g in optimizer.param_groups], [g["lr"] for g in optimizer.param_groups])
    before = backbone[0].weight.clone()
    optimizer.zero_grad()
    F.cross_entropy(model(x[train]), parity[train]).backward()
    optimizer.step()
    print("first layer untouched:", torch.equal(before, backbone[0].weight))


if __name__ == "__main__":
    main()
