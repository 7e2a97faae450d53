"""``autocast``: a ``__torch_function__`` mode that casts the inputs of some ops to a lower (or full) precision.

It is written as any user's mode is (docs/extending.md): it sees each public call, casts the floating
inputs of the ops on its lists, and calls the op. The casts are recorded ops, so gradients flow back to
the float32 parameters in their own dtype.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

from ember import _dtype as D
from ember._tensor import Tensor
from ember.overrides import TorchFunctionMode, resolve_name

__all__ = ["autocast", "get_autocast_dtype", "is_autocast_available", "is_autocast_enabled"]

# torch's CPU autocast lists, for the ops ember has. Lower precision: the products, where half pays off.
_LOWER = {f"ember.{n}" for n in "matmul mm bmm addmm addbmm baddbmm linalg.vecdot linalg.matmul".split()} | {
    f"ember.nn.functional.{n}" for n in "linear conv1d conv2d conv3d conv_transpose1d conv_transpose2d "
                                          "conv_transpose3d prelu scaled_dot_product_attention".split()} | {
    f"ember.Tensor.{n}" for n in "matmul __matmul__ __rmatmul__ mm bmm addmm addbmm baddbmm".split()}
# Full precision: ops whose range or accuracy half would ruin (losses, products of many terms, decompositions).
_FULL = {f"ember.{n}" for n in "prod quantile nanquantile cdist trace cholesky cholesky_inverse cholesky_solve "
                                "inverse lu_solve orgqr pinverse geqrf qr svd triangular_solve".split()} | {
    f"ember.nn.functional.{n}" for n in "mse_loss cosine_embedding_loss nll_loss hinge_embedding_loss "
                                          "poisson_nll_loss smooth_l1_loss cross_entropy l1_loss huber_loss "
                                          "margin_ranking_loss soft_margin_loss triplet_margin_loss "
                                          "multi_margin_loss ctc_loss kl_div multilabel_margin_loss "
                                          "binary_cross_entropy binary_cross_entropy_with_logits avg_pool3d "
                                          "max_pool3d adaptive_avg_pool3d".split()} | {
    f"ember.Tensor.{n}" for n in "prod trace cholesky inverse pinverse qr svd".split()}

_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_state = {"enabled": False, "dtype": None, "cache": {}}  # the CPU's autocast, the only one that can be on
_DEFAULT_DTYPE = {"cpu": D.bfloat16, "cuda": D.float16}
_CPU_DTYPES = (D.float16,) if D.BF16 is None else (D.float16, D.bfloat16)  # bfloat16's storage needs ml_dtypes


class _AutocastMode(TorchFunctionMode):
    """Casts the inputs of the listed ops while the CPU's autocast is on."""

    def __torch_function__(self, func: Callable, types: tuple, args: tuple = (), kwargs: dict | None = None):
        kwargs = kwargs or {}
        if _state["enabled"]:
            name = resolve_name(func)
            target = _state["dtype"] if name in _LOWER else D.float32 if name in _FULL else None
            if target is not None:
                args = tuple(_cast(a, target) for a in args)
                kwargs = {k: _cast(v, target) for k, v in kwargs.items()}
        return func(*args, **kwargs)


def _cast(value: Any, dtype: D.dtype) -> Any:
    """A floating tensor (not a double one) in ``dtype``; a leaf's cast is made once per autocast region."""
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    if not isinstance(value, Tensor) or value.dtype is dtype or value.dtype not in (D.float16, D.bfloat16, D.float32):
        return value
    if value.requires_grad and value.grad_fn is None:  # a parameter: cast once, as torch caches it
        cache = _state["cache"]
        key = (id(value), dtype)
        if key not in cache:
            cache[key] = (value, value.to(dtype))  # the tensor itself kept, so its id is not reused meanwhile
        return cache[key][1]
    return value.to(dtype)


class autocast:
    """Run a block (or a decorated function) with the ops on autocast's lists in ``dtype``.

    ``device_type="cpu"`` takes ``dtype=ember.bfloat16`` (the default, as torch's) or ``ember.float16``;
    bfloat16 needs the ml_dtypes package (``pip install ember[bfloat16]``): without it, as torch does for a
    dtype it cannot use, autocast warns and stays off. ``"cuda"`` warns
    and stays off, as there is no GPU. ``enabled=False`` switches autocast off inside an enclosing one.

    >>> import ember
    >>> layer = ember.nn.Linear(4, 2)
    >>> with ember.autocast("cpu", dtype=ember.float16):
    ...     out = layer(ember.ones(3, 4))
    ...     with ember.autocast("cpu", enabled=False):
    ...         full = layer(ember.ones(3, 4))
    >>> out.dtype, full.dtype, layer.weight.dtype
    (ember.float16, ember.float32, ember.float32)
    """

    def __init__(self, device_type: str, dtype: D.dtype | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(
                f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: {device_type}"
            )
        self.device = device_type
        self.fast_dtype = dtype if dtype is not None else _DEFAULT_DTYPE.get(device_type, D.float16)
        self._enabled = bool(enabled)
        if self._enabled and device_type == "cuda":
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", UserWarning,
                          stacklevel=2)
            self._enabled = False
        elif self._enabled and device_type == "cpu" and self.fast_dtype not in _CPU_DTYPES:
            hint = "" if D.BF16 is not None else "; ember.bfloat16 needs ml_dtypes: pip install ember[bfloat16]"
            warnings.warn(
                "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                f"CPU Autocast in ember supports {' and '.join(map(repr, _CPU_DTYPES))} (asked for "
                f"{self.fast_dtype}){hint}.",
                UserWarning, stacklevel=2,
            )
            self._enabled = False
        elif self._enabled and device_type != "cpu":
            warnings.warn(f"ember runs on the CPU only: autocast for {device_type!r} is disabled.", UserWarning,
                          stacklevel=2)
            self._enabled = False
        self._mode = None

    def __enter__(self) -> "autocast":
        if self.device != "cpu":
            self._saved = None
            return self
        self._saved = (_state["enabled"], _state["dtype"])
        _state["enabled"] = self._enabled
        if self._enabled:
            _state["dtype"] = self.fast_dtype
        self._mode = _AutocastMode()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._saved is None:
            return
        self._mode.__exit__(*exc)
        _state["enabled"], _state["dtype"] = self._saved
        if not _state["enabled"]:
            _state["cache"].clear()

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorated


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast`` takes ``device_type`` (it takes ``"cuda"`` too, and switches off there)."""
    return device_type in ("cpu", "cuda")


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type``: only the CPU's can be."""
    return device_type == "cpu" and _state["enabled"]


def get_autocast_dtype(device_type: str) -> Any:
    """The dtype autocast casts to on ``device_type`` (the CPU's default is bfloat16)."""
    if device_type == "cpu" and _state["dtype"] is not None:
        return _state["dtype"]
    return _DEFAULT_DTYPE.get(device_type, D.float16)
