"""Complex convolution, composed of three real ones (Gauss's trick), as torch computes it on the CPU.

With ``x = a + ib``, ``w = c + id`` and the bias ``p + iq``::

    plain   = conv(a, c) + p
    crossed = conv(b, d)
    mixed   = conv(a + b, c + d) + p + q
    result  = (plain - crossed) + i * (mixed - plain - crossed)

Every step is an ember op (``view_as_real`` and ``select``, the real ``Convolution``, adds and a product), so
the gradients, their Wirtinger conjugates as torch defines them, and every higher derivative follow from theirs.
The graph is torch's node for node: the result's is the final add's (``AddBackward0``, over a ``SubBackward0``
and a ``MulBackward1``).

>>> import ember
>>> x = ember.tensor([[[1 + 1j, 2 - 1j]]])
>>> ember.nn.functional.conv1d(x, ember.tensor([[[1j]]]))
tensor([[[-1.+1.j,  1.+2.j]]])
"""
from __future__ import annotations

from ember._ops._support import refuse_complex
from ember._ops.complex import view_as_real
from ember._ops.convolution import Convolution, Geometry
from ember._tensor import Tensor
from ember.autograd._node_names import named_node


def gauss_convolution(input: Tensor, weight: Tensor, bias: Tensor | None, geometry: Geometry, transposed: bool,
                      size: tuple | None) -> Tensor:
    """The complex ``Convolution`` (or transposed one) of a batched complex ``input``, from three real ones."""
    def convolve(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
        return Convolution.apply(x, w, b, geometry, transposed, size)

    a, b = _parts(input)
    c, d = _parts(weight)
    p, q = (None, None) if bias is None else _parts(bias)
    plain = convolve(a, c, p)
    crossed = convolve(b, d, None)
    mixed = convolve(a + b, c + d, None if bias is None else p + q)
    imaginary = mixed - plain - crossed
    # torch's product here is by a scalar (``mul.Scalar``), whose node is ``MulBackward1``
    rotated = named_node(imaginary * 1j, "MulBackward1", imaginary, listed=(imaginary,))
    return (plain - crossed) + rotated


def _parts(z: Tensor) -> tuple:
    """The real and imaginary parts as views of one real view of ``z``: the nodes torch's graph has there
    (``SelectBackward0`` over ``ViewAsRealBackward0``)."""
    pairs = view_as_real(z)
    return pairs.select(-1, 0), pairs.select(-1, 1)


def refuse_without_complex_kernel(spatial: int, transposed: bool, operand: Tensor, grad_input: bool = False) -> None:
    """torch composes complex convolutions only in ``F.conv*d`` and ``F.conv_transpose*d``; its single kernels
    (aten's ``convolution``, and the gradients ``nn.grad`` computes) have none, so a complex ``operand`` (the one
    the kernel is chosen by) is torch's NotImplementedError naming the kernel, where the composite would compute.
    A complex operand among real ones is the dtype mismatch the convolution itself reports.

    >>> import ember
    >>> refuse_without_complex_kernel(2, False, ember.ones(1, dtype=ember.complex64))
    Traceback (most recent call last):
    NotImplementedError: "slow_conv2d_cpu" not implemented for 'ComplexFloat'; ...
    """
    if not operand.is_complex():
        return
    if transposed:
        kernel = f"slow_conv_transpose{max(spatial, 2)}d_out_cpu"
    elif grad_input:
        kernel = f"slow_conv{max(spatial, 2)}d_cpu_grad_input"
    else:
        kernel = "slow_conv2d_cpu" if spatial < 3 else "compute_columns3d"
    refuse_complex(kernel, operand._data)
