"""A user's ``autograd.Function`` under ``vmap``: its ``vmap`` staticmethod, or the rule ``generate_vmap_rule`` makes.

As in torch, such a Function must use ``setup_context``. With ``generate_vmap_rule = True`` its
``forward``, ``setup_context`` and ``backward`` run as they are on batched tensors (their ops have
batching rules); with a ``vmap`` staticmethod, that method gets each input with its batch dim
(``in_dims``) and returns the outputs with theirs (``out_dims``).
"""
from __future__ import annotations

import weakref
from typing import NamedTuple

from ember._tensor import Tensor
from ember.autograd import function as _function
from ember.autograd.forward_ad import _declared_jvp
from ember.autograd.function import SETUP_CONTEXT_NEEDED, Function
from ember.func import _batched, _tree
from ember.func._batched import BatchedTensor, UserCode, batched, levels_in, physical, size_of



class VmapInfo(NamedTuple):
    """What a Function's ``vmap`` staticmethod learns of the vmap: its batch size and randomness."""

    batch_size: int
    randomness: str


BUILTIN_RULES: dict = {}  # ember's own Functions that backward formulas call -> their batching rules


def apply_batched(cls, args: tuple, kwargs: dict):
    """``cls.apply(*args, **kwargs)`` with batched inputs; NotImplemented when none is batched (or, for one of
    ember's own Functions, when it has no rule: its public op's rule has run already)."""
    if not cls._user:
        rule = BUILTIN_RULES.get(cls)
        return NotImplemented if rule is None else rule(cls, args, kwargs)
    levels = tuple(sorted(levels_in(kwargs.values(), levels_in(args, set()))))
    if not levels:
        return NotImplemented
    if not cls._new_style:
        raise RuntimeError(SETUP_CONTEXT_NEEDED)
    # as torch: the vmap staticmethod and the generated rule see every argument, defaults filled in
    args, kwargs = _function._bind(cls.forward, args, kwargs), {}
    has_rule = cls.vmap is not Function.vmap
    if cls.generate_vmap_rule and has_rule:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True and an overridden vmap "
            "staticmethod. Please set generate_vmap_rule=False or delete the overridden vmap staticmethod to avoid "
            "ambiguity. For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"
        )
    if cls.generate_vmap_rule:
        return _generated(cls, args, levels)
    if has_rule:
        return _by_user_rule(cls, args, levels)
    error = RuntimeError(
        f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please override and implement "
        "the vmap staticmethod or set generate_vmap_rule=True. For more details, please see "
        "https://pytorch.org/docs/main/notes/extending.func.html"
    )
    error.missing_vmap_rule = True  # (jacrev then maps only the backward, as torch's)
    raise error


# ---- the user's vmap staticmethod, one level at a time (innermost first)

def _by_user_rule(cls, args: tuple, levels: tuple):
    level = levels[-1]
    peeled, in_dims = [], []
    for a in args:
        if type(a) is BatchedTensor and level in a._levels:
            rest = tuple(lv for lv in a._levels if lv != level)
            peeled.append(batched(a._value.movedim(a._levels.index(level), len(rest)), rest))
            in_dims.append(0)
        else:
            peeled.append(a)
            in_dims.append(None)
    randomness = next(lv.randomness for lv in _batched.active if lv.number == level)
    result = cls.vmap(VmapInfo(size_of(level), randomness), tuple(in_dims), *peeled)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(f"{cls.__name__}.vmap: expected the vmap staticmethod to return a tuple of two "
                           "elements (outputs, out_dims)")
    outputs, out_dims = result
    flat, spec = _tree.flatten(outputs)
    try:
        dims = _tree.broadcast(out_dims, outputs, "out_dims") if isinstance(out_dims, (tuple, list)) \
            else [out_dims] * len(flat)
    except ValueError as error:  # the user's rule is at fault, not the vmap call: torch raises RuntimeError
        raise RuntimeError(f"{cls.__name__}.vmap returned an incompatible (output, out_dims) tuple: {error}") from None
    return _tree.unflatten([_rebatched(o, d, level) for o, d in zip(flat, dims)], spec)


def _rebatched(value, d, level: int):
    """An output of the user's rule, its dim ``d`` made the batch dim of ``level``."""
    if d is None or not isinstance(value, Tensor):
        return value
    own = value._levels if type(value) is BatchedTensor else ()
    p = physical(value, own)
    position = sum(lv < level for lv in own)
    return batched(p.movedim(len(own) + d % max(p.dim() - len(own), 1), position),
                   tuple(sorted(own + (level,))))


# ---- generate_vmap_rule: the Function's own formulas run on batched tensors

class _Call:
    """One batched call of a user's Function (an object, not a tuple, so that its contents are not searched)."""

    def __init__(self, cls, args: tuple, positions: list, levels: tuple):
        self.cls, self.args, self.positions, self.levels = cls, args, positions, levels
        self.active = [lv for lv in _batched.active if lv.number in levels]  # for a backward run after vmap returns
        self.arg_levels = [args[i]._levels if type(args[i]) is BatchedTensor else () for i in positions]
        self.arg_shapes = [physical(args[i], own).shape for i, own in zip(positions, self.arg_levels)]
        self.ctx = None
        self.structure = None


class GeneratedRule(Function):
    """Records the user's Function on the physical values: its backward runs the user's on batched gradients."""

    _acts_as_user = True  # the user's formulas meet batched tensors: the protocol must stay on in backward

    @staticmethod
    def forward(ctx, call: _Call, *values):
        args = list(call.args)
        for i, v, lv in zip(call.positions, values, call.arg_levels):
            args[i] = batched(v, lv)
        needs = dict(zip(call.positions, ctx.needs_input_grad[1:]))
        user_ctx = call.cls._backward_cls()
        user_ctx.needs_input_grad = tuple(needs.get(i, False) for i in range(len(args)))
        out = call.cls.forward(*args)
        call.cls.setup_context(user_ctx, tuple(args), out)
        call.ctx = ctx.call = user_ctx, call
        flat, call.structure = _tree.flatten(out)
        return tuple(physical(o, call.levels, expand=True) if isinstance(o, Tensor) else o for o in flat)

    @staticmethod
    def backward(ctx, *grads):
        user_ctx, call = ctx.call
        seen = [batched(g, call.levels) if g is not None else None for g in grads]
        with _Reentered(call.active):
            with UserCode():
                out = call.cls._backward_impl(user_ctx, *seen)
            out = out if isinstance(out, tuple) else (out,)
            result = [None]
            for i, own, shape in zip(call.positions, call.arg_levels, call.arg_shapes):
                g = out[i] if i < len(out) else None
                result.append(None if g is None else _summed_to(g, call.levels, own, shape))
        return tuple(result)

    @staticmethod
    def jvp(ctx, call_tangent, *tangents):
        # Forward mode over vmap (jacfwd, jvp inside vmap): the user's jvp runs on batched tangents.
        user_ctx, call = ctx.call
        seen = [None] * len(call.args)
        for i, t, lv in zip(call.positions, tangents, call.arg_levels):
            seen[i] = None if t is None else batched(t, lv)
        flat = ctx.result if isinstance(ctx.result, tuple) else (ctx.result,)
        output = _tree.unflatten([batched(o, call.levels) if isinstance(o, Tensor) else o for o in flat],
                                 call.structure)
        with UserCode():
            out = _declared_jvp(call.cls, user_ctx, call.args, output, seen)
        return tuple(physical(t, call.levels, expand=True) if isinstance(t, Tensor) else t for t in out)


class _Reentered:
    """The vmap levels of a call active again while its backward runs (a gradient taken after vmap returned)."""

    def __init__(self, levels: list):
        self.missing = [lv for lv in levels if lv not in _batched.active]

    def __enter__(self):
        _batched.active.extend(self.missing)
        _batched.active.sort(key=lambda lv: lv.number)

    def __exit__(self, *exc):
        for lv in self.missing:
            _batched.active.remove(lv)
        return False


def _summed_to(g, levels: tuple, own: tuple, shape: tuple) -> Tensor:
    """A gradient batched at ``levels``, summed over the levels its input is not batched at, and (a gradient of a
    broadcast input, which the engine sums unbatched) over the dims its input's physical ``shape`` lacks."""
    p = physical(g, levels, expand=True)
    extra = tuple(i for i, lv in enumerate(levels) if lv not in own)
    p = p.sum(extra) if extra else p
    if p.shape == shape:
        return p
    n = len(own)  # the batch dims lead; the logical dims, right-aligned as broadcasting aligns them, follow
    leading = p.dim() - len(shape)
    if leading > 0:
        p = p.sum(tuple(range(n, n + leading)))
    ones = tuple(d for d in range(n, p.dim()) if shape[d] == 1 and p.shape[d] != 1)
    return p.sum(ones, keepdim=True) if ones else p


_RULE_OF = weakref.WeakKeyDictionary()  # a user's Function -> its GeneratedRule, whose node is named as torch's


def _rule_of(cls) -> type:
    rule = _RULE_OF.get(cls)
    if rule is None:
        name = f"Vmapped{cls.__name__}"
        rule = _RULE_OF[cls] = type(name, (GeneratedRule,), {"backward_name": f"{name}Backward"})
    return rule


def _generated(cls, args: tuple, levels: tuple):
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    call = _Call(cls, args, positions, levels)
    values = [physical(args[i], call.arg_levels[k]) for k, i in enumerate(positions)]
    flat = _rule_of(cls).apply(call, *values)
    flat = flat if isinstance(flat, tuple) else (flat,)
    return _tree.unflatten([batched(o, levels) if isinstance(o, Tensor) else o for o in flat], call.structure)


_function._batched_apply.append(apply_batched)
