"""Functions that torch keeps in ``torch.functional``: ``norm``.

>>> import ember
>>> ember.tensor([[3., 4.], [0., 1.]]).norm(dim=1)
tensor([5., 1.])
"""
from __future__ import annotations

import numbers

from ember import _dtype
from ember._ops._support import ember_function, require_tensor
from ember._ops.out import into_out, into_out_of_its_dtype
from ember._tensor import Tensor
from ember.linalg import matrix_norm, vector_norm


@ember_function
def norm(input: Tensor, p: float | str | None = "fro", dim: int | tuple[int, ...] | None = None, keepdim: bool = False,
         out: Tensor | None = None, dtype: _dtype.dtype | None = None) -> Tensor:
    """The ``p``-norm of ``input`` over ``dim`` (every element when None), as ``linalg.vector_norm``.

    ``p='fro'`` (the default) and ``p=None`` are the 2-norm; ``p='nuc'`` the nuclear norm (the sum of the
    singular values) of a matrix, over the two dims in ``dim`` (None: a 2-D input's). Prefer
    ``ember.linalg.vector_norm`` and ``matrix_norm``, whose meaning does not depend on the arguments.

    >>> ember.norm(ember.tensor([3., -4.])), ember.norm(ember.tensor([3., -4.]), p=1)
    (tensor(5.), tensor(7.))
    >>> ember.norm(ember.tensor([[3., 0.], [0., -4.]]), p='nuc')
    tensor(7.)
    """
    if not (p is None or isinstance(p, (str, numbers.Number, Tensor))):  # (before the dtype, as torch's parser)
        raise TypeError(f"norm(): argument 'p' must be a number, 'fro' or 'nuc', not {type(p).__name__}; the dims "
                        "go in dim=, e.g. ember.norm(x, dim=(0, 1))")
    if p == "nuc":  # as torch: dim None means every dim, which matrix_norm accepts only for a matrix
        dims = tuple(range(require_tensor(input, "norm").dim())) if dim is None else dim
        result = matrix_norm(input, "nuc", dims, keepdim, dtype=dtype)
    elif isinstance(p, str) and p != "fro":
        raise RuntimeError(f"norm: p={p!r} is not a norm; use a number, 'fro' or 'nuc'")
    else:
        result = vector_norm(input, 2 if p is None or p == "fro" else p, dim, keepdim, dtype=dtype)
    return result if out is None else into_out_of_its_dtype("norm", result, out, input)
