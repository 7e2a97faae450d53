# corpus: slow
"""A small ResNet on 16x16 images of coloured squares: basic blocks with BatchNorm and a 1x1 projection shortcut,
zero-initialised last BatchNorm in each block, Kaiming init, SGD with Nesterov momentum and a
OneCycle schedule; BatchNorm's running statistics in train and eval mode, and inference under
torch.inference_mode in channels-last memory."""
import torch
import torch.nn.functional as F
from torch import nn


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)), inplace=True)
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, classes=4, widths=(8, 16, 16)):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, padding=1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU())
        blocks, cin = [], widths[0]
        for i, width in enumerate(widths):
            blocks.append(BasicBlock(cin, width, stride=1 if i == 0 else 2))
            cin = width
        self.layers = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        for block in self.layers:
            nn.init.zeros_(block.bn2.weight)  # each block starts as the identity

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.layers(self.stem(x))), 1))


def make_images(n, generator):
    """A bright square on noise, at a random place; its colour is the class (red, green, blue or white)."""
    labels = torch.randint(0, 4, (n,), generator=generator)
    images = 0.3 * torch.randn(n, 3, 16, 16, generator=generator)
    corners = torch.randint(0, 11, (n, 2), generator=generator)
    colours = torch.cat([torch.eye(3), torch.ones(1, 3)])[labels]
    for image, (r, c), colour in zip(images, corners.tolist(), colours):
        image[:, r:r + 5, c:c + 5] += colour.view(3, 1, 1)
    return images, labels


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(1)
    images, labels = make_images(256, generator)
    test_images, test_labels = make_images(64, generator)

    model = ResNet()
    print("parameters:", sum(p.numel() for p in model.parameters()))
    print("buffers:", [name for name, _ in model.named_buffers()][:3])
    print("shortcut of block 1:", model.layers[1].shortcut)

    epochs, batch = 4, 16
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.05, epochs=epochs,
                                                    steps_per_epoch=len(images) // batch)
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(images))
        total = 0.0
        for i in range(0, len(images), batch):
            idx = order[i:i + batch]
            loss = F.cross_entropy(model(images[idx]), labels[idx], label_smoothing=0.1)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += loss.item() * len(idx)
        print(f"epoch {epoch}: loss {total / len(images):.4f} lr {scheduler.get_last_lr()[0]:.5f}")

    print("smoothed loss node:", loss.grad_fn.name())

    bn = model.stem[1]
    print("num_batches_tracked:", bn.num_batches_tracked)
    print("running_mean:", bn.running_mean[:4].round(decimals=3))
    print("running_var:", bn.running_var[:4].round(decimals=3))

    # train mode normalises with the batch statistics and updates the running ones; eval mode does neither
    probe = test_images[:8]
    model.train()
    before = bn.running_mean.clone()
    with torch.no_grad():
        train_out = model(probe)
    print("train mode moved the running mean:", not torch.equal(before, bn.running_mean))
    model.eval()
    before = bn.running_mean.clone()
    with torch.no_grad():
        eval_out = model(probe)
    print("eval mode left it:", torch.equal(before, bn.running_mean))
    print("train and eval outputs differ:", not torch.allclose(train_out, eval_out))

    with torch.inference_mode():
        logits = model(test_images.to(memory_format=torch.channels_last))
        accuracy = (logits.argmax(1) == test_labels).float().mean()
        print("inference mode:", torch.is_inference_mode_enabled(), logits.requires_grad, logits.shape)
    print("channels-last input gives the same logits:", torch.allclose(logits, model(test_images).detach(), atol=1e-5))
    print(f"test accuracy: {accuracy.item():.4f}")
    print("probabilities:", F.softmax(logits[:2], dim=1).round(decimals=3))


if __name__ == "__main__":
    main()
