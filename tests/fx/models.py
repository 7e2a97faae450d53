"""The models the ember.fx tests trace, written once for either library: ``build(torch)`` or ``build(ember)``."""
import math


def build(torch):
    """The model classes, by name, written against ``torch`` (which may be ember)."""
    nn = torch.nn
    F = torch.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
            self.head = nn.Linear(8, 3)

        def forward(self, x):
            return self.head(F.relu(self.body(x)))

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(4 * 4 * 4, 10)

        def forward(self, x):
            x = self.pool(torch.relu(self.bn(self.conv(x))))
            x = torch.flatten(x, 1)
            return self.fc(x)

    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3, padding=1)

        def forward(self, x):
            return x + self.conv(x)

    class Viewer(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(12, 2)

        def forward(self, x):
            x = x.view(x.size(0), -1)
            n = x.shape[1]
            return self.fc(x) * math.sqrt(n) - 1

    class Encoder(nn.Module):
        def __init__(self, d=8):
            super().__init__()
            self.qkv = nn.Linear(d, 3 * d)
            self.out = nn.Linear(d, d)
            self.norm = nn.LayerNorm(d)
            self.scale = nn.Parameter(torch.ones(1))

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
            attn = torch.softmax(scores, dim=-1)
            y = self.out(attn @ v) * self.scale
            return self.norm(x + y)

    return {"mlp": MLP, "cnn": CNN, "residual": Residual, "viewer": Viewer, "encoder": Encoder}
