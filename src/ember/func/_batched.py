"""The batched tensor of ``vmap``: one plain tensor holding every sample, seen as one sample.

A ``BatchedTensor`` wraps a plain tensor, its *physical* value, whose leading
dims are the batch dims of the vmap levels it is batched at (outermost level
first); the dims after them are the *logical* tensor the user's function sees.
Every op it meets reaches ``BatchedTensor.__torch_function__``, which runs the
op's batching rule (``_rules.py``) on the physical values: one call for the
whole batch. Autograd records the physical ops, so gradients of batched
values are per sample.
"""
from __future__ import annotations

from ember._size import Size
from ember._tensor import Tensor, _fresh
from ember.autograd import function as _function
from ember.overrides import _modes



class Level:
    """One active ``vmap``: its number (outer levels have smaller ones), batch size and randomness."""

    __slots__ = ("number", "size", "randomness")

    def __init__(self, number: int, size: int, randomness: str):
        self.number, self.size, self.randomness = number, size, randomness


active: list = _function._vmap_levels  # the vmap levels now running, outermost first


def size_of(level: int) -> int:
    for lv in active:
        if lv.number == level:
            return lv.size
    raise RuntimeError(f"vmap: level {level} is not active: a batched tensor escaped the vmap that made it; "
                       "return it from the vmapped function instead of storing it")


class BatchedTensor(Tensor):
    """A tensor batched by ``vmap``: the function sees one sample, ops run on all of them at once."""

    __module__ = "ember.func"
    _value: Tensor
    _levels: tuple

    @property
    def _data(self):
        raise RuntimeError(
            "vmap: an operation read a batched tensor's data directly, which has no meaning for one sample; "
            "express it with ember ops (they have batching rules), or move it out of the vmapped function"
        )

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from ember.func._rules import run_rule

        return run_rule(func, args, kwargs or {})

    def __repr__(self) -> str:
        inner = repr(self._value).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={self._levels[-1]}, bdim=0, value=\n    {inner}\n)"

    def __hash__(self) -> int:
        return id(self)


def batched(value: Tensor, levels: tuple) -> Tensor:
    """``value`` (physical, batch dims first for ``levels``) as a BatchedTensor; plain when ``levels`` is empty."""
    if not levels:
        return value
    t = _fresh(BatchedTensor)
    t._value = value
    t._levels = levels
    return t


def logical_shape(x: Tensor) -> Size:
    if type(x) is BatchedTensor:
        return Size(x._value._data.shape[len(x._levels):])
    return Size(x._data.shape) if type(x) is Tensor else x.shape  # (a plain tensor's, without dispatch)


def levels_in(values, found: set) -> set:
    """Add to ``found`` the levels of the batched tensors in ``values`` (searching lists, tuples and dicts)."""
    for v in values:
        if type(v) is BatchedTensor:
            found.update(v._levels)
        elif type(v) in (list, tuple):
            levels_in(v, found)
    return found


def physical(x, levels: tuple, logical_ndim: int | None = None, expand: bool = False):
    """``x`` as a physical tensor with a batch dim for every level in ``levels`` (size 1 where ``x`` has none).

    ``logical_ndim`` pads the logical shape with leading 1s (so tensors broadcast sample against sample);
    ``expand`` gives the missing batch dims their full size (for ops that do not broadcast: cat, gather ...).
    Numbers and other values come back as they are.
    """
    if type(x) is BatchedTensor:
        value, own = x._value, x._levels
        logical = value._data.shape[len(own):]
        if own == levels and (logical_ndim is None or logical_ndim == len(logical)) and not expand:
            return value
        sizes = value._data.shape[:len(own)]
        batch = tuple(sizes[own.index(lv)] if lv in own else 1 for lv in levels)
    elif isinstance(x, Tensor):
        if logical_ndim is not None and not expand:
            return x  # unbatched: NumPy aligns it on the right, behind the batch dims, with no reshape
        value, logical, batch = x, x._data.shape, (1,) * len(levels)
    else:
        return x
    pad = (1,) * (logical_ndim - len(logical)) if logical_ndim is not None and logical_ndim > len(logical) else ()
    shape = batch + pad + tuple(logical)
    if shape != value._data.shape:
        value = value.reshape(shape)
    if expand:
        full = tuple(size_of(lv) for lv in levels)
        if full != batch:
            value = value.expand(full + pad + tuple(logical))
    return value


# ---- the randomness mode (``_vmap.py``) sees the user's calls, not the transforms' own

mode: list = []  # the randomness mode of the outermost running vmap, while it runs


class EmberCode:
    """While the transforms' own code runs, their calls skip the randomness mode (one dispatch less each)."""

    def __enter__(self):
        self.popped = bool(mode) and bool(_modes) and _modes[-1] is mode[0]
        if self.popped:
            _modes.pop()

    def __exit__(self, *exc):
        if self.popped:
            _modes.append(mode[0])
        return False


class UserCode:
    """While the user's function runs inside a transform, the randomness mode is on again."""

    def __enter__(self):
        self.pushed = bool(mode) and mode[0] not in _modes
        if self.pushed:
            _modes.append(mode[0])

    def __exit__(self, *exc):
        if self.pushed:
            _modes.remove(mode[0])
        return False
