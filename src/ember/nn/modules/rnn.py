"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` over whole sequences and their one-step cells.

Parameters carry torch's names and shapes (``weight_ih_l0``, ``bias_hh_l1_reverse``, ``weight_hr_l0`` ...), so a
state_dict moves between torch and ember.

>>> import ember
>>> lstm = ember.nn.LSTM(3, 4, num_layers=2, batch_first=True)
>>> lstm
LSTM(3, 4, num_layers=2, batch_first=True)
>>> output, (h, c) = lstm(ember.zeros(2, 5, 3))
>>> output.shape, h.shape
(ember.Size([2, 5, 4]), ember.Size([2, 2, 4]))
"""
from __future__ import annotations

import math
import numbers
import warnings

import ember
from ember._creation import empty
from ember import _dtype as D
from ember._ops._support import user_stacklevel
from ember.amp import autocast_mode as _autocast
from ember._tensor import Tensor
from ember.nn import functional as F, init
from ember.nn._functional import recurrent as _recurrent
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter
from ember.nn.utils.rnn import PackedSequence

_AUTOCAST_INPUTS = (D.float16, D.bfloat16, D.float32)  # the dtypes autocast casts from

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


class RNNBase(Module):
    """The shared machinery of ``RNN``, ``LSTM`` and ``GRU``: parameters per layer and direction, the loop."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode} (expected one of {', '.join(_GATES)})")
        _check_sizes(input_size, hidden_size, num_layers, dropout, proj_size, mode, bias, batch_first)
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        directions = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * directions
            for suffix in ["", "_reverse"][:directions]:
                shapes = {"weight_ih": (_GATES[mode] * hidden_size, layer_input),
                          "weight_hh": (_GATES[mode] * hidden_size, real_hidden)}
                if bias:
                    shapes.update(bias_ih=(_GATES[mode] * hidden_size,), bias_hh=(_GATES[mode] * hidden_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                for kind, shape in shapes.items():
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(empty(shape, device=device, dtype=dtype)))
                    self._flat_weights_names.append(name)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    @property
    def _all_weights(self) -> list[list[str]]:
        """The weights' names, one list per layer and direction (code that rewraps the weights walks these)."""
        per = len(self._flat_weights_names) // (self.num_layers * (2 if self.bidirectional else 1))
        names = self._flat_weights_names
        return [names[i:i + per] for i in range(0, len(names), per)]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    @property
    def _flat_weights(self) -> list[Parameter]:
        """The weights in the order of ``ember.lstm``'s (and torch's) flat list, for code that calls the kernel."""
        return [getattr(self, name) for name in self._flat_weights_names]

    def _weights(self, layer: int, suffix: str) -> tuple:
        def get(kind):
            return getattr(self, f"{kind}_l{layer}{suffix}", None)
        weights = (get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"))
        return weights + ((get("weight_hr"),) if self.proj_size > 0 else ())

    def extra_repr(self) -> str:
        defaults = {"proj_size": 0, "num_layers": 1, "bias": True, "batch_first": False, "dropout": 0,
                    "bidirectional": False}
        options = [f", {key}={getattr(self, key)}" for key, default in defaults.items() if getattr(self, key) != default]
        return f"{self.input_size}, {self.hidden_size}" + "".join(options)

    def _state_shapes(self, batch: int) -> list[tuple]:
        stacked = self.num_layers * (2 if self.bidirectional else 1)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        shapes = [(stacked, batch, real_hidden)]
        return shapes + [(stacked, batch, self.hidden_size)] if self.mode == "LSTM" else shapes

    def _run(self, input, hx):
        """The shared forward: the output in the input's form (padded or packed) and the final states."""
        name = type(self).__name__
        packed = isinstance(input, PackedSequence)
        if packed:
            data, batch_sizes = input.data, [int(b) for b in input.batch_sizes.numpy()]
            batch, unbatched = batch_sizes[0], False
        else:
            if input.dim() not in (2, 3):
                # torch's plain RNN alone says "tensor" here
                noun = " tensor" if self.mode.startswith("RNN") else ""
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{noun} instead")
            unbatched = input.dim() == 2
            if unbatched:
                input = input.unsqueeze(1)
            elif self.batch_first:
                input = input.transpose(0, 1)
            steps, batch = input.shape[0], input.shape[1]
            if steps == 0:
                raise RuntimeError(f"Expected sequence length to be larger than 0 in RNN: {name} got an input of "
                                   f"shape {list(input.shape)} ({'dim 1' if self.batch_first else 'dim 0'} is time)")
            data, batch_sizes = input.reshape(steps * batch, input.shape[2]), [batch] * steps
        if data.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {data.shape[-1]}")
        dtype = self._compute_dtype(data, name)
        states = self._initial_states(hx, batch, data, unbatched, packed and input.sorted_indices)
        if dtype != data.dtype:
            data, states = data.to(dtype), [s.to(dtype) for s in states]
        output, finals = self._layers(data, batch_sizes, states, dtype)
        if packed:
            if input.unsorted_indices is not None:
                finals = [f.index_select(1, input.unsorted_indices) for f in finals]
            return input._with_data(output), finals
        output = output.reshape(steps, batch, output.shape[-1])
        if unbatched:
            return output.squeeze(1), [f.squeeze(1) for f in finals]
        return (output.transpose(0, 1) if self.batch_first else output), finals

    def _initial_states(self, hx, batch: int, data: Tensor, unbatched: bool, sorted_indices) -> list[Tensor]:
        shapes = self._state_shapes(batch)
        if hx is None:
            return [ember.zeros(shape, dtype=data.dtype) for shape in shapes]
        states = list(hx) if self.mode == "LSTM" else [hx]
        if len(states) < len(shapes):
            # torch indexes the pair (h_0, c_0) and fails the same way on a shorter one
            raise IndexError("tuple index out of range")
        if len(states) > len(shapes):
            raise RuntimeError(f"lstm expects two hidden states (h_0, c_0), got {len(states)}")
        self._check_state_dims(states, unbatched)
        if unbatched:
            states = [s.unsqueeze(1) for s in states]
        if sorted_indices is not None and sorted_indices is not False:
            states = [s.index_select(1, sorted_indices) for s in states]
        for i, (state, shape) in enumerate(zip(states, shapes)):
            which = f"hidden[{i}]" if self.mode == "LSTM" else "hidden"
            self.check_hidden_size(state, shape, f"Expected {which} size {{}}, got {{}}")
            if state.dtype != data.dtype:
                # (a state of another dtype would promote the outputs; torch refuses it)
                raise RuntimeError(f"{type(self).__name__}: {which} dtype ({state.dtype}) does not match input "
                                   f"dtype ({data.dtype}); convert it, e.g. {which}.to({data.dtype})")
        return states

    # The checks and helpers torch's RNNBase offers its subclasses, with the same names and messages.

    def flatten_parameters(self) -> None:
        """Nothing to do: the weights are not packed into one buffer (torch compacts them for cuDNN alone)."""

    def _compute_dtype(self, data: Tensor, name: str) -> ember.dtype:
        """The dtype the layers run in. As torch's: under the CPU's autocast an LSTM runs in autocast's dtype
        (it is on autocast's lower-precision list) and the others in their input's, the weights cast to it;
        otherwise the input must have the weights' dtype."""
        if not (_autocast.is_autocast_enabled("cpu") and data.dtype in _AUTOCAST_INPUTS):
            self._check_dtype(data, name)
            return data.dtype
        return _autocast.get_autocast_dtype("cpu") if self.mode == "LSTM" else data.dtype

    def _check_dtype(self, data: Tensor, name: str) -> None:
        weight = self._flat_weights[0] if self._flat_weights_names else None
        if weight is not None and data.dtype != weight.dtype:
            raise ValueError(f"{name} input dtype ({data.dtype}) does not match weight dtype ({weight.dtype}). "
                             f"Convert input: input.to({weight.dtype}), or convert model: model.to({data.dtype})")

    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        self._check_dtype(input, "RNN")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple[int, int, int]:
        return self._state_shapes(self._mini_batch(input, batch_sizes))[0]

    def _mini_batch(self, input: Tensor, batch_sizes: Tensor | None) -> int:
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.shape[0] if self.batch_first else input.shape[1]

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple,
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.shape)))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Tensor, permutation: Tensor | None) -> Tensor:
        return hx if permutation is None else hx.index_select(1, permutation)

    def _check_state_dims(self, states: list[Tensor], unbatched: bool) -> None:
        """The states must have the input's batchedness: 2-D for a 2-D input, 3-D for a 3-D (or packed) one."""
        want = 2 if unbatched else 3
        if all(state.dim() == want for state in states):
            return
        kind = "unbatched 2-D" if unbatched else "batched 3-D"
        if self.mode == "LSTM":
            dims = ", ".join(f"{state.dim()}-D" for state in states)
            raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got ({dims}) tensors")
        raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got {states[0].dim()}-D tensor")

    def _layers(self, data: Tensor, batch_sizes: list[int], states: list[Tensor], dtype: ember.dtype):
        directions = 2 if self.bidirectional else 1
        finals = [[] for _ in states]
        for layer in range(self.num_layers):
            outputs = []
            for direction, suffix in enumerate(["", "_reverse"][:directions]):
                index = layer * directions + direction
                weights = self._weights(layer, suffix)
                if weights[0].dtype != dtype:  # (under autocast: recorded casts, so the gradients reach the weights)
                    weights = tuple(w if w is None else w.to(dtype) for w in weights)
                output, state = _recurrent.run_direction(self.mode, data, batch_sizes,
                                                         tuple(s[index] for s in states),
                                                         weights, reverse=direction == 1)
                outputs.append(output)
                for store, value in zip(finals, state):
                    store.append(value)
            data = outputs[0] if directions == 1 else ember.cat(outputs, -1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                data = F.dropout(data, self.dropout, training=True)
        return data, [ember.stack(store, 0) for store in finals]


def _check_sizes(input_size: int, hidden_size: int, num_layers: int, dropout: float, proj_size: int,
                 mode: str, bias: bool, batch_first: bool) -> None:
    """The constructor's arguments, checked (and dropout warned about) in torch's order, with torch's errors."""
    if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
        raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                         "being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                      f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                      stacklevel=user_stacklevel())
    for name, flag in (("bias", bias), ("batch_first", batch_first)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} should be of type bool, got: {type(flag).__name__}")
    for name, size in (("input_size", input_size), ("hidden_size", hidden_size)):
        if not isinstance(size, int):
            raise TypeError(f"{name} should be of type int, got: {type(size).__name__}")
        if size <= 0:
            raise ValueError(f"{name} must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size and mode != "LSTM":
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


def _refuse_projection(proj_size: int | None) -> None:
    """RNN and GRU take ``proj_size`` only to refuse it, as torch does (even 0): projections are LSTM's alone."""
    if proj_size is not None:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


class RNN(RNNBase):
    """An Elman network: ``h_t = nonlinearity(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None, *, proj_size: int | None = None) -> None:
        _refuse_projection(proj_size)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype)

    def forward(self, input, hx: Tensor | None = None):
        output, finals = self._run(input, hx)
        return output, finals[0]


class LSTM(RNNBase):
    """A long short-term memory network, with an optional projection of the hidden state (``proj_size``)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)

    def forward(self, input, hx: tuple[Tensor, Tensor] | None = None):
        output, finals = self._run(input, hx)
        return output, (finals[0], finals[1])

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple[int, int, int]:
        return self._state_shapes(self._mini_batch(input, batch_sizes))[1]

    def check_forward_args(self, input: Tensor, hidden: tuple[Tensor, Tensor], batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: tuple[Tensor, Tensor], permutation: Tensor | None) -> tuple[Tensor, Tensor]:
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)


class GRU(RNNBase):
    """A gated recurrent unit network."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None, *, proj_size: int | None = None) -> None:
        _refuse_projection(proj_size)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)

    def forward(self, input, hx: Tensor | None = None):
        output, finals = self._run(input, hx)
        return output, finals[0]


class RNNCellBase(Module):
    """The parameters of one recurrent step: ``weight_ih``, ``weight_hh`` and optionally the two biases."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text

    def _batched(self, input: Tensor, hx, states: int):
        """``input`` and the states as 2-D, zeros for missing states, and whether the input was 1-D."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        hx = None if hx is None else self._states_of(hx, states)
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} expected {self.input_size}")
        unbatched = input.dim() == 1
        if unbatched:
            input = input.unsqueeze(0)
        if hx is None:
            return input, tuple(ember.zeros(input.shape[0], self.hidden_size, dtype=input.dtype)
                                for _ in range(states)), unbatched
        hx = tuple(h.unsqueeze(0) if unbatched else h for h in hx)
        for i, h in enumerate(hx):
            # Read as (batch, hidden), as torch reads them; a 2-D state given with a 1-D input is now 3-D.
            if h.shape[0] != input.shape[0]:
                raise RuntimeError(f"{name}: Input batch size {input.shape[0]} doesn't match hidden{i} batch size "
                                   f"{h.shape[0]}")
            if h.dim() == 1:
                raise RuntimeError(f"{name}: For batched 2-D input, hidden{i} should also be 2-D but got 1-D tensor")
            if h.dim() != 2 or h.shape[1] != self.hidden_size:
                raise RuntimeError(f"{name}: hidden{i} has inconsistent hidden_size: got {h.shape[1]}, expected "
                                   f"{self.hidden_size}")
        return input, hx, unbatched

    def _states_of(self, hx, states: int) -> tuple:
        """The given state(s) as a tuple, each checked to be 1-D or 2-D: ``hx`` itself, or LSTM's pair ``(h, c)``."""
        name = type(self).__name__
        if states == 1:
            hx = (hx,)
        elif isinstance(hx, Tensor):
            raise TypeError(f"{name}: hx must be a tuple of Tensors (h_0, c_0), not Tensor")
        hx = tuple(hx)
        for i, h in enumerate(hx):
            if h.dim() not in (1, 2):
                which = "hidden" if states == 1 else f"hx[{i}]"
                raise ValueError(f"{name}: Expected {which} to be 1D or 2D, got {h.dim()}D instead")
        if len(hx) != states:
            raise RuntimeError(f"{name} expects two hidden states (h_0, c_0), got {len(hx)}")
        return hx


class RNNCell(RNNCellBase):
    """One Elman step with ``tanh`` or ``relu``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (h,), unbatched = self._batched(input, hx, 1)
        step = _recurrent.rnn_tanh_cell if self.nonlinearity == "tanh" else _recurrent.rnn_relu_cell
        out = step(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out.squeeze(0) if unbatched else out


class LSTMCell(RNNCellBase):
    """One LSTM step: returns ``(h, c)``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        input, hx, unbatched = self._batched(input, hx, 2)
        h, c = _recurrent.lstm_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (h,), unbatched = self._batched(input, hx, 1)
        out = _recurrent.gru_cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out.squeeze(0) if unbatched else out
