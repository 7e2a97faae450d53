"""Convolutions, padding, ``unfold``/``fold`` and ``bilinear``, as torch's functional forms.

Every real convolution is one ``Convolution`` op (``_ops/convolution.py``), a complex one three of them
(``_complex_conv.py``); ``unfold`` is a view of the sliding blocks, copied, ``fold`` adds each tap's values back
in place, and ``pad`` is composed of ops.

>>> import ember
>>> from ember.nn import functional as F
>>> ember.nn.functional.conv1d(ember.tensor([[[1., 2., 3.]]]), ember.tensor([[[1., -1.]]]))
tensor([[[-1., -1.]]])
>>> ember.nn.functional.pad(ember.tensor([[1., 2., 3.]]), (1, 2), mode="reflect")
tensor([[2., 1., 2., 3., 2., 1.]])
"""
from __future__ import annotations

import math

import numpy as np

import ember
from ember._dtype import scalar_type_name
from ember._ops._support import refuse_integers, require_tensor
from ember._ops.convolution import Convolution, Geometry
from ember._tensor import Tensor
from ember.autograd._node_names import named_node
from ember.nn._functional._complex_conv import gauss_convolution
from ember._ops.tied_gradients import named_and_tied
from ember.nn._functional._channels_last import channels_second, channels_trailing, is_channels_last, trailing_dim
from ember.overrides import overridable

__all__ = ["bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "fold", "pad", "unfold"]

nn_function = overridable("ember.nn.functional")


def as_tuple(value, n: int, op: str, name: str) -> tuple:
    """An int (or a one-element sequence) repeated ``n`` times, or a sequence of ``n`` ints."""
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * n
    if len(values) == 1:
        values *= n
    if len(values) != n or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        raise RuntimeError(f"{op}: expected {name} to be a single integer value or a list of {n} values to match "
                           f"the convolution dimensions, but got {name}={list(values)}")
    return tuple(int(v) for v in values)


def _padding_pairs(padding, kernel: tuple, stride: tuple, dilation: tuple, op: str) -> tuple:
    """``(before, after)`` per dim: from ints, or ``'valid'`` (none) or ``'same'`` (the extra one after, as torch)."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * len(kernel)
        if padding != "same":
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
        if any(s != 1 for s in stride):
            raise RuntimeError(f"{op}: padding='same' is not supported for strided convolutions; use stride=1")
        totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
        return tuple((t // 2, t - t // 2) for t in totals)
    return tuple((p, p) for p in as_tuple(padding, len(kernel), op, "padding"))


def _check_geometry(padding, stride: tuple, dilation: tuple) -> None:
    """torch's refusals of a convolution's geometry, padding first (a string padding is checked elsewhere)."""
    if not isinstance(padding, str) and min(padding) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")


def _check_input(op: str, input, weight, bias, spatial: int) -> bool:
    """Check the operands' ranks and dtypes; return whether the input is batched."""
    for position, name, value in ((1, "input", input), (2, "weight", weight)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to {op}, "
                           f"but got input of size: {list(input.shape)}")
    if weight.dim() != spatial + 2:
        raise RuntimeError(f"{op}: expected weight to be {spatial + 2}-dimensional ([out, in/groups, *kernel]), "
                           f"but got weight of size {list(weight.shape)}")
    _check_dtypes(op, input, weight, bias)
    return input.dim() == spatial + 2


def _check_dtypes(op: str, input: Tensor, weight: Tensor, bias) -> None:
    if input._data.dtype == np.bool_:
        raise NotImplementedError(f'{op}: "convolution" not implemented for \'{scalar_type_name(input._data.dtype)}\''
                                  "; convert the input first, e.g. input.float()")
    for name, other in (("weight", weight), ("bias", bias)):
        if other is not None and other.dtype != input.dtype:
            raise RuntimeError(f"{op}: Input type ({scalar_type_name(input._data.dtype)}) and {name} type "
                               f"({scalar_type_name(other._data.dtype)}) should be the same; convert one, "
                               f"e.g. {name}.to(input.dtype)")


def _check_channels(op: str, input: Tensor, weight: Tensor, bias, groups: int, transposed: bool) -> None:
    channels = weight.shape[0] if transposed else weight.shape[1] * groups
    if groups < 1:
        raise RuntimeError(f"{op}: non-positive groups is not supported (groups={groups})")
    if weight._data.shape[0] < groups:  # (torch's first complaint about such a weight, before the channels)
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {list(weight.shape)} instead")
    if input.shape[1] != channels:
        expected = f"weight of size {list(weight.shape)}, expected input{list(input.shape)} to have {channels} channels"
        raise RuntimeError(f"Given groups={groups}, {expected}, but got {input.shape[1]} channels instead")
    outputs = weight.shape[1] * groups if transposed else weight.shape[0]
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                           f"but got weight of size {list(weight.shape)} instead")
    if bias is not None and tuple(bias.shape) != (outputs,):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with "
                           f"{outputs} elements, but got bias of size {list(bias.shape)} instead")


def _check_output(op: str, input: Tensor, kernel: tuple, geometry: Geometry) -> None:
    if any(n <= 0 for n in geometry.output_size(tuple(input.shape[2:]), kernel)):
        padded = [n + b + a for n, (b, a) in zip(input.shape[2:], geometry.padding)]
        reach = [d * (k - 1) + 1 for d, k in zip(geometry.dilation, kernel)]
        raise RuntimeError(f"{op}: Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                           f"Kernel size: ({' x '.join(map(str, reach))}). Kernel size can't be greater than "
                           "actual input size")


def _convolution(op: str, spatial: int, input, weight, bias, stride, padding, dilation, groups) -> Tensor:
    batched = _check_input(op, input, weight, bias, spatial)
    x = input if batched else input.unsqueeze(0)
    stride, dilation = as_tuple(stride, spatial, op, "stride"), as_tuple(dilation, spatial, op, "dilation")
    _check_geometry(padding if isinstance(padding, str) else as_tuple(padding, spatial, op, "padding"), stride,
                    dilation)  # as torch, before the channels
    _check_channels(op, x, weight, bias, groups, False)
    kernel = tuple(weight.shape[2:])
    geometry = Geometry(stride, _padding_pairs(padding, kernel, stride, dilation, op), dilation, groups)
    _check_output(op, x, kernel, geometry)
    if any(d != 1 for d in dilation) and x._data.dtype != np.int64:  # torch's dilated kernel: floats and int64
        refuse_integers("slow_conv_dilated<>", x._data)
    convolve = gauss_convolution if x.is_complex() else Convolution.apply
    y = convolve(x, weight, bias, geometry, False, None)
    return y if batched else y.squeeze(0)


def _transposed(op: str, spatial: int, input, weight, bias, stride, padding, output_padding, groups,
                dilation) -> Tensor:
    batched = _check_input(op, input, weight, bias, spatial)
    x = input if batched else input.unsqueeze(0)
    stride, dilation = as_tuple(stride, spatial, op, "stride"), as_tuple(dilation, spatial, op, "dilation")
    padding = as_tuple(padding, spatial, op, "padding")
    _check_geometry(padding, stride, dilation)  # as torch, before the channels
    _check_channels(op, x, weight, bias, groups, True)
    if x._data.dtype != np.int64:  # torch's transposed kernel: floats and int64
        refuse_integers(f"slow_conv_transpose{max(spatial, 2)}d_out_cpu", x._data)
    kernel = tuple(weight.shape[2:])
    extra = as_tuple(output_padding, spatial, op, "output_padding")
    if any(e >= s and e >= d for e, s, d in zip(extra, stride, dilation)):
        raise RuntimeError(f"{op}: output padding must be smaller than either stride or dilation, but got "
                           f"output_padding={list(extra)}, stride={list(stride)}, dilation={list(dilation)}")
    size = tuple((n - 1) * s - 2 * p + d * (k - 1) + e + 1
                 for n, s, p, d, k, e in zip(x.shape[2:], stride, padding, dilation, kernel, extra))
    if any(n <= 0 for n in size):
        raise RuntimeError(f"{op}: the output size {list(size)} is not positive: input {list(input.shape)}, "
                           f"kernel {list(kernel)}, padding {list(padding)}; use less padding")
    # the output padding is left out of the padding after: the gradient's convolution then comes back to
    # the input's size when the stride does not round it away (stride 1 and a dilation above 1)
    geometry = Geometry(stride, tuple((p, p - e) for p, e in zip(padding, extra)), dilation, groups)
    convolve = gauss_convolution if x.is_complex() else Convolution.apply
    y = convolve(x, weight, bias, geometry, True, size)
    return y if batched else y.squeeze(0)


@nn_function
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """The 1-d convolution (cross-correlation) of ``input`` ``[N, C, L]`` with ``weight`` ``[O, C/groups, k]``."""
    return _convolution("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@nn_function
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """The 2-d convolution of ``input`` ``[N, C, H, W]`` with ``weight`` ``[O, C/groups, kH, kW]``.

    >>> ember.nn.functional.conv2d(ember.ones(1, 1, 3, 3), ember.ones(2, 1, 2, 2), padding="same").shape
    ember.Size([1, 2, 3, 3])
    """
    return _convolution("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@nn_function
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """The 3-d convolution of ``input`` ``[N, C, D, H, W]`` with ``weight`` ``[O, C/groups, kD, kH, kW]``."""
    return _convolution("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


@nn_function
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The gradient of ``conv1d`` as a layer: ``weight`` is ``[C, O/groups, k]``, the output grows by the stride.

    >>> ember.nn.functional.conv_transpose1d(ember.tensor([[[1., 2.]]]), ember.tensor([[[1., 1.]]]), stride=2)
    tensor([[[1., 1., 2., 2.]]])
    """
    return _transposed("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups, dilation)


@nn_function
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The gradient of ``conv2d`` as a layer: ``weight`` is ``[C, O/groups, kH, kW]``."""
    return _transposed("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups, dilation)


@nn_function
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The gradient of ``conv3d`` as a layer: ``weight`` is ``[C, O/groups, kD, kH, kW]``."""
    return _transposed("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups, dilation)


# ---------------------------------------------------------------------------------------------- pad

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


@nn_function
def pad(input: Tensor, pad: list[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """``input`` padded: ``pad`` is ``(left, right)`` for the last dim, then for the one before, ...

    ``'constant'`` fills with ``value`` (0 by default; a negative amount crops), ``'reflect'`` mirrors
    without repeating the edge, ``'replicate'`` repeats the edge and ``'circular'`` wraps around.

    >>> ember.nn.functional.pad(ember.tensor([[1., 2.]]), (1, 1), value=9.)
    tensor([[9., 1., 2., 9.]])
    """
    if isinstance(value, complex):  # (torch's constant_pad_nd takes one; its F.pad does not)
        raise TypeError("pad(): argument 'value' (position 4) must be float, not complex; pad a complex tensor "
                        "with a complex constant through ember.constant_pad_nd")
    return pad_any_value(input, pad, mode, value)


def pad_any_value(input: Tensor, pad: list[int], mode: str, value: complex | None) -> Tensor:
    """``F.pad``'s work, for any number ``value`` (``constant_pad_nd``'s a complex one too)."""
    require_tensor(input, "pad", 1, "input")
    for position, amount in enumerate(pad):
        if isinstance(amount, float):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                            f"float at pos {position}")
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}; use one of {', '.join(_PAD_MODES)}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    if mode != "constant" and value:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    # (where full would wrap an integer)
    if value is not None and not isinstance(value, complex) and value < 0 and input._data.dtype.kind == "u":
        raise RuntimeError(f"pad: value {value} cannot be converted to type {input.dtype} without overflow; pad "
                           "with a value the dtype holds")
    if mode != "constant":
        _check_index_pad(input, len(pad) // 2, mode)
    _check_padded_sizes(input, pad, mode)
    # as torch: a channels-last input gives a channels-last result (but for circular padding), padded in that order
    trailing = mode != "circular" and is_channels_last(input)
    start = padded = channels_trailing(input) if trailing else input
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        at = trailing_dim(dim, input.dim()) if trailing else dim
        before, after = int(pad[2 * i]), int(pad[2 * i + 1])
        padded = (_constant_pad(padded, at, before, after, value or 0) if mode == "constant"
                  else _index_pad(padded, at, before, after, mode))
    if padded is start:  # nothing padded: a new tensor all the same (in the input's layout), as torch's
        padded = input.clone()
    elif trailing:
        padded = channels_second(padded)
    if mode == "circular":  # torch's circular pad is itself composed (its node is the CopySlices of its last write)
        return padded
    if mode == "constant":  # (torch's backward of a constant pad reads no input: it crops the gradient)
        return named_node(padded, _pad_node(mode, len(pad) // 2), input, listed=(input,))
    return named_and_tied(padded, _pad_node(mode, len(pad) // 2), input)


def _pad_node(mode: str, dims: int) -> str:
    """torch's node for a pad of ``dims`` dims in ``mode`` (``ConstantPadNdBackward0``, ``ReflectionPad2DBackward0``)"""
    if mode == "constant":
        return "ConstantPadNdBackward0"
    return f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{dims}DBackward0"


def _check_index_pad(input: Tensor, dims: int, mode: str) -> None:
    """What torch's reflection, replication and circular kernels take: ``dims`` (1 to 3) padded dims of a
    ``dims + 1``-D or batched ``dims + 2``-D input; no bools, and no empty dim but the batch, to reflect or
    replicate."""
    if dims not in (1, 2, 3) or input.dim() not in (dims + 1, dims + 2):
        raise NotImplementedError(
            f"Padding size {2 * dims} is not supported for {input.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return
    kernel = f"{'reflection' if mode == 'reflect' else 'replication'}_pad{dims}d"
    if input.dtype == ember.bool:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    if 0 in input.shape[input.dim() - dims - 1 if input.dim() == dims + 2 else 0:]:
        raise RuntimeError(f"Expected {dims + 1}D or {dims + 2}D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {list(input.shape)}")


def _check_padded_sizes(input: Tensor, pad: list[int], mode: str) -> None:
    """Negative amounts crop: torch refuses a padded size below 0, a constant pad's crop past the dim's size
    (it crops before it pads), and, in its 1-D reflect and replicate kernels, a padded size of 0 (where its 2-D and
    3-D kernels give an empty dim)."""
    least = 1 if mode in ("reflect", "replicate") and len(pad) == 2 else 0
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        before, after = int(pad[2 * i]), int(pad[2 * i + 1])
        size = input.shape[dim] + before + after
        if mode == "constant":
            size = min(size, input.shape[dim] + min(before, 0) + min(after, 0))
        if size < least:
            raise RuntimeError(f"pad: padding ({before}, {after}) at dimension {dim} of input {list(input.shape)} "
                               f"leaves size {size} in mode '{mode}', less than {least}; crop less")


def _constant_pad(x: Tensor, dim: int, before: int, after: int, value: float) -> Tensor:
    size = x.shape[dim]
    if before < 0 or after < 0:
        x = x.narrow(dim, max(-before, 0), size - max(-before, 0) - max(-after, 0))
    parts = [x]
    for amount, at in ((before, 0), (after, 1)):
        if amount > 0:
            shape = list(x.shape)
            shape[dim] = amount
            parts.insert(at * len(parts), ember.full(shape, value, dtype=x.dtype))
    if len(parts) > 1:
        return ember.cat(parts, dim)
    return x.clone() if before < 0 or after < 0 else x  # a crop is a new tensor, as torch's, not a view


def _index_pad(x: Tensor, dim: int, before: int, after: int, mode: str) -> Tensor:
    """Gather the padded dim's entries by index: the backward sums the copies back into place."""
    size = x.shape[dim]
    if mode == "reflect" and (before >= size or after >= size):
        raise RuntimeError(f"pad: padding size should be less than the corresponding input dimension, but got: "
                           f"padding ({before}, {after}) at dimension {dim} of input {list(x.shape)}")
    if mode == "circular":
        return x.index_select(dim, ember.tensor(_circular_index(size, before, after, dim, x), dtype=ember.int64))
    positions = np.arange(-before, size + after)
    if mode == "reflect":
        period = 2 * (size - 1) if size > 1 else 1
        folded = np.abs(positions) % period
        index = np.where(folded < size, folded, period - folded)
    else:
        index = np.clip(positions, 0, size - 1)
    return x.index_select(dim, ember.tensor(index, dtype=ember.int64))


def _circular_index(size: int, before: int, after: int, dim: int, x: Tensor) -> np.ndarray:
    """A negative amount crops first, and the padding then wraps around what is left (as torch's does)."""
    start, stop = max(-before, 0), size - max(-after, 0)
    kept = stop - start
    if max(before, after) > min(size, kept):
        raise RuntimeError(f"pad: padding value causes wrapping around more than once: ({before}, {after}) "
                           f"at dimension {dim} of input {list(x.shape)}")
    return start + np.arange(-max(before, 0), kept + max(after, 0)) % max(kept, 1)


# ---------------------------------------------------------------------------------------------- unfold and fold


def _fold_geometry(op: str, kernel_size, dilation, padding, stride) -> tuple:
    """The four pairs, checked as torch's im2col and col2im check them (a 0 stride would divide by zero)."""
    geometry = (as_tuple(kernel_size, 2, op, "kernel_size"), as_tuple(dilation, 2, op, "dilation"),
                as_tuple(padding, 2, op, "padding"), as_tuple(stride, 2, op, "stride"))
    for (name, least), (height, width) in zip(_FOLD_LEAST, geometry):
        if min(height, width) < least:
            raise RuntimeError(f"{op}: {name} should be {'greater than zero' if least else 'non-negative'}, but got "
                               f"{name}=({height}, {width})")
    return geometry


_FOLD_LEAST = (("kernel_size", 1), ("dilation", 1), ("padding", 0), ("stride", 1))  # in _fold_geometry's order


@nn_function
def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Every ``kernel_size`` block of ``input`` ``[N, C, H, W]`` as a column: ``[N, C * kH * kW, L]``.

    >>> ember.nn.functional.unfold(ember.arange(4.).view(1, 1, 2, 2), 2)
    tensor([[[0.],
             [1.],
             [2.],
             [3.]]])
    """
    require_tensor(input, "im2col", 1, "input")
    if input.dim() not in (3, 4):
        # torch indexes dims 1 and 2 of a smaller input before it checks the rank: an IndexError there
        error = IndexError if input.dim() < 3 else RuntimeError
        raise error(f"unfold: Expected 3D (unbatched) or 4D (batched) input, but got input of size: "
                    f"{list(input.shape)}")
    if input._data.dtype != np.bool_:  # torch's kernel: floats and bools
        refuse_integers("im2col_out_cpu", input._data)
    kernel, dilation, padding, stride = _fold_geometry("unfold", kernel_size, dilation, padding, stride)
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    blocks = _block_counts("unfold", tuple(x.shape[2:]), kernel, dilation, padding, stride)
    if any(padding):
        x = pad(x, (padding[1], padding[1], padding[0], padding[0]))
    # the blocks as a view (windows of each block's span, every dilation-th entry kept): no product, so an inf or
    # nan stays in its own columns
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    windows = x.unfold(2, spans[0], stride[0]).unfold(3, spans[1], stride[1])[..., ::dilation[0], ::dilation[1]]
    n, channels = x.shape[:2]
    columns = windows.permute(0, 1, 4, 5, 2, 3).reshape(n, channels * math.prod(kernel), math.prod(blocks))
    columns = columns if batched else columns.squeeze(0)
    columns = columns.clone() if columns._base is not None else columns  # a fresh tensor, as torch's
    return named_node(columns, "Im2ColBackward0", input, listed=(input,))


def _blocks_along(size: tuple, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple) -> tuple:
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, d, p, s in zip(size, kernel, dilation, padding, stride))


def _block_counts(op: str, size: tuple, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple) -> tuple:
    """How many blocks fit along each spatial dim; at least one each, else torch's error."""
    blocks = _blocks_along(size, kernel, dilation, padding, stride)
    if min(blocks) < 1:
        raise RuntimeError(f"{op}: Given input with spatial size {size}, kernel_size={kernel}, dilation={dilation}, "
                           f"padding={padding}, calculated shape of the array of sliding blocks as {blocks}, but its "
                           "components must be at least one; use a smaller kernel or more padding")
    return blocks


@nn_function
def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """``unfold``'s adjoint: columns ``[N, C * kH * kW, L]`` summed back into an image of ``output_size``.

    >>> ember.nn.functional.fold(ember.ones(1, 4, 4), (3, 3), 2)[0, 0]
    tensor([[1., 2., 1.],
            [2., 4., 2.],
            [1., 2., 1.]])
    """
    if input.dim() not in (2, 3):
        raise RuntimeError(f"fold: Expected 2D (unbatched) or 3D (batched) input, but got input of size: "
                           f"{list(input.shape)}")
    if input._data.dtype != np.bool_:  # torch's kernel: floats and bools
        refuse_integers("col2im_out_cpu", input._data)
    kernel, dilation, padding, stride = _fold_geometry("fold", kernel_size, dilation, padding, stride)
    size = as_tuple(output_size, 2, "fold", "output_size")
    batched = input.dim() == 3
    columns = input if batched else input.unsqueeze(0)
    count = math.prod(kernel)
    if columns.shape[1] % count:
        raise RuntimeError(f"fold: Expected size of input's dimension 1 to be divisible by the product of "
                           f"kernel_size, but got input.size(1)={columns.shape[1]} and kernel_size={kernel}")
    blocks = _blocks_along(size, kernel, dilation, padding, stride)
    if math.prod(blocks) != columns.shape[2] or min(blocks) <= 0:
        raise RuntimeError(f"fold: Given output_size={size}, kernel_size={kernel}, dilation={dilation}, "
                           f"padding={padding}, stride={stride}, expected size of input's dimension 2 to match the "
                           f"calculated number of sliding blocks {' * '.join(map(str, blocks))} = "
                           f"{math.prod(blocks)}, but got input.size(2)={columns.shape[2]}.")
    n, channels = columns.shape[0], columns.shape[1] // count
    parts = columns.reshape(n, channels, *kernel, *blocks)
    padded = [m + 2 * p for m, p in zip(size, padding)]
    image = ember.zeros(n, channels, *padded, dtype=columns.dtype)
    # each tap's values added where its blocks put them: strided adds, no product (an inf or nan stays in place)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            rows = slice(i * dilation[0], i * dilation[0] + (blocks[0] - 1) * stride[0] + 1, stride[0])
            cols = slice(j * dilation[1], j * dilation[1] + (blocks[1] - 1) * stride[1] + 1, stride[1])
            image[:, :, rows, cols] += parts[:, :, i, j]
    if any(padding):
        image = image[:, :, padding[0]:padding[0] + size[0], padding[1]:padding[1] + size[1]].contiguous()
    return named_node(image if batched else image.squeeze(0), "Col2ImBackward0", input, listed=(input,))


# ---------------------------------------------------------------------------------------------- bilinear


@nn_function
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``.

    >>> ember.nn.functional.bilinear(ember.ones(2, 3), ember.ones(2, 4), ember.ones(5, 3, 4)).shape
    ember.Size([2, 5])
    """
    if weight.dim() != 3 or input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear: expected input1 [..., {weight.shape[1] if weight.dim() == 3 else 'i'}], "
                           f"input2 [..., j] and weight [out, i, j], but got input1 {list(input1.shape)}, "
                           f"input2 {list(input2.shape)} and weight {list(weight.shape)}")
    # no broadcasting: the same batch dims in both inputs, as torch's
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for dim, (size1, size2) in enumerate(zip(input1.shape[:-1], input2.shape[:-1])):
        if size1 != size2:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {dim}: got {size1} and "
                               f"{size2}")
    y = ember.einsum("...i,oij,...j->...o", input1, weight, input2)
    return y if bias is None else y + bias
