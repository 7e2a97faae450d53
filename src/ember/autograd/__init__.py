"""Automatic differentiation: ``backward``, ``grad``, custom ``Function``s and gradient checking.

>>> import ember
>>> x = ember.tensor([3.], requires_grad=True)
>>> (dx,) = ember.autograd.grad(x ** 3, x, create_graph=True)
>>> dx
tensor([27.], grad_fn=<MulBackward0>)
>>> ember.autograd.grad(dx, x)
(tensor([18.]),)
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Sequence

import numpy as np

from ember._tensor import Tensor
from ember.overrides import handle_torch_function, has_torch_function, is_tensor_like, overridable  # noqa: F401
from ember.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly
from ember.autograd.engine import run_backward, warn_create_graph_cycle
from ember.autograd.graph import GradientEdge
from ember.autograd.function import Function, FunctionCtx, InplaceFunction, once_differentiable
from ember.autograd.grad_mode import (
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
)
from ember.autograd._engine_settings import (
    enforce_grad_layout_policy, is_multithreading_enabled, is_view_replay_enabled, set_multithreading_enabled,
)

__all__ = [
    "Function", "FunctionCtx", "InplaceFunction", "NestedIOFunction", "Variable", "backward", "detect_anomaly",
    "enable_grad", "enforce_grad_layout_policy", "grad", "gradcheck", "gradgradcheck", "inference_mode",
    "is_grad_enabled", "no_grad", "once_differentiable", "set_detect_anomaly", "set_grad_enabled",
    "set_multithreading_enabled", "variable",
]


autograd_function = overridable("ember.autograd")
"""As torch's: ``grad`` and ``backward`` dispatch through ``__torch_function__`` (a subclass's gradients keep it)."""


def _as_tuple(value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, Tensor):
        return (value,)
    return tuple(value)


def _inputs_tuple(inputs, op: str) -> tuple:
    """``inputs`` as a tuple: one tensor, a sequence, or (as torch) a dict, whose values are taken."""
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(
            f"`inputs` argument to `{op}()` must be a dict, not {type(inputs).__name__}. "
            "Other Mapping types are not supported; pass dict(inputs)"
        )
    if isinstance(inputs, GradientEdge):  # one edge (itself a tuple)
        return (inputs,)
    return _as_tuple(inputs)


def _root_gradients(outputs: tuple, grad_outputs, op: str) -> list:
    """Pair each output with its gradient, creating ones for scalars as torch does."""
    grads = _as_tuple(grad_outputs)[:len(outputs)] if grad_outputs is not None else (None,) * len(outputs)
    for grad in grads:  # as torch: a gradient of the wrong type is named before a count mismatch; extras are ignored
        if grad is not None and not isinstance(grad, Tensor):
            raise TypeError(f"{op}: gradients can be either Tensors or None, but got {type(grad).__name__}")
    if len(grads) != len(outputs):
        raise RuntimeError(
            f"{op}: got {len(outputs)} tensors and {len(grads)} gradients; give one gradient (or None) per tensor"
        )
    roots = []
    for i, (out, grad) in enumerate(zip(outputs, grads)):
        if not isinstance(out, Tensor):
            raise TypeError(f"{op}: outputs must be tensors, but output {i} is a {type(out).__name__}")
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if grad is None:
            if out._data.size != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs (output {i} has shape "
                    f"{list(out._data.shape)}); pass a gradient of that shape, e.g. y.backward(ember.ones_like(y))"
                )
            if out._data.dtype.kind == "c":
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs (output {i} is {out.dtype}); "
                    "take a real loss first, e.g. z.abs().sum() or z.real.sum(), or pass a gradient"
                )
            grad = Tensor._wrap(np.ones(out._data.shape, out._data.dtype))
        elif grad._data.shape != out._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {list(grad._data.shape)} and output[{i}] "
                f"has a shape of {list(out._data.shape)}."
            )
        elif grad._data.dtype != out._data.dtype:
            grad = grad.to(out.dtype)  # as torch: the gradient takes its output's dtype
        roots.append((out, grad))
    return roots


@autograd_function
def backward(tensors: Tensor | Sequence[Tensor], grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
             retain_graph: bool | None = None, create_graph: bool = False,
             grad_variables: Tensor | Sequence[Tensor | None] | None = None,
             inputs: Tensor | Sequence[Tensor] | None = None) -> None:
    """Accumulate into ``.grad`` of the leaves the gradient of ``tensors`` (weighted by ``grad_tensors``)."""
    if grad_variables is not None:
        grad_tensors = _deprecated_grad_variables(grad_tensors, grad_variables)
    outputs = _as_tuple(tensors)
    roots = _root_gradients(outputs, grad_tensors, "backward")
    if retain_graph is None:
        retain_graph = create_graph
    targets = _inputs_tuple(inputs, "backward") if inputs is not None else None
    if targets is not None and not targets:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    for i, t in enumerate(targets or ()):
        if not isinstance(t, Tensor):
            raise RuntimeError(
                f"backward: all inputs have to be Tensors or GradientEdges, but got {type(t).__name__} "
                f"(inputs[{i}]); pass the tensors whose .grad to fill"
            )
        if not t._requires_grad:
            raise RuntimeError(
                f"backward: inputs[{i}] does not require grad, so no gradient can be stored for it "
                "(can't retain_grad on Tensor that has requires_grad=False); pass tensors that require grad"
            )
        t.retain_grad()  # as torch: a non-leaf input keeps its .grad (its hooks' result), now and in later passes
    if create_graph:
        warn_create_graph_cycle()
    run_backward(roots, retain_graph, create_graph, targets, accumulate=True)


def _deprecated_grad_variables(grad_tensors, grad_variables):
    warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.", FutureWarning, stacklevel=3)
    if grad_tensors is not None:
        raise RuntimeError(
            "`grad_tensors` and `grad_variables` (deprecated) arguments both passed to `backward()`. "
            "Please only use `grad_tensors`."
        )
    return grad_variables


@autograd_function
def grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor],
         grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
         retain_graph: bool | None = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs``, returned instead of accumulated."""
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate gradient for "
            "other parts of the graph, please use ember.autograd.backward.",
            FutureWarning,
            stacklevel=2,
        )
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "grad: Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
            "allow_unused=False. Drop allow_unused (materialize_grads implies it)."
        )
    outs = _as_tuple(outputs)
    ins = _inputs_tuple(inputs, "grad")
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    for i, t in enumerate(ins):
        if isinstance(t, GradientEdge):
            continue
        if not isinstance(t, Tensor):
            raise RuntimeError(
                f"grad: all inputs have to be Tensors or GradientEdges, but got {type(t).__name__} "
                f"(input {i}); pass the tensors to differentiate with respect to"
            )
    if allow_unused is None:
        allow_unused = materialize_grads
    if type(inputs) is dict:
        result = grad(outputs, ins, grad_outputs, retain_graph, create_graph, True, allow_unused,
                      is_grads_batched, materialize_grads)
        return dict(zip(inputs.keys(), result))
    if is_grads_batched:
        return _grad_batched(outs, ins, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_gradients(outs, grad_outputs, "grad")  # as torch, the outputs are checked before the inputs
    if not all(isinstance(t, GradientEdge) or t.requires_grad for t in ins):  # (a view made under no_grad too)
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    found = run_backward(roots, retain_graph, create_graph, ins, accumulate=False)
    result = []
    for i, (t, g) in enumerate(zip(ins, found)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads and isinstance(t, Tensor):
                g = _zero_gradient(t, create_graph)
        result.append(g)
    return tuple(result)


def _zero_gradient(t: Tensor, create_graph: bool) -> Tensor:
    """materialize_grads' gradient of an unused input: zeros of its shape (with is_grads_batched too, no batch
    dimension), requiring grad under create_graph, as torch makes them."""
    g = Tensor._wrap(np.zeros(t._data.shape, t._data.dtype))
    g._requires_grad = bool(create_graph)
    return g


def _grad_batched(outs: tuple, ins: tuple, grad_outputs, retain_graph, create_graph: bool, allow_unused: bool,
                  materialize_grads: bool) -> tuple:
    """``is_grads_batched``: the first dimension of each grad_output indexes a batch.

    As torch, one backward pass for the whole batch: vmap runs ``grad`` on the batched grad_outputs, each
    node's formula once, on batched gradients (see ``ember.func._backward``). A formula that cannot run so
    (an op without a batching rule, a ``.numpy()`` call, a hook) makes it fall back, with torch's kind of
    warning, to one backward per entry, with the same results; the failed pass freed nothing of the graph.
    """
    grads = _as_tuple(grad_outputs)
    _check_batched_grad_outputs(outs, grads)
    found = _grad_batched_found(outs, ins, grads, retain_graph, create_graph, allow_unused)
    if not materialize_grads:
        return found
    return tuple(_zero_gradient(t, create_graph) if g is None and isinstance(t, Tensor) else g
                 for g, t in zip(found, ins))


def _grad_batched_found(outs: tuple, ins: tuple, grads: tuple, retain_graph, create_graph: bool,
                        allow_unused: bool) -> tuple:
    """The batched gradients of ``ins`` (None for an unused one): in one pass if it can run batched, else one
    backward per entry of the batch."""
    try:
        return _grad_vectorised(outs, ins, grads, retain_graph, create_graph, allow_unused)
    except RuntimeError as error:
        if not str(error).startswith("vmap:"):  # not a refusal of vmap's, but an error the loop would meet too
            raise
        warnings.warn(
            f"grad(is_grads_batched=True): there is a performance drop because the backward pass could not run "
            f"batched ({error}); computing it once per entry of the batch instead",
            UserWarning,
            stacklevel=4,
        )
    size = grads[0]._data.shape[0]
    entries = [
        grad(outs, ins, [g[b] for g in grads], retain_graph=True if b < size - 1 else retain_graph,
             create_graph=create_graph, allow_unused=allow_unused)
        for b in range(size)
    ]
    return tuple(_stack_entries([entry[i] for entry in entries], t, size) for i, t in enumerate(ins))


def _check_batched_grad_outputs(outs: tuple, grads: tuple) -> None:
    """One grad_output per output, each the output's shape behind one batch dimension shared by all."""
    if len(grads) != len(outs) or any(not isinstance(g, Tensor) or g._data.ndim == 0 for g in grads):
        raise RuntimeError(
            "grad: with is_grads_batched=True, give one grad_output per output, each with a leading batch "
            "dimension (e.g. grad_outputs=ember.eye(n) for the rows of a Jacobian)"
        )
    for i, (g, out) in enumerate(zip(grads, outs)):
        if g._data.shape[1:] != out._data.shape:
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                "dimension. The sizes of the remaining dimensions are expected to match the shape of corresponding "
                f"output, but a mismatch was detected: grad_output[{i}] has a shape of {list(g.shape[1:])} and "
                f"output[{i}] has a shape of {list(out.shape)}. If you only want some tensors in `grad_output` to be "
                "considered batched, consider using vmap."
            )
    sizes = sorted({g._data.shape[0] for g in grads})
    if len(sizes) != 1:
        raise RuntimeError(f"grad: with is_grads_batched=True all grad_outputs need one batch size, got {sizes}")


def _grad_vectorised(outs: tuple, ins: tuple, grads: tuple, retain_graph, create_graph: bool,
                     allow_unused: bool) -> tuple:
    """The batched gradients of ``ins`` in one backward pass, under vmap; None for an input given none."""
    from ember.func import vmap  # (ember.func is built on autograd: imported when first needed)

    unused: list = []  # which inputs got no gradient: vmap's function may return only tensors

    def one_entry(*entry):
        found = grad(outs, ins, entry, retain_graph=retain_graph, create_graph=create_graph,
                     allow_unused=allow_unused)
        unused[:] = [g is None for g in found]
        return tuple(g for g in found if g is not None)

    stacked = iter(vmap(one_entry)(*grads))
    return tuple(None if gone else next(stacked) for gone in unused)


def _stack_entries(entries: list, like: Tensor, size: int) -> Tensor | None:
    """The per-entry gradients of one input, stacked along a new first dimension (differentiably if they are)."""
    if size and all(e is None for e in entries):
        return None
    out = Tensor._wrap(np.zeros((size,) + like._data.shape, like._data.dtype))
    for b, entry in enumerate(entries):
        if entry is None:
            continue
        if entry._requires_grad:
            out[b] = entry  # recorded (CopySlices): the stacked gradient stays differentiable
        else:
            out._data[b] = entry._data
    return out


def Variable(data: Tensor, requires_grad: bool = False, volatile: bool = False) -> Tensor:
    """The pre-0.4 wrapper: now just the tensor itself (with ``requires_grad`` set if asked)."""
    if volatile:
        warnings.warn("volatile was removed and now has no effect. Use `with ember.no_grad():` instead.",
                      UserWarning, stacklevel=2)
    if requires_grad:
        data.requires_grad_(True)
    return data


def variable(*args, **kwargs):
    """Gone: raises, as torch's does, pointing to ``ember.tensor``."""
    raise RuntimeError("ember.autograd.variable(...) is deprecated, use ember.tensor(...) instead")


from ember.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402
from ember.autograd import anomaly_mode, function, grad_mode  # noqa: E402,F401
from ember.autograd import forward_ad  # noqa: E402,F401
from ember.autograd import functional  # noqa: E402,F401
from ember.autograd._nested_io import NestedIOFunction  # noqa: E402
from ember.profiler import ProfilerActivity, kineto_available  # noqa: E402,F401  (torch.autograd has them too)
from ember.autograd.check import FunctionCheckError, FunctionCheckReport, check_function  # noqa: E402,F401
from ember.autograd.saved_attributes import SavedTensor  # noqa: E402,F401
from ember.autograd._profiler_types import DeviceType, ProfilerConfig, ProfilerEvent, ProfilerState  # noqa: E402,F401
