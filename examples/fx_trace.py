"""Trace a small CNN with ``ember.fx``, print its graph, and rewrite it with a Transformer pass.

The program is written as for PyTorch: with ``import torch`` and ``import torch.fx`` in place of the
imports below it prints the same code (torch's ``print_tabular`` needs the ``tabulate`` package).
Run: ``PYTHONPATH=src python examples/fx_trace.py``.
"""
import ember as torch
import ember.fx

nn = torch.nn
F = torch.nn.functional


class SmallCNN(nn.Module):
    """Convolution and batch norm in a Sequential (traced through), then relu, pooling and a classifier."""

    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 6, 3), nn.BatchNorm2d(6))
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(6 * 3 * 3, classes)

    def forward(self, x):
        x = self.pool(torch.relu(self.features(x)))
        return self.head(x.view(x.size(0), -1))


class ReluToGelu(torch.fx.Transformer):
    """Replace every call of relu with one of gelu; everything else is copied as it is."""

    def call_function(self, target, args, kwargs):
        if target is torch.relu:
            return F.gelu(*args, **kwargs)
        return super().call_function(target, args, kwargs)


def main():
    torch.manual_seed(0)
    model = SmallCNN().eval()
    traced = torch.fx.symbolic_trace(model)
    print("== graph")
    traced.graph.print_tabular()
    print("== code")
    print(traced.code.strip())
    x = torch.randn(2, 1, 8, 8)
    print("traced module computes what the model does:", torch.equal(traced(x), model(x)))

    with_gelu = ReluToGelu(traced).transform()
    print("== after the Transformer pass")
    print(with_gelu.code.strip())
    expected = model.head(model.pool(F.gelu(model.features(x))).view(2, -1))
    print("rewritten module computes the gelu model:", torch.allclose(with_gelu(x), expected))


if __name__ == "__main__":
    main()
