"""torch's top-level recurrent kernels: ``ember.lstm``, ``gru``, ``rnn_tanh``, ``rnn_relu`` and their cells.

These are the calls ``nn.LSTM`` and friends make in torch, with the weights as one flat list (per layer and
direction: ``w_ih, w_hh``, then ``b_ih, b_hh`` if ``has_biases``, then an LSTM's ``w_hr`` if it projects) and
two call forms: a padded ``input`` ``[T, B, I]`` (``[B, T, I]`` with ``batch_first``), or a packed sequence's
``data`` ``[N, I]`` with its ``batch_sizes``. They run the same recurrence as the layers
(``nn/_functional/recurrent.py``), so gradients of every order come from its ops.

>>> import ember
>>> w_ih, w_hh = ember.ones(2, 3), ember.ones(2, 2)
>>> output, h_n = ember.rnn_tanh(ember.zeros(4, 1, 3), ember.zeros(1, 1, 2), [w_ih, w_hh], False, 1, 0.0,
...                              False, False, False)
>>> output.shape, h_n.shape
(ember.Size([4, 1, 2]), ember.Size([1, 1, 2]))
"""
from __future__ import annotations

from typing import Sequence

import ember
from ember._ops._support import ember_function
from ember._tensor import Tensor
from ember.nn import functional as F
from ember.nn._functional import recurrent as _recurrent

__all__ = ["gru", "gru_cell", "lstm", "lstm_cell", "rnn_relu", "rnn_relu_cell", "rnn_tanh", "rnn_tanh_cell"]


def _layer_weights(name: str, params: Sequence[Tensor], has_biases: bool, projects: bool, num_layers: int,
                   directions: int) -> list[tuple]:
    """The flat ``params`` cut into one ``(w_ih, w_hh, b_ih, b_hh[, w_hr])`` per layer and direction."""
    per = 2 + 2 * bool(has_biases) + bool(projects)
    if len(params) != per * num_layers * directions:
        raise RuntimeError(
            f"{name}: expected {per * num_layers * directions} weights ({per} per layer and direction for "
            f"{num_layers} layer(s), {directions} direction(s), has_biases={bool(has_biases)}), got {len(params)}"
        )
    groups = []
    for start in range(0, len(params), per):
        group = list(params[start:start + per])
        weights = group[:2] + (group[2:4] if has_biases else [None, None])
        groups.append(tuple(weights) + ((group[-1],) if projects else ()))
    return groups


def _run_layers(mode: str, data: Tensor, batch_sizes: list[int], states: list[Tensor], groups: list[tuple],
                num_layers: int, dropout: float, train: bool, directions: int) -> tuple[Tensor, list[Tensor]]:
    """Every layer over ``data`` ``[N, I]``: the last layer's output and the stacked final states."""
    finals: list[list[Tensor]] = [[] for _ in states]
    for layer in range(num_layers):
        outputs = []
        for direction in range(directions):
            index = layer * directions + direction
            output, state = _recurrent.run_direction(mode, data, batch_sizes, tuple(s[index] for s in states),
                                                     groups[index], reverse=direction == 1)
            outputs.append(output)
            for store, value in zip(finals, state):
                store.append(value)
        data = ember.cat(outputs, -1) if directions == 2 else outputs[0]
        if dropout > 0 and train and layer < num_layers - 1:
            data = F.dropout(data, dropout, training=True)
    return data, [ember.stack(store, 0) for store in finals]


def _batch_sizes(name: str, batch_sizes: Tensor) -> list[int]:
    if not isinstance(batch_sizes, Tensor) or batch_sizes.dim() != 1 or batch_sizes.dtype != ember.int64:
        raise RuntimeError(f"{name}: batch_sizes must be a 1-D int64 tensor (a packed sequence's), got "
                           f"{batch_sizes!r}")
    return [int(b) for b in batch_sizes.tolist()]


def _check_states(name: str, states: list[Tensor], stacked: int, batch: int) -> None:
    for state in states:
        if state.dim() != 3 or state.shape[0] != stacked or state.shape[1] != batch:
            raise RuntimeError(f"{name}: expected hidden state of size [{stacked}, {batch}, *] "
                               f"(layers x directions, batch, hidden), got {list(state.shape)}")


def _recur(name: str, mode: str, args: tuple) -> tuple:
    """Either call form: ``(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first)`` or ``(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
    bidirectional)``; returns the output and the final states."""
    if len(args) != 9:
        raise TypeError(f"{name}() takes 9 positional arguments (the padded or the packed form), got {len(args)}")
    # the packed form has batch_sizes second; an LSTM's hx is a list, the others' a tensor
    packed = isinstance(args[1] if mode == "LSTM" else args[2], Tensor)
    if packed:
        data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = args
        sizes, batch_first = _batch_sizes(name, batch_sizes), False
    else:
        input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = args
        if input.dim() != 3:
            raise RuntimeError(f"{name}: expected a 3-D input [T, B, features] (or [B, T, features] with "
                               f"batch_first), got {list(input.shape)}")
        input = input.transpose(0, 1) if batch_first else input
        steps, batch = input.shape[0], input.shape[1]
        data, sizes = input.reshape(steps * batch, input.shape[2]), [batch] * steps
    states = list(hx) if mode == "LSTM" else [hx]
    directions = 2 if bidirectional else 1
    _check_states(name, states, num_layers * directions, sizes[0] if sizes else 0)
    projects = mode == "LSTM" and states[0].shape[2] != states[1].shape[2]
    groups = _layer_weights(name, params, has_biases, projects, num_layers, directions)
    output, finals = _run_layers(mode, data, sizes, states, groups, num_layers, dropout, train, directions)
    if not packed:
        output = output.reshape(steps, batch, output.shape[-1])
        output = output.transpose(0, 1) if batch_first else output
    return (output, *finals)


@ember_function
def lstm(*args) -> tuple[Tensor, Tensor, Tensor]:
    """A multi-layer LSTM over a padded or packed sequence: ``(output, h_n, c_n)``.

    ``lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)`` or
    ``lstm(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional)``; ``hx`` is
    ``(h_0, c_0)``; an ``h_0`` narrower than ``c_0`` means each layer ends in a projection ``w_hr``.

    >>> w = [ember.ones(8, 3), ember.ones(8, 2)]
    >>> out, h, c = ember.lstm(ember.zeros(5, 1, 3), (ember.zeros(1, 1, 2), ember.zeros(1, 1, 2)), w, False, 1,
    ...                        0.0, False, False, False)
    >>> out.shape, c.shape
    (ember.Size([5, 1, 2]), ember.Size([1, 1, 2]))
    """
    return _recur("lstm", "LSTM", args)


@ember_function
def gru(*args) -> tuple[Tensor, Tensor]:
    """A multi-layer GRU, in ``lstm``'s two call forms with ``hx`` one tensor: ``(output, h_n)``."""
    return _recur("gru", "GRU", args)


@ember_function
def rnn_tanh(*args) -> tuple[Tensor, Tensor]:
    """A multi-layer Elman RNN with ``tanh``, in ``gru``'s call forms: ``(output, h_n)``."""
    return _recur("rnn_tanh", "RNN_TANH", args)


@ember_function
def rnn_relu(*args) -> tuple[Tensor, Tensor]:
    """A multi-layer Elman RNN with ``relu``, in ``gru``'s call forms: ``(output, h_n)``."""
    return _recur("rnn_relu", "RNN_RELU", args)


def _check_cell(name: str, input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor) -> None:
    if input.dim() not in (1, 2) or hx.dim() != input.dim():
        raise RuntimeError(f"{name}: expected input [B, I] and hx [B, H] (or both unbatched), got "
                           f"{list(input.shape)} and {list(hx.shape)}")
    if input.shape[-1] != w_ih.shape[-1] or hx.shape[-1] != w_hh.shape[-1]:
        raise RuntimeError(f"{name}: input has {input.shape[-1]} features and hx {hx.shape[-1]}, but w_ih is "
                           f"{list(w_ih.shape)} and w_hh {list(w_hh.shape)}")


@ember_function
def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """One LSTM step: ``(h_1, c_1)`` from ``hx = (h_0, c_0)``.

    >>> h, c = ember.lstm_cell(ember.ones(1, 3), (ember.zeros(1, 2), ember.zeros(1, 2)), ember.ones(8, 3),
    ...                        ember.ones(8, 2))
    >>> h.shape
    ember.Size([1, 2])
    """
    _check_cell("lstm_cell", input, hx[0], w_ih, w_hh)
    return _recurrent.lstm_cell(input, tuple(hx), w_ih, w_hh, b_ih, b_hh)


@ember_function
def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None) -> Tensor:
    """One GRU step: the new hidden state."""
    _check_cell("gru_cell", input, hx, w_ih, w_hh)
    return _recurrent.gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh)


@ember_function
def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
                  b_hh: Tensor | None = None) -> Tensor:
    """One Elman step with ``tanh``: ``tanh(input w_ih^T + b_ih + hx w_hh^T + b_hh)``."""
    _check_cell("rnn_tanh_cell", input, hx, w_ih, w_hh)
    return _recurrent.rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih, b_hh)


@ember_function
def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
                  b_hh: Tensor | None = None) -> Tensor:
    """One Elman step with ``relu``."""
    _check_cell("rnn_relu_cell", input, hx, w_ih, w_hh)
    return _recurrent.rnn_relu_cell(input, hx, w_ih, w_hh, b_ih, b_hh)
