"""``autocast``: a ``__torch_function__`` mode that casts the inputs of some ops to a lower (or full) precision.

It is written as any user's mode is (docs/extending.md): it sees each public call, casts the floating
inputs of the ops on its lists, and calls the op. The casts are recorded ops, so gradients flow back to
the float32 parameters in their own dtype.

Autocast's state (a switch and a dtype per device type, the cache switch, the nesting depth) is read and set by
torch's functions, ``set_autocast_enabled`` and its kin, also here; the context manager goes through them, and the
mode is on the mode stack exactly while the CPU's switch is on.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

from ember import _dtype as D
from ember._tensor import Tensor
from ember.overrides import TorchFunctionMode, _modes, resolve_name  # (_modes: the stack, for the bottom place)

__all__ = [
    "autocast", "autocast_decrement_nesting", "autocast_increment_nesting", "clear_autocast_cache",
    "get_autocast_dtype", "is_autocast_available", "is_autocast_cache_enabled", "is_autocast_enabled",
    "set_autocast_cache_enabled", "set_autocast_dtype", "set_autocast_enabled",
]

# torch's CPU autocast lists, for the ops ember has. Lower precision: the products, where half pays off.
_LOWER = {f"ember.{n}" for n in "matmul mm bmm addmm addbmm baddbmm linalg.vecdot linalg.matmul "
                                 "affine_grid_generator rnn_tanh rnn_relu rnn_tanh_cell rnn_relu_cell".split()} | {
    f"ember.nn.functional.{n}" for n in "linear conv1d conv2d conv3d conv_transpose1d conv_transpose2d "
                                          "conv_transpose3d conv_tbc prelu scaled_dot_product_attention "
                                          "multi_head_attention_forward affine_grid".split()} | {
    f"ember.Tensor.{n}" for n in "matmul __matmul__ __rmatmul__ mm bmm addmm addbmm baddbmm".split()}
# Full precision: ops whose range or accuracy half would ruin (losses, products of many terms, decompositions,
# Fourier transforms), and those without a half kernel (reflection padding, grid sampling, unpooling).
_FULL = {f"ember.{n}" for n in "prod quantile nanquantile cdist trace cholesky cholesky_inverse cholesky_solve "
                                "inverse lu_solve orgqr ormqr pinverse geqrf qr svd triangular_solve lu stft polar "
                                "view_as_complex grid_sampler grid_sampler_2d grid_sampler_3d max_pool3d "
                                "fake_quantize_per_tensor_affine cosine_embedding_loss hinge_embedding_loss "
                                "margin_ranking_loss poisson_nll_loss triplet_margin_loss ctc_loss kl_div "
                                "binary_cross_entropy_with_logits".split()} | {
    f"ember.linalg.{n}" for n in "cond matrix_rank svdvals eigvals eig eigh eigvalsh inv inv_ex solve cholesky "
                                  "cholesky_ex householder_product tensorinv tensorsolve qr svd lstsq".split()} | {
    f"ember.fft.{n}" for n in "fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft "
                               "ihfft".split()} | {
    f"ember.nn.functional.{n}" for n in "mse_loss cosine_embedding_loss nll_loss hinge_embedding_loss "
                                          "poisson_nll_loss smooth_l1_loss cross_entropy l1_loss huber_loss "
                                          "margin_ranking_loss soft_margin_loss triplet_margin_loss "
                                          "multi_margin_loss ctc_loss kl_div multilabel_margin_loss "
                                          "binary_cross_entropy binary_cross_entropy_with_logits avg_pool3d "
                                          "max_pool3d adaptive_avg_pool3d adaptive_max_pool3d "
                                          "adaptive_max_pool3d_with_indices max_unpool1d max_unpool2d max_unpool3d "
                                          "fractional_max_pool2d fractional_max_pool2d_with_indices "
                                          "fractional_max_pool3d fractional_max_pool3d_with_indices "
                                          "grid_sample".split()} | {
    f"ember.Tensor.{n}" for n in "prod trace cholesky cholesky_inverse cholesky_solve inverse pinverse qr svd lu "
                                  "lu_solve orgqr ormqr geqrf triangular_solve quantile nanquantile stft".split()}


def _padding_target(input=None, pad=(), mode: str = "constant", value=None):
    """F.pad's: reflection (of 1 or 2 dims) and replication pads run in float32, the other modes as they are."""
    if mode == "reflect" and len(pad) in (2, 4) or mode == "replicate" and len(pad) in (2, 4, 6):
        return D.float32
    return None


def _widest_target(*args, **kwargs):
    """index_copy's: its floating operands meet in autocast's dtype if they all have it, else in float32 (a double
    one is left as it is), where outside autocast their dtypes must be equal."""
    lower = _state.dtype["cpu"]
    dtypes = {a.dtype for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)}
    return lower if dtypes & _CASTABLE <= {lower} else D.float32


# The ops ember composes of internal products where torch's are composites of mm and bmm, which autocast lowers:
# they lower their products' operands themselves, while the mode runs them (``lowered``).
_COMPOSITES = {f"ember.{n}" for n in "einsum tensordot inner chain_matmul linalg.multi_dot matrix_power "
                                      "linalg.matrix_power cov corrcoef Tensor.inner Tensor.matrix_power Tensor.cov "
                                      "Tensor.corrcoef".split()}

# The ops whose target depends on their arguments: target(*args, **kwargs) is a dtype, or None to leave them.
_BY_ARGUMENTS = {"ember.nn.functional.pad": _padding_target, "ember.index_copy": _widest_target,
                 "ember.Tensor.index_copy": _widest_target}

_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
# Each device type's autocast dtype until set otherwise (torch's defaults); the other device types have none.
_DEFAULT_DTYPE = {"cpu": D.bfloat16, "cuda": D.float16, "ipu": D.float16, "xpu": D.float16, "hip": D.float16,
                  "maia": D.bfloat16, "xla": D.bfloat16, "mps": D.float16, "hpu": D.bfloat16, "mtia": D.float16,
                  "privateuseone": D.float16}
_CASTABLE = {D.float16, D.bfloat16, D.float32}  # the dtypes autocast casts from (never a double)
_CPU_DTYPES = (D.float16,) if D.BF16 is None else (D.float16, D.bfloat16)  # bfloat16's storage needs ml_dtypes


class _State:
    """Autocast's switches, as torch keeps them: a flag and a dtype per device type (only the CPU's flag casts
    anything in ember), the cache of cast parameters, and how deeply autocast regions are nested."""

    def __init__(self) -> None:
        self.enabled = dict.fromkeys(_DEVICE_TYPES, False)
        self.dtype = dict(_DEFAULT_DTYPE)
        self.cache: dict = {}
        self.cache_enabled = True
        self.nesting = 0
        self.mode = None  # the _AutocastMode on the mode stack while the CPU's flag is on
        self.composite = None  # autocast's dtype while the mode runs one of the _COMPOSITES, else None


_state = _State()


class _AutocastMode(TorchFunctionMode):
    """Casts the inputs of the listed ops while the CPU's autocast is on."""

    def __torch_function__(self, func: Callable, types: tuple, args: tuple = (), kwargs: dict | None = None):
        kwargs = kwargs or {}
        if _state.enabled["cpu"]:
            name = resolve_name(func)
            if name in _COMPOSITES:
                return _composed(func, args, kwargs)
            target = _state.dtype["cpu"] if name in _LOWER else D.float32 if name in _FULL else None
            if target is None and name in _BY_ARGUMENTS:
                target = _BY_ARGUMENTS[name](*args, **kwargs)
            if target is not None:
                args = tuple(_cast(a, target) for a in args)
                kwargs = {k: _cast(v, target) for k, v in kwargs.items()}
        return func(*args, **kwargs)


def _composed(func: Callable, args: tuple, kwargs: dict):
    """``func`` (one of the _COMPOSITES) run with its inner products in autocast's dtype (see ``lowered``)."""
    outer, _state.composite = _state.composite, _state.dtype["cpu"]
    try:
        return func(*args, **kwargs)
    finally:
        _state.composite = outer


def _cast(value: Any, dtype: D.dtype) -> Any:
    """A floating tensor (not a double one) in ``dtype``; a leaf's cast is made once per autocast region."""
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    if not isinstance(value, Tensor) or value.dtype is dtype or value.dtype not in _CASTABLE:
        return value
    if value.requires_grad and value.grad_fn is None and _state.cache_enabled:  # a parameter: cast once, as torch
        cache = _state.cache
        key = (id(value), dtype)
        if key not in cache:
            cache[key] = (value, value.to(dtype))  # the tensor itself kept, so its id is not reused meanwhile
        return cache[key][1]
    return value.to(dtype)


def lowered(t: Tensor) -> Tensor:
    """``t`` as an operand of a matrix product inside one of the _COMPOSITES: in autocast's dtype while the mode
    runs one, as torch's composites meet autocast at their mm and bmm (the mode sees only the public call, so these
    ops ask here). Elsewhere, as when another op uses einsum inside, ``t`` as it is."""
    return t if _state.composite is None else _cast(t, _state.composite)


def lowering() -> bool:
    """Whether ``lowered`` casts: the mode runs one of the _COMPOSITES."""
    return _state.composite is not None


def lowered_dtype(t: Tensor) -> D.dtype:
    """The dtype ``lowered(t)`` has: operands of mixed floating dtypes meet in autocast's."""
    return _state.composite if _state.composite is not None and t.dtype in _CASTABLE else t.dtype


def widened(t: Tensor) -> Tensor:
    """``t`` as the operand of a decomposition inside one of the _COMPOSITES (matrix_power's inverse): in float32
    while the mode runs one, as torch's float32 list has it."""
    return t if _state.composite is None else _cast(t, D.float32)


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
        self.fast_dtype = dtype if dtype is not None else _state.dtype.get(device_type, D.float16)
        self._enabled = bool(enabled)
        self._cache_enabled = _state.cache_enabled if cache_enabled is None else bool(cache_enabled)
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

    def __enter__(self) -> "autocast":
        device = self.device
        self._saved = (is_autocast_enabled(device), _state.dtype.get(device), _state.cache_enabled)
        set_autocast_enabled(device, self._enabled)
        if device in _DEFAULT_DTYPE:  # (a device type without an autocast dtype keeps none)
            set_autocast_dtype(device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc) -> None:
        if autocast_decrement_nesting() == 0:  # the outermost region ends: its cast parameters are let go
            clear_autocast_cache()
        enabled, dtype, _state.cache_enabled = self._saved
        set_autocast_enabled(self.device, enabled)
        if dtype is not None:
            set_autocast_dtype(self.device, dtype)

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorated


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast`` takes ``device_type`` (it takes ``"cuda"`` too, and switches off there)."""
    return device_type in ("cpu", "cuda")


def _device_type(op: str, device_type: object) -> str:
    """``device_type``, checked as torch checks it: a str naming a device type."""
    if not isinstance(device_type, str):
        raise TypeError(f"{op}(): argument 'device_type' (position 1) must be str, not {type(device_type).__name__}")
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(
            f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: {device_type}"
        )
    return device_type


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type``; with no argument, the legacy form, for ``"cuda"``.

    >>> ember.is_autocast_enabled("cpu"), ember.is_autocast_enabled()
    (False, False)
    """
    return _state.enabled[_device_type("is_autocast_enabled", device_type)]


def set_autocast_enabled(*args: Any) -> None:
    """``set_autocast_enabled(device_type, enabled)`` switches autocast for ``device_type``, as entering and leaving
    ``autocast`` does; the legacy ``set_autocast_enabled(enabled)`` switches ``"cuda"``'s. Only the CPU's
    switch changes what ops do: with it on, the ops on autocast's lists run in ``get_autocast_dtype("cpu")``.

    >>> ember.set_autocast_enabled("cpu", True)
    >>> (ember.ones(2, 2) @ ember.ones(2, 2)).dtype == ember.get_autocast_dtype("cpu")
    True
    >>> ember.set_autocast_enabled("cpu", False)
    """
    if len(args) not in (1, 2):
        raise TypeError(f"set_autocast_enabled() takes (device_type, enabled) or (enabled), got {len(args)} arguments")
    device, enabled = ("cuda", args[0]) if len(args) == 1 else (_device_type("set_autocast_enabled", args[0]), args[1])
    if type(enabled) is not bool:
        raise TypeError(f"set_autocast_enabled(): argument 'enabled' (position {len(args)}) must be bool, not "
                        f"{type(enabled).__name__}")
    _state.enabled[device] = enabled
    if device == "cpu":
        _install_mode() if enabled else _remove_mode()


def _install_mode() -> None:
    """The casting mode goes at the bottom of the mode stack: as torch's autocast works below every
    ``__torch_function__`` mode, the user's modes see the call first, with the arguments as given."""
    if _state.mode is None:
        _state.mode = _AutocastMode()
        _modes.insert(0, _state.mode)


def _remove_mode() -> None:
    if _state.mode is not None and _state.mode in _modes:  # (absent while it runs: it then stays, and idles)
        _modes.remove(_state.mode)
        _state.mode = None


def get_autocast_dtype(device_type: str) -> Any:
    """The dtype autocast casts to on ``device_type``: the last one set, else torch's default (bfloat16 on the CPU).

    >>> ember.get_autocast_dtype("cpu"), ember.get_autocast_dtype("cuda")
    (ember.bfloat16, ember.float16)
    """
    device = _device_type("get_autocast_dtype", device_type)
    if device not in _state.dtype:
        raise RuntimeError(f"unsupported scalarType: device type {device!r} has no autocast dtype")
    return _state.dtype[device]


def set_autocast_dtype(device_type: str, dtype: D.dtype) -> None:
    """Make ``dtype`` the one autocast casts to on ``device_type`` (``autocast`` without a ``dtype`` takes it).

    >>> ember.set_autocast_dtype("cpu", ember.float16)
    >>> with ember.autocast("cpu"):
    ...     (ember.ones(2, 2) @ ember.ones(2, 2)).dtype
    ember.float16
    >>> ember.set_autocast_dtype("cpu", ember.bfloat16)
    """
    device = _device_type("set_autocast_dtype", device_type)
    if not isinstance(dtype, D.dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be ember.dtype, not "
                        f"{type(dtype).__name__}")
    if device not in _DEFAULT_DTYPE:
        raise RuntimeError(f"unknown device type for autocast: {device!r} takes no autocast dtype")
    _state.dtype[device] = dtype


def is_autocast_cache_enabled() -> bool:
    """Whether autocast keeps each parameter's cast for the rest of the outermost region (on by default).

    >>> ember.is_autocast_cache_enabled()
    True
    """
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Switch the cache of cast parameters (``autocast(cache_enabled=...)`` sets it for its region)."""
    if type(enabled) is not bool:
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    _state.cache_enabled = enabled


def clear_autocast_cache() -> None:
    """Let go of the parameters' casts that autocast has kept (leaving the outermost region does this)."""
    _state.cache.clear()


def autocast_increment_nesting() -> int:
    """One autocast region deeper (entering ``autocast`` calls it); returns the new depth.

    >>> ember.autocast_increment_nesting(), ember.autocast_decrement_nesting()
    (1, 0)
    """
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    """One autocast region shallower (leaving ``autocast`` calls it); returns the new depth, which, as in torch,
    may go below zero."""
    _state.nesting -= 1
    return _state.nesting
