"""bfloat16 against torch: the dtype, promotion, creation, printing, arithmetic rounded as torch rounds it."""
import importlib
import subprocess
import sys

import numpy as np
import pytest
import torch

import ember

pytest.importorskip("ml_dtypes")

VALUES = [1 / 3, 100.123, 1e-5, -2.7, 0.0, 7.0e4]
OTHER = [0.7, -3.1, 5.5, 1.1, 2.0, -0.3]


def both(values=VALUES):
    return ember.tensor(values, dtype=ember.bfloat16), torch.tensor(values, dtype=torch.bfloat16)


def same(e, t):
    """Bit for bit: the same dtype name, shape and values (compared exactly in float32, where bfloat16 is exact)."""
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    np.testing.assert_array_equal(e.float().detach().numpy(), t.float().detach().numpy())


def test_the_dtype_is_a_16_bit_float_with_torchs_limits():
    b = ember.bfloat16
    assert (b.is_floating_point, b.itemsize, b.is_complex) == (True, 2, False)
    assert repr(ember.finfo(b)) == repr(torch.finfo(torch.bfloat16))
    assert ember.tensor([1.0], dtype=b).element_size() == 2 and ember.tensor([1.0]).bfloat16().is_floating_point()


@pytest.mark.parametrize("other", ["float16", "float32", "float64", "int64", "int8", "bool", "bfloat16"])
def test_promotion_is_torchs(other):
    assert repr(ember.promote_types(ember.bfloat16, getattr(ember, other))).split(".")[1] == \
        repr(torch.promote_types(torch.bfloat16, getattr(torch, other))).split(".")[1]


def test_python_numbers_and_integer_tensors_keep_bfloat16():
    e, t = both()
    same(e + 2.5, t + 2.5)
    same(e * 3, t * 3)
    same(e + ember.arange(6, dtype=ember.int32), t + torch.arange(6, dtype=torch.int32))
    same(e + ember.tensor(OTHER).half(), t + torch.tensor(OTHER).half())


@pytest.mark.parametrize("make", [
    lambda lib: lib.zeros(2, 3, dtype=lib.bfloat16), lambda lib: lib.ones(4, dtype=lib.bfloat16),
    lambda lib: lib.full((3,), 0.1, dtype=lib.bfloat16), lambda lib: lib.tensor([[1 / 3, 1e30]], dtype=lib.bfloat16),
    lambda lib: lib.arange(7, dtype=lib.bfloat16), lambda lib: lib.arange(0, 1, 0.1, dtype=lib.bfloat16),
    lambda lib: lib.arange(5).to(lib.bfloat16), lambda lib: lib.tensor([0.3, 1e-3, 258.0]).bfloat16(),
])
def test_creation_and_conversion_match_torch(make):
    same(make(ember), make(torch))


def test_random_creation_makes_bfloat16():
    assert ember.rand(3, dtype=ember.bfloat16).dtype is ember.bfloat16
    assert ember.randn(3, dtype=ember.bfloat16).dtype is ember.bfloat16


@pytest.mark.parametrize("values", [VALUES, [[1.09375, -2.640625], [0.236328125, 1.25]], [3.0], [], [1e-5, 1e5]])
def test_repr_tolist_and_item_match_torch(values):
    e, t = both(values)
    assert repr(e) == repr(t).replace("torch.", "ember.")
    assert e.tolist() == t.tolist()
    if e.numel():
        assert e.flatten()[0].item() == t.flatten()[0].item()


def test_numpy_is_refused_as_torch_refuses_it():
    e, t = both()
    with pytest.raises(TypeError, match="BFloat16"):
        t.numpy()
    with pytest.raises(TypeError, match="BFloat16"):
        e.numpy()


BINARY = ["add", "sub", "mul", "div"]
UNARY = ["exp", "log", "sin", "tanh", "sigmoid", "relu", "sqrt", "abs", "neg"]


@pytest.mark.parametrize("op", BINARY)
def test_arithmetic_is_torchs_bit_for_bit(op):
    (e, t), (e2, t2) = both(), both(OTHER)
    same(getattr(ember, op)(e, e2), getattr(torch, op)(t, t2))
    same(getattr(ember, op)(e, 0.1), getattr(torch, op)(t, 0.1))


def test_pow_is_torchs():
    (e, t), (e2, t2) = both(), both(OTHER)
    same(e.abs() ** e2, t.abs() ** t2)
    same(e ** 2, t ** 2)


@pytest.mark.parametrize("op", UNARY)
def test_unary_ops_are_torchs_bit_for_bit(op):
    e, t = both([abs(v) for v in VALUES] if op in ("log", "sqrt") else VALUES)
    same(getattr(ember, op)(e), getattr(torch, op)(t))


def test_sum_and_mean_accumulate_in_single_precision():
    e, t = ember.linspace(-3, 3, 1000).bfloat16(), torch.linspace(-3, 3, 1000).bfloat16()
    same(e.exp().sum(), t.exp().sum())
    same(e.exp().mean(), t.exp().mean())
    same(e.reshape(10, 100).sum(1), t.reshape(10, 100).sum(1))


def _square():
    return ember.linspace(-1, 1, 64).reshape(8, 8).bfloat16(), torch.linspace(-1, 1, 64).reshape(8, 8).bfloat16()


def test_matmul_and_linear_are_torchs():
    e, t = _square()
    same(e @ e, t @ t)
    same(ember.nn.functional.linear(e, e, e[0]), torch.nn.functional.linear(t, t, t[0]))


def _random_rows():
    values = np.random.default_rng(0).standard_normal((16, 10)).astype(np.float32)
    return ember.tensor(values).bfloat16(), torch.tensor(values).bfloat16()


def test_softmax_is_torchs_bit_for_bit():
    e, t = _random_rows()
    same(ember.softmax(e, 1), torch.softmax(t, 1))
    same(e @ e.T, t @ t.T)
    same(e.sum(1), t.sum(1))


def within_an_ulp(e, t):
    """torch's log-softmax kernel rounds an intermediate step of its own; ember rounds once: at most 1 ulp apart."""
    assert e.dtype is ember.bfloat16 and t.dtype is torch.bfloat16
    np.testing.assert_allclose(e.float().detach().numpy(), t.float().detach().numpy(), rtol=2 ** -7, atol=2 ** -7)


def test_log_softmax_and_cross_entropy_are_torchs_to_an_ulp():
    e, t = _random_rows()
    within_an_ulp(ember.log_softmax(e, 1), torch.log_softmax(t, 1))
    target = np.arange(16) % 10
    within_an_ulp(ember.nn.functional.cross_entropy(e, ember.tensor(target)),
                  torch.nn.functional.cross_entropy(t, torch.tensor(target)))


def test_a_bfloat16_leaf_gets_a_bfloat16_gradient():
    e, t = both()
    e.requires_grad_(), t.requires_grad_()
    (e * e).sum().backward()
    (t * t).sum().backward()
    same(e.grad, t.grad)


def test_without_ml_dtypes_the_name_exists_and_using_it_says_how_to_install():
    code = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import ember\n"
        "print(ember.bfloat16)\n"
        "try:\n    ember.zeros(2, dtype=ember.bfloat16)\n"
        "except ImportError as e:\n    print(e)\n"
        "import warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    with ember.autocast('cpu'):\n"
        "        print((ember.ones(2, 2) @ ember.ones(2, 2)).dtype)\n"
        "print(caught[0].message)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert lines[0] == "ember.bfloat16"
    assert "pip install ember[bfloat16]" in lines[1]
    assert lines[2] == "ember.float32"  # autocast stayed off, with a warning that says why
    assert "target dtype is not supported" in out and "pip install ember[bfloat16]" in lines[-1]


def _autocast_program(lib, **kwargs):
    F = lib.nn.functional
    a = lib.linspace(-1, 1, 12).reshape(3, 4)
    w = lib.linspace(-0.5, 0.5, 8).reshape(2, 4).requires_grad_()
    with lib.autocast("cpu", **kwargs):
        out = F.linear(a, w)
        results = [out, a @ a.T, F.mse_loss(out, out.detach()), out.prod(), out.exp()]
        inside = str(lib.get_autocast_dtype("cpu")), lib.is_autocast_enabled("cpu")
    out.float().sum().backward()
    return results + [w.grad], inside


@pytest.mark.parametrize("explicit", [False, True])
def test_cpu_autocast_defaults_to_bfloat16_as_torch(explicit):
    kwargs = {"dtype": ember.bfloat16} if explicit else {}
    ours, our_state = _autocast_program(ember, **kwargs)
    theirs, their_state = _autocast_program(torch, **({"dtype": torch.bfloat16} if explicit else {}))
    assert our_state == (their_state[0].replace("torch.", "ember."), their_state[1])
    for e, t in zip(ours, theirs):
        same(e, t)


def test_save_and_load_cross_with_torch(tmp_path):
    e, t = both()
    ember.save({"x": e, "p": ember.nn.Parameter(e.clone())}, tmp_path / "ember.pt")
    theirs = torch.load(tmp_path / "ember.pt")
    same(e, theirs["x"])
    assert isinstance(theirs["p"], torch.nn.Parameter) and theirs["p"].dtype is torch.bfloat16
    torch.save({"x": t}, tmp_path / "torch.pt")
    same(ember.load(tmp_path / "torch.pt")["x"], t)


def test_safetensors_bf16_cross_with_torch(tmp_path):
    pytest.importorskip("safetensors")
    import safetensors.torch

    e, t = both()
    ember.utils.safetensors.save_file({"x": e, "f": ember.ones(2)}, tmp_path / "ember.safetensors")
    same(e, safetensors.torch.load_file(tmp_path / "ember.safetensors")["x"])
    safetensors.torch.save_file({"x": t, "f": torch.ones(2)}, tmp_path / "torch.safetensors")
    loaded = ember.utils.safetensors.load_file(tmp_path / "torch.safetensors")
    same(loaded["x"], t)
    same(loaded["f"], torch.ones(2))
    same(ember.utils.safetensors.load(safetensors.torch.save({"x": t}))["x"], t)


def test_module_bfloat16_converts_floating_parameters_and_buffers():
    def program(lib):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2)).bfloat16()
        return [(name, str(t.dtype).split(".")[1]) for name, t in net.state_dict().items()]

    assert program(ember) == program(torch)


def _train(lib, steps=20):
    """A small MLP trained in bfloat16 from the same start: its losses."""
    rng = np.random.default_rng(1)
    data = [rng.standard_normal(shape).astype(np.float32) * 0.5 for shape in [(8, 4), (16, 4), (16,), (3, 16), (3,)]]
    x, w1, b1, w2, b2 = [lib.tensor(a).bfloat16() for a in data]
    target = lib.tensor(np.arange(8) % 3)
    params = [p.requires_grad_() for p in (w1, b1, w2, b2)]
    optimizer = lib.optim.SGD(params, lr=0.1)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        hidden = lib.relu(lib.nn.functional.linear(x, w1, b1))
        loss = lib.nn.functional.cross_entropy(lib.nn.functional.linear(hidden, w2, b2), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, [p.grad.dtype for p in params]


def test_a_small_mlp_trains_in_bfloat16_close_to_torch():
    ours, our_dtypes = _train(ember)
    theirs, their_dtypes = _train(torch)
    assert all(str(d) == "ember.bfloat16" for d in our_dtypes) and all(d is torch.bfloat16 for d in their_dtypes)
    assert ours[-1] < ours[0] * 0.8
    np.testing.assert_allclose(ours, theirs, rtol=0.03, atol=0.02)


@pytest.mark.parametrize("op", [
    lambda lib, x: lib.isnan(x / 0 * 0), lambda lib, x: lib.isinf(x / 0), lambda lib, x: lib.nan_to_num(x / 0),
    lambda lib, x: x.var(1), lambda lib, x: x.std(), lambda lib, x: x.clone().add_(x, alpha=0.5),
    lambda lib, x: x.clone().mul_(0.3), lambda lib, x: lib.bmm(x.reshape(2, 2, 6), x.reshape(2, 6, 2)),
    lambda lib, x: x.max(1).values, lambda lib, x: x.sort(1).values, lambda lib, x: lib.where(x > 0, x, 0.0),
    lambda lib, x: x[1:3, ::2], lambda lib, x: lib.full_like(x, 0.3), lambda lib, x: x.clamp(min=-0.5),
    lambda lib, x: x.prod(1), lambda lib, x: x.cumsum(1), lambda lib, x: x.cumsum(0),
    lambda lib, x: lib.nn.functional.silu(x), lambda lib, x: lib.nn.functional.gelu(x),
    lambda lib, x: lib.nn.functional.layer_norm(x, (6,), x[0], x[1]),
])
def test_more_ops_are_torchs(op):
    values = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    same(op(ember, ember.tensor(values).bfloat16()), op(torch, torch.tensor(values).bfloat16()))


def test_type_names_and_mse_loss_dtype():
    e, t = both()
    assert e.type() == t.type().replace("torch.", "ember.") == "ember.BFloat16Tensor"
    within_an_ulp(ember.nn.functional.mse_loss(e, e.flip(0)), torch.nn.functional.mse_loss(t, t.flip(0)))


def _conversions(lib):
    b = lib.bfloat16
    x = lib.linspace(0, 1, 5, dtype=b)
    lib.testing.assert_close(x, x * 1.01)  # within bfloat16's default tolerance
    shown = [x, lib.linspace(-1000, 1000, 2000).to(b), lib.tensor([1.5], dtype=b, requires_grad=True),
             x.to(lib.float16), x.half().to(b), x.to(lib.int32), lib.tensor([300.7, -2.5]).to(b).to(lib.uint8),
             lib.tensor([float("nan"), float("inf"), -0.0], dtype=b), lib.ones(2, dtype=b) == lib.ones(2),
             lib.tensor(2.5, dtype=b).item(), float(lib.tensor(2.5, dtype=b)), int(lib.tensor(2.5, dtype=b)),
             lib.randint(0, 5, (3,), dtype=b).dtype, lib.eye(2, dtype=b)]
    return [repr(v).replace("torch.", "ember.") for v in shown]


def test_conversions_printing_and_assert_close_match_torch():
    assert _conversions(ember) == _conversions(torch)
    with pytest.raises(AssertionError, match="not close"):
        ember.testing.assert_close(ember.ones(2, dtype=ember.bfloat16), ember.ones(2, dtype=ember.bfloat16) * 1.1)


@pytest.mark.parametrize("pair", [lambda x: (x, x + 0.001), lambda x: (x, x * 1.5), lambda x: (x[1], x[1] * 1.5)])
def test_assert_close_reports_as_torch(pair):
    def message(lib):
        with pytest.raises(AssertionError) as caught:
            lib.testing.assert_close(*pair(lib.linspace(0, 1, 5, dtype=lib.bfloat16)))
        return str(caught.value)

    assert message(ember) == message(torch)


@pytest.mark.parametrize("op", [
    lambda lib, x: x & 1, lambda lib, x: x | x, lambda lib, x: x ^ True, lambda lib, x: x << 1, lambda lib, x: x >> 1,
    lambda lib, x: lib.bitwise_not(x), lambda lib, x: lib.gcd(x, x), lambda lib, x: lib.lcm(x, x),
])
def test_integer_only_ops_refuse_bfloat16_as_torch(op):
    """bfloat16 is a float: the ops of integers raise torch's NotImplementedError naming it, not NumPy's TypeError."""
    with pytest.raises(NotImplementedError, match="not implemented for 'BFloat16'"):
        op(torch, torch.ones(3, dtype=torch.bfloat16))
    with pytest.raises(NotImplementedError, match="not implemented for 'BFloat16'"):
        op(ember, ember.ones(3, dtype=ember.bfloat16))


def test_isin_of_bfloat16_with_nans_matches_torch():
    """NumPy's bfloat16 sort (which isin uses on larger inputs) mixes NaNs among the numbers: elements went missing."""
    values = np.random.default_rng(5).integers(-50, 50, 5000).astype(np.float32)
    values[::97] = np.nan
    e, t = ember.tensor(values).bfloat16(), torch.tensor(values).bfloat16()
    np.testing.assert_array_equal(ember.isin(e, e[:100]).numpy(), torch.isin(t, t[:100]).numpy())
    np.testing.assert_array_equal(ember.isin(e, 0.1).numpy(), torch.isin(t, 0.1).numpy())
