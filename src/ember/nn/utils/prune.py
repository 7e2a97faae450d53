"""Pruning: zeroing parts of a module's parameter through a mask, as ``torch.nn.utils.prune`` does.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, adds a buffer ``<name>_mask`` and a
forward pre-hook that sets ``module.<name> = <name>_orig * <name>_mask`` before each call; gradients
reach ``<name>_orig`` through the product. Pruning the same parameter again prunes among the entries
still kept (a ``PruningContainer`` holds the history); ``remove`` makes the pruning permanent.

>>> import ember
>>> from ember.nn.utils import prune
>>> layer = ember.nn.Linear(4, 1)
>>> with ember.no_grad():
...     _ = layer.weight.copy_(ember.tensor([[0.1, -2.0, 0.3, 4.0]]))
>>> _ = prune.l1_unstructured(layer, "weight", amount=2)
>>> layer.weight
tensor([[ 0., -2.,  0.,  4.]], grad_fn=<MulBackward0>)
>>> sorted(name for name, _ in layer.named_buffers())
['weight_mask']
>>> _ = prune.remove(layer, "weight")
>>> sorted(name for name, _ in layer.named_parameters())
['bias', 'weight']
"""
from __future__ import annotations

import numbers
from collections.abc import Iterable

import ember
from ember._tensor import Tensor
from ember.nn.modules.module import Module
from ember.nn.utils.convert_parameters import parameters_to_vector

__all__ = [
    "BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured", "PruningContainer",
    "RandomStructured", "RandomUnstructured", "custom_from_mask", "global_unstructured", "identity", "is_pruned",
    "l1_unstructured", "ln_structured", "random_structured", "random_unstructured", "remove",
]


# ----------------------------------------------------------------- amounts


def _check_amount(amount) -> None:
    """An amount is a count (a non-negative int) or a fraction (a float in [0, 1])."""
    if isinstance(amount, bool) or not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if isinstance(amount, numbers.Integral):
        if amount < 0:
            raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")
    elif not 0.0 <= float(amount) <= 1.0:
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _count_to_prune(amount, size: int) -> int:
    """How many of ``size`` entries (or channels) ``amount`` prunes; a fraction is rounded to the nearest."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={size}")
        return int(amount)
    return round(amount * size)


def _structured_dim(t: Tensor, dim: int) -> int:
    if t.dim() <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                         f"shape {t.shape} with {t.dim()} dims")
    if dim >= t.dim() or dim < -t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
    return dim % t.dim()


def _unstructured_mask(t: Tensor, amount, default_mask: Tensor, pick) -> Tensor:
    """``default_mask`` with the entries ``pick(count)`` names (as flat indices) set to zero."""
    count = _count_to_prune(amount, t.numel())
    flat = default_mask.reshape(-1).clone()
    if count:
        flat[pick(count)] = 0
    return flat.view_as(default_mask)


def _structured_mask(t: Tensor, dim: int, amount, default_mask: Tensor, channel_scores) -> Tensor:
    """The mask that keeps the channels along ``dim`` of highest ``channel_scores(dim)``, pruning ``amount``."""
    dim = _structured_dim(t, dim)
    channels = t.shape[dim]
    count = _count_to_prune(amount, channels)
    if count == 0:
        return default_mask
    kept = ember.topk(channel_scores(dim), k=channels - count, largest=True).indices
    return _channels_kept(t, dim, kept, default_mask)


def _channels_kept(t: Tensor, dim: int, kept: Tensor, default_mask: Tensor) -> Tensor:
    """A mask of ones on the channels ``kept`` along ``dim`` (and where ``default_mask`` keeps), zeros elsewhere."""
    mask = ember.zeros_like(t)
    key = [slice(None)] * t.dim()
    key[dim] = kept
    mask[tuple(key)] = 1
    return mask * default_mask.to(dtype=mask.dtype)


# ----------------------------------------------------------------- methods


class BasePruningMethod:
    """A way to choose a mask. Subclasses define ``compute_mask(t, default_mask)`` and ``PRUNING_TYPE``
    ("unstructured", "structured" with a ``dim``, or "global"). An instance is also the forward pre-hook that
    applies the mask to the module it prunes."""

    PRUNING_TYPE = "unstructured"
    _tensor_name: str | None = None

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must define compute_mask(t, default_mask)")

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    def apply_mask(self, module: Module) -> Tensor:
        """The pruned tensor: ``<name>_orig * <name>_mask``."""
        if self._tensor_name is None:
            raise RuntimeError(f"Module {module} has to be pruned before its mask can be applied")
        original = getattr(module, self._tensor_name + "_orig")
        return getattr(module, self._tensor_name + "_mask").to(dtype=original.dtype) * original

    def prune(self, t: Tensor, default_mask: Tensor | None = None, importance_scores: Tensor | None = None) -> Tensor:
        """``t`` with this method's mask applied (the mask chosen on ``importance_scores``, by default ``t``)."""
        scores = t if importance_scores is None else importance_scores
        if scores.shape != t.shape:
            raise ValueError("importance_scores should have the same shape as the tensor to prune")
        mask = ember.ones_like(t) if default_mask is None else default_mask
        return t * self.compute_mask(scores, default_mask=mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` becomes a parameter holding the pruned values."""
        if self._tensor_name is None:
            raise RuntimeError(f"Module {module} has to be pruned before pruning can be removed")
        pruned = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        original = module._parameters.pop(self._tensor_name + "_orig")
        original.data = pruned.data
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, original)

    @classmethod
    def apply(cls, module: Module, name: str, *args, importance_scores: Tensor | None = None, **kwargs):
        """Prune ``module.<name>`` with a new ``cls(*args, **kwargs)``, after any pruning it already had."""
        return _prune(module, name, cls(*args, **kwargs), importance_scores)


class PruningContainer(BasePruningMethod):
    """The pruning methods applied to one parameter in turn; each new one prunes among what the others kept."""

    def __init__(self, *methods: BasePruningMethod) -> None:
        self._pruning_methods: tuple = ()
        if len(methods) == 1 and isinstance(methods[0], Iterable):
            methods = tuple(methods[0])
        for method in methods:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is None:
            return
        if self._tensor_name is None:
            self._tensor_name = method._tensor_name
        elif method._tensor_name != self._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' to "
                             f"PruningContainer. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, index: int) -> BasePruningMethod:
        return self._pruning_methods[index]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask, chosen among the entries (or channels) ``default_mask`` still keeps."""
        method = self._pruning_methods[-1]
        mask = default_mask.to(dtype=t.dtype)
        if method.PRUNING_TYPE == "unstructured":
            kept = mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have the attribute `dim` "
                                     "defined.")
            dim = method.dim % t.dim()
            others = [d for d in range(t.dim()) if d != dim]
            key = [slice(None)] * t.dim()
            key[dim] = mask.sum(dim=others) != 0 if others else mask != 0
            kept = tuple(key)
        else:
            kept = (slice(None),) * t.dim()
        combined = mask.clone()
        combined[kept] = method.compute_mask(t[kept], default_mask=mask[kept]).to(dtype=mask.dtype)
        return combined


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones."""

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` entries chosen at random."""

    def __init__(self, amount) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _unstructured_mask(t, self.amount, default_mask, lambda count: ember.topk(
            ember.rand_like(t).reshape(-1), k=count).indices)

    @classmethod
    def apply(cls, module: Module, name: str, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` entries of smallest magnitude."""

    def __init__(self, amount) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _unstructured_mask(t, self.amount, default_mask, lambda count: ember.topk(
            t.abs().reshape(-1), k=count, largest=False).indices)

    @classmethod
    def apply(cls, module: Module, name: str, amount, importance_scores: Tensor | None = None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _structured_mask(t, self.dim, self.amount, default_mask, lambda dim: ember.rand(t.shape[dim]))

    @classmethod
    def apply(cls, module: Module, name: str, amount, dim: int = -1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` of smallest ``n``-norm (over the other dims)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        def norms(dim: int) -> Tensor:
            return ember.norm(t, p=self.n, dim=[d for d in range(t.dim()) if d != dim])

        return _structured_mask(t, self.dim, self.amount, default_mask, norms)

    @classmethod
    def apply(cls, module: Module, name: str, amount, n, dim: int, importance_scores: Tensor | None = None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given ``mask`` is zero."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise ValueError(f"CustomFromMask: the mask has shape {list(self.mask.shape)} but the tensor to prune has "
                             f"shape {list(default_mask.shape)}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor):
        return super().apply(module, name, mask=mask)


# ----------------------------------------------------------------- pruning a module


def _pruning_hooks(module: Module, name: str) -> list:
    return [(key, hook) for key, hook in module._forward_pre_hooks.items()
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]


def _unhook(module: Module, key) -> None:
    del module._forward_pre_hooks[key]
    module._hooks_on_call.pop(key, None)


def _with_history(module: Module, name: str, method: BasePruningMethod) -> BasePruningMethod:
    """``method``, or a container of the pruning ``module.<name>`` had and then ``method``; the old hook goes."""
    method._tensor_name = name
    found = _pruning_hooks(module, name)
    if not found:
        return method
    key, earlier = found[0]
    _unhook(module, key)
    if isinstance(earlier, PruningContainer):
        earlier.add_pruning_method(method)
        return earlier
    return PruningContainer(earlier, method)


def _prune(module: Module, name: str, method: BasePruningMethod, importance_scores: Tensor | None):
    if not hasattr(module, name):
        raise AttributeError(f"Parameter '{name}' of module {module} does not exist: nothing to prune")
    method = _with_history(module, name, method)
    original = getattr(module, name)
    scores = original if importance_scores is None else importance_scores
    if scores.shape != original.shape:
        raise ValueError(f"importance_scores should have the same shape as parameter {name} of {module}: "
                         f"{list(scores.shape)} against {list(original.shape)}")
    first = not isinstance(method, PruningContainer)
    if first:
        module.register_parameter(name + "_orig", original)
        del module._parameters[name]
        default_mask = ember.ones_like(original)
    else:
        default_mask = getattr(module, name + "_mask").detach().clone()
    try:
        with ember.no_grad():
            mask = method.compute_mask(scores, default_mask=default_mask)
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
    except Exception:
        if first:  # the module is left as it was
            module.register_parameter(name, module._parameters.pop(name + "_orig"))
        raise
    return method


def identity(module: Module, name: str) -> Module:
    """Prune nothing of ``module.<name>``, but reparametrize it as a pruned parameter (``_orig`` and ``_mask``)."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount) -> Module:
    """Prune ``amount`` (a count, or a fraction) of ``module.<name>``'s entries, chosen at random."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount, importance_scores: Tensor | None = None) -> Module:
    """Prune the ``amount`` entries of ``module.<name>`` with the smallest magnitude (of ``importance_scores``)."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount, dim: int) -> Module:
    """Prune ``amount`` channels of ``module.<name>`` along ``dim``, chosen at random."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount, n, dim: int,
                  importance_scores: Tensor | None = None) -> Module:
    """Prune the ``amount`` channels of ``module.<name>`` along ``dim`` with the smallest ``n``-norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.<name>`` where ``mask`` is zero."""
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method: type, importance_scores: dict | None = None, **kwargs) -> None:
    """Prune the ``(module, name)`` pairs of ``parameters`` together: ``pruning_method`` (an unstructured
    method, such as ``L1Unstructured``, with ``kwargs``) chooses among all their entries at once."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = {} if importance_scores is None else importance_scores
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n)) for m, n in parameters])
    masks = parameters_to_vector([getattr(m, n + "_mask", ember.ones_like(getattr(m, n))) for m, n in parameters])
    method._tensor_name = "temp"
    with ember.no_grad():
        everything = PruningContainer(method).compute_mask(scores.detach(), masks)
    start = 0
    for module, name in parameters:
        size = getattr(module, name).numel()
        custom_from_mask(module, name, mask=everything[start:start + size].view_as(getattr(module, name)))
        start += size


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent: one parameter again, holding the pruned values."""
    found = _pruning_hooks(module, name)
    if not found:
        raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")
    key, method = found[0]
    method.remove(module)
    _unhook(module, key)
    return module


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or any module in it has a pruned parameter."""
    return any(isinstance(hook, BasePruningMethod)
               for sub in module.modules() for hook in sub._forward_pre_hooks.values())
