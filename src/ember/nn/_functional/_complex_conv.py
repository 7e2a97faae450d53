"""Complex convolution, composed of three real ones (Gauss's trick), as torch computes it on the CPU.

With ``x = a + ib``, ``w = c + id`` and the bias ``p + iq``::

    plain   = conv(a, c) + p
    crossed = conv(b, d)
    mixed   = conv(a + b, c + d) + p + q
    result  = (plain - crossed) + i * (mixed - plain - crossed)

Every step is an ember op (``real``, ``imag``, the real ``Convolution``, adds and a product), so the gradients,
their Wirtinger conjugates as torch defines them, and every higher derivative follow from theirs. The result's
node is the final add's (``AddBackward0``, over a ``SubBackward0`` and a ``MulBackward1``), as torch's is.

>>> import ember
>>> x = ember.tensor([[[1 + 1j, 2 - 1j]]])
>>> ember.nn.functional.conv1d(x, ember.tensor([[[1j]]]))
tensor([[[-1.+1.j,  1.+2.j]]])
"""
from __future__ import annotations

from ember._ops.convolution import Convolution, Geometry
from ember._tensor import Tensor
from ember.autograd._node_names import named_node


def gauss_convolution(input: Tensor, weight: Tensor, bias: Tensor | None, geometry: Geometry, transposed: bool,
                      size: tuple | None) -> Tensor:
    """The complex ``Convolution`` (or transposed one) of a batched complex ``input``, from three real ones."""
    def convolve(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
        return Convolution.apply(x, w, b, geometry, transposed, size)

    a, b = input.real, input.imag
    c, d = weight.real, weight.imag
    p, q = (None, None) if bias is None else (bias.real, bias.imag)
    plain = convolve(a, c, p)
    crossed = convolve(b, d, None)
    mixed = convolve(a + b, c + d, None if bias is None else p + q)
    imaginary = mixed - plain - crossed
    # torch's product here is by a scalar (``mul.Scalar``), whose node is ``MulBackward1``
    rotated = named_node(imaginary * 1j, "MulBackward1", imaginary, listed=(imaginary,))
    return (plain - crossed) + rotated
