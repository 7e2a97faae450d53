"""Quantization-aware training: a classifier learns with its weights fake-quantized to 8 bits per output
channel and its activations fake-quantized by a moving-average observer, then is converted to quantized
int8 weights whose real values are exactly the ones it trained with, and saved and reloaded."""
import io
import warnings

import torch
from torch import nn

warnings.filterwarnings("ignore", message=".*quantized tensor creation functions")  # torch deprecates them


class FakeQuantLinear(nn.Linear):
    """A Linear layer whose weight is fake-quantized to symmetric int8, one scale per output channel."""

    def weight_scales(self):
        return (self.weight.detach().abs().amax(1) / 127).clamp(min=1e-8)

    def forward(self, x):
        zeros = torch.zeros(self.out_features, dtype=torch.int32)
        weight = torch.fake_quantize_per_channel_affine(self.weight, self.weight_scales(), zeros, 0, -127, 127)
        return nn.functional.linear(x, weight, self.bias)


class ActivationFakeQuant(nn.Module):
    """Observes the range of what passes (a moving average) and fake-quantizes it to uint8."""

    def __init__(self):
        super().__init__()
        self.register_buffer("low", torch.tensor([float("inf")]))
        self.register_buffer("high", torch.tensor([float("-inf")]))
        self.register_buffer("scale", torch.tensor([1.0]))
        self.register_buffer("zero_point", torch.tensor([0], dtype=torch.int32))
        self.register_buffer("on", torch.tensor([1]))

    def forward(self, x):
        observe = self.on if self.training else torch.tensor([0])
        return torch.fused_moving_avg_obs_fake_quant(x, observe, self.on, self.low, self.high, self.scale,
                                                     self.zero_point, 0.01, 0, 255, 0)


def two_moons(n):
    angle = torch.rand(n) * 3.14159
    upper = torch.stack([angle.cos(), angle.sin()], 1)
    lower = torch.stack([1 - angle.cos(), 0.5 - angle.sin()], 1)
    points = torch.cat([upper, lower]) + 0.1 * torch.randn(2 * n, 2)
    return points, torch.cat([torch.zeros(n), torch.ones(n)]).long()


def main():
    torch.manual_seed(0)
    x, y = two_moons(200)
    model = nn.Sequential(FakeQuantLinear(2, 32), nn.ReLU(), ActivationFakeQuant(), FakeQuantLinear(32, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    for step in range(150):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        accuracy = (model(x).argmax(1) == y).float().mean().item()
    print("learns the two moons through 8-bit fake quantization:", accuracy > 0.9)
    observer = model[2]
    print("activation range observed:", observer.low.item() == 0.0, observer.high.item() > 0.5)
    print("activation quantization:", observer.zero_point.item(), observer.scale.item() > 0)

    # convert: the int8 weights hold exactly the values the layer trained with
    quantized = {}
    for name, layer in (("first", model[0]), ("last", model[3])):
        scales = layer.weight_scales()
        zeros = torch.zeros(layer.out_features, dtype=torch.long)
        q = torch.quantize_per_channel(layer.weight.detach(), scales, zeros, 0, torch.qint8)
        fake = torch.fake_quantize_per_channel_affine(layer.weight.detach(), scales, zeros.int(), 0, -127, 127)
        print(name, q.dtype, q.qscheme(), q.q_per_channel_axis(), tuple(q.int_repr().shape),
              "equals the trained values:", torch.equal(q.dequantize(), fake))
        quantized[name] = q

    buffer = io.BytesIO()
    torch.save(quantized, buffer)
    buffer.seek(0)
    reloaded = torch.load(buffer)
    print("reloaded:", all(torch.equal(reloaded[k], quantized[k]) for k in quantized))

    q = torch.quantize_per_tensor(torch.tensor([-1.0, 0.0, 0.26, 2.0]), 0.1, 10, torch.quint8)
    print(q)
    print(q.int_repr(), q.q_scale(), q.q_zero_point())
    try:
        q + q
    except NotImplementedError:
        print("arithmetic on quantized tensors is refused: dequantize first")


if __name__ == "__main__":
    main()
