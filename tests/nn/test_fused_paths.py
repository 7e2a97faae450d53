"""The fast paths of training steps against torch: the LSTM's whole-sequence op, relu's and max pooling's
array kernels, normalization's saved statistics, linear's weight gradient taken without a copy."""
import numpy as np
import pytest
import torch

import ember
from ember import nn


def _lstm_pair(**kwargs):
    torch.manual_seed(0)
    t = torch.nn.LSTM(3, 4, **kwargs).double()
    e = nn.LSTM(3, 4, **kwargs).double()
    e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, e


@pytest.mark.parametrize("kwargs", [{}, {"bidirectional": True, "num_layers": 2}])
def test_lstm_sequence_matches_torch_with_every_gradient(kwargs):
    t, e = _lstm_pair(**kwargs)
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    xt, xe = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    (ot, (ht, ct)), (oe, (he, ce)) = t(xt), e(xe)
    assert oe.grad_fn.name() == "ViewBackward0" or oe.grad_fn is not None
    weights = [np.random.default_rng(i).standard_normal(tuple(a.shape)) for i, a in enumerate((ot, ht, ct))]
    sum(((a * torch.tensor(w)).sum() for a, w in zip((ot, ht, ct), weights))).backward()
    sum(((a * ember.tensor(w)).sum() for a, w in zip((oe, he, ce), weights))).backward()
    for a, b in [(oe, ot), (he, ht), (ce, ct), (xe.grad, xt.grad)]:
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    for (name, tp), (_, ep) in zip(t.named_parameters(), e.named_parameters()):
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=name)


def test_lstm_sequence_packed_against_torch():
    t, e = _lstm_pair(bidirectional=True)
    rng = np.random.default_rng(2)
    lengths = [4, 2, 1]
    seqs = [rng.standard_normal((n, 3)) for n in lengths]
    pt = torch.nn.utils.rnn.pack_sequence([torch.tensor(s, requires_grad=True) for s in seqs])
    pe = nn.utils.rnn.pack_sequence([ember.tensor(s, requires_grad=True) for s in seqs])
    (ot, (ht, _)), (oe, (he, _)) = t(pt), e(pe)
    np.testing.assert_allclose(oe.data.detach().numpy(), ot.data.detach().numpy(), rtol=1e-10)
    (ot.data.sum() + ht.sum()).backward()
    (oe.data.sum() + he.sum()).backward()
    np.testing.assert_allclose(e.weight_hh_l0_reverse.grad.numpy(), t.weight_hh_l0_reverse.grad.numpy(), rtol=1e-10)


def test_lstm_sequence_gradcheck_and_gradgradcheck():
    ember.manual_seed(0)
    layer = nn.LSTM(2, 2, bidirectional=True).double()
    names = [n for n, _ in layer.named_parameters()]
    x = ember.randn(3, 2, 2, dtype=ember.float64, requires_grad=True)
    h0 = ember.randn(2, 2, 2, dtype=ember.float64, requires_grad=True)
    c0 = ember.randn(2, 2, 2, dtype=ember.float64, requires_grad=True)

    def fn(x, h0, c0, *params):
        out, (h, c) = ember.func.functional_call(layer, dict(zip(names, params)), (x, (h0, c0)))
        return out, h, c

    inputs = (x, h0, c0, *layer.parameters())
    assert ember.autograd.gradcheck(fn, inputs)
    assert ember.autograd.gradgradcheck(fn, inputs)


def test_lstm_backward_twice_with_retain_graph():
    layer = nn.LSTM(2, 3)
    x = ember.randn(4, 1, 2, requires_grad=True)
    out = layer(x)[0].sum()
    out.backward(retain_graph=True)
    first = x.grad.clone()
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first.numpy(), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_relu_gradient_is_torchs_at_zero_nan_and_infinite_gradients(dtype):
    x = np.array([[-1.0, 0.0, 2.0, np.nan], [3.0, -0.0, -5.0, 1.0]], dtype=dtype)
    g = np.array([[np.inf, np.nan, 1.5, 2.0], [-np.inf, 7.0, np.nan, -3.0]], dtype=dtype)
    grads = []
    for lib in (ember, torch):
        a = lib.tensor(x, requires_grad=True)
        lib.relu(a).backward(lib.tensor(g))
        grads.append(a.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    assert grads[0].dtype == dtype


def test_relu_gradient_of_a_non_contiguous_gradient():
    x = ember.randn(4, 6, requires_grad=True)
    g = ember.randn(6, 4).t()
    ember.relu(x).backward(g)
    np.testing.assert_array_equal(x.grad.numpy(), np.where(x.detach().numpy() > 0, g.numpy(), 0))


def test_max_pool_picks_the_first_of_tied_maxima_as_torch():
    x = np.maximum(np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32), 0)
    x[0, 0, :2, :2] = 1.0
    x[0, 1, :, :] = np.nan
    results = []
    for lib in (ember, torch):
        a = lib.tensor(x, requires_grad=True)
        values, indices = lib.nn.functional.max_pool2d(a, 2, return_indices=True)
        values.backward(lib.ones_like(values))
        results.append((values.detach().numpy(), indices.numpy(), a.grad.numpy()))
    for mine, theirs in zip(*results):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("name", ["layer_norm", "batch_norm"])
def test_normalization_backward_twice_matches_torch(name):
    x = np.random.default_rng(3).standard_normal((4, 3, 5))
    grads = []
    for lib in (ember, torch):
        a = lib.tensor(x, requires_grad=True)
        w, b = lib.ones(5 if name == "layer_norm" else 3, dtype=lib.float64, requires_grad=True), None
        if name == "layer_norm":
            y = lib.nn.functional.layer_norm(a, [5], w)
        else:
            y = lib.nn.functional.batch_norm(a, None, None, w, training=True)
        loss = (y * lib.tensor(np.arange(60.0).reshape(4, 3, 5))).sum()
        loss.backward(retain_graph=True)
        loss.backward()  # the second backward recomputes what the first one used up
        grads.append((a.grad.numpy(), w.grad.numpy()))
    for mine, theirs in zip(*grads):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_linear_weight_gradient_is_contiguous_and_matches_torch():
    x = np.random.default_rng(4).standard_normal((5, 3)).astype(np.float32)
    grads = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        layer = lib.nn.Linear(3, 2)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3)))
            layer.bias.fill_(0.5)
        layer(lib.tensor(x)).pow(2).sum().backward()
        grads.append(layer.weight.grad)
    assert grads[0].is_contiguous()
    np.testing.assert_allclose(grads[0].numpy(), grads[1].numpy(), rtol=1e-5, atol=1e-5)


def test_linear_bias_gradient_is_summed_by_the_addmm_formula(monkeypatch):
    """A linear layer's bias gradient leaves addmm's first-order backward summed to the bias's shape: the engine
    has nothing to conform; the sums are torch's."""
    from ember.autograd import engine

    def refuse(*args):
        raise AssertionError("the engine conformed a gradient")

    monkeypatch.setattr(engine, "_conform_array", refuse)
    x = np.random.default_rng(5).standard_normal((7, 3))
    grads = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        layer = lib.nn.Linear(3, 4).double()
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3)))
        (layer(lib.tensor(x)).tanh() * lib.tensor(np.arange(28.0).reshape(7, 4))).sum().backward()
        grads.append([layer.bias.grad.numpy(), layer.weight.grad.numpy()])
    for mine, theirs in zip(*grads):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bias_shape", [(4,), (1,), (7, 4), (7, 1)])
def test_addmm_bias_gradients_and_second_derivatives(bias_shape):
    rng = np.random.default_rng(6)
    bias, a, b = (ember.tensor(rng.standard_normal(shape), requires_grad=True)
                  for shape in (bias_shape, (7, 3), (3, 4)))
    assert ember.autograd.gradcheck(ember.addmm, (bias, a, b))
    assert ember.autograd.gradgradcheck(ember.addmm, (bias, a, b))


@pytest.mark.parametrize("transposed", [True, False])
@pytest.mark.parametrize("scalars", [{}, {"beta": 1, "alpha": 1}])
def test_addmm_of_a_bias_row_gives_torchs_gradients_to_every_operand(transposed, scalars):
    rng = np.random.default_rng(8)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in ((4,), (6, 3), (4, 3) if transposed else (3, 4))]
    weights = rng.standard_normal((6, 4)).astype(np.float32)
    grads = []
    for lib in (ember, torch):
        bias, a, b = (lib.tensor(x, requires_grad=True) for x in arrays)
        out = lib.addmm(bias, a, b.t() if transposed else b, **scalars)
        (out * lib.tensor(weights)).sum().backward()
        grads.append([t.grad.numpy() for t in (bias, a, b)])
    for mine, theirs in zip(*grads):
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)


def test_linear_second_derivatives():
    rng = np.random.default_rng(7)
    x, weight, bias = (ember.tensor(rng.standard_normal(shape), requires_grad=True) for shape in ((7, 3), (4, 3), (4,)))
    assert ember.autograd.gradgradcheck(lambda *t: ember.nn.functional.linear(*t).tanh(), (x, weight, bias))


class _KeepsGradient(ember.autograd.Function):
    """A Function whose backward returns a view of an array it keeps: the leaf must not share that memory."""

    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, grad):
        ctx.kept = ember.ones(grad.shape[::-1])
        return ctx.kept.t()


def test_a_gradient_that_is_a_view_of_kept_memory_is_copied_into_grad():
    x = ember.zeros(2, 3, requires_grad=True)
    y = _KeepsGradient.apply(x)
    y.sum().backward()
    kept = y.grad_fn.kept
    kept.fill_(5.0)
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3)))


@pytest.mark.parametrize("transposed", [False, True])
def test_convolution_in_chunks_of_images_matches_torch(monkeypatch, transposed):
    from ember._ops import convolution
    monkeypatch.setattr(convolution, "_CHUNK_BYTES", 1)  # one image per chunk
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 4, 7, 6))
    w = rng.standard_normal((4, 3, 3, 2) if transposed else (6, 2, 3, 2))
    grads = []
    for lib in (ember, torch):
        a, k = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        if transposed:
            y = lib.nn.functional.conv_transpose2d(a, k, stride=2, padding=1, groups=2, dilation=(1, 2))
        else:
            y = lib.nn.functional.conv2d(a, k, stride=(2, 1), padding=1, groups=2, dilation=(1, 2))
        (y * lib.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)) % 7)).sum().backward()
        grads.append((y.detach().numpy(), a.grad.numpy(), k.grad.numpy()))
    for mine, theirs in zip(*grads):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-10)


def _linear_pair():
    x = np.random.default_rng(9).standard_normal((5, 3))
    layers = []
    for lib in (ember, torch):
        layer = lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3)))
            layer.bias.copy_(lib.tensor([0.5, -0.25]))
        layers.append((lib, layer, lib.tensor(x)))
    return layers


def test_linear_reads_its_parameters_without_module_getattr(monkeypatch):
    (_, layer, x), _ = _linear_pair()
    looked_up = []
    original = ember.nn.Module.__getattr__

    def counting(self, name):
        looked_up.append(name)
        return original(self, name)

    monkeypatch.setattr(ember.nn.Module, "__getattr__", counting)
    layer(x)
    assert looked_up == []


@pytest.mark.parametrize("change", ["parametrized", "plain weight", "no bias", "functional_call"])
def test_linear_with_its_weight_replaced_or_reparametrized_as_torch(change):
    outputs = []
    for lib, layer, x in _linear_pair():
        if change == "parametrized":
            class Doubled(lib.nn.Module):
                def forward(self, w):
                    return 2 * w

            lib.nn.utils.parametrize.register_parametrization(layer, "weight", Doubled())
            out = layer(x)
        elif change == "plain weight":
            del layer.weight
            layer.weight = lib.ones(2, 3, dtype=lib.float64)
            out = layer(x)
        elif change == "no bias":
            layer.bias = None
            out = layer(x)
        else:
            out = lib.func.functional_call(layer, {"weight": lib.full((2, 3), 3.0, dtype=lib.float64)}, (x,))
        outputs.append(out.detach().numpy())
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-12)
