"""L-BFGS: quasi-Newton steps from a short history of gradient differences, with an optional line search.

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([1., -2.]))
>>> opt = ember.optim.LBFGS([w], line_search_fn="strong_wolfe")
>>> def closure():
...     opt.zero_grad()
...     loss = ((w - 3) ** 2).sum()
...     loss.backward()
...     return loss
>>> _ = opt.step(closure)
>>> [round(v, 4) for v in w.tolist()]
[3.0, 3.0]
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from ember._ops.arithmetic import fused_single
from ember._ops.complex import _real_pairs
from ember._tensor import Tensor
from ember.autograd.grad_mode import enable_grad, no_grad
from ember.optim.optimizer import Optimizer, _check_lr, _scalar, dense_gradient

__all__ = ["LBFGS"]


def _plus_multiple(x: np.ndarray, alpha, y: np.ndarray) -> np.ndarray:
    """``x + alpha * y`` rounded as torch's ``x.add(y, alpha=alpha)``: once, in float32 (a fused multiply-add,
    with ``alpha`` rounded to single first), where two roundings would drift from torch's iterates."""
    if x.dtype == np.float32:
        return fused_single(x, np.float32(alpha), y)
    return x + alpha * y


def _cubic_minimum(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                   bounds: tuple | None = None) -> float:
    """The minimiser of the cubic through two points with their slopes, clamped to ``bounds`` (default: [x1, x2])."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:  # no real minimiser: bisect
        return (low + high) / 2.0
    d2 = np.sqrt(d2_square)
    if x1 <= x2:
        point = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        point = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(point, low), high)


class _Bracket:
    """Two trial step lengths with their losses, gradients and slopes, as the zoom phase narrows them."""

    def __init__(self, points: list) -> None:
        self.points = points  # [(t, f, g, gtd)]

    def order(self) -> tuple[int, int]:
        return (0, 1) if self.points[0][1] <= self.points[-1][1] else (1, 0)


def _strong_wolfe(evaluate: Callable, t: float, d: np.ndarray, f: float, g: np.ndarray, gtd: float,
                  c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9, max_ls: int = 25) -> tuple:
    """A step length along ``d`` meeting the strong Wolfe conditions: ``(loss, grad, t, evaluations)``."""
    d_norm = np.abs(d).max()
    f_new, g_new = evaluate(t)
    evals, gtd_new = 1, g_new.dot(d)
    prev = (0, f, g, gtd)
    done, ls_iter, bracket = False, 0, None
    while ls_iter < max_ls:  # grow the step until an interval holds a point meeting the conditions
        sufficient = not (f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= prev[1]))
        if sufficient and abs(gtd_new) <= -c2 * gtd:
            bracket, done = _Bracket([(t, f_new, g_new, gtd_new)]), True
            break
        if not sufficient or gtd_new >= 0:
            bracket = _Bracket([prev, (t, f_new, g_new.copy(), gtd_new)])
            break
        t_next = _cubic_minimum(prev[0], prev[1], prev[3], t, f_new, gtd_new,
                                bounds=(t + 0.01 * (t - prev[0]), t * 10))
        prev = (t, f_new, g_new.copy(), gtd_new)
        t = t_next
        f_new, g_new = evaluate(t)
        evals, gtd_new, ls_iter = evals + 1, g_new.dot(d), ls_iter + 1
    if ls_iter == max_ls:
        bracket = _Bracket([(0, f, g, None), (t, f_new, g_new, None)])
    low, high = bracket.order()
    insufficient = False
    while not done and ls_iter < max_ls:  # zoom: shrink the interval around a point meeting the conditions
        (t0, f0, _, s0), (t1, f1, _, s1) = bracket.points
        if abs(t1 - t0) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(t0, f0, s0, t1, f1, s1)
        t, insufficient = _keep_inside(t, min(t0, t1), max(t0, t1), insufficient)
        f_new, g_new = evaluate(t)
        evals, gtd_new, ls_iter = evals + 1, g_new.dot(d), ls_iter + 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket.points[low][1]:
            bracket.points[high] = (t, f_new, g_new.copy(), gtd_new)
            low, high = bracket.order()
            continue
        if abs(gtd_new) <= -c2 * gtd:
            done = True
        elif gtd_new * (bracket.points[high][0] - bracket.points[low][0]) >= 0:
            bracket.points[high] = bracket.points[low]
        bracket.points[low] = (t, f_new, g_new.copy(), gtd_new)
    t, f_new, g_new, _ = bracket.points[low]
    return f_new, g_new, t, evals


def _keep_inside(t: float, low: float, high: float, insufficient: bool) -> tuple[float, bool]:
    """Move a trial ``t`` too close to an end of ``[low, high]`` (or past it, twice in a row) a tenth inside."""
    margin = 0.1 * (high - low)
    if min(high - t, t - low) >= margin:
        return t, False
    if insufficient or t >= high or t <= low:
        return (high - margin if abs(t - high) < abs(t - low) else low + margin), False
    return t, True


class LBFGS(Optimizer):
    """L-BFGS over all parameters as one flat vector (one parameter group only); ``step(closure)`` runs up to
    ``max_iter`` iterations, each re-evaluating the loss through ``closure``."""

    def __init__(self, params: Iterable, lr: float | Tensor = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self) -> np.ndarray:
        return np.concatenate([_as_real(np.zeros_like(p._data) if p.grad is None else dense_gradient(p.grad))
                               .reshape(-1) for p in self._params])

    def _add(self, t: float, direction: np.ndarray) -> None:
        offset = 0
        for p in self._params:
            target = _as_real(p._data)  # (a view: writing it writes the parameter)
            n = target.size
            target[...] = _plus_multiple(target, t, direction[offset:offset + n].reshape(target.shape))
            p._bump()
            offset += n

    def _evaluate_at(self, closure: Callable, t: float, direction: np.ndarray) -> tuple[float, np.ndarray]:
        """Loss and flat gradient at ``params + t * direction``; the parameters are restored after."""
        saved = [p._data.copy() for p in self._params]
        self._add(t, direction)
        loss = _number(closure())
        grad = self._flat_grad()
        for p, data in zip(self._params, saved):
            p._data[...] = data
            p._bump()
        return loss, grad

    def step(self, closure: Callable[[], Any]) -> Any:
        """Run up to ``max_iter`` L-BFGS iterations; ``closure`` clears the gradients, computes and returns the loss."""
        with no_grad():
            return self._iterate(closure)

    def _iterate(self, closure: Callable) -> Any:
        group = self.param_groups[0]

        def evaluate():
            with enable_grad():
                return closure()

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = evaluate()
        loss, evals = _number(orig_loss), 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if np.abs(flat_grad).max() <= group["tolerance_grad"]:
            return orig_loss
        memory = _Memory(state, group["history_size"])
        for n_iter in range(1, group["max_iter"] + 1):
            state["n_iter"] += 1
            memory.new_direction(flat_grad, first=state["n_iter"] == 1)
            memory.prev_flat_grad = flat_grad.copy()
            memory.prev_loss = loss
            lr = _scalar(group["lr"])
            memory.t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            if isinstance(group["lr"], Tensor):  # a tensor lr makes the step length a 0-d tensor of its dtype
                memory.t = group["lr"]._data.dtype.type(memory.t)
            gtd = flat_grad.dot(memory.d)
            if gtd > -group["tolerance_change"]:
                break
            loss, flat_grad, ls_evals = self._move(evaluate, group, memory, loss, flat_grad, gtd,
                                                   group["max_eval"] - evals, n_iter)
            evals += ls_evals
            state["func_evals"] += ls_evals
            if self._converged(group, memory, n_iter, evals, loss, flat_grad):
                break
        memory.save(state)
        return orig_loss

    def _move(self, evaluate: Callable, group: dict, memory: "_Memory", loss: float, flat_grad: np.ndarray,
              gtd: float, evals_left: int, n_iter: int) -> tuple:
        """Step along ``memory.d``: by a strong-Wolfe line search, or by ``t`` and re-evaluate."""
        search = group["line_search_fn"]
        if search is not None:
            if search != "strong_wolfe":
                raise RuntimeError(f"LBFGS: only 'strong_wolfe' is supported as line_search_fn, got {search!r}")
            loss, flat_grad, memory.t, ls_evals = _strong_wolfe(
                lambda t: self._evaluate_at(evaluate, t, memory.d), memory.t, memory.d, loss, flat_grad, gtd,
                max_ls=evals_left)
            self._add(memory.t, memory.d)
            return loss, flat_grad, ls_evals
        self._add(memory.t, memory.d)
        if n_iter == group["max_iter"]:
            return loss, flat_grad, 0
        loss = _number(evaluate())
        return loss, self._flat_grad(), 1

    @staticmethod
    def _converged(group: dict, memory: "_Memory", n_iter: int, evals: int, loss: float,
                   flat_grad: np.ndarray) -> bool:
        return (n_iter == group["max_iter"] or evals >= group["max_eval"]
                or np.abs(flat_grad).max() <= group["tolerance_grad"]
                or np.abs(memory.d * memory.t).max() <= group["tolerance_change"]
                or abs(loss - memory.prev_loss) < group["tolerance_change"])


def _as_real(data: np.ndarray) -> np.ndarray:
    """A complex array as its (real, imaginary) pairs, as torch's LBFGS sees a complex parameter; others as they are."""
    return _real_pairs(data) if data.dtype.kind == "c" else data


def _number(loss: Any) -> float:
    """The closure's loss as a float (read without the warning about tensors that require grad)."""
    return float(loss.detach()) if isinstance(loss, Tensor) else float(loss)


def _array(value: Any) -> Any:
    return value._data if isinstance(value, Tensor) else value


def _tensor(value: Any) -> Any:
    return Tensor._wrap(np.asarray(value)) if isinstance(value, (np.ndarray, np.generic)) else value


class _Memory:
    """The state L-BFGS carries between steps, as NumPy arrays while it works (tensors in ``optimizer.state``)."""

    def __init__(self, state: dict, history_size: int) -> None:
        self.history_size = history_size
        self.d, self.t = _array(state.get("d")), _array(state.get("t"))
        self.old_dirs = [_array(v) for v in state.get("old_dirs") or []]
        self.old_stps = [_array(v) for v in state.get("old_stps") or []]
        self.ro = [_array(v) for v in state.get("ro") or []]
        self.H_diag = _array(state.get("H_diag"))
        self.prev_flat_grad = _array(state.get("prev_flat_grad"))
        self.prev_loss = state.get("prev_loss")
        self.al = [_array(v) for v in state["al"]] if "al" in state else None

    def new_direction(self, flat_grad: np.ndarray, first: bool) -> None:
        """The search direction: ``-grad`` at first, then the two-loop recursion over the history."""
        if first:
            self.d, self.old_dirs, self.old_stps, self.ro, self.H_diag = -flat_grad, [], [], [], 1
            return
        y = flat_grad - self.prev_flat_grad
        s = self.d * self.t
        ys = y.dot(s)
        if ys > 1e-10:  # keep the pair only where the curvature is positive
            if len(self.old_dirs) == self.history_size:
                del self.old_dirs[0], self.old_stps[0], self.ro[0]
            self.old_dirs.append(y)
            self.old_stps.append(s)
            self.ro.append(1.0 / ys)
            self.H_diag = ys / y.dot(y)
        if self.al is None:
            self.al = [None] * self.history_size
        q = -flat_grad
        for i in range(len(self.old_dirs) - 1, -1, -1):
            self.al[i] = self.old_stps[i].dot(q) * self.ro[i]
            q = _plus_multiple(q, -self.al[i], self.old_dirs[i])
        r = q * self.H_diag
        for i in range(len(self.old_dirs)):
            r = _plus_multiple(r, self.al[i] - self.old_dirs[i].dot(r) * self.ro[i], self.old_stps[i])
        self.d = r

    def save(self, state: dict) -> None:
        # "al" first: the entry is made while the first step's directions are worked out, so before "d" is kept
        if self.al is not None:
            state["al"] = [_tensor(v) for v in self.al]
        state["d"], state["t"] = _tensor(self.d), _tensor(self.t)
        state["old_dirs"] = [_tensor(v) for v in self.old_dirs]
        state["old_stps"] = [_tensor(v) for v in self.old_stps]
        state["ro"] = [_tensor(v) for v in self.ro]
        state["H_diag"] = _tensor(self.H_diag)
        state["prev_flat_grad"] = _tensor(self.prev_flat_grad)
        state["prev_loss"] = self.prev_loss
