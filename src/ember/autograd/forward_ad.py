"""Forward-mode automatic differentiation: dual tensors carry a tangent through every op.

Inside a dual level, ``make_dual(x, v)`` pairs ``x`` with a tangent ``v``; every op
then computes its result and, from its forward formula (its ``jvp``), the result's
tangent, the directional derivative of the result along ``v``:

>>> import ember
>>> import ember.autograd.forward_ad as fwAD
>>> x = ember.tensor([0.0, 1.0], dtype=ember.float64)
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, ember.ones(2, dtype=ember.float64)).exp() * 2
...     fwAD.unpack_dual(y).tangent
tensor([2.0000, 5.4366], dtype=ember.float64)

How an op gets its tangent (see docs/forward_ad.md): a Function's ``jvp``
staticmethod when it has one; for a built-in op without one, the transpose of its
``backward`` (which is linear in its gradient: differentiating ``backward(u) . v``
with respect to ``u`` gives ``J v``); a user's Function without ``jvp`` raises, as in
torch. A view's tangent is the same view of its input's tangent, and an in-place
op writes its tangent into the tensor's tangent, so views and in-place changes of
dual tensors behave as torch's. With no dual level active, ``Function.apply`` checks one
attribute and nothing else happens.
"""
from __future__ import annotations

import functools
import itertools
import weakref
from typing import NamedTuple

import numpy as np

from ember import _dtype

from ember._tensor import Tensor
from ember.autograd._forward_state import state
from ember.autograd.function import (
    Function, _NOTHING_NEEDED, _bind, _bind_after_ctx, _connect, _contains, _needs_of, _saved_and_returned,
    _transforms_running, _unrecorded, refuse_ctx_style_under_transforms,
)
from ember.autograd.grad_mode import state as _grad

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]

_keys = itertools.count(1)  # each level gets a fresh private key, so a tangent of a closed level is never seen again
_duals: list = []  # weak references to the tensors given a tangent in the current level, cleared on exit
_NO_JVP = "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal (a view without tangent) and the tangent (or None)."""

    primal: Tensor
    tangent: Tensor | None


def enter_dual_level() -> int:
    """Open a dual level (only one may be open, as in torch) and return its number.

    >>> level = enter_dual_level(); exit_dual_level(level=level)
    """
    if state.key is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    state.key = next(_keys)
    state.apply = apply_dual
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the dual level: every tangent made in it is dropped.

    >>> enter_dual_level()
    0
    >>> exit_dual_level()
    """
    if state.key is None:
        raise RuntimeError("Dual level must be a positive number. exit_dual_level: no dual level is open (open one "
                           "with dual_level() or enter_dual_level())")
    if level not in (None, 0):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           f"not supported. (level {level}; the open level is 0)")
    state.key = None
    for ref in _duals:
        t = ref()
        if t is not None:
            t._fw = None
    _duals.clear()


class dual_level:
    """Context manager of a dual level: ``with dual_level(): ...`` (it gives the level's number).

    >>> with dual_level() as level:
    ...     level
    0
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()

    def __call__(self, function):
        """As a decorator: ``function`` runs inside a dual level of its own."""

        @functools.wraps(function)
        def in_level(*args, **kwargs):
            with dual_level():
                return function(*args, **kwargs)

        return in_level


def _check_level(level, op: str) -> object:
    if state.key is None:
        if op == "_make_dual":
            raise RuntimeError(
                "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() "
                "first."
            )
        return None
    if level not in (None, 0):
        raise RuntimeError(f"Invalid level given to {op}")
    return state.key


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` whose tangent is ``tangent`` (kept as it is when it has the same layout).

    >>> with dual_level():
    ...     make_dual(ember.tensor([1.]), ember.tensor([3.]))
    tensor([1.], tangent=tensor([3.]))
    """
    key = _check_level(level, "_make_dual")
    for name, t in (("primal", tensor), ("tangent", tangent)):
        if not isinstance(t, Tensor):
            raise TypeError(f"make_dual: expected {name} to be a Tensor, got {type(t).__name__}")
        if _dtype.kind(t._data.dtype) not in "fc":
            raise ValueError(f"Expected {name} to be floating point or complex, but got: {t.dtype}")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(_different_size(tensor, tangent))
    state.key = None
    try:
        dual = tensor.view_as(tensor)
        if tangent._data.dtype != tensor._data.dtype or tangent._data.strides != tensor._data.strides:
            tangent = tensor.detach().clone().copy_(tangent)  # the primal's layout, so views replay alike on both
    finally:
        state.key = key
    set_tangent(dual, tangent)
    return dual


def _different_size(tensor: Tensor, tangent: Tensor) -> str:
    return ("Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
            f"not supported. Tensor is of size {list(tensor._data.shape)} while the given forward gradient is of "
            f"size {list(tangent._data.shape)}.")


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual tensor; ``(tensor, None)`` for any other.

    >>> with dual_level():
    ...     unpack_dual(make_dual(ember.tensor([1.]), ember.tensor([3.]))).tangent
    tensor([3.])
    """
    key = _check_level(level, "_unpack_dual")
    tangent = tangent_of(tensor) if key is not None and isinstance(tensor, Tensor) else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    state.key = None
    try:
        primal = tensor.view_as(tensor)
    finally:
        state.key = key
    return UnpackedDualTensor(primal, tangent)


def tangent_of(t) -> Tensor | None:
    """The tangent of ``t`` in the open dual level, or None.

    A view without a tangent of its own whose base has one (the base got it after the view was made) gets
    the same view of the base's tangent, as in torch.
    """
    fw = getattr(t, "_fw", None)
    key = state.key
    if fw is not None and fw[0] is key:
        return fw[1]
    base = getattr(t, "_base", None)
    if key is None or base is None or base._fw is None or base._fw[0] is not key:
        return None
    from ember._ops.views import replay

    state.key = None
    try:
        tangent = replay(base._fw[1], t._view_replay)
    except (RuntimeError, ValueError, IndexError):
        return None
    finally:
        state.key = key
    if tangent._data.shape != t._data.shape:
        return None
    set_tangent(t, tangent)
    return tangent


def set_tangent(t: Tensor, tangent: Tensor) -> None:
    t._fw = (state.key, tangent)
    _duals.append(weakref.ref(t))
    if len(_duals) % 4096 == 0:  # a long level: forget the tensors that are gone, so the list stays short
        _duals[:] = [ref for ref in _duals if ref() is not None]


# ----------------------------------------------------------------- Function.apply in a dual level


def apply_dual(cls, args: tuple, kwargs: dict):
    """``cls.apply(*args, **kwargs)`` while a dual level is open: the outputs get their tangents too."""
    key = state.key
    state.key = None  # the op's own forward and jvp see plain tensors; the result's tangent is set at the end
    try:
        args, kwargs = _bound(cls, args, kwargs)
        state.key = key
        tangents = [tangent_of(a) if isinstance(a, Tensor) else None for a in args]
        state.key = None
        if tangents.count(None) == len(tangents):
            return cls.apply(*args, **kwargs)
        declared = cls.jvp is not Function.jvp
        if cls._user and _transforms_running[0]:  # (ember.func.jvp, jacfwd ...)
            refuse_ctx_style_under_transforms(cls)
        if cls._user and not declared:
            if cls._tangents_dropped_without_jvp:  # as torch: a custom op's outputs then carry no tangent
                return cls.apply(*args, **kwargs)
            raise NotImplementedError(_NO_JVP)
        ctx, output = _run(cls, args, kwargs, None if cls._user else tangents)
        outputs = output if type(output) is tuple else (output,)
        try:
            if declared:
                versions = [t._version if t is not None else None for t in tangents]
                out_tangents = _declared_jvp(cls, ctx, args, output, tangents)
                if len(out_tangents) != len(outputs):
                    raise RuntimeError(
                        f"{cls.__name__}.jvp returned {len(out_tangents)} tangents, but forward returned "
                        f"{len(outputs)} outputs: return one tangent (or None) per output"
                    )
                if cls._user:
                    _check_user_jvp(cls, args, outputs, out_tangents, tangents, versions)
                    _check_non_differentiable_tangents(cls, ctx, out_tangents)
            else:
                out_tangents = _view_tangents(args, outputs, tangents) or _transposed_jvp(
                    cls, ctx, args, outputs, tangents)
        finally:
            ctx.needs_input_grad = ctx._real_needs
    finally:
        state.key = key
    _attach(ctx, args, outputs, out_tangents, tangents)
    return output


def _check_user_jvp(cls, args: tuple, outputs: tuple, out_tangents: tuple, in_tangents: list,
                    versions: list) -> None:
    """Refuse the tangents that torch refuses for outputs that alias inputs.

    An input that forward changed in place (``ctx.mark_dirty``) is returned itself: its jvp must change the
    input's tangent in place and return that very tensor. An output that is a view of an input with a
    tangent (an input returned as it is counts) must get a view of that input's tangent.
    """
    for out, tangent in zip(outputs, out_tangents):
        if not isinstance(out, Tensor) or not _is_floating(out):
            continue
        position = next((i for i, a in enumerate(args) if a is out), None)
        if position is not None:  # only a dirty input is returned itself; others come back as views
            _check_dirty_tangent(cls, in_tangents[position], versions[position], tangent)
        elif out._base is not None and tangent is not None:
            _check_view_tangent(cls, out, args, in_tangents, tangent)


def _check_non_differentiable_tangents(cls, ctx, out_tangents: tuple) -> None:
    for position in getattr(ctx, "_nd_positions", ()):
        if out_tangents[position] is not None:
            raise RuntimeError(
                f"{cls.__name__}.jvp returned a gradient at position {position}, but the corresponding forward "
                "output is not a differentiable Tensor (ctx.mark_non_differentiable). You should return None at "
                "that position instead."
            )


def _check_dirty_tangent(cls, given: Tensor | None, version: int | None, returned) -> None:
    if given is None:
        return
    if given._version == version:
        raise RuntimeError(
            f"{cls.__name__}.jvp: an inplace custom Function is not modifying the forward mode gradients "
            "inplace. Its forward modifies an input inplace (ctx.mark_dirty), so its jvp must modify the "
            "corresponding gradient inplace too (e.g. grad.mul_(2)) and return it."
        )
    if returned is not given:
        raise RuntimeError(
            f"{cls.__name__}.jvp: an inplace custom Function is not returning the forward mode gradients "
            f"as-is (got a {'view of it' if isinstance(returned, Tensor) else type(returned).__name__}). "
            "Its forward modifies an input inplace, so its jvp must modify that gradient inplace and return "
            "the gradient object itself."
        )


def _check_view_tangent(cls, out: Tensor, args: tuple, in_tangents: list, tangent) -> None:
    for a, given in zip(args, in_tangents):
        if given is None or not isinstance(a, Tensor) or (a._base if a._base is not None else a) is not out._base:
            continue
        if not isinstance(tangent, Tensor) or tangent._base is None:
            raise RuntimeError(
                f"{cls.__name__}.jvp: a custom Function's forward is returning a view (or an input as-is) but "
                "the jvp is not returning a view: return the same view of the input's tangent (e.g. grad[1:], "
                "or grad.view_as(grad) for an input returned as it is)."
            )
        if tangent._base is not (given._base if given._base is not None else given):
            raise RuntimeError(
                f"{cls.__name__}.jvp: a custom Function is returning a view but the jvp is not returning a view "
                "of the given grad input: the tangent of a view of an input must be the same view of that "
                "input's tangent."
            )
        return


def _bound(cls, args: tuple, kwargs: dict) -> tuple:
    """The arguments as ``Function.apply`` binds them: keywords become positions (so tangents line up)."""
    if cls._new_style:
        if kwargs or len(args) < cls._n_params:
            return tuple(_bind(cls.forward, args, kwargs)), {}
        return args, kwargs
    if kwargs:
        args, kwargs = _bind_after_ctx(cls.forward, args, kwargs)
    return tuple(args), kwargs


def _run(cls, args: tuple, kwargs: dict, tangents):
    """``Function.apply``'s recording, keeping the ``ctx`` for the jvp.

    For a built-in op (``tangents`` given), inputs with a tangent count as needing a gradient in ``forward``,
    so it saves what ``backward`` (which a jvp may use) reads for them; the real flags are put back afterwards.
    """
    ctx = cls._backward_cls()
    recording = _grad.enabled
    needs = _needs_of(args) if recording or cls._user else _NOTHING_NEEDED[len(args)]
    ctx.needs_input_grad = needs if tangents is None else tuple(
        [n or t is not None for n, t in zip(needs, tangents)])
    _grad.enabled = False
    try:
        if cls._new_style:
            output = cls.forward(*args)
            cls.setup_context(ctx, args, output)
        else:
            output = cls.forward(ctx, *args, **kwargs)
    finally:
        _grad.enabled = recording
    if cls._new_style and ctx._to_save:
        ctx._saved_returned = _saved_and_returned(ctx, args, output)
    if ctx._non_differentiable:  # (cleared once the outputs are made): the jvp may give these no tangent
        ctx._nd_positions = [i for i, out in enumerate(output if type(output) is tuple else (output,))
                             if _contains(ctx._non_differentiable, out)]
    if recording and True in needs:
        output = _connect(ctx, args, needs, output)
    elif cls._user:
        output = _unrecorded(ctx, args, output)
    ctx._real_needs = needs
    return ctx, output


def _declared_jvp(cls, ctx, args: tuple, output, tangents: list) -> tuple:
    """The Function's own ``jvp``: a user's gets zeros for tensor inputs without tangent (as torch's), a
    built-in None; ``ctx.saved_tensors`` gives what ``save_for_forward`` kept."""
    ctx.primals, ctx.result = args, output
    if not cls._user:  # a built-in's jvp reads ctx.primals and ctx.result, or the saved tensors of its backward
        try:
            result = cls.jvp(ctx, *tangents)
        finally:
            del ctx.primals, ctx.result
        return result if type(result) is tuple else (result,)
    if ctx.materialize_grads:  # as torch: with set_materialize_grads(False) a missing tangent stays None
        tangents = [_zeros_like(a) if t is None and _is_floating(a) else t for a, t in zip(args, tangents)]
    kept = ctx._saved, ctx._to_save
    ctx._saved, ctx._to_save = None, getattr(ctx, "_saved_for_forward", None)
    try:
        result = cls.jvp(ctx, *tangents)
    finally:
        ctx._saved, ctx._to_save = kept
        del ctx.primals, ctx.result
    return result if type(result) is tuple else (result,)


def _transposed_jvp(cls, ctx, args: tuple, outputs: tuple, tangents: list) -> list:
    """``J v`` from ``backward``, which computes ``u -> J^T u``: the gradient of ``backward(u) . v`` in ``u``.

    ``backward`` is written in ember ops, so it records its own graph in ``u``; one reverse pass over
    that graph, seeded with the tangents, gives every output's tangent at once.
    """
    from ember.autograd import grad

    recording = _grad.enabled
    cotangents, seeds = [], []
    for out in outputs:
        zero = _zeros_like(out) if isinstance(out, Tensor) else None
        if zero is not None and _is_floating(out):
            zero._requires_grad = True
            seeds.append(zero)
        cotangents.append(zero)
    _grad.enabled = True
    try:
        grads = cls._backward_impl(ctx, *cotangents)
    finally:
        _grad.enabled = recording
    grads = grads if type(grads) is tuple else (grads,)
    pairs = [(g, _along(v, g)) for g, v in zip(grads, tangents)
             if v is not None and isinstance(g, Tensor) and g._requires_grad]
    found = [None] * len(seeds)
    if pairs and seeds:
        _grad.enabled = True
        try:
            found = grad([g for g, _ in pairs], seeds, [v for _, v in pairs], retain_graph=True,
                         create_graph=recording, allow_unused=True)
        finally:
            _grad.enabled = recording
    found = iter(found)
    result = []
    for out, cotangent in zip(outputs, cotangents):
        if cotangent is not None and cotangent._requires_grad:
            tangent = next(found)
            result.append(_zeros_like(out) if tangent is None else tangent)
        else:
            result.append(None)
    return result


def _along(tangent: Tensor, gradient: Tensor) -> Tensor:
    """``tangent`` as the seed for ``gradient``: of its dtype, and broadcast where ``backward`` left the
    gradient unsummed (the engine sums it down; the transpose of summing down is broadcasting)."""
    if tangent._data.dtype != gradient._data.dtype:
        tangent = tangent.to(gradient.dtype)
    if tangent._data.shape != gradient._data.shape:
        tangent = tangent.expand(gradient.shape)
    return tangent


def _attach(ctx, args: tuple, outputs: tuple, out_tangents, in_tangents: list) -> None:
    """Give each floating output its tangent; a view's is the same view of its input's tangent."""
    kept = []
    for out, tangent in zip(outputs, out_tangents):
        if not _is_floating(out):
            kept.append(None)
            continue
        viewed = _view_tangent(out, args, in_tangents)
        tangent = viewed if viewed is not None else _own(_fitted(tangent, out, ctx._builtin), in_tangents)
        if tangent is not None:
            own = out._fw
            existing = own[1] if own is not None and own[0] is state.key else None  # an input changed in place
            if existing is None:
                set_tangent(out, tangent)
            elif existing is not tangent:  # an input changed in place (mark_dirty): its tangent changes too
                _write_tangent(existing, tangent)
        kept.append(tangent)
    ctx._fw_out = (state.key, tuple(kept))  # saved outputs come back with these tangents (forward-over-reverse)


def _view_tangents(args: tuple, outputs: tuple, in_tangents: list) -> list | None:
    """The tangents of a view op's outputs: the same views of an input's tangent (None unless every floating
    output is such a view, so that the op's transposed backward need not run)."""
    found = []
    for out in outputs:
        viewed = _view_tangent(out, args, in_tangents) if _is_floating(out) else None
        if viewed is None and _is_floating(out):
            return None
        found.append(viewed)
    return found


def _root(array: np.ndarray) -> np.ndarray:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _own(tangent, in_tangents: list):
    """``tangent``, copied if it shares memory with an input's tangent (an identity's formula hands its
    tangent through): only a view's tangent may see another's memory."""
    if tangent is None:
        return None
    for t in in_tangents:
        if t is not None and _root(t._data) is _root(tangent._data) and np.may_share_memory(t._data, tangent._data):
            key, state.key = state.key, None
            try:
                return tangent.clone()
            finally:
                state.key = key
    return tangent


def _fitted(tangent, out: Tensor, builtin: bool):
    """``tangent`` in ``out``'s dtype and shape: a built-in's jvp may give one that broadcasts, a user's may not."""
    if tangent is None:
        return None
    if not isinstance(tangent, Tensor):  # (RuntimeError, as torch's)
        raise RuntimeError(f"expected Variable or None (got {type(tangent).__name__}): a jvp must return Tensors "
                           "(or None), one per output of forward")
    if not builtin and tangent._data.shape != out._data.shape:
        raise RuntimeError(_different_size(out, tangent))
    key, state.key = state.key, None
    try:
        if tangent._data.dtype != out._data.dtype:
            if tangent._data.dtype.kind == "c" and out._data.dtype.kind != "c":
                tangent = tangent.real  # a real output's tangent is the real part of a complex one
            tangent = tangent.to(out.dtype)
        if tangent._data.shape != out._data.shape:
            tangent = tangent.expand(out.shape).clone()
    finally:
        state.key = key
    return tangent


def _view_tangent(out: Tensor, args: tuple, in_tangents: list) -> Tensor | None:
    """If ``out`` is a view of an input that has a tangent, the same view of that tangent (else None)."""
    base = out._base
    if base is None:
        return None
    from ember._ops.views import replay

    steps = out._view_replay
    for a, tangent in zip(args, in_tangents):
        if tangent is None or (a._base if a._base is not None else a) is not base:
            continue
        prefix = a._view_replay
        if len(prefix) > len(steps) or any(s is not p for s, p in zip(steps, prefix)):
            continue
        key, state.key = state.key, None
        try:
            viewed = replay(tangent, steps[len(prefix):])
        except (RuntimeError, ValueError, IndexError):
            return None
        finally:
            state.key = key
        return viewed if viewed._data.shape == out._data.shape else None
    return None


def _write_tangent(target: Tensor, values: Tensor | None) -> None:
    key, state.key = state.key, None
    try:
        if values is None:
            target.zero_()
        else:
            target.copy_(values)
    finally:
        state.key = key


def after_inplace(self: Tensor, result: Tensor) -> None:
    """``self`` took ``result``'s values in place: its tangent takes ``result``'s (zeros if it has none).

    A view without a tangent whose change has one gives its base a zero tangent first, and takes the same view
    of it, so the base sees the change, as in torch.
    """
    new, existing = tangent_of(result), tangent_of(self)
    if new is None and existing is None:
        return
    if existing is None:
        existing = _tangent_for_view(self) if self._base is not None else None
        if existing is None:
            set_tangent(self, _fitted(new, self, builtin=True) if new is not result else new)
            return
    _write_tangent(existing, new)


def _tangent_for_view(view: Tensor) -> Tensor | None:
    from ember._ops.views import replay

    base = view._base
    base_tangent = tangent_of(base)
    key, state.key = state.key, None
    try:
        if base_tangent is None:
            base_tangent = _zeros_like(base)
            state.key = key
            set_tangent(base, base_tangent)
            state.key = None
        tangent = replay(base_tangent, view._view_replay)
    finally:
        state.key = key
    set_tangent(view, tangent)
    return tangent


def zero_tangent_at(self: Tensor, key) -> None:
    """``self[key] = number`` on a dual tensor: the tangent there becomes zero."""
    tangent = tangent_of(self)
    if tangent is not None:
        tangent._data[key] = 0
        tangent._bump()


def _zeros_like(t: Tensor) -> Tensor:
    return Tensor._wrap(np.zeros(t._data.shape, t._data.dtype))


def _is_floating(t) -> bool:
    return isinstance(t, Tensor) and _dtype.kind(t._data.dtype) in "fc"
