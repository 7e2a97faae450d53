"""Gradient checking: compare a function's backward against finite differences.

``gradcheck(func, inputs)`` answers one question: does the gradient that
autograd computes for ``func`` match the slope you can measure by nudging its
inputs? It is the test every hand-written ``backward`` needs.

What is checked, in order (the same checks, in the same order, as PyTorch):

1. **The inputs.** At least one tensor must require grad (else ``ValueError``).
   A checked input that is not float64 triggers a ``UserWarning``: finite
   differences in single precision are too noisy for the default tolerances.
   An input with a stride-0 dimension (from ``expand``) is refused, because
   nudging one of its elements would nudge several.
2. **The Jacobians.** For every differentiable output ``i`` and every input
   ``j`` that requires grad, two matrices with one row per element of the input
   and one column per element of the output:

   * *numerical*: each input element in turn is moved by ``-eps`` and ``+eps``
     in place, ``func`` is re-run, and the central difference
     ``(f(x + eps) - f(x - eps)) / (2 eps)`` fills one row;
   * *analytical*: ``ember.autograd.grad`` is called once per output element
     with a one-hot ``grad_output``; the result fills one column.

   They must agree elementwise: ``|analytical - numerical| <= atol + rtol * |numerical|``.
   Before comparing, the analytical Jacobian is computed a second time and
   must repeat within ``nondet_tol`` (a *reentrant* backward), and each
   gradient must have its input's shape (and dtype, with ``check_grad_dtypes``).

   With ``fast_mode=True`` each Jacobian ``J`` is seen through random unit
   vectors ``u`` (an input's size) and ``v`` (an output's): ``v . J u`` costs
   two runs of ``func`` per input and one backward per output, whatever the
   sizes. The tolerance is ``atol * sum(u) * sum(v) + rtol * |numerical|``. On
   a mismatch the full Jacobians of that pair are computed for the message.
   Without outputs that require grad, the full check wants every floating
   output constant in the inputs; fast mode wants every tensor output, integer
   ones too, to move by at most ``nondet_tol`` along ``u`` (as torch does).
   ``func`` must return tensors: any other output is an ``AttributeError``.
3. **Scaling with grad_output.** With all output gradients zero, every input
   gradient must be zero (or None): a backward that ignores ``grad_output`` is
   wrong even when a one-hot ``grad_output`` hides it.
4. **Undefined output gradients** (``check_undefined_grad``). The outputs'
   gradients are made *undefined* (a Function with
   ``ctx.set_materialize_grads(False)`` receives None) all at once and, with
   several outputs, one at a time; backward must not fail and must return None
   or zeros.

On failure a :class:`GradcheckError` is raised (or ``False`` returned with
``raise_exception=False``). A Jacobian mismatch prints both matrices exactly as
PyTorch does, then a diagnosis PyTorch does not give: the worst element (which
input element, which output element, both values) and, when it recognises one,
the pattern of the mistake -- the analytical Jacobian is the numerical one
transposed, negated, scaled by a constant, or zero where it should not be, or
it is the numerical Jacobian of another input (gradients in the wrong order).

``gradgradcheck`` runs the same checks on the function that maps
``(inputs, grad_outputs)`` to the input gradients, which tests the backward's
own backward (what ``create_graph=True`` relies on).

>>> x = ember.tensor([0.5, -1.0, 2.0], dtype=ember.float64, requires_grad=True)
>>> ember.autograd.gradcheck(lambda t: (t * t.exp()).sum(), (x,))
True
>>> class Square(ember.autograd.Function):
...     @staticmethod
...     def forward(ctx, t):
...         ctx.save_for_backward(t)
...         return t * t
...     @staticmethod
...     def backward(ctx, grad):
...         (t,) = ctx.saved_tensors
...         return grad * t          # wrong: d(t*t)/dt is 2t
>>> ember.autograd.gradcheck(Square.apply, (x,), raise_exception=False)
False
>>> try:
...     ember.autograd.gradcheck(Square.apply, (x,))
... except ember.autograd.GradcheckError as error:
...     print(str(error).splitlines()[0])
...     print(str(error).splitlines()[-1])
Jacobian mismatch for output 0 with respect to input 0,
The analytical Jacobian is the numerical one scaled by 0.5: the backward is off by a constant factor ...

With ``check_forward_ad=True`` the Jacobians are also computed by forward-mode
AD (``ember.autograd.forward_ad``, one tangent per input element) and compared
with the numerical ones, with the same message and diagnosis.

Sparse COO inputs are checked as torch checks them: through their dense form,
or with ``masked=True`` through their stored values (``ember/sparse/_gradcheck.py``).

gradgradcheck's ``check_fwd_over_rev=True`` checks the second derivatives in
forward mode over the backward: the tangents that flow through the input
gradients (computed with ``create_graph=True`` on dual inputs) against the
numerical Jacobians.

``check_batched_grad`` draws two random grad_outputs per differentiable output and compares the
vector-Jacobian products computed one at a time with those computed at once by ``ember.func.vmap`` over
``autograd.grad``, where each backward formula runs on the batched gradients through the batching rules
(``ember/func/_backward.py``); in gradgradcheck it does so for the function of the first derivatives, so
the second derivatives' formulas are the ones batched. ``check_batched_forward_grad`` does the same with
two random tangents per checked input and forward-mode products. A batched run that fails, or disagrees
with the products one at a time (``allclose``'s default tolerances), is a ``GradcheckError`` whose message
says how to turn the check off.

Differences from PyTorch: the batched checks use ``ember.func.vmap``, where torch's
gradcheck uses its older vmap; so a custom Function met under vmap needs a ``vmap``
staticmethod or ``generate_vmap_rule=True`` (as under ``torch.func.vmap``), and
that rule is what is checked. Forward mode is batched through ``ember.func.jvp``,
whose primals are batched along with the tangents (torch batches the tangents
only). ``masked`` also
switches the grad_output-scaling check from exact zeros to ``allclose``; a
sparse output is compared as its dense form (torch refuses one). A
backward that fails on an undefined (None) gradient is reported as a
``GradcheckError`` whether it raised ``RuntimeError``, ``TypeError`` or
``AttributeError`` (in Python, ``None * x`` raises ``TypeError``). Where
torch's message goes on with notes for PyTorch's own developers (OpInfo,
``derivatives.yaml``), ember's goes on with its own advice instead. Integer and
bool outputs are skipped by the full check (torch may fail on them with an
IndexError or a bool subtraction).
"""
from __future__ import annotations

import warnings
from typing import Callable

import numpy as np

from ember._ops import complex as _complex_ops
from ember._tensor import Tensor
from ember.autograd.function import Function

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` and :func:`gradgradcheck` when a check fails."""


def gradcheck(func: Callable, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Check ``func``'s analytical gradients against finite differences; True if all agree.

    ``inputs`` is a tensor or a tuple passed as ``func(*inputs)``; non-tensor
    items are passed through. Only floating tensors with ``requires_grad=True``
    are checked. See the module docstring for what is checked.

    >>> a = ember.randn(2, 3, dtype=ember.float64, requires_grad=True)
    >>> b = ember.randn(3, 2, dtype=ember.float64, requires_grad=True)
    >>> ember.autograd.gradcheck(ember.mm, (a, b))
    True
    """
    _check_modes("gradcheck", check_forward_ad=check_forward_ad, check_backward_ad=check_backward_ad)
    _check_requires("check_batched_grad", check_batched_grad, "check_backward_ad", check_backward_ad)
    _check_requires("check_batched_forward_grad", check_batched_forward_grad, "check_forward_ad", check_forward_ad)
    settings = _Settings(eps, atol, rtol, nondet_tol, check_grad_dtypes, bool(masked), fast_mode,
                         check_batched_grad)
    func, inputs = _as_dense_problem(func, _as_tuple(inputs), bool(masked))
    func, inputs = _as_real_problem(func, inputs)
    try:
        if check_backward_ad:
            _check_all(func, _as_tuple(inputs), settings, check_undefined_grad)
        if check_forward_ad:
            _check_forward_jacobians(func, _as_tuple(inputs), settings)
        if check_batched_forward_grad:
            _check_batched_forward_grad(func, _as_tuple(inputs))
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(func: Callable, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """Check second derivatives: gradcheck of ``(inputs, grad_outputs) -> input gradients``.

    Without ``grad_outputs``, random ones in [-1, 1) are drawn (from ember's
    global generator), shaped like the differentiable outputs and requiring grad.

    >>> x = ember.tensor([0.3, 1.2], dtype=ember.float64, requires_grad=True)
    >>> ember.autograd.gradgradcheck(lambda t: t.tanh(), (x,))
    True
    """
    _check_modes("gradgradcheck", check_fwd_over_rev=check_fwd_over_rev, check_rev_over_rev=check_rev_over_rev)
    _check_requires("check_undefined_grad", check_undefined_grad, "check_rev_over_rev", check_rev_over_rev)
    _check_requires("check_batched_grad", check_batched_grad, "check_rev_over_rev", check_rev_over_rev)
    func, tupled_inputs = _as_dense_problem(func, _as_tuple(inputs), bool(masked))
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grads = tuple(_random_grad_output(o, gen_non_contig_grad_outputs) for o in outputs)
    else:
        tupled_grads = _as_tuple(grad_outputs)
    gradients_of = _input_gradients_function(func, tupled_inputs, tupled_grads)
    return gradcheck(gradients_of, tupled_inputs + tupled_grads, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad, fast_mode=fast_mode, masked=masked,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev)


class _Settings:
    """The tolerances and switches of one gradcheck run."""

    def __init__(self, eps, atol, rtol, nondet_tol, check_grad_dtypes, masked, fast=False, batched_grad=False):
        self.eps, self.atol, self.rtol, self.nondet_tol = eps, atol, rtol, nondet_tol
        self.check_grad_dtypes, self.masked, self.fast = check_grad_dtypes, masked, fast
        self.batched_grad = batched_grad


def _as_dense_problem(func: Callable, inputs: tuple, masked: bool) -> tuple:
    """Sparse inputs checked through dense leaves that stand for them (see ``ember/sparse/_gradcheck.py``)."""
    from ember.sparse._gradcheck import as_dense_problem  # imported late: the sparse ops import autograd

    return as_dense_problem(func, inputs, masked)


def _as_real_problem(func: Callable, inputs: tuple) -> tuple:
    """``func`` and ``inputs`` with every complex input and output seen as a real tensor of (real, imaginary) pairs.

    ember's complex gradient of a real loss L is dL/dx + i dL/dy, which is exactly what the pairs' real gradient
    holds; so checking the real problem checks the complex one, for every output's real and imaginary part.
    """
    if not any(isinstance(x, Tensor) and x._data.dtype.kind == "c" for x in inputs):
        return lambda *args: _real_outputs(func(*args)), inputs
    pairs = tuple(_as_pairs(x) for x in inputs)

    def real_func(*args):
        return _real_outputs(func(*(_from_pairs(a, x) for a, x in zip(args, inputs))))

    return real_func, pairs


def _as_pairs(x):
    if not (isinstance(x, Tensor) and x._data.dtype.kind == "c"):
        return x
    pairs = _complex_ops.view_as_real(x.detach()).clone()
    return pairs.requires_grad_(x.requires_grad)


def _from_pairs(arg, original):
    if isinstance(original, Tensor) and original._data.dtype.kind == "c":
        return _complex_ops.view_as_complex(arg)
    return arg


def _real_outputs(out):
    if isinstance(out, Tensor):
        return _complex_ops.view_as_real(out) if out.is_complex() else out  # (batched under vmap: no _data)
    if isinstance(out, (tuple, list)):  # (a named tuple, such as slogdet's, becomes a plain one)
        return (list if isinstance(out, list) else tuple)(_real_outputs(o) for o in out)
    return out


def _check_modes(op: str, **modes: bool) -> None:
    """torch's argument check, type and first line: at least one mode of differentiation must be on."""
    if not any(modes.values()):
        forward, backward = modes
        hint = f"turn on {backward} (reverse mode) or {forward} (forward mode)" if op == "gradcheck" else \
            f"turn on {backward} (reverse over reverse) or {forward} (forward over reverse)"
        raise AssertionError(f"Expected at least one of {forward} or {backward} to be True\n{op}: {hint}")


def _check_requires(option: str, value: bool, mode: str, mode_value: bool) -> None:
    """torch's argument check, type and text: an option that relies on a mode needs that mode on."""
    if value and not mode_value:
        raise AssertionError(f"Setting {option}=True requires {mode} to be True")


def _as_tuple(value) -> tuple:
    if isinstance(value, tuple):
        return value
    if isinstance(value, list):
        return tuple(value)
    return (value,)


def _differentiable_outputs(out) -> tuple:
    outputs = _as_tuple(out)
    for k, o in enumerate(outputs):
        if not isinstance(o, Tensor):  # torch fails the same way, reading o.requires_grad
            raise AttributeError(
                f"'{type(o).__name__}' object has no attribute 'requires_grad'\n"
                f"gradcheck: output {k} of func is {o!r:.40}, not a Tensor; func must return a Tensor or a tuple of "
                "Tensors (return extra values from another function, or wrap numbers with ember.tensor)"
            )
    return tuple(o for o in outputs if o.requires_grad)


def _is_checked_input(value) -> bool:
    return isinstance(value, Tensor) and value.requires_grad


# ---------------------------------------------------------------------------------------------------------
# The checks, in torch's order


def _check_all(func: Callable, inputs: tuple, settings: _Settings, check_undefined_grad: bool) -> None:
    _check_inputs(inputs)
    func_out = _as_tuple(func(*inputs))
    outputs = _differentiable_outputs(func_out)
    positions = [k for k, o in enumerate(func_out) if o.requires_grad]
    diff_inputs = [x for x in inputs if _is_checked_input(x)]
    if not outputs and settings.fast:
        _check_no_outputs_fast(func, inputs, func_out, diff_inputs, settings)
        return
    if not outputs:  # nothing to differentiate: then every float output must be constant in the inputs
        positions = _float_positions(func_out)
        _check_numerical_is_zero(_numerical_jacobians(func, inputs, [func_out[k] for k in positions], positions,
                                                      settings.eps))
        return
    if settings.fast:
        _check_projections(func, inputs, outputs, positions, diff_inputs, settings)
    else:
        _check_jacobians(func, inputs, outputs, positions, diff_inputs, settings)
    if settings.batched_grad:
        for i, output in enumerate(outputs):
            _check_batched_grad(diff_inputs, output, i)
    _check_scales_with_grad_output(outputs, diff_inputs, settings.masked)
    if check_undefined_grad:
        _check_undefined_grad(func, inputs, diff_inputs)


def _check_jacobians(func: Callable, inputs: tuple, outputs: tuple, positions: list, diff_inputs: list,
                     settings: _Settings) -> None:
    """The full check: every Jacobian, element by element."""
    numerical = _numerical_jacobians(func, inputs, list(outputs), positions, settings.eps)
    for i, output in enumerate(outputs):
        analytical = _analytical_jacobians(diff_inputs, output, settings)
        for j, (a, n) in enumerate(zip(analytical, numerical[i])):
            if not _allclose(a, n, settings):
                raise GradcheckError(_mismatch_message(a, n, i, j, diff_inputs[j], output, settings, numerical[i]))


def _check_forward_jacobians(func: Callable, inputs: tuple, settings: _Settings) -> None:
    """check_forward_ad: every floating output's Jacobian from forward-mode AD, one tangent per input element,
    against the numerical one."""
    _check_inputs(inputs)
    func_out = _as_tuple(func(*inputs))
    positions = _float_positions(func_out)
    checked = [p for p, x in enumerate(inputs) if _is_checked_input(x)]
    numerical = _numerical_jacobians(func, inputs, [func_out[k] for k in positions], positions, settings.eps)
    for j, p in enumerate(checked):
        analytical = _forward_jacobians(func, inputs, p, [func_out[k] for k in positions], positions)
        for i, (a, n) in enumerate(zip(analytical, numerical)):
            if not _allclose(a, n[j], settings):
                message = _mismatch_message(a, n[j], i, j, inputs[p], func_out[positions[i]], settings, n,
                                            mode="computed with forward mode ")
                raise GradcheckError(message.replace("the backward", "the jvp"))  # the diagnosis names the culprit


def _forward_jacobians(func: Callable, inputs: tuple, p: int, outputs: list, positions: list) -> list:
    """Per output, the Jacobian with respect to input ``p`` (rows = its elements) from forward-mode AD."""
    from ember.autograd import forward_ad  # the package imports this module; bind lazily

    x = inputs[p]
    jacobians = [np.zeros((x._data.size, o._data.size), dtype=o._data.dtype) for o in outputs]
    for row in range(x._data.size):
        basis = np.zeros(x._data.size, x._data.dtype)
        basis[row] = 1
        with forward_ad.dual_level():
            # detached from the caller's graph, but still requiring grad: a function that differentiates
            # (gradgradcheck's, with check_fwd_over_rev) needs its inputs in a graph of its own
            args = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a for a in inputs]
            args[p] = forward_ad.make_dual(args[p], Tensor._wrap(basis.reshape(x._data.shape)))
            out = _as_tuple(func(*args))
            for i, k in enumerate(positions):
                tangent = forward_ad.unpack_dual(out[k]).tangent
                if tangent is not None:
                    jacobians[i][row] = tangent._data.reshape(-1)
    return jacobians


def _check_inputs(inputs: tuple) -> None:
    """Refuse inputs gradcheck cannot perturb; warn about precision."""
    found = False
    for idx, x in enumerate(inputs):
        if not _is_checked_input(x):
            continue
        found = True
        if x._data.dtype not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{idx} requires gradient and is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are not of double precision floating point or "
                "complex. ",
                stacklevel=4,
            )
        data = x._data
        if data.size and any(stride == 0 and size > 1 for stride, size in zip(data.strides, data.shape)):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs that are "
                "non-overlapping to be able to compute the numerical gradients correctly. You should call "
                ".contiguous on the input before passing it to gradcheck."
            )
        if not data.flags.writeable:
            raise RuntimeError(
                f"gradcheck: input #{idx} is backed by read-only memory, so its elements cannot be perturbed to "
                "compute numerical gradients; pass input.clone().detach().requires_grad_() instead."
            )
    if not found:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them have "
            "requires_grad=True."
        )


def _float_positions(func_out: tuple) -> list:
    return [k for k, o in enumerate(func_out) if isinstance(o, Tensor) and o.is_floating_point()]


def _check_numerical_is_zero(numerical: list) -> None:
    """No output requires grad: then the outputs must not depend on the inputs at all."""
    for per_output in numerical:
        for jacobian in per_output:
            if np.any(jacobian != 0):
                raise GradcheckError(
                    "Numerical gradient for function expected to be zero: no output requires grad, yet the "
                    "outputs change when the inputs are perturbed (is an output computed under no_grad or from "
                    "a .detach()ed tensor?)"
                )


# ---------------------------------------------------------------------------------------------------------
# Numerical Jacobians: central differences, one input element at a time


def _numerical_jacobians(func: Callable, inputs: tuple, outputs: list, positions: list, eps: float) -> list:
    """``result[i][j]``: the Jacobian of ``outputs[i]`` (``func``'s result ``positions[i]``) w.r.t. checked input
    ``j``; rows are input elements, columns output elements."""
    per_input = [_numerical_wrt_input(func, inputs, x, outputs, positions, eps)
                 for x in inputs if _is_checked_input(x)]
    return [[jacobians[i] for jacobians in per_input] for i in range(len(positions))]


def _numerical_wrt_input(func: Callable, inputs: tuple, x: Tensor, outputs: list, positions: list,
                         eps: float) -> list:
    # Writing into ._data (not through an ember op) perturbs the very memory func reads, without a version
    # bump, so tensors saved for backward stay valid; it works for non-contiguous views too.
    data = x._data
    rows: list = []
    for index in np.ndindex(*data.shape):
        original = data[index].copy()
        data[index] = original - eps
        before = _output_arrays(func, inputs, positions)
        data[index] = original + eps
        after = _output_arrays(func, inputs, positions)
        data[index] = original
        _check_same_shape_and_dtype(before, after, index, eps)
        with np.errstate(all="ignore"):  # torch does not warn about NaN or inf in a derivative
            rows.append([((b - a) / (2 * eps)).reshape(-1) for a, b in zip(before, after)])
    return [_stack_rows([r[i] for r in rows], data.size, out._data) for i, out in enumerate(outputs)]


def _output_arrays(func: Callable, inputs: tuple, positions: list) -> list:
    # copied: an output may be a view of the input that is about to be restored
    out = _as_tuple(func(*inputs))
    return [np.array(out[k]._data, copy=True) for k in positions]


def _stack_rows(rows: list, n_rows: int, output: np.ndarray) -> np.ndarray:
    jacobian = np.zeros((n_rows, output.size), dtype=output.dtype)
    for r, row in enumerate(rows):
        jacobian[r] = row
    return jacobian


def _check_same_shape_and_dtype(before: list, after: list, index: tuple | None, eps: float) -> None:
    """Perturbing an input must not change an output's shape or dtype. As in torch, this is an AssertionError, not
    a GradcheckError: func is broken, not its gradient, so raise_exception=False does not hide it."""
    where = "" if index is None else f"on index {index} "  # fast mode perturbs all elements at once
    for a, b in zip(before, after):
        a, b = Tensor._wrap(a), Tensor._wrap(b)  # for torch's spelling of shapes and dtypes
        for name, first, second in (("shape", a.shape, b.shape), ("dtype", a.dtype, b.dtype)):
            if first != second:
                raise AssertionError(
                    f"Expected `func` to return outputs with the same {name} when inputs are perturbed {where}by "
                    f"{eps}, but got: {name}s {first} and {second}."
                )


# ---------------------------------------------------------------------------------------------------------
# Analytical Jacobians: one backward per output element


def _analytical_jacobians(diff_inputs: list, output: Tensor, settings: _Settings, reentrancy: bool = True) -> list:
    """One Jacobian per checked input (rows = input elements), computed twice to check reentrancy."""
    first = _analytical_once(diff_inputs, output, settings.check_grad_dtypes)
    if not reentrancy:
        return first
    second = _analytical_once(diff_inputs, output, settings.check_grad_dtypes)
    for a, b in zip(first, second):
        if a.size:
            with np.errstate(invalid="ignore"):  # inf - inf is NaN, which (as in torch) passes
                _check_reentrant(float(np.max(np.abs(a - b))), settings.nondet_tol)
    return first


def _check_reentrant(difference: float, nondet_tol: float) -> None:
    """Two backward runs with the same grad_output must agree to ``nondet_tol``."""
    if difference > nondet_tol:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
            "times gives different values, although analytical gradient matches numerical gradient."  # torch's
            f"The tolerance for nondeterminism was {nondet_tol}.\n"  # text, run together as torch prints it
            f"The largest difference between two runs was {difference:.6g}. If the backward is "
            "nondeterministic on purpose (e.g. it accumulates in a varying order), pass "
            "nondet_tol=<tolerance> to gradcheck/gradgradcheck."
        )


def _analytical_once(diff_inputs: list, output: Tensor, check_grad_dtypes: bool) -> list:
    from ember.autograd import grad  # the package imports this module; bind lazily

    jacobians = [np.zeros((x._data.size, output._data.size), dtype=x._data.dtype) for x in diff_inputs]
    one_hot = np.zeros(output._data.size, dtype=output._data.dtype)
    for column in range(one_hot.size):
        one_hot[:] = 0
        one_hot[column] = 1
        grad_output = Tensor._wrap(one_hot.reshape(output._data.shape).copy())
        grads = grad(output, diff_inputs, grad_output, retain_graph=True, allow_unused=True)
        for j, (x, g) in enumerate(zip(diff_inputs, grads)):
            if g is not None:
                _check_gradient_attributes(g, x, j, check_grad_dtypes)
                jacobians[j][:, column] = g._data.reshape(-1)
    return jacobians


def _check_gradient_attributes(g: Tensor, x: Tensor, j: int, check_grad_dtypes: bool) -> None:
    if g._data.shape != x._data.shape:
        raise GradcheckError(
            f"Analytical gradient has incorrect size: the gradient for input {j} has shape "
            f"{list(g._data.shape)} but the input has shape {list(x._data.shape)}"
        )
    if check_grad_dtypes and g._data.dtype != x._data.dtype:
        raise GradcheckError(
            f"Gradient has dtype mismatch: the gradient for input {j} is {g.dtype} but the input is {x.dtype}"
        )


def _allclose(a: np.ndarray, n: np.ndarray, settings: _Settings) -> bool:
    _check_tolerances(settings.atol, settings.rtol)
    with np.errstate(all="ignore"):
        return bool(np.allclose(a, n, rtol=settings.rtol, atol=settings.atol))


def _check_tolerances(atol: float, rtol: float) -> None:
    """As torch's comparison (allclose) refuses them: a negative tolerance would fail every element."""
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")


# ---------------------------------------------------------------------------------------------------------
# fast_mode: each Jacobian J seen through random vectors, v . J u, one number per output and input


def _check_projections(func: Callable, inputs: tuple, outputs: tuple, positions: list, diff_inputs: list,
                       settings: _Settings) -> None:
    """Compare v . J u numerically and analytically; on a mismatch, say so and show the full Jacobians.

    In torch's order: every numerical projection, then every analytical one (checking reentrancy), then the
    comparisons input by input, output by output."""
    rng = np.random.default_rng(0)  # a generator of its own: the user's random state is left alone
    us = [_unit_vector(rng, x._data) for x in diff_inputs]
    vs = [_unit_vector(rng, o._data) for o in outputs]
    numerical = [[float(np.dot(v, d)) for v, d in zip(vs, _directional_derivatives(func, inputs, x, u, positions,
                                                                                    settings.eps))]
                 for x, u in zip(diff_inputs, us)]
    analytical = [_analytical_projections(diff_inputs, output, v, us, settings) for output, v in zip(outputs, vs)]
    for j, u in enumerate(us):
        for i, v in enumerate(vs):
            a, n = analytical[i][j], numerical[j][i]
            atol = settings.atol * float(u.sum()) * float(v.sum())  # atol per element, on the projections
            _check_tolerances(atol, settings.rtol)
            tolerance = atol + settings.rtol * abs(n)
            if not abs(a - n) <= tolerance:
                raise GradcheckError(_projection_mismatch(func, inputs, outputs, positions, diff_inputs, i, j, a, n,
                                                          settings))


def _check_no_outputs_fast(func: Callable, inputs: tuple, func_out: tuple, diff_inputs: list,
                           settings: _Settings) -> None:
    """fast_mode without differentiable outputs: along a random direction per input, no tensor output -- integer
    ones included -- may move by more than ``nondet_tol``."""
    rng = np.random.default_rng(0)
    positions = list(range(len(func_out)))
    for x in diff_inputs:
        for derivative in _directional_derivatives(func, inputs, x, _unit_vector(rng, x._data), positions,
                                                   settings.eps):
            if derivative.size and np.max(np.abs(derivative)) > settings.nondet_tol:
                raise GradcheckError(
                    "Numerical gradient for function expected to be zero: no output requires grad, yet an output "
                    "changes when the inputs are perturbed along a random direction (is an output computed under "
                    "no_grad, from a .detach()ed tensor, or rounded to integers?)"
                )


def _unit_vector(rng, like: np.ndarray) -> np.ndarray:
    vector = rng.random(like.size).astype(like.dtype)
    norm = np.linalg.norm(vector)
    return vector / norm if norm else vector


def _directional_derivatives(func: Callable, inputs: tuple, x: Tensor, u: np.ndarray, positions: list,
                             eps: float) -> list:
    """J u, flattened, for every output at ``positions``, by central differences along u (x's memory is perturbed,
    then restored). Outputs that are not floating point are differenced as float64."""
    data = x._data
    original = data.copy()
    step = eps * u.reshape(data.shape)
    data[...] = original - step
    before = _output_arrays(func, inputs, positions)
    data[...] = original + step
    after = _output_arrays(func, inputs, positions)
    data[...] = original
    _check_same_shape_and_dtype(before, after, None, eps)
    with np.errstate(all="ignore"):  # torch does not warn about NaN or inf in a derivative
        return [(_as_float(b) - _as_float(a)).reshape(-1) / (2 * eps) for a, b in zip(before, after)]


def _as_float(values: np.ndarray) -> np.ndarray:
    return values if np.issubdtype(values.dtype, np.inexact) else values.astype(np.float64)


def _analytical_projections(diff_inputs: list, output: Tensor, v: np.ndarray, us: list, settings: _Settings) -> list:
    """(v J) . u for every input, from one backward with grad_output v; run twice to check reentrancy."""
    from ember.autograd import grad  # the package imports this module; bind lazily

    runs = []
    for _ in range(2):
        grad_output = Tensor._wrap(v.reshape(output._data.shape).copy())
        grads = grad(output, diff_inputs, grad_output, retain_graph=True, allow_unused=True)
        projections = []
        for j, (x, g, u) in enumerate(zip(diff_inputs, grads, us)):
            if g is not None:
                _check_gradient_attributes(g, x, j, settings.check_grad_dtypes)
            projections.append(0.0 if g is None else float(np.dot(g._data.reshape(-1), u)))
        runs.append(projections)
    for first, second in zip(*runs):
        _check_reentrant(abs(first - second), settings.nondet_tol)
    return runs[0]


def _projection_mismatch(func: Callable, inputs: tuple, outputs: tuple, positions: list, diff_inputs: list,
                         i: int, j: int, a: float, n: float, settings: _Settings) -> str:
    """The fast-mode message: torch's first lines (the projections), the pair's full Jacobians, the diagnosis."""
    numerical = _numerical_wrt_input(func, inputs, diff_inputs[j], list(outputs), positions, settings.eps)[i]
    analytical = _analytical_jacobians(diff_inputs, outputs[i], settings, reentrancy=False)[j]
    with np.errstate(all="ignore"):
        max_difference = float(np.max(np.abs(numerical - analytical)))
    text = (
        f"Jacobian mismatch for output {i:d} with respect to input {j:d},\n"
        f"numerical:{n}\nanalytical:{a}\n\n"
        "These two numbers are the Jacobians projected on random vectors (fast mode compares v . J u, not J).\n"
        "The whole Jacobians of this pair, computed element by element:\n\n"
        f"Numerical:\n {Tensor._wrap(numerical)!r}\nAnalytical:\n{Tensor._wrap(analytical)!r}\n\n"
        f"The largest difference between their elements is {max_difference}.\n"
    )
    if _allclose(analytical, numerical, settings):
        text += ("Element by element they agree within the tolerances: only the projections differ, so the full\n"
                 "check would pass. Call gradcheck/gradgradcheck with fast_mode=False.\n")
    return text + _diagnosis(analytical, numerical, i, j, diff_inputs[j], outputs[i], settings)


# ---------------------------------------------------------------------------------------------------------
# Batched gradients: products for a few random vectors at once under vmap, against one at a time

_BATCHED_GRAD_ADVICE = (
    "gradcheck or gradgradcheck failed while testing batched gradient computation: vmap ran the backward\n"
    "formulas once for a batch of grad_outputs, and the result differs from one backward per grad_output\n"
    "(or the batched run failed). A backward is vmappable when it is written with ember ops that have\n"
    "batching rules (see ember.func.vmap); a custom Function's backward that reads tensors' data directly,\n"
    "or calls a Function whose vmap staticmethod is wrong, is not. If batched gradients are not needed, call\n"
    "gradcheck/gradgradcheck with check_batched_grad=False."
)
_BATCHED_FORWARD_ADVICE = (
    "gradcheck failed while testing batched gradient computation with forward-mode AD: vmap ran the jvp\n"
    "(ember.func.jvp) once for a batch of tangents, and the result differs from one jvp per tangent (or the\n"
    "batched run failed). Each op of the function needs a batching rule and a jvp that holds for batched\n"
    "values; a custom Function needs a correct vmap staticmethod (or generate_vmap_rule=True). If batched\n"
    "forward gradients are not needed, call gradcheck with check_batched_forward_grad=False."
)
_N_BATCHED = 2  # random vectors per check, as torch draws


def _check_batched_grad(diff_inputs: list, output: Tensor, i: int) -> None:
    """check_batched_grad: vector-Jacobian products of ``output`` for random grad_outputs, under vmap (the
    backward formulas run on batched gradients) and one backward each, must agree."""
    from ember import autograd, randn_like, zeros_like

    def vjp(v):
        grads = autograd.grad(output, diff_inputs, v, retain_graph=True, allow_unused=True)
        return tuple(zeros_like(x) if g is None else g for g, x in zip(grads, diff_inputs))

    result, expected = _batched_and_one_by_one(vjp, [randn_like(output) for _ in range(_N_BATCHED)],
                                               _BATCHED_GRAD_ADVICE)
    for j, (got, wanted) in enumerate(zip(result, expected)):
        _compare_batched(got, wanted, i, j, _BATCHED_GRAD_ADVICE)


def _check_batched_forward_grad(func: Callable, inputs: tuple) -> None:
    """check_batched_forward_grad: per checked input, Jacobian-vector products for random tangents, under vmap
    and one at a time, must agree (the other inputs held constant)."""
    from ember import randn_like
    from ember.func import jvp as forward_product

    for p, x in enumerate(inputs):
        if not (_is_checked_input(x) and (x.is_floating_point() or x.is_complex())):
            continue
        held = [a.detach() if isinstance(a, Tensor) else a for a in inputs]

        def with_input(value, p=p, held=held):
            return _tangents_only(func(*held[:p], value, *held[p + 1:]))

        def jvp(tangent, primal=held[p], with_input=with_input):
            return forward_product(with_input, (primal,), (tangent,))[1]

        result, expected = _batched_and_one_by_one(jvp, [randn_like(x) for _ in range(_N_BATCHED)],
                                                   _BATCHED_FORWARD_ADVICE)
        for i, (got, wanted) in enumerate(zip(result, expected)):
            _compare_batched(got, wanted, i, p, _BATCHED_FORWARD_ADVICE)


def _batched_and_one_by_one(product: Callable, vectors: list, advice: str) -> tuple:
    """``product`` of the stacked ``vectors`` under vmap, and of each vector in turn (stacked), per result."""
    from ember import stack
    from ember.func import vmap

    expected = [stack(per_result) for per_result in zip(*(product(v) for v in vectors))]
    try:
        return vmap(product)(stack(vectors)), expected
    except RuntimeError as error:
        raise GradcheckError(f"While computing batched gradients, got: {error}\n\n{advice}") from error


def _tangents_only(out) -> tuple:
    """The tensor outputs whose tangents forward mode carries: the floating and complex ones."""
    return tuple(o for o in _as_tuple(out) if isinstance(o, Tensor) and (o.is_floating_point() or o.is_complex()))


def _compare_batched(got: Tensor, wanted: Tensor, i: int, j: int, advice: str) -> None:
    """The batched products against those one at a time, with torch's tolerances (allclose's defaults)."""
    from ember import allclose

    if not allclose(got, wanted):
        raise GradcheckError(f"For output {i} and input {j}:\n\n{advice}\n\nGot:\n{got}\n\nExpected:\n{wanted}")


# ---------------------------------------------------------------------------------------------------------
# Checks that need no Jacobian


def _check_scales_with_grad_output(outputs: tuple, diff_inputs: list, masked: bool) -> None:
    """Zero output gradients must give zero input gradients (a backward must multiply by grad_output)."""
    from ember.autograd import grad

    zeros = [Tensor._wrap(np.zeros(o._data.shape, o._data.dtype)) for o in outputs]
    grads = grad(outputs, diff_inputs, zeros, allow_unused=True)
    for j, (g, x) in enumerate(zip(grads, diff_inputs)):
        if g is None:
            continue
        nonzero = not np.allclose(g._data, 0) if masked else np.any(g._data != 0)
        if nonzero:
            raise GradcheckError(
                f"backward not multiplied by grad_output: with every output gradient zero, the gradient for "
                f"input {j} is not (largest magnitude {np.max(np.abs(g._data)):.6g}). A backward must scale "
                "with grad_output: return grad_output * 2 * x, not 2 * x."
            )
        if g._data.dtype != x._data.dtype:
            raise GradcheckError(f"grad is incorrect type: {g.dtype} for input {j} of type {x.dtype}")
        if g._data.shape != x._data.shape:
            raise GradcheckError(
                f"grad is incorrect size: {list(g._data.shape)} for input {j} of shape {list(x._data.shape)}"
            )


class _UndefinedGrad(Function):
    """Identity forward whose backward sends no gradient: the output's gradient becomes undefined (None)."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return None


def _check_undefined_grad(func: Callable, inputs: tuple, diff_inputs: list) -> None:
    """Backward must cope with undefined output gradients, all at once and (with several outputs) one at a time."""
    outputs = _differentiable_outputs(func(*inputs))
    cases = [[_UndefinedGrad.apply(o) for o in outputs]]
    if len(outputs) > 1:
        for undefined in range(len(outputs)):
            fresh = _differentiable_outputs(func(*inputs))
            cases.append([_UndefinedGrad.apply(o) if k == undefined else o for k, o in enumerate(fresh)])
    for case in cases:
        _check_undefined_case(case, diff_inputs)


def _check_undefined_case(outputs: list, diff_inputs: list) -> None:
    from ember.autograd import grad

    zeros = [Tensor._wrap(np.zeros(o._data.shape, o._data.dtype)) for o in outputs]
    try:
        grads = grad(outputs, diff_inputs, zeros, allow_unused=True)
    except (RuntimeError, TypeError, AttributeError) as error:
        raise GradcheckError(
            "Expected backward function to handle undefined output grads. A Function whose forward calls "
            "ctx.set_materialize_grads(False) receives None for each output whose gradient is undefined; its "
            f"backward must treat None as zeros (it raised {type(error).__name__}: {error}). Pass "
            "check_undefined_grad=False to skip this check."
        ) from error
    for j, g in enumerate(grads):
        if g is not None and np.any(g._data != 0):
            raise GradcheckError(
                "Expected all input grads to be undefined or zero when all output grads are undefined or zero. "
                f"The gradient for input {j} is not: when grad_output is None, backward should return None "
                "(or zeros) for the inputs, not a made-up gradient."
            )


# ---------------------------------------------------------------------------------------------------------
# gradgradcheck helpers


def _random_grad_output(output: Tensor, non_contiguous: bool) -> Tensor:
    """Uniform in [-1, 1), shaped and typed like ``output``, requiring grad; strided if asked and possible."""
    from ember import rand

    dtype = output.dtype if output.is_floating_point() or output.is_complex() else None
    shape = tuple(output._data.shape)
    if non_contiguous and output._data.size > 1:
        wide = rand((*shape[:-1], 2 * shape[-1]), dtype=dtype) * 2 - 1
        grad = wide[..., ::2].detach()
    else:
        grad = (rand(shape, dtype=dtype) * 2 - 1).detach()
    return grad.requires_grad_()


def _input_gradients_function(func: Callable, inputs: tuple, grad_outputs: tuple) -> Callable:
    """The function gradgradcheck differentiates: ``(*inputs, *grad_outputs) -> gradients of the inputs``."""
    from ember.autograd import grad

    n_inputs = len(inputs)
    checked_inputs = {i for i, x in enumerate(inputs) if _is_checked_input(x)}

    def input_gradients(*args):
        outputs = _differentiable_outputs(func(*args[:n_inputs]))
        diff_inputs = tuple(x for i, x in enumerate(args[:n_inputs]) if i in checked_inputs)
        grads = grad(outputs, diff_inputs, args[n_inputs:], create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return input_gradients


# ---------------------------------------------------------------------------------------------------------
# The mismatch message: torch's text, then ember's diagnosis


def _mismatch_message(a: np.ndarray, n: np.ndarray, i: int, j: int, x: Tensor, output: Tensor,
                      settings: _Settings, numericals: list | None = None, mode: str = "") -> str:
    """torch's text, then the diagnosis; ``numericals`` are output i's numerical Jacobians for every input."""
    header = (f"Jacobian {mode}mismatch for output {i:d} with respect to input {j:d},\n"
              f"numerical:{Tensor._wrap(n)!r}\nanalytical:{Tensor._wrap(a)!r}\n")
    return header + _diagnosis(a, n, i, j, x, output, settings, numericals or ())


@np.errstate(all="ignore")  # NaN and inf are reported, not warned about
def _diagnosis(a: np.ndarray, n: np.ndarray, i: int, j: int, x: Tensor, output: Tensor, settings: _Settings,
               numericals: list = ()) -> str:
    lines = [_worst_element(a, n, j, i, x._data.shape, output._data.shape, settings)]
    pattern = _diagnose_swap(a, j, numericals, settings) or _diagnose_pattern(a, n, settings)
    if pattern:
        lines.append(pattern)
    return "\n".join(lines)


def _diagnose_swap(a: np.ndarray, j: int, numericals: list, settings: _Settings) -> str | None:
    """Whether input j's analytical Jacobian is another input's numerical one: gradients in the wrong order."""
    for k, other in enumerate(numericals):
        if k != j and other.shape == a.shape and not np.allclose(other, 0, atol=settings.atol) and \
                np.allclose(a, other, rtol=settings.rtol, atol=settings.atol):
            return (f"The analytical Jacobian for input {j} is the numerical one for input {k}: backward returns "
                    f"input {k}'s gradient in input {j}'s place (are its gradients in the order of forward's "
                    "inputs?).")
    return None


def _worst_element(a: np.ndarray, n: np.ndarray, j: int, i: int, in_shape: tuple, out_shape: tuple,
                   settings: _Settings) -> str:
    excess = np.abs(a - n) - (settings.atol + settings.rtol * np.abs(n))
    excess = np.where(np.isnan(excess), np.inf, excess)  # a NaN is always the worst
    row, column = np.unravel_index(int(np.argmax(excess)), a.shape)
    in_index = tuple(int(k) for k in np.unravel_index(row, in_shape)) if in_shape else ()
    out_index = tuple(int(k) for k in np.unravel_index(column, out_shape)) if out_shape else ()
    return (
        f"Worst element: row {row} (input {j} at index {list(in_index)}), column {column} (output {i} at index "
        f"{list(out_index)}): numerical {n[row, column]:.6g}, analytical {a[row, column]:.6g}, "
        f"difference {a[row, column] - n[row, column]:.6g} (analytical - numerical)."
    )


def _diagnose_pattern(a: np.ndarray, n: np.ndarray, settings: _Settings) -> str | None:
    """One plain sentence naming a recognised mistake, or None."""
    def close(x, y, scale: float = 1.0) -> bool:
        return bool(np.allclose(x, y, rtol=settings.rtol, atol=settings.atol * scale))

    numerical_zero, analytical_zero = close(n, 0), close(a, 0)
    if numerical_zero and not analytical_zero:
        return ("The numerical Jacobian is zero but the analytical one is not: the output does not depend on this "
                "input, yet backward returns a gradient for it (a gradient returned in the wrong position?).")
    if analytical_zero:
        return ("The analytical Jacobian is zero although the numerical one is not: the backward returns zeros "
                "(or None) for this input, e.g. it forgot a term or returns its gradients in the wrong order.")
    if a.shape[0] == a.shape[1] and close(a, n.T):
        return ("The analytical Jacobian is the numerical one transposed: the backward likely multiplies by a "
                "matrix where its transpose is needed (e.g. input.mm(grad) instead of input.t().mm(grad)).")
    if close(a, -n):
        return "The analytical Jacobian is the numerical one negated: the backward has a sign error."
    return _diagnose_scale_or_missing_term(a, n, close)


def _diagnose_scale_or_missing_term(a: np.ndarray, n: np.ndarray, close) -> str | None:
    c = float(np.vdot(a, n) / np.vdot(n, n))  # least-squares fit of a = c * n
    if np.isfinite(c) and abs(c - 1) > 1e-3 and close(a, c * n, max(1.0, abs(c))):
        return (f"The analytical Jacobian is the numerical one scaled by {c:.4g}: the backward is off by a "
                "constant factor (e.g. a missing 2 from d(x*x)/dx, or a 1/n from a mean).")
    wrong = ~np.isclose(a, n)
    if wrong.any() and np.all(np.isclose(a[wrong], 0)):
        return ("The analytical Jacobian is zero exactly where it disagrees with the numerical one: the backward "
                "forgot a term (some elements get no gradient).")
    return None
