"""ember.autocast / ember.amp.autocast against torch's CPU autocast."""
import warnings

import pytest

import ember
from twins import both, normalise


def _ops(lib):
    a = lib.linspace(-1, 1, 6).reshape(2, 3).requires_grad_()
    w = lib.linspace(0, 1, 12).reshape(4, 3).requires_grad_()
    x = lib.linspace(-2, 2, 16).reshape(1, 1, 4, 4)
    k = lib.linspace(-1, 1, 9).reshape(1, 1, 3, 3)
    F = lib.nn.functional
    results = {
        "matmul": a @ w.t(), "mm": lib.mm(a, w.t()), "bmm": lib.bmm(a[None], w.t()[None]),
        "addmm": lib.addmm(lib.zeros(4), a, w.t()), "linear": F.linear(a, w), "conv2d": F.conv2d(x, k),
        "method": a.matmul(w.t()), "double": a.double() @ w.double().t(), "add": a + a, "exp": a.exp(),
        "mse": F.mse_loss(a.half(), a.half()), "prod": a.half().prod(),
    }
    return results


@pytest.mark.parametrize("entry", ["torch.autocast", "torch.amp.autocast"])
def test_dtypes_and_values_under_float16_autocast(entry):
    def program(lib):
        make = lib.autocast if entry == "torch.autocast" else lib.amp.autocast
        with make("cpu", dtype=lib.float16):
            results = _ops(lib)
            inside = lib.is_autocast_enabled("cpu"), lib.get_autocast_dtype("cpu")
        return ([(k, v.dtype, v.detach().float()) for k, v in results.items()], inside,
                lib.is_autocast_enabled("cpu"))

    both(program, prepare=normalise)


def test_gradients_flow_back_in_the_parameters_dtype():
    def program(lib):
        a = lib.linspace(-1, 1, 6).reshape(2, 3).requires_grad_()
        layer = lib.nn.Linear(3, 2)
        with lib.no_grad():
            layer.weight.copy_(lib.linspace(-0.5, 0.5, 6).reshape(2, 3))
            layer.bias.fill_(0.25)
        with lib.autocast(device_type="cpu", dtype=lib.float16):
            out = layer(a)
            loss = (out.float() ** 2).sum()
        loss.backward()
        edges = [type(f).__name__ for f, _ in out.grad_fn.next_functions if f is not None]
        return out.dtype, layer.weight.grad.dtype, layer.weight.grad, a.grad, edges

    both(program, prepare=normalise)


def test_nested_disable_and_decorator():
    def program(lib):
        a = lib.ones(2, 2)

        @lib.autocast("cpu", dtype=lib.float16)
        def decorated():
            return (a @ a).dtype

        with lib.autocast("cpu", dtype=lib.float16):
            with lib.autocast("cpu", enabled=False):
                off = (a @ a).dtype
            on = (a @ a).dtype
        return decorated(), off, on, (a @ a).dtype

    both(program, prepare=normalise)


@pytest.mark.parametrize("device, dtype", [("cuda", None), ("cpu", "float32")])  # the CPU default: test_bfloat16
def test_unsupported_requests_warn_and_disable(device, dtype):
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autocast(device, dtype=getattr(lib, dtype) if dtype else None):
                result = (lib.ones(2, 2) @ lib.ones(2, 2)).dtype
        return result, [str(w.message).split(".")[0] for w in caught]

    expected_dtype = "float32" if device == "cuda" or dtype else None
    result = both(program, prepare=normalise) if expected_dtype else program(ember)
    assert str(result[0]).endswith("float32") and result[1]


def test_unknown_device_type_is_an_error():
    with pytest.raises(RuntimeError, match="device type at start of device string: tpu"):
        ember.autocast("tpu")


def test_cuda_amp_autocast_is_disabled_with_a_warning():
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.cuda.amp.autocast():
                dtype = (lib.ones(2, 2) @ lib.ones(2, 2)).dtype
                enabled = lib.is_autocast_enabled("cpu")
        return dtype, enabled, any("Disabling autocast" in str(w.message) for w in caught)

    both(program, prepare=normalise)


def _attention_under_autocast(lib):
    lib.manual_seed(0)
    attention = lib.nn.MultiheadAttention(4, 2, batch_first=True)
    x = lib.linspace(-1, 1, 24).reshape(2, 3, 4)
    with lib.autocast("cpu", dtype=lib.float16):
        out, weights = attention(x, x, x)
    (out.float().sum() + weights.float().sum()).backward()
    return out, weights, attention.in_proj_weight.grad


def test_multihead_attention_runs_in_lower_precision_as_torchs():
    import torch

    (out, weights, grad), expected = _attention_under_autocast(ember), _attention_under_autocast(torch)
    for mine, theirs in zip((out, weights, grad), expected):
        assert str(mine.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
        assert ember.allclose(mine.float(), ember.tensor(theirs.detach().float().numpy()), rtol=1e-2, atol=2e-3)


def _recurrent_under_autocast(lib, kind, input_dtype):
    lib.manual_seed(0)
    layer = getattr(lib.nn, kind)(3, 4, batch_first=True)
    x = lib.linspace(-1, 1, 12).reshape(2, 2, 3).to(getattr(lib, input_dtype))
    with lib.autocast("cpu", dtype=lib.bfloat16):  # (torch's float16 LSTM has no CPU kernel)
        out, _ = layer(x)
    out.float().sum().backward()
    return out, layer.weight_ih_l0.grad


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("input_dtype", ["float32", "bfloat16"])
def test_recurrent_layers_under_autocast_as_torchs(kind, input_dtype):
    """An LSTM runs in autocast's dtype; a GRU or RNN in its input's, its float32 weights cast to it."""
    import torch

    mine, theirs = _recurrent_under_autocast(ember, kind, input_dtype), _recurrent_under_autocast(torch, kind, input_dtype)
    for a, b in zip(mine, theirs):
        assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
        assert ember.allclose(a.float(), ember.tensor(b.detach().float().numpy()), rtol=2e-2, atol=2e-2)


def test_recurrent_layers_refuse_another_input_dtype_outside_autocast():
    with pytest.raises(ValueError, match="GRU input dtype \\(ember.float16\\) does not match weight dtype"):
        ember.nn.GRU(3, 4)(ember.ones(2, 3, dtype=ember.float16))
