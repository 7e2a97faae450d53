"""amp.custom_fwd and custom_bwd against torch's: the dtypes a custom Function sees and gives under autocast."""
import pytest
import torch

import ember


def _square(lib, cast_inputs):
    seen = {}

    class Square(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            seen["forward"] = (str(x.dtype), str(lib.is_autocast_enabled("cpu")), str((x @ w).dtype))
            return x @ w

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            seen["backward"] = (str(lib.is_autocast_enabled("cpu")), str((grad @ w.mT).dtype))
            return grad @ w.mT, x.mT @ grad

    return Square, seen


@pytest.mark.parametrize("cast", [None, "float32", "float64"])
@pytest.mark.parametrize("autocast_on", [True, False])
def test_dtypes_seen_as_in_torch(cast, autocast_on):
    results = []
    for lib in (torch, ember):
        square, seen = _square(lib, None if cast is None else getattr(lib, cast))
        x = lib.ones(2, 2, requires_grad=True)
        w = lib.ones(2, 2, dtype=lib.float32, requires_grad=True)
        with lib.autocast("cpu", dtype=lib.float16 if lib is ember else lib.bfloat16, enabled=autocast_on):
            y = square.apply(x, w)
        y.float().sum().backward()
        names = [v.replace("torch.", "").replace("ember.", "").replace("bfloat16", "low") for v in
                 (*seen["forward"], *seen["backward"], str(y.dtype))]
        results.append([n.replace("float16", "low") for n in names])
    assert results[0] == results[1]


def test_device_type_must_be_a_string_as_in_torch():
    for lib in (torch, ember):
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            lib.amp.custom_fwd(device_type=0)
