"""What the summaries are made from: tensors and numbers as NumPy arrays, images as height x width x RGB."""
from __future__ import annotations

import math

import numpy as np

from ember._tensor import Tensor


def to_numpy(value) -> np.ndarray:
    """An array of ``value``: a tensor's values (detached), an array as it is, a number as one element.

    >>> to_numpy(3.5)
    array([3.5])
    """
    if isinstance(value, np.ndarray):
        return value
    if np.isscalar(value):
        return np.array([value])
    if isinstance(value, Tensor):
        value = value.detach()
        if str(value.dtype) == "ember.bfloat16":  # as torch's writer: NumPy has no bfloat16 of its own
            value = value.half()
        return value.numpy()
    raise NotImplementedError(f"Got {type(value)}, but numpy array or ember tensor are expected.")


def grid(images: np.ndarray, columns: int = 8) -> np.ndarray:
    """Images ``[N, C, H, W]`` (C of 1 or 3) tiled row by row into one RGB image ``[3, H * rows, W * columns]``."""
    if images.shape[1] == 1:
        images = np.concatenate([images] * 3, axis=1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise ValueError(f"images to tile need shape [N, 1 or 3, H, W], got {list(images.shape)}")
    n, _, h, w = images.shape
    columns = min(n, columns)
    rows = math.ceil(n / columns) if n else 0
    canvas = np.zeros((3, h * rows, w * columns), images.dtype)
    for i in range(n):
        row, column = divmod(i, columns)
        canvas[:, row * h:(row + 1) * h, column * w:(column + 1) * w] = images[i]
    return canvas


def to_hwc(image: np.ndarray, dataformats: str) -> np.ndarray:
    """``image`` laid out as ``dataformats`` ('NCHW', 'CHW', 'HWC', 'HW' ...) as height x width x channels; a
    batch is tiled into one grid, and a single channel repeated into three."""
    if len(set(dataformats)) != len(dataformats):
        raise ValueError(f"dataformats {dataformats!r} names a dimension twice")
    if image.ndim != len(dataformats):
        raise ValueError(f"an image of shape {list(image.shape)} does not have the {len(dataformats)} dimensions "
                         f"that dataformats {dataformats!r} names")
    dataformats = dataformats.upper()
    if len(dataformats) == 4:
        return grid(image.transpose([dataformats.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(dataformats) == 3:
        hwc = image.transpose([dataformats.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, axis=2) if hwc.shape[2] == 1 else hwc
    if len(dataformats) == 2:
        return np.stack([image.transpose([dataformats.find(c) for c in "HW"])] * 3, axis=2)
    raise ValueError(f"dataformats {dataformats!r}: expected 2 to 4 of the letters N, C, H, W")


def figure_to_chw(figure, close: bool = True) -> np.ndarray:
    """A matplotlib figure rendered to an RGB array ``[3, H, W]``."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    width, height = figure.canvas.get_width_height()
    rgba = np.frombuffer(canvas.buffer_rgba(), np.uint8).reshape(height, width, 4)
    if close:
        plt.close(figure)
    return np.moveaxis(rgba[:, :, :3], 2, 0)


def video_frames(video: np.ndarray) -> np.ndarray:
    """Videos ``[N, T, C, H, W]`` as frames ``[T, H', W', C]``: the N videos tiled into a grid per frame (N
    padded with blank videos to a power of two)."""
    n, t, c, h, w = video.shape
    if video.dtype == np.uint8:
        video = np.float32(video) / 255.0
    padded = 1 << (n - 1).bit_length() if n else 1
    if padded != n:
        video = np.concatenate([video, np.zeros((padded - n, t, c, h, w))], axis=0)
    rows = 2 ** ((n.bit_length() - 1) // 2)
    columns = video.shape[0] // rows
    video = video.reshape(rows, columns, t, c, h, w).transpose(2, 0, 4, 1, 5, 3)
    return video.reshape(t, rows * h, columns * w, c)
