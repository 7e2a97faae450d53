"""How ``vmap`` runs the transforms on a batch of samples at once: their dims shifted past the batch dims.

A transform acts on the dims it names and on each position of the others alike, so a batch needs only its
dims moved. Where ``dim`` is left out (``fftn``, ``fftshift``), the dims it stands for are the sample's, named
explicitly before they are shifted. ``stft`` and ``istft`` take the batch as their own batch of signals.

>>> import ember
>>> ember.func.vmap(ember.fft.rfft)(ember.ones(3, 4)).shape
ember.Size([3, 3])
"""
from __future__ import annotations

from ember.func._batched import BatchedTensor, physical
from ember.func._rules import RULES, Dims, _all, _get, _ndim, _put, along, decline, op_name, rewrap

_ONE_DIM = "fft.fft fft.ifft fft.rfft fft.irfft fft.hfft fft.ihfft"
_TWO_DIMS = "fft.fft2 fft.ifft2 fft.rfft2 fft.irfft2 fft.hfft2 fft.ihfft2"
_MANY_DIMS = "fft.fftn fft.ifftn fft.rfftn fft.irfftn fft.hfftn fft.ihfftn"


def _sample_dims(position: int, sizes_position: int | None):
    """A rule for an op whose ``dim`` (at ``position``) defaults to the last ``len(s)`` dims or to all of them."""
    shifted = along(Dims((position, "dim")))

    def rule(func, args, kwargs, levels):
        args, kwargs = list(args), dict(kwargs)
        if _get(args, kwargs, position, "dim", None) is None:
            ndim = _ndim(args[0])
            sizes = None if sizes_position is None else _get(args, kwargs, sizes_position, "s", None)
            first = 0 if sizes is None else ndim - len(sizes)
            _put(args, kwargs, position, "dim", tuple(range(first, ndim)))
        return shifted(func, tuple(args), kwargs, levels)

    return rule


def _signals(last_dims: int):
    """A rule for stft (``last_dims`` 1: a signal's samples) or istft (2: bins and frames), which take a batch
    of signals in one leading dim: every batch dim, and the sample's own batch dim if any, folded into it."""

    def rule(func, args, kwargs, levels):
        if any(type(v) is BatchedTensor for v in (*args[1:], *kwargs.values())):
            decline(op_name(func), "the window (or another argument) differs between samples")
        x = physical(args[0], levels, expand=True)
        lead = tuple(x.shape[:-last_dims])
        out = func(x.reshape((-1,) + tuple(x.shape[-last_dims:])), *args[1:], **kwargs)
        return rewrap(out.reshape(lead + tuple(out.shape[1:])), levels)

    return rule


RULES.update(_all(_ONE_DIM, along(Dims((2, "dim", -1)))))
RULES.update(_all(_TWO_DIMS, along(Dims((2, "dim", (-2, -1))))))
RULES.update(_all(_MANY_DIMS, _sample_dims(2, 1)))
RULES.update(_all("fft.fftshift fft.ifftshift", _sample_dims(1, None)))
RULES["stft"], RULES["istft"] = _signals(1), _signals(2)
