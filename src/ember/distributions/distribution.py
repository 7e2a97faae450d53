"""``Distribution``: the base class of every distribution (shapes, validation, sampling, scoring).

A distribution has a ``batch_shape`` (independent, differently parameterised copies) and an
``event_shape`` (the shape of one draw). ``sample(sample_shape)`` has shape
``sample_shape + batch_shape + event_shape``.

>>> import ember
>>> from ember.distributions import Normal
>>> d = Normal(ember.zeros(3), 1.0)
>>> d.batch_shape, d.event_shape, d.sample((2,)).shape
(ember.Size([3]), ember.Size([]), ember.Size([2, 3]))
"""
from __future__ import annotations

import warnings

import ember
from ember import Size, Tensor
from ember.distributions import constraints
from ember.distributions.utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """The base class: a subclass sets ``arg_constraints`` and ``support`` and defines what it can compute."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument and sample validation on or off for every distribution made afterwards."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: expected True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args: bool | None = None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{type(self)} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                          "or initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=3)
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                continue  # a parameter derived from the one given (probs from logits) is valid by construction
            value = getattr(self, param)
            if not constraint.check(value).all():
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) of "
                    f"distribution {self!r} to satisfy the constraint {constraint!r}, but found invalid values:\n"
                    f"{value}")

    def expand(self, batch_shape, _instance=None):
        """This distribution with its parameters broadcast to ``batch_shape`` (views, no copies)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement expand")

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()) -> Tensor:
        """A draw of shape ``sample_shape + batch_shape + event_shape``, outside the autograd graph."""
        with ember.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:
        """A reparameterised draw: differentiable with respect to the parameters."""
        raise NotImplementedError(f"{type(self).__name__} does not implement rsample; it has "
                                  f"has_rsample={self.has_rsample}, use sample() instead")

    def sample_n(self, n: int) -> Tensor:
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement enumerate_support")

    def entropy(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self) -> Tensor:
        return ember.exp(self.entropy())

    def _extended_shape(self, sample_shape=Size()) -> Size:
        """``sample_shape + batch_shape + event_shape``: the shape of a draw."""
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value: Tensor) -> None:
        """Check that ``value`` can be scored: a tensor, broadcastable to the shapes, inside the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = value.dim() - len(self._event_shape)
        if value.shape[start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        expected = self._batch_shape + self._event_shape
        for have, want in zip(reversed(value.shape), reversed(expected)):
            if have != 1 and want != 1 and have != want:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {value.size()} vs "
                                 f"{Size(expected)}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{type(self)} does not define `support` to enable sample validation. Please initialize "
                          "the distribution with `validate_args=False` to turn off validation.", stacklevel=3)
            return
        if not support.check(value).all():
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be within the "
                f"support ({support!r}) of the distribution {self!r}, but found invalid values:\n{value}")

    def _expanded(self, cls, batch_shape, _instance, names: tuple):
        """``expand`` for the common case: the parameters ``names`` (those set) broadcast to ``batch_shape``
        followed by their own trailing dims (a Categorical's events, a MultivariateNormal's vector)."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        for name in names:
            if name in self.__dict__:
                value = self.__dict__[name]
                new.__dict__[name] = value.expand(batch_shape + value.shape[len(self._batch_shape):])
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom __init__ method must also "
                "define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        shown = [name for name in self.arg_constraints if name in self.__dict__]
        parts = []
        for name in shown:
            value = self.__dict__[name]
            parts.append(f"{name}: {value if value.numel() == 1 else value.size()}")
        return f"{type(self).__name__}({', '.join(parts)})"
