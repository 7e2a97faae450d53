"""The recurrences behind ``nn.RNN``, ``nn.LSTM``, ``nn.GRU`` and their cells, composed from ember ops.

A sequence runs as ``data`` of shape ``[N, features]`` with ``batch_sizes`` (how many rows are active at each
step, non-increasing): a padded ``[T, B, features]`` input is the case where every step has ``B`` rows, a packed
sequence the general one. The input projection of all steps is one matmul up front; each step then costs one
matmul with the hidden weights, so gradients and double backward come from the ops.

>>> import ember
>>> from ember.nn._functional.recurrent import lstm_cell
>>> w_ih, w_hh = ember.ones(8, 3), ember.ones(8, 2)
>>> h, c = lstm_cell(ember.zeros(1, 3), (ember.zeros(1, 2), ember.zeros(1, 2)), w_ih, w_hh)
>>> h.shape, c.shape
(ember.Size([1, 2]), ember.Size([1, 2]))
"""
from __future__ import annotations

import functools
from typing import Callable, Sequence

import numpy as np

import ember
from ember import _blas
from ember._tensor import Tensor
from ember._ops._support import wrap
from ember.autograd import Function
from ember.nn import functional as F

__all__ = ["gru_cell", "lstm_cell", "rnn_relu_cell", "rnn_tanh_cell", "run_direction"]


def _linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    return F.linear(x, weight, bias)


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
                  b_hh: Tensor | None = None) -> Tensor:
    """One Elman step with ``tanh``: ``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""
    return ember.tanh(_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh))


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
                  b_hh: Tensor | None = None) -> Tensor:
    """One Elman step with ``relu``."""
    return ember.relu(_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh))


def _activations(gates, c):
    """The gates ``i, f, g, o`` after their nonlinearities, the new cell and its tanh, and the four gates'
    slopes (their derivatives, stacked as the gates); on arrays or tensors."""
    if isinstance(gates, np.ndarray):
        hidden = gates.shape[-1] // 4
        scale, shift, square = _gate_scales(hidden, gates.dtype)
        # one tanh for all four gates: sigmoid(x) = (tanh(x / 2) + 1) / 2 (no overflow warning for large -x),
        # whose slope sigmoid * (1 - sigmoid) is (1 - tanh(x / 2)**2) / 4: scale**2 * (1 - tanh**2) for all four
        active = np.multiply(gates, scale)
        np.tanh(active, out=active)
        slopes = np.square(active)
        np.subtract(1, slopes, out=slopes)
        slopes *= square
        active *= scale
        active += shift
        i, f, g, o = (active[..., k * hidden:(k + 1) * hidden] for k in range(4))
        c_new = f * c
        c_new += i * g
        return i, f, g, o, c_new, np.tanh(c_new), slopes
    i, f, g, o = gates.chunk(4, -1)
    i, f, g, o = ember.sigmoid(i), ember.sigmoid(f), ember.tanh(g), ember.sigmoid(o)
    c_new = f * c + i * g
    slopes = ember.cat([i * (1 - i), f * (1 - f), 1 - g * g, o * (1 - o)], -1)
    return i, f, g, o, c_new, ember.tanh(c_new), slopes


@functools.lru_cache(maxsize=16)
def _gate_scales(hidden: int, dtype) -> tuple:
    """Per column of the stacked gates ``[i, f, g, o]``: 1/2 for the three sigmoids, 1 for the tanh, the
    shift that completes a sigmoid, and the scale's square (for the slopes)."""
    scale = np.full(4 * hidden, 0.5, dtype)
    scale[2 * hidden:3 * hidden] = 1
    shift = np.where(scale == 0.5, 0.5, 0).astype(dtype)
    return scale, shift, scale * scale


class LstmGates(Function):
    """The elementwise part of an LSTM step, fused: ``(h, c)`` from the gate pre-activations and the old cell.

    The step's dozen small ops become one node; the backward reuses the forward's activations, and recomputes
    them in ember ops when a graph of the gradient is needed, so double backward still works.
    """

    backward_name = "LstmGatesBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, gates, c):
        i, f, g, o, c_new, tanh_c, slopes = _activations(gates._data, c._data)
        ctx.save_for_backward(gates, c)
        ctx.arrays = (i, f, g, o, tanh_c, c._data, slopes)
        return wrap(o * tanh_c), wrap(c_new)

    @staticmethod
    def backward(ctx, grad_h, grad_c):
        if isinstance(grad_h, np.ndarray):
            saved, join = ctx.arrays, np.concatenate
        else:
            gates, c = ctx.saved_tensors
            (i, f, g, o, _, tanh_c, slopes), join = _activations(gates, c), ember.cat
            saved = (i, f, g, o, tanh_c, c, slopes)
        return _gate_gradients(grad_h, grad_c, saved, join)


def _gate_gradients_into(out: np.ndarray, grad_h: np.ndarray, grad_c: np.ndarray, saved: tuple) -> np.ndarray:
    """``_gate_gradients`` on arrays, the gates' gradients written into ``out`` ``[B, 4H]`` (the step's rows of
    all steps' gradients: no join, no per-step array of them); returns the old cell's gradient."""
    i, f, g, o, tanh_c, c, slopes = saved
    hidden = i.shape[-1]
    grad_cell = np.multiply(tanh_c, tanh_c)
    np.subtract(1, grad_cell, out=grad_cell)
    np.multiply(grad_cell, np.multiply(grad_h, o), out=grad_cell)
    grad_cell += grad_c
    for k, (first, second) in enumerate(((grad_cell, g), (grad_cell, c), (grad_cell, i), (grad_h, tanh_c))):
        np.multiply(first, second, out=out[:, k * hidden:(k + 1) * hidden])
    out *= slopes
    return np.multiply(grad_cell, f, out=grad_cell)


def _gate_gradients(grad_h, grad_c, saved: tuple, join: Callable) -> tuple:
    """One step's gradients: of the stacked gate pre-activations and of the old cell, from those of the new
    ``h`` and ``c`` and the step's activations ``(i, f, g, o, tanh(c_new), c_old, slopes)``; on arrays or
    tensors."""
    i, f, g, o, tanh_c, c, slopes = saved
    grad_cell = grad_c + grad_h * o * (1 - tanh_c * tanh_c)
    # each gate's output gradient, then all four times their slopes at once
    return join((grad_cell * g, grad_cell * c, grad_cell * i, grad_h * tanh_c), -1) * slopes, grad_cell * f


class LstmSequence(Function):
    """An LSTM layer's whole recurrence as one op: from the projected inputs of every step ``[N, 4H]`` (rows
    grouped by step, ``batch_sizes`` rows each), the first state ``h0, c0`` ``[B, H]`` and ``w_hh``, the
    outputs ``[N, H]`` and the last state.

    Per step the forward costs one small matmul and the gates' arithmetic on arrays, with no node recorded;
    the backward walks the steps back once and finds ``w_hh``'s gradient in one matmul over all steps. Both
    are written once, for arrays and for tensors: with ``create_graph`` the forward is rerun in ember ops to
    get activations that carry a graph, and the same backward on them records the gradient's graph.
    """

    backward_name = "LstmSequenceBackward0"
    backward_on_arrays = True

    @staticmethod
    def forward(ctx, projected, h0, c0, w_hh, batch_sizes, reverse):
        out, h, c, saved = _lstm_sequence(projected._data, h0._data, c0._data, w_hh._data, batch_sizes, reverse)
        ctx.save_for_backward(projected, h0, c0, w_hh)
        ctx.batch_sizes, ctx.reverse, ctx.activations = batch_sizes, reverse, saved
        return wrap(out), wrap(h), wrap(c)

    @staticmethod
    def backward(ctx, grad_out, grad_h, grad_c):
        projected, h0, c0, w_hh = ctx.saved_tensors
        # the forward's activations serve one first-order backward (a second one, with retain_graph, reruns it)
        saved, ctx.activations = ctx.activations, None
        arrays = isinstance(grad_out if grad_out is not None else grad_h if grad_h is not None else grad_c, np.ndarray)
        if saved is None or not arrays:
            saved = _lstm_sequence(projected, h0, c0, w_hh, ctx.batch_sizes, ctx.reverse)[3]
        join = np.concatenate if arrays else ember.cat
        return _lstm_sequence_backward(grad_out, grad_h, grad_c, h0, w_hh, saved, ctx.reverse, join) + (None, None)


def _step_slices(batch_sizes: Sequence[int], reverse: bool) -> list:
    """``(rows, size)`` of each step in the order the recurrence visits them."""
    starts = np.concatenate([[0], np.cumsum(batch_sizes)[:-1]]).tolist()
    slices = [(slice(start, start + size), size) for start, size in zip(starts, batch_sizes)]
    return slices[::-1] if reverse else slices


def _lstm_sequence(x, h, c, w_hh, batch_sizes: Sequence[int], reverse: bool) -> tuple:
    """The recurrence on arrays or tensors: outputs ``[N, H]``, last ``h`` and ``c``, and what the backward
    reads: per step its rows, activations and the ``h`` it started from."""
    arrays = isinstance(x, np.ndarray)
    join = np.concatenate if arrays else ember.cat
    # a contiguous copy of the transpose: OpenBLAS multiplies a few rows by it twice as fast as by the view
    w_t = np.ascontiguousarray(w_hh.T) if arrays else w_hh.T
    outputs, saved = [None] * len(batch_sizes), []
    for t, (rows, size) in enumerate(_step_slices(batch_sizes, reverse)):
        h_old, c_old = _first_rows(h, size), _first_rows(c, size)
        gates = h_old @ w_t
        if arrays and gates.dtype != x.dtype:  # (NumPy multiplies bfloat16 matrices into float32)
            gates = gates.astype(x.dtype)
        gates += x[rows]
        i, f, g, o, c_new, tanh_c, slopes = _activations(gates, c_old)
        h_new = o * tanh_c
        saved.append((rows, (i, f, g, o, tanh_c, c_old, slopes), h_old))
        outputs[len(batch_sizes) - 1 - t if reverse else t] = h_new
        h, c = _with_rows(h, h_new, join), _with_rows(c, c_new, join)
    return join(outputs, 0), h, c, saved


def _lstm_sequence_backward(grad_out, grad_h, grad_c, h0, w_hh, saved: list, reverse: bool, join: Callable) -> tuple:
    """The gradients of the projected inputs, ``h0``, ``c0`` and ``w_hh``: the steps walked back once, then
    one matmul for ``w_hh`` over every step's gate gradients and starting ``h``."""
    zeros = np.zeros_like if isinstance(w_hh, np.ndarray) else ember.zeros_like
    grad_h = zeros(h0) if grad_h is None else grad_h
    grad_c = zeros(h0) if grad_c is None else grad_c
    if isinstance(w_hh, np.ndarray):
        return _lstm_sequence_backward_arrays(grad_out, grad_h, grad_c, w_hh, saved)
    gate_grads, starts = [None] * len(saved), [None] * len(saved)
    for t in range(len(saved) - 1, -1, -1):
        rows, activations, h_old = saved[t]
        gates, cell = _gate_gradients(*_incoming(grad_out, grad_h, grad_c, rows, h_old.shape[0]), activations, join)
        index = len(saved) - 1 - t if reverse else t  # in row order, as the projected inputs
        gate_grads[index], starts[index] = gates, h_old
        grad_h, grad_c = _with_rows(grad_h, gates @ w_hh, join), _with_rows(grad_c, cell, join)
    all_gates = join(gate_grads, 0)
    return all_gates, grad_h, grad_c, all_gates.T @ join(starts, 0)


def _lstm_sequence_backward_arrays(grad_out, grad_h, grad_c, w_hh, saved: list) -> tuple:
    """``_lstm_sequence_backward`` on arrays: each step's gate gradients written in place in one array of all
    steps' (rows in the projected inputs' order, whichever the direction), then ``w_hh``'s in one matmul."""
    all_gates = np.empty((sum(h_old.shape[0] for _, _, h_old in saved), w_hh.shape[0]), w_hh.dtype)
    starts = np.empty((all_gates.shape[0], w_hh.shape[1]), w_hh.dtype)
    for t in range(len(saved) - 1, -1, -1):
        rows, activations, h_old = saved[t]
        gates = all_gates[rows]
        cell = _gate_gradients_into(gates, *_incoming(grad_out, grad_h, grad_c, rows, h_old.shape[0]), activations)
        starts[rows] = h_old
        grad_h, grad_c = _with_rows(grad_h, gates @ w_hh, np.concatenate), _with_rows(grad_c, cell, np.concatenate)
    return all_gates, grad_h, grad_c, _blas.matmul(all_gates.T, starts)


def _incoming(grad_out, grad_h, grad_c, rows: slice, size: int) -> tuple:
    """The gradients reaching a step's new ``h`` (from the output and from the next step) and new ``c``."""
    step_grad_h = _first_rows(grad_h, size)
    if grad_out is not None:
        step_grad_h = grad_out[rows] + step_grad_h
    return step_grad_h, _first_rows(grad_c, size)


def _with_rows(state, new, join: Callable):
    """``state`` with its first rows replaced by ``new`` (rows of ended sequences keep their value)."""
    return new if new.shape[0] == state.shape[0] else join([new, state[new.shape[0]:]], 0)


def _lstm_gates(gates: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    """New ``(h, c)`` from the four stacked gate pre-activations ``[i, f, g, o]``."""
    return LstmGates.apply(gates, c)


def lstm_cell(input: Tensor, hx: tuple[Tensor, Tensor], w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """One LSTM step; the gates are stacked in torch's order input, forget, cell, output."""
    h, c = hx
    return _lstm_gates(_linear(input, w_ih, b_ih) + _linear(h, w_hh, b_hh), c)


def _gru_update(x_gates: Tensor, h_gates: Tensor, h: Tensor) -> Tensor:
    x_r, x_z, x_n = x_gates.chunk(3, -1)
    h_r, h_z, h_n = h_gates.chunk(3, -1)
    r = ember.sigmoid(x_r + h_r)
    z = ember.sigmoid(x_z + h_z)
    n = ember.tanh(x_n + r * h_n)
    return n + z * (h - n)


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None) -> Tensor:
    """One GRU step; the gates are stacked in torch's order reset, update, new."""
    return _gru_update(_linear(input, w_ih, b_ih), _linear(hx, w_hh, b_hh), hx)


def _step_rows(projected: Tensor, batch_sizes: Sequence[int]) -> tuple[Tensor, ...]:
    """The rows of each step in ``projected`` ``[N, G]`` (one split: its gradient is one cat, not a sum of
    full-size pieces)."""
    return projected.split(list(batch_sizes), 0)


def _first_rows(state: Tensor, size: int) -> Tensor:
    return state if size == state.shape[0] else state[:size]


def _advance(state: Tensor, new: Tensor) -> Tensor:
    """``state`` with its first rows replaced by ``new``: rows whose sequence has ended keep their value."""
    if new.shape[0] == state.shape[0]:
        return new
    return ember.cat([new, state[new.shape[0]:]], 0)


def run_direction(mode: str, data: Tensor, batch_sizes: Sequence[int], state: tuple, weights: Sequence,
                  reverse: bool) -> tuple[Tensor, tuple]:
    """One layer in one direction over ``data`` ``[N, I]``: its output ``[N, H]`` and final ``state``.

    ``weights`` is ``(w_ih, w_hh, b_ih, b_hh[, w_hr])`` (biases may be ``None``); ``state`` is ``(h,)``, or
    ``(h, c)`` for an LSTM, each ``[B, ...]``.
    """
    w_ih, w_hh, b_ih, b_hh = weights[:4]
    w_hr = weights[4] if len(weights) > 4 else None
    step = _STEPS[mode]
    if mode == "GRU":
        steps_in = _step_rows(_linear(data, w_ih, b_ih), batch_sizes)
    else:  # the hidden bias is constant over steps: added once with the input projection
        bias = b_ih + b_hh if b_ih is not None else None
        projected, b_hh = _linear(data, w_ih, bias), None
        if mode == "LSTM" and w_hr is None:
            output, h, c = LstmSequence.apply(projected, *state, w_hh, tuple(batch_sizes), reverse)
            return output, (h, c)
        steps_in = _step_rows(projected, batch_sizes)
    outputs = [None] * len(batch_sizes)
    order = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
    for t in order:
        size = batch_sizes[t]
        new = step(steps_in[t], tuple(_first_rows(s, size) for s in state), w_hh, b_hh, w_hr)
        state = tuple(_advance(s, n) for s, n in zip(state, new))
        outputs[t] = new[0]
    return ember.cat(outputs, 0), state


def _rnn_step(nonlinearity: Callable) -> Callable:
    def step(x: Tensor, state: tuple, w_hh, b_hh, _w_hr) -> tuple:
        return (nonlinearity(x + _linear(state[0], w_hh, b_hh)),)
    return step


def _lstm_step(x: Tensor, state: tuple, w_hh, b_hh, w_hr) -> tuple:
    h, c = _lstm_gates(x + _linear(state[0], w_hh, b_hh), state[1])
    return (h if w_hr is None else _linear(h, w_hr, None), c)


def _gru_step(x: Tensor, state: tuple, w_hh, b_hh, _w_hr) -> tuple:
    return (_gru_update(x, _linear(state[0], w_hh, b_hh), state[0]),)


_STEPS = {"RNN_TANH": _rnn_step(ember.tanh), "RNN_RELU": _rnn_step(ember.relu), "LSTM": _lstm_step,
          "GRU": _gru_step}
