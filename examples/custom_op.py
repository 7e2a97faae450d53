"""A NumPy kernel made an ember operator with ``ember.library.custom_op``, given a backward, and checked.

The program is written as for PyTorch: run it with ``import torch`` in place of the import below and it
prints the same. Run: ``PYTHONPATH=src python examples/custom_op.py``.
"""
import numpy as np

import ember as torch
from ember import Tensor


@torch.library.custom_op("examples::soft_threshold", mutates_args=())
def soft_threshold(x: Tensor, threshold: float) -> Tensor:
    """Shrink each value toward zero by ``threshold``: sign(x) * max(|x| - threshold, 0), in NumPy."""
    values = x.numpy()
    return torch.from_numpy(np.sign(values) * np.maximum(np.abs(values) - threshold, 0.0))


@soft_threshold.register_fake
def _(x, threshold):
    return torch.empty_like(x)  # what the op returns: same shape, dtype and strides as x


def setup_context(ctx, inputs, output):
    x, threshold = inputs
    ctx.save_for_backward(x)
    ctx.threshold = threshold


def backward(ctx, grad):
    (x,) = ctx.saved_tensors
    passes = (x.abs() > ctx.threshold).to(grad.dtype)  # the slope is 1 where a value survives, 0 elsewhere
    return grad * passes, None  # no gradient for the float threshold


soft_threshold.register_autograd(backward, setup_context=setup_context)


def main() -> None:
    x = torch.tensor([-2.0, -0.5, 0.25, 1.5, 3.0], dtype=torch.float64, requires_grad=True)
    y = torch.ops.examples.soft_threshold(x, 1.0)
    y.sum().backward()
    print("soft_threshold:", y.detach().tolist())
    print("gradient:", x.grad.tolist())
    print("gradcheck:", torch.autograd.gradcheck(lambda t: soft_threshold(t, 1.0), (x,)))
    results = torch.library.opcheck(soft_threshold, (x, 1.0))
    print("opcheck:", ", ".join(f"{name} {result}" for name, result in results.items()))


if __name__ == "__main__":
    main()
