"""Extending autograd as the "Extending PyTorch" note describes: a linear Function with its own
backward, a Function with a non-tensor argument, a Function with separate setup_context that supports
double backward and vmap, and a Module built on a Function, all checked and then trained."""
import math

import torch
from torch import nn
from torch.autograd import Function, gradcheck, gradgradcheck


class AffineFunction(Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight, bias)
        out = x.mm(weight.t())
        return out if bias is None else out + bias

    @staticmethod
    def backward(ctx, grad):
        x, weight, bias = ctx.saved_tensors
        grad_x = grad.mm(weight) if ctx.needs_input_grad[0] else None
        grad_w = grad.t().mm(x) if ctx.needs_input_grad[1] else None
        grad_b = grad.sum(0) if bias is not None and ctx.needs_input_grad[2] else None
        return grad_x, grad_w, grad_b


class Scale(Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x * factor

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


class Cube(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x ** 3, 3 * x ** 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], output[1])
        ctx.mark_non_differentiable(output[1])

    @staticmethod
    def backward(ctx, grad, _grad_derivative):
        x, derivative = ctx.saved_tensors
        # written with differentiable ops so a second backward works
        return grad * 3 * x ** 2


class Affine(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.empty(out_features)) if bias else None
        bound = 1 / math.sqrt(in_features)
        nn.init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        return AffineFunction.apply(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


def main():
    torch.manual_seed(0)
    x = torch.randn(5, 3, dtype=torch.double, requires_grad=True)
    w = torch.randn(4, 3, dtype=torch.double, requires_grad=True)
    b = torch.randn(4, dtype=torch.double, requires_grad=True)
    print("gradcheck affine:", gradcheck(AffineFunction.apply, (x, w, b)))
    print("gradcheck affine without bias:", gradcheck(AffineFunction.apply, (x, w)))
    print("gradcheck scale:", gradcheck(lambda t: Scale.apply(t, 2.5), (x,)))
    print("gradgradcheck cube:", gradgradcheck(lambda t: Cube.apply(t)[0], (x,)))

    t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y, dy = Cube.apply(t)
    print(y, dy)
    (g,) = torch.autograd.grad(y.sum(), t, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), t)
    print("first derivative:", g)
    print("second derivative:", gg)
    print("derivative output needs no grad:", dy.requires_grad)
    print("vmap over cube:", torch.vmap(lambda v: Cube.apply(v)[0])(torch.arange(6.0).view(2, 3)))
    print("grad_fn name:", type(Scale.apply(t, 2.0).grad_fn).__name__)

    layer = Affine(3, 1)
    print(layer)
    data = torch.randn(128, 3)
    target = data @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.3
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.2)
    for _ in range(100):
        optimizer.zero_grad()
        loss = ((layer(data) - target) ** 2).mean()
        loss.backward()
        optimizer.step()
    print("module on a Function fits:", loss.item() < 1e-6)
    print("weights:", torch.round(layer.weight.detach(), decimals=3))


if __name__ == "__main__":
    main()
