"""torch's top-level recurrent kernels (ember.lstm, gru, rnn_tanh, rnn_relu and their cells) against torch,
in both call forms (padded and packed), with gradients of the first and second order."""
import numpy as np
import pytest
import torch

import ember

GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def flat_weights(rng, name, inputs, hidden, layers, directions, bias, proj=0):
    """torch's flat weight list: per layer and direction w_ih, w_hh[, b_ih, b_hh][, w_hr]."""
    gates, out = GATES[name] * hidden, []
    for layer in range(layers):
        for _ in range(directions):
            width = inputs if layer == 0 else (proj or hidden) * directions
            out += [rng.standard_normal((gates, width)), rng.standard_normal((gates, proj or hidden))]
            out += [rng.standard_normal(gates), rng.standard_normal(gates)] if bias else []
            out += [rng.standard_normal((proj, hidden))] if proj else []
    return out


def states(lib, name, h, c):
    return [lib.tensor(h), lib.tensor(c)] if name == "lstm" else lib.tensor(h)


def assert_same(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


CASES = [(name, bias, directions, batch_first) for name in GATES for bias in (True, False)
         for directions in (1, 2) for batch_first in (False, True)]


@pytest.mark.parametrize("name,bias,directions,batch_first", CASES)
def test_padded_form_matches_torch(name, bias, directions, batch_first):
    rng = np.random.default_rng(len(name) + 2 * directions + bias)
    proj = 2 if name == "lstm" and directions == 2 and bias else 0
    weights = flat_weights(rng, name, 3, 4, 2, directions, bias, proj)
    x = rng.standard_normal((2, 5, 3) if batch_first else (5, 2, 3))
    h, c = rng.standard_normal((2 * directions, 2, proj or 4)), rng.standard_normal((2 * directions, 2, 4))
    results = [getattr(lib, name)(lib.tensor(x), states(lib, name, h, c), [lib.tensor(w) for w in weights], bias, 2,
                                  0.0, True, directions == 2, batch_first) for lib in (ember, torch)]
    assert_same(*results)


@pytest.mark.parametrize("name", list(GATES))
@pytest.mark.parametrize("directions", [1, 2])
def test_packed_form_matches_torch(name, directions):
    rng = np.random.default_rng(7)
    weights = flat_weights(rng, name, 3, 4, 2, directions, True)
    data, sizes = rng.standard_normal((8, 3)), np.array([3, 2, 2, 1])
    h, c = rng.standard_normal((2 * directions, 3, 4)), rng.standard_normal((2 * directions, 3, 4))
    results = [getattr(lib, name)(lib.tensor(data), lib.tensor(sizes), states(lib, name, h, c),
                                  [lib.tensor(w) for w in weights], True, 2, 0.0, False, directions == 2)
               for lib in (ember, torch)]
    assert_same(*results)


@pytest.mark.parametrize("name", list(GATES))
def test_gradients_to_second_order(name):
    rng = np.random.default_rng(3)
    weights = [ember.tensor(w, requires_grad=True) for w in flat_weights(rng, name, 2, 2, 1, 2, True)]
    x = ember.tensor(rng.standard_normal((3, 1, 2)), requires_grad=True)
    h = ember.tensor(rng.standard_normal((2, 1, 2)), requires_grad=True)
    c = ember.tensor(rng.standard_normal((2, 1, 2)), requires_grad=True)

    def run(x, h, c, *ws):
        hx = [h, c] if name == "lstm" else h
        return getattr(ember, name)(x, hx, list(ws), True, 1, 0.0, True, True, False)

    inputs = (x, h, c, *weights)
    assert ember.autograd.gradcheck(run, inputs)
    assert ember.autograd.gradgradcheck(run, inputs)


def test_dropout_between_layers_only_in_training():
    rng = np.random.default_rng(4)
    weights = [ember.tensor(w) for w in flat_weights(rng, "gru", 3, 4, 2, 1, True)]
    x, h = ember.tensor(rng.standard_normal((5, 2, 3))), ember.zeros(2, 2, 4, dtype=ember.float64)
    plain = ember.gru(x, h, weights, True, 2, 0.0, True, False, False)
    held = ember.gru(x, h, weights, True, 2, 0.9, False, False, False)
    dropped = ember.gru(x, h, weights, True, 2, 0.9, True, False, False)
    assert ember.equal(plain[0], held[0])
    assert not ember.allclose(plain[0], dropped[0])


CELLS = {"lstm_cell": 4, "gru_cell": 3, "rnn_tanh_cell": 1, "rnn_relu_cell": 1}


@pytest.mark.parametrize("name", list(CELLS))
@pytest.mark.parametrize("bias", [True, False])
def test_cells_match_torch_with_gradients(name, bias):
    rng = np.random.default_rng(5)
    gates = CELLS[name] * 3
    arrays = [rng.standard_normal(s) for s in ((2, 4), (2, 3), (2, 3), (gates, 4), (gates, 3), (gates,), (gates,))]
    grads = []
    for lib in (ember, torch):
        x, h, c, w_ih, w_hh, b_ih, b_hh = (lib.tensor(a, requires_grad=True) for a in arrays)
        hx = (h, c) if name == "lstm_cell" else h
        biases = (b_ih, b_hh) if bias else ()
        out = getattr(lib, name)(x, hx, w_ih, w_hh, *biases)
        out = out if isinstance(out, tuple) else (out,)
        sum(o.sum() for o in out).backward()
        grads.append(list(out) + [t.grad for t in (x, h, w_ih, w_hh)])
    assert_same(*grads)
    x, h, w_ih, w_hh = (ember.tensor(arrays[i], requires_grad=True) for i in (0, 1, 3, 4))
    hx = (lambda h: (h, ember.tensor(arrays[2]))) if name == "lstm_cell" else (lambda h: h)
    assert ember.autograd.gradgradcheck(lambda x, h, a, b: getattr(ember, name)(x, hx(h), a, b), (x, h, w_ih, w_hh))


def test_errors_name_the_op():
    w = [ember.ones(4, 3), ember.ones(4, 4)]
    with pytest.raises(RuntimeError, match="rnn_tanh: expected 4 weights"):
        ember.rnn_tanh(ember.ones(2, 1, 3), ember.zeros(1, 1, 4), w, True, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match="gru: expected a 3-D input"):
        ember.gru(ember.ones(2, 3), ember.zeros(1, 1, 4), w, False, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match="hidden state of size \\[2, 1"):
        ember.rnn_relu(ember.ones(2, 1, 3), ember.zeros(1, 1, 4), w, False, 1, 0.0, False, True, False)
    with pytest.raises(RuntimeError, match="gru_cell: input has 2 features"):
        ember.gru_cell(ember.ones(1, 2), ember.zeros(1, 4), ember.ones(12, 3), ember.ones(12, 4))


@pytest.mark.parametrize("layer,kernel,options", [
    ("LSTM", "lstm", dict(num_layers=2, bidirectional=True, proj_size=2)),
    ("GRU", "gru", dict(batch_first=True, bias=False)),
    ("RNN", "rnn_relu", dict(nonlinearity="relu", num_layers=2)),
])
def test_a_layers_flat_weights_feed_the_kernel(layer, kernel, options):
    ember.manual_seed(0)
    module = getattr(ember.nn, layer)(3, 4, **options)
    x = ember.randn(2, 5, 3) if module.batch_first else ember.randn(5, 2, 3)
    output, final = module(x)
    states = [ember.zeros(s) for s in module._state_shapes(2)]
    hx = states if layer == "LSTM" else states[0]
    result = getattr(ember, kernel)(x, hx, module._flat_weights, module.bias, module.num_layers, 0.0, False,
                                    module.bidirectional, module.batch_first)
    expected = (output, *final) if layer == "LSTM" else (output, final)
    assert len(result) == len(expected) and all(ember.allclose(a, b) for a, b in zip(result, expected))
    assert len(module._flat_weights) == len(module._flat_weights_names)
