# corpus: slow
"""Weight averaging: stochastic weight averaging with AveragedModel, SWALR and update_bn for the
batch-norm statistics, and an exponential moving average of the weights kept beside training."""
import torch
from torch import nn
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
from torch.utils.data import DataLoader, TensorDataset


def main():
    torch.manual_seed(0)
    # the average of explicit weights
    layer = nn.Linear(1, 1, bias=False)
    averaged = AveragedModel(layer)
    for value in (1.0, 2.0, 6.0):
        with torch.no_grad():
            layer.weight.fill_(value)
        averaged.update_parameters(layer)
    print("running mean of 1, 2, 6:", averaged.module.weight.item(), "n_averaged:", averaged.n_averaged)

    x = torch.randn(600, 5)
    y = (x[:, 0] * x[:, 1] > 0).long()
    loader = DataLoader(TensorDataset(x, y), batch_size=50, shuffle=True)
    model = nn.Sequential(nn.Linear(5, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    swa_model = AveragedModel(model)
    ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.99))
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=20)
    swa_scheduler = SWALR(optimizer, swa_lr=0.05, anneal_epochs=2)
    swa_start = 15
    for epoch in range(25):
        for xb, yb in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(xb), yb).backward()
            optimizer.step()
            ema_model.update_parameters(model)
        if epoch >= swa_start:
            swa_model.update_parameters(model)
            swa_scheduler.step()
        else:
            scheduler.step()
    print("SWA averaged", int(swa_model.n_averaged), "models")
    print("learning rate annealed to the SWA rate:", abs(optimizer.param_groups[0]["lr"] - 0.05) < 1e-9)
    bn = swa_model.module[1]
    before = bn.running_mean.clone()
    update_bn(loader, swa_model)
    print("update_bn recomputed the statistics:", not torch.equal(before, bn.running_mean))
    with torch.no_grad():
        stats = swa_model.module[0](x).mean(0)
    print("running mean equals the data's mean:", torch.allclose(bn.running_mean, stats, atol=1e-4))

    for name, m in (("model", model), ("swa", swa_model), ("ema", ema_model)):
        m.eval()
        with torch.no_grad():
            accuracy = (m(x).argmax(1) == y).float().mean().item()
        print(name, "accuracy above 0.9:", accuracy > 0.9)
    print("state_dict of the averaged model:", [k for k in swa_model.state_dict() if not k.startswith("module.")])


if __name__ == "__main__":
    main()
