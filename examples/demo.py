"""ember in one minute: a small CNN learns scikit-learn's 8x8 handwritten digits.

It shows the parts a PyTorch user writes: a custom autograd Function (checked by gradcheck first), custom
Modules, a training loop with a progress bar, a checkpoint saved and reloaded, and the learning curves as a PNG.

Run it with ``make demo`` (or ``python examples/demo.py``); it needs the ``demo`` extra
(``pip install -e '.[demo]'``: scikit-learn for the data, matplotlib for the plot, tqdm for the bar).
``--epochs`` and ``--plot`` change what it does (the tests run it briefly).
"""
import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

import ember as torch  # ember speaks PyTorch's API, so PyTorch code reads the same
from ember import nn

try:
    from tqdm import tqdm
except ImportError:  # tqdm is optional: without it, plain loops and prints
    tqdm = None

ROOT = Path(__file__).resolve().parents[1]


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


# 2. Modules: one that uses the Function, and a convolution written with ``unfold`` and a matrix product.
class Linear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        nn.init.kaiming_uniform_(self.weight, nonlinearity="linear")

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        out_features, in_features = self.weight.shape
        return f"in_features={in_features}, out_features={out_features}"


class Conv2d(nn.Module):
    """A 'valid' convolution: every k x k patch (from ``unfold``) times the kernel, for all patches at once."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.kernel_size = kernel_size
        self.weight = nn.Parameter(torch.empty(out_channels, in_channels * kernel_size ** 2))
        self.bias = nn.Parameter(torch.zeros(out_channels))
        nn.init.kaiming_uniform_(self.weight, nonlinearity="relu")

    def forward(self, x):
        n, _, height, width = x.shape
        k = self.kernel_size
        patches = x.unfold(2, k, 1).unfold(3, k, 1)  # [n, c, h', w', k, k]
        h, w = height - k + 1, width - k + 1
        rows = patches.permute(0, 2, 3, 1, 4, 5).reshape(n * h * w, -1)
        out = rows.mm(self.weight.t()) + self.bias
        return out.reshape(n, h, w, -1).permute(0, 3, 1, 2)

    def extra_repr(self):
        return f"{self.weight.shape[1] // self.kernel_size ** 2}, {self.weight.shape[0]}, " \
               f"kernel_size={self.kernel_size}"


class MaxPool2d(nn.Module):
    def forward(self, x):
        n, c, h, w = x.shape
        return x.reshape(n, c, h // 2, 2, w // 2, 2).amax(dim=(3, 5))


class Flatten(nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0], -1)


def make_model():
    return nn.Sequential(
        Conv2d(1, 16, 3), nn.ReLU(),   # 8x8 -> 6x6
        Conv2d(16, 32, 3), nn.ReLU(),  # 6x6 -> 4x4
        MaxPool2d(), Flatten(),        # 4x4 -> 2x2, then 32 * 2 * 2 features
        Linear(128, 10),
    )


def cross_entropy(logits, target):
    return -nn.functional.log_softmax(logits, dim=1).gather(1, target.unsqueeze(1)).mean()


def load_data(seed=0):
    """The digits as [n, 1, 8, 8] float32 in [0, 1]; a fixed 80/20 split."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]
    order = np.random.default_rng(seed).permutation(len(images))
    cut = int(0.8 * len(images))
    train, test = order[:cut], order[cut:]
    as_tensors = lambda idx: (torch.from_numpy(images[idx]), torch.from_numpy(digits.target[idx].astype(np.int64)))
    return as_tensors(train), as_tensors(test)


def accuracy(model, data):
    images, labels = data
    model.eval()
    with torch.no_grad():
        predicted = model(images).argmax(1)
    model.train()
    return (predicted == labels).float().mean().item()


def say(line):
    (tqdm.write if tqdm else print)(line)


def batches(count, size, generator):
    order = torch.randperm(count, generator=generator)
    return [order[start:start + size] for start in range(0, count, size)]


def train(model, train_data, test_data, epochs, batch_size=32):
    images, labels = train_data
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    generator = torch.Generator().manual_seed(0)
    losses, accuracies = [], []
    for epoch in range(1, epochs + 1):
        steps = batches(len(images), batch_size, generator)
        # disable=None: a bar on a terminal, none in a log file
        bar = tqdm(steps, desc=f"epoch {epoch}/{epochs}", leave=False, disable=None) if tqdm else steps
        total = 0.0
        for step, idx in enumerate(bar, 1):
            optimizer.zero_grad()
            loss = cross_entropy(model(images[idx]), labels[idx])
            loss.backward()
            optimizer.step()
            total += loss.item()
            if tqdm:
                bar.set_postfix(loss=f"{total / step:.4f}")
        losses.append(total / len(steps))
        accuracies.append(accuracy(model, test_data))
        say(f"  epoch {epoch:2d}   loss {losses[-1]:.4f}   test accuracy {accuracies[-1]:.2%}")
    return losses, accuracies


# 3. The same Function with a classic mistake: the bias gradient averages over the batch instead of summing.
class LinearWithBuggyBackward(LinearFunction):
    @staticmethod
    def backward(ctx, grad_output):
        grad_input, grad_weight, _ = LinearFunction.backward(ctx, grad_output)
        return grad_input, grad_weight, grad_output.mean(0)  # should be .sum(0)


def small_inputs():
    """gradcheck wants float64 inputs that require grad (finite differences need the precision)."""
    torch.manual_seed(0)
    return tuple(torch.randn(*shape, dtype=torch.float64, requires_grad=True) for shape in [(4, 3), (2, 3), (2,)])


def check_gradients():
    from ember.autograd import GradcheckError, gradcheck

    verdict = gradcheck(LinearFunction.apply, small_inputs(), eps=1e-6, atol=1e-4)
    print(f"gradcheck(LinearFunction) -> {verdict}: the hand-written backward matches finite differences.")
    try:
        gradcheck(LinearWithBuggyBackward.apply, small_inputs(), eps=1e-6, atol=1e-4)
        print("gradcheck(LinearWithBuggyBackward) unexpectedly passed")
    except GradcheckError as error:
        print("gradcheck(LinearWithBuggyBackward) raised GradcheckError (a wrong backward is caught):")
        print("  " + str(error).splitlines()[0])
    print()


def save_and_reload(model, test_data, directory):
    """Save the weights in PyTorch's checkpoint format, load them into a fresh model, and return its test accuracy.

    The file is one that PyTorch's own torch.load reads; loading is weights-only, so it can hold tensors and
    plain values but nothing that would run."""
    path = Path(directory) / "digits_cnn.pt"
    torch.save(model.state_dict(), path)
    fresh = make_model()
    fresh.load_state_dict(torch.load(path))
    print(f"Saved the checkpoint to {path} (PyTorch's format) and reloaded it into a fresh model.")
    return accuracy(fresh, test_data)


def plot(losses, accuracies, path):
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    epochs = range(1, len(losses) + 1)
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    left.plot(epochs, losses, marker="o")
    left.set(title="training loss", xlabel="epoch", ylabel="cross-entropy")
    right.plot(epochs, [100 * a for a in accuracies], marker="o", color="tab:green")
    right.set(title="test accuracy", xlabel="epoch", ylabel="%")
    fig.suptitle("ember: a small CNN on the 8x8 digits")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"Learning curves written to {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "demo_curves.png")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    torch.manual_seed(0)
    check_gradients()
    train_data, test_data = load_data()
    model = make_model()
    print(f"Training on {len(train_data[0])} digits, testing on {len(test_data[0])}:\n{model}")
    losses, accuracies = train(model, train_data, test_data, args.epochs)
    print(f"Test accuracy: {accuracies[-1]:.2%}")
    with tempfile.TemporaryDirectory() as directory:
        print(f"Reloaded model's test accuracy: {save_and_reload(model, test_data, directory):.2%}")
    plot(losses, accuracies, args.plot)
    print(f"Done in {time.perf_counter() - start:.1f} s.")


if __name__ == "__main__":
    main()
