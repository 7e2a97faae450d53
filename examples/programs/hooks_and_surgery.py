"""Feature extraction with forward hooks, a statistics buffer registered on a Module, a gradient hook
on a tensor, and state_dict surgery: renaming keys, dropping the classifier, and loading with
strict=False into a model with a new head."""
from collections import OrderedDict

import torch
from torch import nn


class Normalize(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.register_buffer("mean", torch.zeros(features))
        self.register_buffer("std", torch.ones(features))
        self.register_buffer("scratch", torch.zeros(1), persistent=False)

    def fit(self, x):
        self.mean.copy_(x.mean(0))
        self.std.copy_(x.std(0))

    def forward(self, x):
        return (x - self.mean) / self.std


class Net(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.norm = Normalize(4)
        self.backbone = nn.Sequential(OrderedDict(fc1=nn.Linear(4, 16), act1=nn.ReLU(),
                                                  fc2=nn.Linear(16, 8), act2=nn.ReLU()))
        self.classifier = nn.Linear(8, classes)

    def forward(self, x):
        return self.classifier(self.backbone(self.norm(x)))


def main():
    torch.manual_seed(0)
    x = torch.randn(200, 4) * torch.tensor([1.0, 10.0, 0.1, 5.0]) + 3
    y = (x[:, 0] + x[:, 3] / 5 > 6).long()
    model = Net(2)
    model.norm.fit(x)
    print("buffers:", [name for name, _ in model.named_buffers()])
    print("state_dict keys:", list(model.state_dict().keys()))
    print("normalised mean near 0:", model.norm(x).mean(0).abs().max().item() < 1e-4)

    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    for _ in range(150):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    print("trained accuracy above 0.9:", (model(x).argmax(1) == y).float().mean().item() > 0.9)

    features = {}

    def save_to(name):
        def hook(module, inputs, output):
            features[name] = output.detach()
        return hook

    handles = [model.backbone.act1.register_forward_hook(save_to("act1")),
               model.backbone.fc2.register_forward_hook(save_to("fc2"))]
    seen = []
    pre = model.classifier.register_forward_pre_hook(lambda module, inputs: seen.append(inputs[0].shape))
    model(x[:5])
    print("features:", {k: v.shape for k, v in features.items()})
    print("pre-hook saw:", seen)
    print("relu features are non-negative:", bool((features["act1"] >= 0).all()))
    for handle in handles + [pre]:
        handle.remove()
    features.clear()
    model(x[:5])
    print("hooks removed:", features == {})

    grads = []
    inp = x[:3].clone().requires_grad_()
    inp.register_hook(lambda g: grads.append(g.shape))
    model(inp).sum().backward()
    print("tensor hook saw gradient:", grads)

    # surgery: rename the backbone, drop the old head, load into a model with three classes
    old = model.state_dict()
    renamed = OrderedDict((k.replace("backbone.", "body."), v) for k, v in old.items() if not k.startswith("classifier."))
    print("renamed keys:", [k for k in renamed if k.startswith("body.")])
    restored = OrderedDict((k.replace("body.", "backbone."), v) for k, v in renamed.items())
    new_model = Net(3)
    result = new_model.load_state_dict(restored, strict=False)
    print("missing:", result.missing_keys, "unexpected:", result.unexpected_keys)
    print("backbone copied:", torch.equal(new_model.backbone.fc1.weight, model.backbone.fc1.weight))
    print("buffers copied:", torch.equal(new_model.norm.mean, model.norm.mean))
    try:
        new_model.load_state_dict(old)
    except RuntimeError as error:
        print("strict load of the old head fails:", "size mismatch" in str(error))


if __name__ == "__main__":
    main()
