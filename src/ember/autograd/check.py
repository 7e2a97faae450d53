"""One call that checks a custom op in every mode: ``check_function(fn, *sample_args)``.

``fn`` is a ``Function``'s ``apply`` or any function built on one. From the samples
it derives variants (float32 and float64, non-contiguous and 0-d inputs, inputs that
need no grad or only some) and runs every check; the report has one line per check:
pass, FAIL with a diagnosis, or n/a with the reason.

>>> import ember
>>> class Cube(ember.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         ctx.save_for_forward(x)
...         return x ** 3
...     @staticmethod
...     def backward(ctx, grad):
...         (x,) = ctx.saved_tensors
...         return 3 * x ** 2 * grad
...     @staticmethod
...     def jvp(ctx, tangent):
...         (x,) = ctx.saved_tensors
...         return 3 * x ** 2 * tangent
>>> report = ember.autograd.check_function(Cube.apply, ember.tensor([0.5, -1.0, 2.0]))
>>> report.passed
True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ember import _dtype

import ember
from ember._tensor import Tensor
from ember.autograd import forward_ad
from ember.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = ["check_function", "FunctionCheckReport", "FunctionCheckError", "CheckResult"]

PASS, FAIL, NA = "pass", "FAIL", "n/a"


class FunctionCheckError(RuntimeError):
    """Raised by ``check_function(..., raise_on_failure=True)``: the message is the report's table."""


@dataclass(frozen=True)
class CheckResult:
    """One line of the report: the check's name, its status (pass, FAIL, n/a) and why."""

    name: str
    status: str
    detail: str = ""


class FunctionCheckReport:
    """The outcome of ``check_function``: ``results`` (one ``CheckResult`` per check), ``passed``, ``failures``."""

    def __init__(self, title: str, results: list):
        self.title = title
        self.results = tuple(results)

    @property
    def failures(self) -> tuple:
        return tuple(r for r in self.results if r.status == FAIL)

    @property
    def passed(self) -> bool:
        return not self.failures

    def __getitem__(self, name: str) -> CheckResult:
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(f"no check named {name!r}; the checks are: {', '.join(r.name for r in self.results)}")

    def __repr__(self) -> str:
        counts = {s: sum(r.status == s for r in self.results) for s in (FAIL, PASS, NA)}
        head = f"check_function({self.title}): {counts[FAIL]} failed, {counts[PASS]} passed, {counts[NA]} n/a"
        width = max(len(r.name) for r in self.results)
        lines = [f"  {r.name:<{width}}  {r.status:<4}  {r.detail}".rstrip() for r in self.results]
        return "\n".join([head] + lines)

    __str__ = __repr__


def check_function(fn: Callable, *args, raise_on_failure: bool = False, **kwargs) -> FunctionCheckReport:
    """Check a custom op on ``fn(*args, **kwargs)`` and variants of it; return the report.

    Floating tensors among ``args`` are the differentiable inputs. With ``raise_on_failure=True`` a failed
    check raises ``FunctionCheckError`` with the report's table.

    >>> report = check_function(ember.sigmoid, ember.tensor([0.5, -1.0]))
    >>> report["gradcheck"]
    CheckResult(name='gradcheck', status='pass', detail='analytical gradients match finite differences')
    """
    sample = _Sample(fn, args, kwargs)
    results = []
    for name, check in _CHECKS:
        try:
            status, detail = check(sample)
        except Exception as error:  # a check that cannot run on this op says so, the others still run
            status, detail = FAIL, f"raised {type(error).__name__}: {_first_line(error)}"
        results.append(CheckResult(name, status, detail))
    report = FunctionCheckReport(_title(fn), results)
    if raise_on_failure and not report.passed:
        raise FunctionCheckError("\n" + repr(report))
    return report


def _title(fn: Callable) -> str:
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, type):  # a Function's apply, bound to its class
        return f"{owner.__name__}.{fn.__name__}"
    return getattr(fn, "__qualname__", repr(fn))


# ----------------------------------------------------------------- building inputs


class _Sample:
    def __init__(self, fn: Callable, args: tuple, kwargs: dict):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.positions = [i for i, a in enumerate(args) if _is_floating(a)]
        if not self.positions:
            raise ValueError("check_function: give at least one floating-point tensor among the sample arguments")
        self.in_place = False
        args, _ = self.inputs(requires=[False] * len(self.positions))
        versions = [args[p]._version for p in self.positions]
        self.call(args)
        self.in_place = any(args[p]._version != v for p, v in zip(self.positions, versions))

    def inputs(self, dtype=None, requires=None, strided: bool = False, copies: bool | None = None) -> tuple:
        """(arguments, leaves): fresh copies of the floating inputs, of ``dtype`` (float64 by default),
        requiring grad where ``requires`` says (all by default), non-contiguous if ``strided``; with ``copies``
        (by default: if forward changes its inputs in place) the arguments are copies of the leaves (``leaf * 1``)."""
        args, leaves = list(self.args), []
        for n, i in enumerate(self.positions):
            data = self.args[i].detach()._data.astype(dtype or np.float64)
            if strided and data.ndim:
                room = np.zeros(data.shape + (2,), data.dtype)
                room[..., 0] = data
                data = room[..., 0]
            leaf = ember.from_numpy(data if strided else data.copy())
            if requires is None or requires[n]:
                leaf.requires_grad_(True)
            leaves.append(leaf)
            # a Function that changes its input in place cannot take a leaf that requires grad: it gets a copy
            args[i] = leaf * 1 if leaf.requires_grad and (copies or copies is None and self.in_place) else leaf
        return tuple(args), leaves

    def call(self, args: tuple) -> tuple:
        out = self.fn(*args, **self.kwargs)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _is_floating(a) -> bool:
    return isinstance(a, Tensor) and a.dtype.is_floating_point


def _floating(outputs: tuple) -> list:
    return [o for o in outputs if _is_floating(o)]


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _random(shape, seed: int, dtype=np.float64) -> Tensor:
    return ember.from_numpy(np.random.default_rng(seed).uniform(-1, 1, tuple(shape)).astype(dtype))


def _user_nodes(outputs) -> list:
    """The graph nodes of user Functions between ``outputs`` and the leaves, newest first."""
    stack = [o.grad_fn for o in outputs if isinstance(o, Tensor) and o.grad_fn is not None]
    seen, found = set(), []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        cls = getattr(node, "_forward_cls", None)
        if cls is not None and cls._user:
            found.append(node)
        stack.extend(fn for fn, _ in node.next_functions if fn is not None)
    return found


def _user_functions(sample: _Sample) -> list:
    args, _ = sample.inputs()
    classes = []
    for node in _user_nodes(sample.call(args)):
        if node._forward_cls not in classes:
            classes.append(node._forward_cls)
    return classes


def _close(a: Tensor, b: Tensor, rtol: float = 1e-7, atol: float = 1e-9) -> bool:
    x, y = a.detach()._data.astype(np.float64), b.detach()._data.astype(np.float64)
    return x.shape == y.shape and np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True)


def _max_error(a: Tensor, b: Tensor) -> float:
    return float(np.max(np.abs(a.detach()._data - b.detach()._data), initial=0.0))


# ----------------------------------------------------------------- the checks


def _check_dtype(sample: _Sample) -> tuple:
    """float32 inputs give float32 outputs (float64 ones float64), with float64's values to float32's precision."""
    wide = _floating(sample.call(sample.inputs()[0]))
    narrow = _floating(sample.call(sample.inputs(np.float32)[0]))
    for k, (w, n) in enumerate(zip(wide, narrow)):
        for out, want in ((w, ember.float64), (n, ember.float32)):
            if out.dtype != want:
                return FAIL, (f"output {k} is {out.dtype} for {want} inputs: the forward fixes a dtype; compute in "
                              "the inputs' dtype")
        if not _close(n, w, rtol=1e-3, atol=1e-4):
            return FAIL, f"output {k} in float32 differs from float64 by {_max_error(n.double(), w):.3g}"
    return PASS, "float32 and float64"


def _check_shape(sample: _Sample) -> tuple:
    """Every variant gives outputs of one shape; a float64 run's outputs are tensors."""
    reference = sample.call(sample.inputs()[0])
    if not any(isinstance(o, Tensor) for o in reference):
        return FAIL, "forward returned no Tensor"
    variants = {"float32": sample.inputs(np.float32)[0], "non-contiguous": sample.inputs(strided=True)[0],
                "no grad": sample.inputs(requires=[False] * len(sample.positions))[0]}
    for name, args in variants.items():
        for k, (a, b) in enumerate(zip(sample.call(args), reference)):
            if isinstance(b, Tensor) and tuple(a.shape) != tuple(b.shape):
                return FAIL, f"output {k} has shape {list(a.shape)} for {name} inputs but {list(b.shape)} otherwise"
    return PASS, ", ".join(f"{list(o.shape)}" for o in reference if isinstance(o, Tensor))


def _check_aliasing(sample: _Sample) -> tuple:
    """No output shares memory with an input, unless it is that input, changed in place and marked dirty."""
    args, _ = sample.inputs(copies=True)
    versions = [a._version if isinstance(a, Tensor) else None for a in args]
    outputs = sample.call(args)
    for k, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            continue
        for j, a in enumerate(args):
            if not isinstance(a, Tensor) or not np.shares_memory(out._data, a._data):
                continue
            if out is a and a._version != versions[j]:
                continue  # returned after mark_dirty
            return FAIL, (f"output {k} shares memory with input {j} without ctx.mark_dirty: changing one in place "
                          "changes the other; return a copy (x.clone()), or mark the input dirty if forward changes it")
    return PASS, "no output shares an input's memory"


def _check_noncontiguous(sample: _Sample) -> tuple:
    reference = _floating(sample.call(sample.inputs()[0]))
    strided = _floating(sample.call(sample.inputs(strided=True)[0]))
    for k, (a, b) in enumerate(zip(strided, reference)):
        if not _close(a, b):
            return FAIL, (f"output {k} differs for non-contiguous inputs (by {_max_error(a, b):.3g}): the forward "
                          "assumes contiguous memory (use the tensor's values, not its raw buffer)")
    if not any(sample.args[i].dim() and sample.args[i].numel() > 1 for i in sample.positions):
        return NA, "every input is 0-d or has one element"
    args, leaves = sample.inputs(strided=True)
    return _gradcheck_outcome(gradcheck, sample, args, leaves, "non-contiguous inputs: ")


def _check_zero_dim(sample: _Sample) -> tuple:
    shapes = {tuple(sample.args[i].shape) for i in sample.positions}
    outputs = _floating(sample.call(sample.inputs()[0]))
    if len(shapes) != 1 or not outputs or any(tuple(o.shape) != next(iter(shapes)) for o in outputs):
        return NA, "not elementwise: the outputs are not shaped as the inputs"
    if shapes == {()}:
        return NA, "the sample inputs are 0-d already"
    args, leaves = list(sample.args), []
    for i in sample.positions:
        leaf = ember.tensor(float(sample.args[i].detach().reshape(-1)[0]), dtype=ember.float64, requires_grad=True)
        args[i] = leaf
        leaves.append(leaf)
    return _gradcheck_outcome(gradcheck, sample, tuple(args), leaves, "0-d inputs: ")


def _gradcheck_outcome(check: Callable, sample: _Sample, args: tuple, leaves: list, prefix: str = "") -> tuple:
    positions = sample.positions

    def function(*xs):
        filled = list(args)
        for p, x in zip(positions, xs):
            filled[p] = x.clone() if sample.in_place else x  # a leaf that requires grad cannot change in place
        return sample.fn(*filled, **sample.kwargs)

    try:
        check(function, tuple(leaves))
    except GradcheckError as error:
        lines = str(error).strip().splitlines()
        diagnosis = lines[-1] if len(lines) > 1 else ""
        return FAIL, prefix + lines[0].rstrip(",") + (f" -- {diagnosis}" if diagnosis and diagnosis != lines[0] else "")
    except Exception as error:
        if "differentiate twice" in str(error):  # a once_differentiable backward inside another Function's
            return NA, "backward is once_differentiable"
        return FAIL, f"{prefix}raised {type(error).__name__}: {_first_line(error)}"
    return PASS, prefix + "analytical gradients match finite differences"


def _check_gradcheck(sample: _Sample) -> tuple:
    args, leaves = sample.inputs()
    return _gradcheck_outcome(gradcheck, sample, args, leaves)


def _check_gradgradcheck(sample: _Sample) -> tuple:
    once = [cls.__name__ for cls in _user_functions(sample)
            if getattr(cls._backward_impl, "once_differentiable", False)]
    if once:  # its gradients hang from a node that raises only when reached: gradgradcheck would see zeros
        return NA, f"{', '.join(once)}: backward is once_differentiable"
    args, leaves = sample.inputs()
    return _gradcheck_outcome(gradgradcheck, sample, args, leaves)


def _check_forward_mode(sample: _Sample) -> tuple:
    """The jvp's ``J v`` equals the finite difference along ``v``, and ``u . J v`` equals ``(J^T u) . v``."""
    missing = [cls.__name__ for cls in _user_functions(sample) if cls.jvp is ember.autograd.Function.jvp]
    if missing:
        return NA, f"{', '.join(missing)} defines no jvp (forward mode raises, as in torch)"
    args, leaves = sample.inputs(requires=[False] * len(sample.positions))
    tangents = [_random(leaf.shape, 7 + n) for n, leaf in enumerate(leaves)]
    with forward_ad.dual_level():
        duals = list(args)
        for p, leaf, v in zip(sample.positions, leaves, tangents):
            duals[p] = forward_ad.make_dual(leaf, v)
        outputs = sample.call(tuple(duals))
        jvps = [forward_ad.unpack_dual(o).tangent for o in _floating(outputs)]
    numerical = _directional_difference(sample, leaves, tangents)
    for k, (jvp, num) in enumerate(zip(jvps, numerical)):
        jvp = ember.zeros_like(num) if jvp is None else jvp
        if not _close(jvp, num, rtol=1e-4, atol=1e-6):
            return FAIL, f"tangent of output {k}: {_pattern(jvp, num)}"
    grad_args, grad_leaves = sample.inputs()
    outs = [o for o in _floating(sample.call(grad_args)) if o.requires_grad]
    weights = [_random(o.shape, 30 + k) for k, o in enumerate(outs)]
    vjps = ember.autograd.grad(outs, grad_leaves, weights, allow_unused=True) if outs else [None] * len(grad_leaves)
    reverse = sum(float((g * v).sum()) for g, v in zip(vjps, tangents) if g is not None)
    forward = sum(float((j * w).sum()) for j, w in zip(jvps, weights) if j is not None)
    if not np.isclose(forward, reverse, rtol=1e-6, atol=1e-9):
        return FAIL, f"u.Jv = {forward:.6g} (jvp) but (J^T u).v = {reverse:.6g} (backward): jvp and backward disagree"
    return PASS, "jvp matches finite differences and backward"


def _directional_difference(sample: _Sample, leaves: list, tangents: list, eps: float = 1e-6) -> list:
    ends = []
    for sign in (1, -1):
        args = list(sample.args)
        for p, leaf, v in zip(sample.positions, leaves, tangents):
            args[p] = leaf.detach() + sign * eps * v
        ends.append(_floating(sample.call(tuple(args))))
    return [(a - b) / (2 * eps) for a, b in zip(*ends)]


def _pattern(mine: Tensor, truth: Tensor) -> str:
    """How the jvp's tangent differs from the finite difference: negated, scaled, zero, or just wrong."""
    a, b = mine.detach()._data, truth.detach()._data
    if np.allclose(a, -b, rtol=1e-4, atol=1e-6):
        return "the jvp's tangent is the finite difference negated: a sign is wrong"
    if not np.any(a) and np.any(b):
        return "the jvp's tangent is zero where the finite difference is not: the jvp ignores its tangents"
    ratio = a[np.abs(b) > 1e-8] / b[np.abs(b) > 1e-8]
    if ratio.size and np.allclose(ratio, ratio.flat[0], rtol=1e-4):
        return f"the jvp's tangent is the finite difference scaled by {ratio.flat[0]:.4g}: a factor is wrong"
    return f"the jvp's tangent differs from the finite difference along the tangent by {_max_error(mine, truth):.3g}"


def _check_vmap(sample: _Sample) -> tuple:
    """``vmap(fn)`` over a batch of 3 samples equals a loop of ``fn`` over them (values and gradients)."""
    from ember.func import vmap

    unbatchable = _without_batching_rule(sample)
    if unbatchable:
        return NA, unbatchable
    samples = [sample.inputs()[1] for _ in range(3)]
    for s, leaves in enumerate(samples):
        for n, leaf in enumerate(leaves):
            with ember.no_grad():
                leaf.add_(0.1 * (s + 1) * (n + 1))
    batched = [ember.stack([leaves[n] for leaves in samples]) for n in range(len(sample.positions))]

    def one(*xs):
        args = list(sample.args)
        for p, x in zip(sample.positions, xs):
            args[p] = x
        return sample.fn(*args, **sample.kwargs)

    looped = [_floating(sample.call(_placed(sample, leaves))) for leaves in samples]
    mapped = vmap(one)(*[b.clone() if sample.in_place else b for b in batched])
    mapped = _floating(tuple(mapped) if isinstance(mapped, (tuple, list)) else (mapped,))
    for k, out in enumerate(mapped):
        expected = ember.stack([outs[k] for outs in looped])
        if not _close(out, expected):
            return FAIL, (f"output {k} of vmap differs from a loop over the samples by {_max_error(out, expected):.3g}"
                          f"{_batch_diagnosis(out, expected)}")
    weights = [_random(o.shape, 40 + k) for k, o in enumerate(mapped)]
    batched_grads = ember.autograd.grad([o for o in mapped if o.requires_grad], batched, weights, allow_unused=True)
    for s, leaves in enumerate(samples):
        outs = [o for o in looped[s] if o.requires_grad]
        grads = ember.autograd.grad(outs, leaves, [w[s] for w in weights], allow_unused=True)
        for n, (g, b) in enumerate(zip(grads, batched_grads)):
            if g is not None and b is not None and not _close(b[s], g):
                return FAIL, f"the batched gradient of input {n} differs from sample {s}'s own"
    return PASS, "values and gradients equal a loop over 3 samples"


def _without_batching_rule(sample: _Sample) -> str:
    """Why vmap cannot run the sample's Functions at all (as in torch), or "" when it can."""
    for cls in _user_functions(sample):
        if not cls._new_style:
            return (f"{cls.__name__} takes ctx in forward: vmap needs the setup_context style (forward without "
                    "ctx, setup_context(ctx, inputs, output)), as in torch")
        if not cls.generate_vmap_rule and cls.vmap is ember.autograd.Function.vmap:
            return (f"{cls.__name__} has no batching rule: set generate_vmap_rule = True or write a vmap "
                    "staticmethod to use it under vmap")
    return ""


def _batch_diagnosis(out: Tensor, expected: Tensor) -> str:
    """How a wrong batched output relates to the loop's: samples out of order, or a batch dim misplaced."""
    a, b = out.detach()._data, expected.detach()._data
    if a.shape != b.shape:
        return f" (shape {list(a.shape)} against {list(b.shape)}: the rule's out_dims or batch dim is wrong)"
    if np.allclose(a[::-1], b, rtol=1e-7, atol=1e-9) or np.allclose(np.roll(a, 1, 0), b, rtol=1e-7, atol=1e-9):
        return ": the samples come out in another order"
    if a.ndim > 1 and a.shape[0] == a.shape[1] and np.allclose(np.swapaxes(a, 0, 1), b, rtol=1e-7, atol=1e-9):
        return ": the batch dim is swapped with a sample dim (check the rule's out_dims)"
    if np.allclose(np.broadcast_to(a.mean(0), a.shape), a) and not np.allclose(np.broadcast_to(b.mean(0), b.shape), b):
        return ": every sample got the same result (the rule mixes or drops the batch dim)"
    return ""


def _placed(sample: _Sample, leaves: list) -> tuple:
    args = list(sample.args)
    for p, leaf in zip(sample.positions, leaves):
        args[p] = leaf * 1 if sample.in_place else leaf  # a leaf that requires grad cannot change in place
    return tuple(args)


def _check_needs_input_grad(sample: _Sample) -> tuple:
    """Inputs that need no grad: the forward works, nothing requires grad, and backward does no work for them."""
    n = len(sample.positions)
    args, _ = sample.inputs(requires=[False] * n)
    if any(getattr(o, "requires_grad", False) for o in sample.call(args)):
        return FAIL, "an output requires grad although no input does"
    if n == 1:
        return NA, "one differentiable input (checked: no input needing grad gives outputs that need none)"
    for only in range(n):
        args, leaves = sample.inputs(requires=[i == only for i in range(n)])
        outputs = sample.call(args)
        for node in _user_nodes(outputs):
            grads = node.apply(*[_filled(meta, 1) for meta in node._out_meta])
            grads = grads if isinstance(grads, tuple) else (grads,)
            for p, (g, needed) in enumerate(zip(grads, node.needs_input_grad)):
                if g is not None and not needed:
                    return FAIL, (f"backward of {node._forward_cls.__name__} computed a gradient for its input {p}, "
                                  f"which needs none (ctx.needs_input_grad[{p}] is False): return None there and "
                                  "skip the work")
        outs = [o for o in _floating(outputs) if o.requires_grad]
        ember.autograd.grad(outs, leaves[only], [ember.ones_like(o) for o in outs], allow_unused=True)
    return PASS, "backward skips the inputs that need no grad"


def _check_mark_dirty(sample: _Sample) -> tuple:
    """An input changed in place by forward must be marked dirty (and so returned as it is)."""
    args, _ = sample.inputs(requires=[False] * len(sample.positions))
    before = [a._data.copy() if isinstance(a, Tensor) else None for a in args]
    outputs = sample.call(args)
    for j, (a, data) in enumerate(zip(args, before)):
        if data is None or np.array_equal(a._data, data, equal_nan=True):
            continue
        if not any(o is a for o in outputs):  # a dirty input comes back as itself; an unmarked one as an alias
            return FAIL, (f"forward changed input {j} in place without ctx.mark_dirty: autograd does not know, so "
                          "gradients and saved tensors are wrong; mark it dirty (and return it), or work on a copy")
    return PASS, "inputs changed in place are marked dirty" if sample.in_place else "no input changed in place"


def _check_saved_tensors(sample: _Sample) -> tuple:
    """A saved input changed in place after forward makes backward raise (never a silently wrong gradient)."""
    args, leaves = sample.inputs(copies=True)
    outs = [o for o in _floating(sample.call(args)) if o.requires_grad]
    if not outs:
        return NA, "no differentiable output"
    weights = [_random(o.shape, 50 + k) for k, o in enumerate(outs)]
    reference = ember.autograd.grad(outs, leaves, weights, allow_unused=True)
    for j, p in enumerate(sample.positions):
        args, leaves = sample.inputs(copies=True)
        outs = [o for o in _floating(sample.call(args)) if o.requires_grad]
        with ember.no_grad():
            args[p].mul_(1.5).add_(0.25)
        try:
            grads = ember.autograd.grad(outs, leaves, weights, allow_unused=True)
        except RuntimeError as error:
            if "modified by an inplace operation" in str(error):
                continue
            raise
        if any((g is None) != (r is None) or g is not None and not _close(g, r) for g, r in zip(grads, reference)):
            return FAIL, (f"input {p}, changed in place after forward, changed the gradients without an error: "
                          "backward reads it from somewhere other than ctx.save_for_backward (e.g. ctx.x = x)")
    return PASS, "changing a saved input after forward makes backward raise"


def _check_non_differentiable(sample: _Sample) -> tuple:
    """Outputs marked non-differentiable get no gradient, and backward ignores the zeros it receives for them."""
    args, _ = sample.inputs()
    outputs = sample.call(args)
    marked = [k for k, o in enumerate(outputs) if isinstance(o, Tensor) and not o.requires_grad]
    if not marked:
        return NA, "every output is differentiable"
    for node in _user_nodes(outputs):
        metas = node._out_meta
        floating = [m is not None and _dtype.kind(np.dtype(m[1])) == "f" for m in metas]
        base = [_random(m[0], 60 + i, m[1]) if f else None for i, (m, f) in enumerate(zip(metas, floating))]
        plain = node.apply(*[b if b is not None else _filled(m, 0) for b, m in zip(base, metas)])
        nudged_grads = [b if b is not None else _filled(m, 0) for b, m in zip(base, metas)]
        for k in marked:
            if k < len(metas) and metas[k] is not None and floating[k]:
                nudged_grads[k] = _random(metas[k][0], 99, metas[k][1])
        nudged = node.apply(*nudged_grads)
        plain = plain if isinstance(plain, tuple) else (plain,)
        nudged = nudged if isinstance(nudged, tuple) else (nudged,)
        for p, (a, b) in enumerate(zip(plain, nudged)):
            if isinstance(a, Tensor) and isinstance(b, Tensor) and not _close(a, b):
                return FAIL, (f"backward of {node._forward_cls.__name__} uses the gradient of a non-differentiable "
                              f"output (its input {p}'s gradient changes with it): such outputs get zeros; ignore it")
    return PASS, f"output{'s' if len(marked) > 1 else ''} {', '.join(map(str, marked))} get no gradient"


def _filled(meta, value: int) -> Tensor | None:
    """A gradient for an output described by a node's ``(shape, dtype)`` (None for a non-tensor output)."""
    return None if meta is None else ember.from_numpy(np.full(meta[0], value, meta[1]))


_CHECKS = (
    ("output dtype", _check_dtype),
    ("output shape", _check_shape),
    ("aliasing", _check_aliasing),
    ("non-contiguous inputs", _check_noncontiguous),
    ("0-d inputs", _check_zero_dim),
    ("gradcheck", _check_gradcheck),
    ("gradgradcheck", _check_gradgradcheck),
    ("forward mode (jvp)", _check_forward_mode),
    ("vmap", _check_vmap),
    ("needs_input_grad", _check_needs_input_grad),
    ("mark_dirty", _check_mark_dirty),
    ("saved tensors", _check_saved_tensors),
    ("non-differentiable outputs", _check_non_differentiable),
)
