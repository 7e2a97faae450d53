"""``ember.backends.cuda``: not built; ``matmul.allow_tf32`` and the SDPA switches are settable flags.

>>> import ember
>>> ember.backends.cuda.is_built(), ember.backends.cuda.matmul.allow_tf32
(False, False)
"""


class _MatmulFlags:
    """``ember.backends.cuda.matmul``: settable, read by nothing (ember multiplies with NumPy)."""

    allow_tf32 = False
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True


matmul = _MatmulFlags()


def is_built() -> bool:
    return False


_sdp = {"flash": True, "mem_efficient": True, "math": True}


def enable_flash_sdp(enabled: bool) -> None:
    _sdp["flash"] = bool(enabled)


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _sdp["mem_efficient"] = bool(enabled)


def enable_math_sdp(enabled: bool) -> None:
    _sdp["math"] = bool(enabled)


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def math_sdp_enabled() -> bool:
    return _sdp["math"]
