"""Derivatives of whole functions: ``vjp``, ``jvp``, ``vhp``, ``hvp``, ``jacobian`` and ``hessian``.

Each takes a function of tensors and the point to differentiate at, as torch's
``torch.autograd.functional``:

>>> import ember
>>> from ember.autograd.functional import jacobian, hessian
>>> x = ember.tensor([1., 2.])
>>> jacobian(lambda x: x ** 2, x)
tensor([[2., 0.],
        [0., 4.]])
>>> hessian(lambda x: (x ** 3).sum(), x)
tensor([[ 6.,  0.],
        [ 0., 12.]])

``jvp`` and ``hvp`` use the double-backward trick (a JVP is the transpose of a VJP), as torch's do;
``jacobian(..., strategy="forward-mode")`` pushes one tangent per input element through forward-mode AD
(``ember.autograd.forward_ad``). With ``vectorize=True`` the rows (or columns) are computed one by one,
as a loop inside ember: the result is the same as without.
"""
from __future__ import annotations

from typing import Callable

import ember
from ember._tensor import Tensor
from ember.autograd import forward_ad
from ember.autograd.grad_mode import enable_grad

__all__ = ["vjp", "jvp", "vhp", "hvp", "jacobian", "hessian"]


def _as_tuple(value, what: str, fn: str) -> tuple:
    """(whether ``value`` was a tuple, ``value`` as a tuple of tensors)."""
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for i, v in enumerate(values):
        if not isinstance(v, Tensor):
            where = f"the value at index {i} has type {type(v)}" if is_tuple else f"the given {what} has type {type(v)}"
            raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but {where}.")
    return is_tuple, values


def _unpacked(values: tuple, is_tuple: bool):
    """``values`` in the caller's structure: a tuple, or the one tensor."""
    return values if is_tuple else values[0]


def _unpacked_jacobian(rows: tuple, outputs_tuple: bool, inputs_tuple: bool):
    """rows[i][j] (output i, input j) as torch nests it: tuple of tuples, one tuple, or one tensor."""
    if not inputs_tuple:
        rows = tuple(row[0] for row in rows)
    return rows if outputs_tuple else rows[0]


def _prepared(inputs: tuple, create_graph: bool) -> tuple:
    """Inputs that require grad, of their own: a view keeps the caller's graph (and a tangent) under create_graph."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_(True)
                 for x in inputs)


def _finished(values: tuple, create_graph: bool) -> tuple:
    return values if create_graph else tuple(v.detach() for v in values)


def _checked_v(v, refs: tuple, create_graph: bool, fn: str) -> tuple:
    _, vs = _as_tuple(v, "v", fn)
    if len(vs) != len(refs):
        if len(refs) == 1:
            raise RuntimeError("The given v should contain a single Tensor.")
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(refs)} but got {len(vs)}.")
    for i, (a, b) in enumerate(zip(vs, refs)):
        if a.shape != b.shape:
            prefix = f"Entry {i} in " if len(refs) > 1 else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {b.size()} but got {a.size()}.")
    return vs if create_graph else tuple(x.detach() for x in vs)


def _default_v(refs: tuple, where: str) -> tuple:
    if len(refs) != 1 or refs[0].numel() != 1:
        raise RuntimeError(f"The vector v can only be None if {where} a single Tensor with a single element.")
    return (ember.ones_like(refs[0]),)


def _grads(outputs: tuple, inputs: tuple, grad_outputs: tuple, create_graph: bool) -> list:
    """``autograd.grad`` over the outputs that require grad; None for inputs they do not reach."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return [None] * len(inputs)
    return list(ember.autograd.grad([o for o, _ in pairs], inputs, [g for _, g in pairs],
                                    create_graph=create_graph, retain_graph=True, allow_unused=True))


def _zeros_for_none(values: list, refs: tuple, strict: bool, message: str) -> tuple:
    filled = []
    for i, (v, ref) in enumerate(zip(values, refs)):
        if v is None:
            if strict:
                raise RuntimeError(message.format(i=i) + " This is not allowed in strict mode.")
            v = ember.zeros_like(ref)
        filled.append(v)
    return tuple(filled)


def _outputs(func: Callable, inputs: tuple, fn: str, strict: bool) -> tuple:
    is_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn)
    if strict:
        for i, o in enumerate(outputs):
            if not o.requires_grad:
                raise RuntimeError(
                    f"Output {i} of the user-provided function does not require gradients. The outputs must be "
                    "computed in a differentiable manner from the input when running in strict mode."
                )
    return is_tuple, outputs


_INDEPENDENT = "The output of the user-provided function is independent of input {i}."
_JACOBIAN_CONSTANT = (
    "While computing the hessian, found that the jacobian of the user-provided function with respect to input {i} "
    "is independent of the input. This is not allowed in strict mode. You should ensure that your function is "
    "twice differentiable and that the jacobian depends on the inputs (this would be violated by a linear function "
    "for example)."
)


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    >>> vjp(lambda x: x ** 2, ember.tensor([1., 2.]), ember.tensor([1., 1.]))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepared(inputs, create_graph)
        outputs_tuple, outputs = _outputs(func, inputs, "vjp", strict)
        vs = _checked_v(v, outputs, create_graph, "vjp") if v is not None else \
            _default_v(outputs, "the user-provided function returns")
        grads = _zeros_for_none(_grads(outputs, inputs, vs, create_graph), inputs, strict, _INDEPENDENT)
    return _unpacked(_finished(outputs, create_graph), outputs_tuple), \
        _unpacked(_finished(grads, create_graph), inputs_tuple)


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``(func(inputs), J v)``: the Jacobian-vector product at ``inputs`` (by the double-backward trick).

    >>> jvp(lambda x: x ** 2, ember.tensor([1., 2.]), ember.tensor([1., 0.]))
    (tensor([1., 4.]), tensor([2., 0.]))
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepared(inputs, create_graph)
        vs = _checked_v(v, inputs, create_graph, "jvp") if v is not None else \
            _default_v(inputs, "the input to the user-provided function is")
        outputs_tuple, outputs = _outputs(func, inputs, "jvp", strict)
        seeds = tuple(ember.zeros_like(o).requires_grad_(True) for o in outputs)
        back = _grads(outputs, inputs, seeds, create_graph=True)
        if strict:
            _zeros_for_none(back, inputs, True, _INDEPENDENT)
            _refuse_constant(back, "The gradient with respect to input {i} is independent of the inputs of the "
                                   "user-provided function. This is not allowed in strict mode.")
        reached = [(g, x) for g, x in zip(back, vs) if g is not None and g.requires_grad]
        if reached:
            found = ember.autograd.grad([g for g, _ in reached], seeds, [x for _, x in reached],
                                        create_graph=create_graph, allow_unused=True)
        else:
            found = [None] * len(seeds)
        tangents = _zeros_for_none(list(found), outputs, strict,
                                   "The jacobian of the user-provided function is independent of input {i}.")
    return _unpacked(_finished(outputs, create_graph), outputs_tuple), \
        _unpacked(_finished(tangents, create_graph), outputs_tuple)


def _refuse_constant(values, message: str) -> None:
    """In strict mode: each of ``values`` must depend on the inputs (require grad)."""
    for i, v in enumerate(values):
        if not v.requires_grad:
            raise RuntimeError(message.format(i=i))


def _scalar_output(func: Callable, inputs: tuple, fn: str) -> Tensor:
    is_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn)
    if is_tuple or len(outputs) != 1:
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should contain a single element")
    return outputs[0]


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``(func(inputs), v^T H)`` for a function with one scalar output.

    >>> vhp(lambda x: (x ** 3).sum(), ember.tensor([1., 2.]), ember.tensor([1., 1.]))
    (tensor(9.), tensor([ 6., 12.]))
    """
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``(func(inputs), H v)`` for a function with one scalar output (H is symmetric: the same as ``vhp``).

    >>> hvp(lambda x: (x ** 3).sum(), ember.tensor([1., 2.]), ember.tensor([1., 0.]))
    (tensor(9.), tensor([6., 0.]))
    """
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func: Callable, inputs, v, create_graph: bool, strict: bool, fn: str) -> tuple:
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn)
        inputs = _prepared(inputs, create_graph)
        vs = _checked_v(v, inputs, create_graph, fn) if v is not None else \
            _default_v(inputs, "the input to the user-provided function is")
        output = _scalar_output(func, inputs, fn)
        if strict:
            _refuse_constant((output,), "Output {i} of the user-provided function does not require gradients. The "
                                        "outputs must be computed in a differentiable manner from the input when "
                                        "running in strict mode.")
        first = _zeros_for_none(_grads((output,), inputs, (ember.ones_like(output),), True), inputs, strict,
                                _INDEPENDENT)
        if strict:
            _refuse_constant(first, _JACOBIAN_CONSTANT)
        pairs = [(g, x) for g, x in zip(first, vs) if g.requires_grad]
        found = list(ember.autograd.grad([g for g, _ in pairs], inputs, [x for _, x in pairs],
                                         create_graph=create_graph, allow_unused=True)) if pairs else \
            [None] * len(inputs)
        products = _zeros_for_none(found, inputs, strict,
                                   "The hessian of the user-provided function with respect to input {i} is "
                                   "independent of the input.")
    return _finished((output,), create_graph)[0], _unpacked(_finished(products, create_graph), inputs_tuple)


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for each output and input, a tensor of shape ``out + in``.

    >>> jacobian(lambda x, y: x * y, (ember.tensor([1., 2.]), ember.tensor([3., 4.])))
    (tensor([[3., 0.],
            [0., 4.]]), tensor([[1., 0.],
            [0., 2.]]))
    """
    if strategy not in ("forward-mode", "reverse-mode"):  # (torch asserts it: an AssertionError)
        raise AssertionError(
            f'jacobian: Expected strategy to be either "forward-mode" or "reverse-mode", got {strategy!r}. Hint: '
            'if your function has more outputs than inputs, "forward-mode" tends to be faster; otherwise prefer '
            '"reverse-mode".'
        )
    if strategy == "forward-mode":
        return _forward_jacobian(func, inputs, create_graph, strict, vectorize)
    if vectorize and strict:
        raise RuntimeError(
            "ember.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported together. "
            "Please either set `strict=False` or `vectorize=False`."
        )
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepared(inputs, create_graph)
        outputs_tuple, outputs = _outputs(func, inputs, "jacobian", strict)
        rows = tuple(_output_rows(i, o, inputs, create_graph, strict) for i, o in enumerate(outputs))
    return _unpacked_jacobian(tuple(_finished(r, create_graph) for r in rows), outputs_tuple, inputs_tuple)


def _output_rows(index: int, output: Tensor, inputs: tuple, create_graph: bool, strict: bool) -> tuple:
    """d output / d each input, shaped ``output.shape + input.shape``: one backward per element of ``output``."""
    flat = output.reshape(-1)
    per_input = [[] for _ in inputs]
    for k in range(flat.numel()):
        grads = _grads((flat[k],), inputs, (ember.ones((), dtype=output.dtype),), create_graph)
        for j, (g, x) in enumerate(zip(grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {index} of the user-provided function is independent of input {j}. "
                                       "This is not allowed in strict mode.")
                g = ember.zeros_like(x)
            per_input[j].append(g)
    return tuple(_stacked(parts, tuple(output.shape) + tuple(x.shape), x)
                 for parts, x in zip(per_input, inputs))


def _stacked(parts: list, shape: tuple, like: Tensor) -> Tensor:
    if not parts:
        return ember.zeros(shape, dtype=like.dtype)
    return ember.stack(parts).reshape(shape)


def _forward_jacobian(func: Callable, inputs, create_graph: bool, strict: bool, vectorize: bool):
    """Columns of the Jacobian by forward-mode AD: one tangent per element of the inputs."""
    if create_graph:
        raise NotImplementedError(
            'ember.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-mode"` are not '
            'supported together (yet). Please either set `create_graph=False` or `strategy="reverse-mode"`.'
        )
    if strict:
        raise RuntimeError(
            'ember.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not supported '
            'together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.'
        )
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is only implemented for "
            "`vectorize=True`."
        )
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    columns = [[] for _ in inputs]  # per input: per element of it, the tangent of every output
    outputs_tuple, outputs = False, ()
    for j, x in enumerate(inputs):
        for k in range(x.numel()):
            basis = ember.zeros(x.numel(), dtype=x.dtype)
            basis[k] = 1
            outputs_tuple, outputs, tangents = _pushed(func, inputs, j, basis.reshape(x.shape))
            columns[j].append(tangents)
    rows = [
        [_column_block(columns[j], i, o, x) for j, x in enumerate(inputs)] for i, o in enumerate(outputs)
    ] if outputs else []
    if not outputs:
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        rows = [[ember.zeros(tuple(o.shape) + tuple(x.shape), dtype=o.dtype) for x in inputs] for o in outputs]
    # lists, as torch's forward-mode Jacobian nests them: a list per output when the inputs are a tuple, a list
    # of those when the outputs are too (a tuple of tensors when only the outputs are)
    return _unpacked_jacobian(rows, outputs_tuple, inputs_tuple)


def _pushed(func: Callable, inputs: tuple, j: int, tangent: Tensor) -> tuple:
    """``func`` at ``inputs`` with ``tangent`` on input ``j``: (outputs were a tuple, outputs, their tangents)."""
    with forward_ad.dual_level():
        duals = tuple(forward_ad.make_dual(x.detach(), tangent) if i == j else x.detach()
                      for i, x in enumerate(inputs))
        is_tuple, outputs = _as_tuple(func(*duals), "outputs of the user-provided function", "jacobian")
        unpacked = [forward_ad.unpack_dual(o) for o in outputs]
    tangents = [u.tangent if u.tangent is not None else ember.zeros_like(o) for u, o in zip(unpacked, outputs)]
    return is_tuple, tuple(u.primal.detach() for u in unpacked), tangents


def _column_block(columns: list, i: int, output: Tensor, x: Tensor) -> Tensor:
    """Output ``i``'s tangents for each element of input ``x``, as ``output.shape + x.shape``."""
    stacked = ember.stack([c[i] for c in columns], dim=-1) if columns else \
        ember.zeros(tuple(output.shape) + (0,), dtype=output.dtype)
    return stacked.reshape(tuple(output.shape) + tuple(x.shape))


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a function with one scalar output: the Jacobian of its gradient.

    >>> hessian(lambda x, y: (x * y).sum(), (ember.tensor([1.]), ember.tensor([2.])))
    ((tensor([[0.]]), tensor([[1.]])), (tensor([[1.]]), tensor([[0.]])))
    """
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):  # (torch asserts it: an AssertionError)
        raise AssertionError(f'hessian: Expected strategy to be either "forward-mode" or "reverse-mode" for '
                             f"outer_jacobian_strategy, got {outer_jacobian_strategy!r}")

    def scalar(*xs):
        return _scalar_output(func, xs, "hessian").squeeze()

    def gradient(*xs):
        if outer_jacobian_strategy == "forward-mode":
            xs = tuple(x.requires_grad_(True) for x in xs)  # kept as views (with their tangents) by _prepared
        grads = jacobian(scalar, xs, create_graph=True)
        grads = grads if isinstance(grads, tuple) else (grads,)
        if strict:
            _refuse_constant(grads, _JACOBIAN_CONSTANT)
        return grads

    result = jacobian(gradient, inputs if inputs_tuple else inputs[0], create_graph=create_graph, strict=strict, vectorize=vectorize,
                      strategy=outer_jacobian_strategy)
    return result if inputs_tuple else result[0]  # the gradient is always a tuple: one row per input
