"""Names of ``torch.library`` that ember keeps for code written against them: ``impl_abstract`` (the old name of
``register_fake``), ``get_ctx`` (the fake-implementation context), and ``triton_op``/``wrap_triton``, whose
Triton kernels run on GPUs only.

>>> ember.library.get_ctx() is None  # outside a fake implementation, as torch's
True
"""
from __future__ import annotations

import warnings
from typing import Callable, Iterable

from ember.library._custom_op import custom_op, register_fake


def impl_abstract(qualname, func: Callable | None = None, *, lib=None, _stacklevel: int = 1):
    """The name ``register_fake`` had before; warns (FutureWarning) and registers ``func`` as the fake."""
    warnings.warn(
        "`ember.library.impl_abstract` was renamed to `ember.library.register_fake`; use that instead (this "
        "name will be removed)",
        FutureWarning,
        stacklevel=2,
    )
    return register_fake(qualname, func, lib=lib)


def get_ctx() -> None:
    """The context a fake implementation asks for data-dependent sizes; None, as torch's outside one. ember has
    no fake tensors: ``opcheck`` runs fake implementations on real tensors, where every size is known."""
    return None


def triton_op(name: str, fn: Callable | None = None, /, *, mutates_args: str | Iterable[str],
              schema: str | None = None) -> Callable:
    """A custom op meant to launch Triton kernels (through ``wrap_triton``). Without Triton, as on a CPU-only
    torch, it is a ``custom_op`` whose body runs as it is.

    >>> @ember.library.triton_op("doc_triton::double", mutates_args=())
    ... def double(x: ember.Tensor) -> ember.Tensor:
    ...     return x * 2
    >>> double(ember.ones(2))
    tensor([2., 2.])
    """
    return custom_op(name, fn, mutates_args=mutates_args, schema=schema)


def wrap_triton(triton_kernel: Callable, /) -> Callable:
    """Raises: a Triton kernel runs on a GPU, and neither Triton nor a GPU is there for ember (torch raises the
    same ModuleNotFoundError without Triton)."""
    raise ModuleNotFoundError(
        "No module named 'triton': wrap_triton launches Triton GPU kernels, which ember (CPU-only) cannot run; "
        "write the op's body with ember ops or NumPy instead",
        name="triton",
    )
