"""Random sampling from distributions: ``normal``, ``bernoulli``, ``multinomial``, ``poisson``, ``randint_like``,
and the in-place samplers ``random_``, ``exponential_``, ``geometric_``, ``log_normal_``, ``cauchy_``, ``bernoulli_``.

Draws come from NumPy's generator (``ember.manual_seed`` makes them repeatable). As in torch, a sample is a
function of its parameters' values but not a differentiable one: a tensor parameter that requires grad gets a
zero gradient through the sample's node.

>>> import ember
>>> _ = ember.manual_seed(0)
>>> ember.bernoulli(ember.tensor([0., 1., 1.]))
tensor([0., 1., 1.])
>>> ember.normal(ember.zeros(2), 0.0)
tensor([0., 0.])
"""
from __future__ import annotations

import math

import numpy as np

from ember import _dtype, _stream_rejection, _streams
from ember._creation import _check_device, _check_layout, _checked_generator, _factory, _finish_or_out, _like
from ember._creation import _random_bound
from ember._creation import _check_random_range, _random_float, _size
from ember._ops._quiet import IGNORE_ALL, quietly
from ember._ops._support import check_broadcast, ember_function, require_tensor, wrap
from ember._ops.inplace import Fill, apply_inplace
from ember._ops.unary import zeros_like_gradient
from ember._tensor import Tensor
from ember.autograd.function import Function


class Sample(Function):
    """A draw whose distribution's parameters are the tensor inputs: each gets a zero gradient, as in torch."""

    backward_name = "NormalBackward3"

    @staticmethod
    def forward(ctx, values, *parameters):
        return wrap(values)

    @staticmethod
    def backward(ctx, grad):
        return (None,) + tuple(zeros_like_gradient(grad) if needed else None for needed in ctx.needs_input_grad[1:])


class NormalWithTensorMean(Sample):
    backward_name = "NormalBackward1"


class NormalWithTensorStd(Sample):
    backward_name = "NormalBackward2"


class BernoulliOfTensor(Sample):
    backward_name = "BernoulliBackward0"


class Poisson(Sample):
    backward_name = "PoissonBackward0"


# ---------------------------------------------------------------- normal


def _float_parameter(op: str, name: str, value) -> Tensor:
    if _dtype.kind(value._data.dtype) != "f" and not (name == "mean" and value._data.dtype.kind == "c"):
        raise NotImplementedError(
            f'"{op}_kernel_cpu" not implemented for \'{_dtype.scalar_type_name(value._data.dtype)}\': the {name} of '
            f"{op} must be a floating tensor; convert it first, e.g. {name}.float()"
        )
    return value


def _check_std(std) -> None:
    smallest = np.min(std._data) if isinstance(std, Tensor) and std._data.size else std
    if isinstance(std, Tensor) and not std._data.size:
        return
    if not smallest >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {smallest}; a standard deviation cannot be "
                           "negative")


@_factory
def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Samples from normal distributions of the given mean(s) and standard deviation(s).

    ``mean`` and ``std`` may each be a tensor (the result has their broadcast shape) or a number; with two
    numbers, ``size`` gives the shape.

    >>> ember.normal(2.0, 0.0, size=(2,))
    tensor([2., 2.])
    """
    mean_tensor, std_tensor = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not (mean_tensor or std_tensor):
        return _normal_of_numbers(mean, std, size, generator, out, dtype, layout, device, requires_grad)
    if size is not None:
        raise TypeError("normal(): 'size' is taken only when mean and std are both numbers; with a tensor the "
                        "result has its shape")
    _check_std(std)
    parameters = [_float_parameter("normal", "mean", mean) if mean_tensor else None,
                  _float_parameter("normal", "std", std) if std_tensor else None]
    shapes = [p._data.shape for p in parameters if p is not None]
    check_broadcast("normal", *shapes)
    shape = np.broadcast_shapes(*shapes)
    target = np.result_type(*[p._data.dtype for p in parameters if p is not None])
    mean_values = mean._data if mean_tensor else mean
    std_values = std._data if std_tensor else std
    # (quietly: an infinite std or mean makes inf and nan, which torch gives without a word)
    values = quietly(IGNORE_ALL, _normal_draws, _checked_generator("normal", generator), mean_values, std_values,
                     shape, target)
    node = Sample if mean_tensor and std_tensor else NormalWithTensorMean if mean_tensor else NormalWithTensorStd
    result = node.apply(values, *[p for p in parameters if p is not None])
    return _finish_or_out("normal", result._data, False, out) if out is not None else result


def _normal_of_numbers(mean, std, size, generator, out, dtype, layout, device, requires_grad) -> Tensor:
    if size is None:
        raise TypeError("normal() with a number for both mean and std needs a size, e.g. normal(0., 1., size=(2, 3))")
    _check_device(device)
    _check_layout("normal", layout)
    _check_std(std)
    if dtype is None and isinstance(out, Tensor):
        dtype = out.dtype
    target = _random_float("normal", dtype)
    values = quietly(IGNORE_ALL, _normal_draws, _checked_generator("normal", generator), mean, std,
                     _size("normal", (size,)), target)
    return _finish_or_out("normal", values, requires_grad, out)


def _normal_draws(generator, mean, std, shape: tuple, target: np.dtype) -> np.ndarray:
    """Normal samples of ``target``, as torch makes them: for numbers, ``normal_(mean, std)``; for tensors,
    standard normals of the dtype, then scaled by ``std`` and shifted by ``mean``. A complex one is ``mean``
    plus a complex normal of variance ``std ** 2``: its real and imaginary parts independent, each of standard
    deviation ``std / sqrt(2)``."""
    double, narrow = _streams.precision(target)
    if target.kind == "c":
        parts = _streams.normal(generator, (*shape, 2), double) * np.expand_dims(np.asarray(std) / math.sqrt(2), -1)
        return (mean + (parts[..., 0] + 1j * parts[..., 1])).astype(target)
    if np.ndim(mean) == 0 and np.ndim(std) == 0:
        return _dtype.cast(_streams.normal(generator, shape, double, float(mean), float(std), narrow), target)
    standard = _dtype.cast(_streams.normal(generator, shape, double, narrow=narrow), target)
    return (standard * np.asarray(std, target) + np.asarray(mean, target)).astype(target)


# ---------------------------------------------------------------- bernoulli, multinomial, poisson


def _probabilities(op: str, p: np.ndarray) -> np.ndarray:
    if p.size and not (np.all(p >= 0) and np.all(p <= 1)):
        raise RuntimeError(f"{op}: expected every probability p to satisfy 0 <= p <= 1, but got values from "
                           f"{np.nanmin(p)} to {np.nanmax(p)} (or nan)")
    return p


@ember_function
def bernoulli(input: Tensor, p: float | None = None, *, generator=None, out=None) -> Tensor:
    """1 with probability ``input`` (or ``p``, if given), else 0, elementwise; in ``input``'s floating dtype.

    >>> ember.bernoulli(ember.tensor([1., 0.]))
    tensor([1., 0.])
    """
    input = require_tensor(input, "bernoulli")
    data = input._data
    if _dtype.kind(data.dtype) != "f":
        raise NotImplementedError(f'"bernoulli_tensor_cpu_p_" not implemented for '
                                  f"'{_dtype.scalar_type_name(data.dtype)}': p must be a floating tensor; use "
                                  "p.float()")
    stream = _checked_generator("bernoulli", generator)
    if p is not None:
        _probabilities("bernoulli", np.asarray(float(p)))
        drawn = _streams.bernoulli(stream, p, data.shape, True).astype(data.dtype)
        return _finish_or_out("bernoulli", drawn, False, out)
    probabilities = _probabilities("bernoulli", data)
    drawn = _streams.bernoulli(stream, probabilities, data.shape, data.dtype.itemsize == 8).astype(data.dtype)
    result = BernoulliOfTensor.apply(drawn, input)
    return _finish_or_out("bernoulli", result._data, False, out) if out is not None else result


@ember_function
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None, out=None) -> Tensor:
    """Indices drawn from the categories whose weights are ``input``'s last dim (one row per distribution).

    >>> ember.multinomial(ember.tensor([0., 5., 0.]), 2, replacement=True)
    tensor([1, 1])
    """
    input = require_tensor(input, "multinomial")
    if isinstance(out, Tensor) and out.dtype != _dtype.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {_dtype.scalar_type_name(out._data.dtype)}; "
                           "the draws are indices: pass an out of dtype ember.int64")
    weights = _checked_weights(input, num_samples, replacement)
    rows = weights.reshape(-1, weights.shape[-1])
    drawn = _streams.categories(_checked_generator("multinomial", generator), rows, num_samples, replacement) \
        if len(rows) else np.zeros((0, num_samples), np.int64)
    drawn = drawn.reshape(weights.shape[:-1] + (num_samples,))
    return _finish_or_out("multinomial", drawn.astype(np.int64), False, out)


def _checked_weights(input: Tensor, num_samples: int, replacement: bool) -> np.ndarray:
    weights = input._data
    if weights.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim, but got a tensor of {weights.ndim} dims")
    if _dtype.kind(weights.dtype) != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_dtype.scalar_type_name(weights.dtype)}")
    if num_samples <= 0:
        raise RuntimeError(f"multinomial: cannot sample n_sample <= 0 samples (got num_samples={num_samples})")
    if weights.shape[-1] > 2 ** 24:  # (torch's limit: beyond it, float32 cumulative sums lose categories)
        raise RuntimeError(f"multinomial: number of categories cannot exceed 2^24, but got {weights.shape[-1]}")
    if not replacement and num_samples > weights.shape[-1]:
        raise RuntimeError(f"multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement "
                           f"({num_samples} > {weights.shape[-1]}); pass replacement=True or draw fewer")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise RuntimeError("multinomial: invalid multinomial distribution: probability tensor contains either `inf`, "
                           "`nan` or element < 0")
    totals = weights.sum(-1)
    if np.any(totals <= 0):
        raise RuntimeError("multinomial: invalid multinomial distribution (sum of probabilities <= 0); every row "
                           "needs a positive weight")
    return weights if weights.dtype.itemsize >= 4 else weights.astype(np.float32)


@ember_function
def poisson(input: Tensor, generator=None) -> Tensor:
    """Counts drawn from Poisson distributions of rates ``input``, in ``input``'s dtype.

    >>> ember.poisson(ember.tensor([0., 0.]))
    tensor([0., 0.])
    """
    input = require_tensor(input, "poisson")
    rates = input._data
    if _dtype.kind(rates.dtype) != "f":
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_dtype.scalar_type_name(rates.dtype)}': "
                                  "the rates must be a floating tensor")
    if rates.size and not np.all(rates >= 0):
        raise RuntimeError("poisson: invalid Poisson rate, expected rate to be non-negative")
    drawn = _dtype.cast(_stream_rejection.poisson(_checked_generator("poisson", generator), rates.astype(np.float64)), rates.dtype)
    return Poisson.apply(drawn, input)


_NO_HIGH = object()


@ember_function
def randint_like(input: Tensor, low=0, high=_NO_HIGH, *, generator=None, dtype=None, layout=None, device=None,
                 pin_memory: bool = False, requires_grad: bool = False, memory_format=None) -> Tensor:
    """Random integers in ``[low, high)`` of ``input``'s shape and (unless ``dtype`` is given) dtype.

    ``randint_like(input, high)`` or ``randint_like(input, low, high)``, as in torch.

    >>> ember.randint_like(ember.zeros(3), 1)
    tensor([0., 0., 0.])
    """
    if high is _NO_HIGH:
        low, high = 0, low
    low, high = _random_bound("low", low), _random_bound("high", high)
    target = _dtype.to_dtype(dtype).np if dtype is not None else require_tensor(input, "randint_like")._data.dtype
    _check_random_range(low, high, target)

    def drawn(shape, np_dtype):
        return _streams.integers(_checked_generator("randint_like", generator), low, high, shape).astype(np_dtype)

    return _like("randint_like", drawn, input, dtype, requires_grad, device, memory_format, layout)


# ---------------------------------------------------------------- in-place samplers


class Random(Fill):
    backward_name = "RandomBackward2"


class Exponential(Fill):
    backward_name = "ExponentialBackward0"


class Geometric(Fill):
    backward_name = "GeometricBackward0"


class LogNormal(Fill):
    backward_name = "LogNormalBackward0"


class Cauchy(Fill):
    backward_name = "CauchyBackward0"


class BernoulliFill(Fill):
    backward_name = "BernoulliBackward2"


class BernoulliFillFrom(Function):
    """``x.bernoulli_(p)`` with a tensor ``p``: overwrites ``x``; ``p`` gets a zero gradient, as in torch."""

    backward_name = "BernoulliBackward1"

    @staticmethod
    def forward(ctx, x, values, p):
        return wrap(values)

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        return (zeros_like_gradient(grad) if needs[0] else None, None,
                zeros_like_gradient(grad) if needs[2] else None)


def _floating_only(self: Tensor, op: str, distribution: str) -> None:
    if _dtype.kind(self._data.dtype) != "f":
        raise RuntimeError(f"{op}: the {distribution} distribution is continuous: the tensor must be floating point, "
                           f"but it is {_dtype.scalar_type_name(self._data.dtype)}; convert it first (x.float())")


def _no_kernel(self: Tensor, kernel: str, kinds: str) -> None:
    """torch's NotImplementedError where its sampler has no kernel for ``self``'s dtype (its kind in ``kinds``)."""
    if self._data.dtype.kind in kinds:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype.scalar_type_name(self._data.dtype)}\'; '
                                  "sample into a real tensor and convert")


def random_(self: Tensor, from_=0, to=None, *, generator=None) -> Tensor:
    """Integers from ``[from_, to)``; without ``to``, from 0 up to what the dtype holds exactly (2**24 in single)."""
    if to is None and from_ != 0:
        from_, to = 0, from_  # random_(to)
    dtype = self._data.dtype
    stream = _checked_generator("random_", generator)
    if to is None:
        _no_kernel(self, "random_kernel_cpu", "c")
        values = _streams.full_range(stream, dtype, self._data.shape)
        return apply_inplace(self, Random.apply, _dtype.cast(values, dtype), op="random_")
    low, high = _random_bound("from", from_), _random_bound("to", to)
    _check_random_range(low, high, dtype)
    values = _streams.integers(stream, low, high, self._data.shape)
    return apply_inplace(self, Random.apply, _dtype.cast(values, dtype), op="random_")


def exponential_(self: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    _floating_only(self, "exponential_", "exponential")
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    values = _streams.exponential(_checked_generator("exponential_", generator), self._data.shape, lambd)
    return apply_inplace(self, Exponential.apply, values, op="exponential_")


def geometric_(self: Tensor, p: float, *, generator=None) -> Tensor:
    if not 0.0 < p < 1.0:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    _no_kernel(self, "geometric_cpu", "bc")
    values = _streams.geometric(_checked_generator("geometric_", generator), self._data.shape, p)
    return apply_inplace(self, Geometric.apply, values.astype(self._data.dtype), op="geometric_")


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    _no_kernel(self, "log_normal_cpu", "biuc")  # (torch's words here, where exponential_ and cauchy_ word their own)
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    values = _streams.log_normal(_checked_generator("log_normal_", generator), self._data.shape, mean, std)
    return apply_inplace(self, LogNormal.apply, values, op="log_normal_")


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    _floating_only(self, "cauchy_", "Cauchy")
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    values = _streams.cauchy(_checked_generator("cauchy_", generator), self._data.shape, median, sigma)
    return apply_inplace(self, Cauchy.apply, values, op="cauchy_")


def bernoulli_(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    stream = _checked_generator("bernoulli_", generator)
    _no_kernel(self, "bernoulli_tensor_cpu_self_" if isinstance(p, Tensor) else "bernoulli_scalar_cpu_", "c")
    if isinstance(p, Tensor):
        check_broadcast("bernoulli_", self._data.shape, p._data.shape)
        probability = _probabilities("bernoulli_", np.broadcast_to(p._data, self._data.shape))
        double = p._data.dtype.itemsize == 8 and p._data.dtype.kind == "f"
        values = _streams.bernoulli(stream, probability, self._data.shape, double).astype(self._data.dtype)
        return apply_inplace(self, BernoulliFillFrom.apply, values, p, op="bernoulli_")
    _probabilities("bernoulli_", np.asarray(float(p)))
    values = _streams.bernoulli(stream, p, self._data.shape, True).astype(self._data.dtype)
    return apply_inplace(self, BernoulliFill.apply, values, op="bernoulli_")


# ---------------------------------------------------------------- element-by-element Python functions


def apply_(self: Tensor, callable) -> Tensor:
    """Replace each element by ``callable(element)`` (a Python function of a number; slow, as in torch)."""
    _refuse_recorded(self, "apply_")
    data = self._data
    flat = [callable(v) for v in data.reshape(-1).tolist()]
    data[...] = np.asarray(flat, dtype=data.dtype).reshape(data.shape) if flat else data
    self._bump()
    return self


def map_(self: Tensor, tensor: Tensor, callable) -> Tensor:
    """Replace each element by ``callable(element, other)``, ``other`` the matching element of ``tensor``."""
    return _map_elements(self, "map_", (tensor,), callable)


def map2_(self: Tensor, x: Tensor, y: Tensor, callable) -> Tensor:
    """Replace each element by ``callable(element, a, b)``, ``a`` and ``b`` the matching elements of ``x`` and ``y``.

    >>> t = ember.ones(3)
    >>> t.map2_(ember.arange(3.0), ember.full((3,), 2.0), lambda e, a, b: e + a * b)
    tensor([1., 3., 5.])
    """
    return _map_elements(self, "map2_", (x, y), callable)


def _map_elements(self: Tensor, op: str, tensors: tuple, callable) -> Tensor:
    """``self``'s elements replaced by ``callable`` of each and the matching elements of ``tensors`` (broadcast)."""
    _refuse_recorded(self, op)
    data = self._data
    columns = [data.reshape(-1).tolist()]
    for position, tensor in enumerate(tensors, start=1):
        other = require_tensor(tensor, op, position, "tensor")
        check_broadcast(op, data.shape, other._data.shape)
        columns.append(np.broadcast_to(other._data, data.shape).reshape(-1).tolist())
    flat = [callable(*values) for values in zip(*columns)]
    data[...] = np.asarray(flat, dtype=data.dtype).reshape(data.shape) if flat else data
    self._bump()
    return self


def _refuse_recorded(self: Tensor, op: str) -> None:
    if self._requires_grad:
        raise RuntimeError(f"Can't call {op}() on Variable that requires grad. Use var.detach().{op}() instead.")


@ember_function
def is_nonzero(input: Tensor) -> bool:
    """Whether the single element of ``input`` is not zero (any other number of elements is an error).

    >>> ember.is_nonzero(ember.tensor([0.5]))
    True
    """
    data = require_tensor(input, "is_nonzero")._data
    if data.size == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if data.size > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous; reduce it first "
                           "(.any() or .all())")
    return bool(data.reshape(()))

