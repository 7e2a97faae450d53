"""A tensor-like type that is not a Tensor: a diagonal matrix stored as one number, which implements
torch functions through __torch_function__ and a dispatch table, and falls back to dense tensors
for everything else."""
import functools

import torch

HANDLED = {}


def implements(torch_function):
    def register(func):
        functools.update_wrapper(func, torch_function)
        HANDLED[torch_function] = func
        return func
    return register


class ScaledIdentity:
    """N x N matrix value * I, stored as its size and value."""

    def __init__(self, n, value):
        self.n, self.value = n, value

    def __repr__(self):
        return f"ScaledIdentity(n={self.n}, value={self.value})"

    def dense(self):
        return self.value * torch.eye(self.n)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in HANDLED:
            return HANDLED[func](*args, **kwargs)
        dense_args = [a.dense() if isinstance(a, ScaledIdentity) else a for a in args]
        return func(*dense_args, **kwargs)


@implements(torch.mean)
def mean(a):
    return float(a.value) / a.n


@implements(torch.add)
def add(a, b):
    if isinstance(a, ScaledIdentity) and isinstance(b, ScaledIdentity):
        if a.n != b.n:
            raise ValueError(f"add: sizes differ ({a.n} and {b.n})")
        return ScaledIdentity(a.n, a.value + b.value)
    a = a.dense() if isinstance(a, ScaledIdentity) else a
    b = b.dense() if isinstance(b, ScaledIdentity) else b
    return torch.add(a, b)


@implements(torch.trace)
def trace(a):
    return torch.tensor(float(a.n * a.value))


def main():
    s = ScaledIdentity(4, 2.5)
    print(s)
    print("mean:", torch.mean(s))
    print("add two:", torch.add(s, ScaledIdentity(4, 0.5)))
    print("add dense:", torch.add(s, torch.ones(4, 4))[0])
    print("trace:", torch.trace(s))
    print("fallback sum:", torch.sum(s))
    print("fallback matmul:", torch.matmul(s, torch.arange(4.0)))
    print("wrapped name:", mean.__name__)
    print("overridable:", torch.overrides.is_tensor_like(s), torch.overrides.has_torch_function((s,)))
    try:
        torch.add(s, ScaledIdentity(3, 1.0))
    except ValueError as error:
        print("error:", error)

    # solve (value * I) x = b by gradient descent on a plain tensor, using the type for the matrix
    b = torch.tensor([1.0, 2.0, 3.0, 4.0])
    x = torch.zeros(4, requires_grad=True)
    optimizer = torch.optim.SGD([x], lr=0.1)
    for _ in range(100):
        optimizer.zero_grad()
        residual = torch.matmul(s, x) - b
        (residual ** 2).sum().backward()
        optimizer.step()
    print("solution:", torch.round(x.detach(), decimals=4))


if __name__ == "__main__":
    main()
