"""ember in one minute: write an autograd Function, train a model with it, and let gradcheck vouch for it.

Run it with ``make demo`` (or ``python examples/demo.py``). It needs only NumPy;
if tqdm is installed (``pip install -e '.[demo]'``) training shows a progress bar.
"""
import sys

import ember as torch  # ember speaks PyTorch's API, so PyTorch code reads the same
from ember import nn

try:
    from tqdm import tqdm
except ImportError:  # tqdm is optional: without it, plain loops and prints
    tqdm = None


# 1. A custom autograd Function, as in PyTorch's "Extending PyTorch" note: y = x @ W.T + b.
class LinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(input, weight, bias):
        return input.mm(weight.t()) + bias

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_output.mm(weight)
        grad_weight = grad_output.t().mm(input)
        grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


# 2. A layer that uses it: an nn.Module with two Parameters.
class Linear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        nn.init.uniform_(self.weight, -0.1, 0.1)

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        out_features, in_features = self.weight.shape
        return f"in_features={in_features}, out_features={out_features}"


def make_data(n=256):
    """Points on a known plane, y = 2 x0 - 3 x1 + 0.5 x2 + 1, plus a little noise."""
    true_weight = torch.tensor([[2.0, -3.0, 0.5]])
    x = torch.randn(n, 3)
    y = x.mm(true_weight.t()) + 1.0 + 0.01 * torch.randn(n, 1)
    return x, y


def progress(steps):
    # The bar only makes sense on a terminal; in a log it would be noise.
    return tqdm(steps, desc="training", leave=False, disable=not sys.stderr.isatty()) if tqdm else steps


def say(line):
    (tqdm.write if tqdm else print)(line)


def train(epochs=100):
    x, y = make_data()
    model = Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.MSELoss()
    print(f"Training {model} on {len(x)} points with {optimizer.__class__.__name__}:")
    for epoch in progress(range(1, epochs + 1)):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        if epoch == 1 or epoch % 20 == 0:
            say(f"  epoch {epoch:3d}   loss {loss.item():.6f}")
    weights = ", ".join(f"{w:.2f}" for w in model.weight.detach().tolist()[0])
    print(f"Learned y = [{weights}] . x + {model.bias.item():.2f}   (truth: [2.00, -3.00, 0.50] . x + 1.00)\n")


def small_inputs():
    """gradcheck wants float64 inputs that require grad (finite differences need the precision)."""
    torch.manual_seed(0)
    return tuple(torch.randn(*shape, dtype=torch.float64, requires_grad=True) for shape in [(4, 3), (2, 3), (2,)])


# 3. The same Function with a classic mistake: the bias gradient averages over the batch instead of summing.
class LinearWithBuggyBackward(LinearFunction):
    @staticmethod
    def backward(ctx, grad_output):
        grad_input, grad_weight, _ = LinearFunction.backward(ctx, grad_output)
        return grad_input, grad_weight, grad_output.mean(0)  # should be .sum(0)


def check_gradients():
    from ember.autograd import GradcheckError, gradcheck

    verdict = gradcheck(LinearFunction.apply, small_inputs(), eps=1e-6, atol=1e-4)
    print(f"gradcheck(LinearFunction) -> {verdict}: the hand-written backward matches finite differences.\n")
    try:
        gradcheck(LinearWithBuggyBackward.apply, small_inputs(), eps=1e-6, atol=1e-4)
        print("gradcheck(LinearWithBuggyBackward) unexpectedly passed")
    except GradcheckError as error:
        print("gradcheck(LinearWithBuggyBackward) raised GradcheckError:\n")
        print("  " + str(error).replace("\n", "\n  "))


if __name__ == "__main__":
    torch.manual_seed(0)
    train()
    check_gradients()
