"""Recurrent layers, their cells and nn.utils.rnn against torch, with the same weights."""
import numpy as np
import pytest
import torch

import ember
from ember import nn
from ember.nn.utils import rnn as ernn


def copy_weights(t_module, e_module, dtype=np.float64):
    """Load torch's parameter values into the ember module (the names must agree)."""
    state = {k: ember.tensor(v.detach().numpy().astype(dtype)) for k, v in t_module.state_dict().items()}
    if dtype == np.float64:
        t_module.double()
        e_module.double()
    e_module.load_state_dict(state)


def twins(name, *args, **kwargs):
    torch.manual_seed(0)
    t = getattr(torch.nn, name)(*args, **kwargs)
    e = getattr(nn, name)(*args, **kwargs)
    copy_weights(t, e)
    return t, e


def both(shape, seed=0, dtype=np.float64):
    array = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ember.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


def close(e, t, rtol=1e-9, atol=1e-11):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


def flat(out):
    """Every tensor of a nested output, in order."""
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in flat(o)]
    return [out]


def sum_all(outs, weights):
    return sum(((o * w).sum() for o, w in zip(outs, weights)), 0)


def compare(t, e, t_args, e_args, rtol=1e-9, atol=1e-11):
    """Outputs, then the gradients of inputs and parameters of a weighted sum of all outputs."""
    t_outs, e_outs = flat(t(*t_args)), flat(e(*e_args))
    assert len(t_outs) == len(e_outs)
    for eo, to in zip(e_outs, t_outs):
        assert tuple(eo.shape) == tuple(to.shape)
        close(eo, to, rtol, atol)
    rng = np.random.default_rng(1)
    weights = [rng.standard_normal(tuple(o.shape)) for o in t_outs]
    sum_all(t_outs, [torch.tensor(w, dtype=o.dtype) for w, o in zip(weights, t_outs)]).backward()
    sum_all(e_outs, [ember.tensor(w, dtype=o.dtype) for w, o in zip(weights, e_outs)]).backward()
    for (name, tp), (_, ep) in zip(t.named_parameters(), e.named_parameters()):
        close(ep.grad, tp.grad, rtol, atol)
    for ea, ta in zip(flat(e_args), flat(t_args)):
        if isinstance(ta, torch.Tensor) and ta.requires_grad:
            close(ea.grad, ta.grad, rtol, atol)


CONFIGS = [
    ("RNN", {}), ("RNN", {"nonlinearity": "relu", "bias": False}), ("RNN", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {}), ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"proj_size": 2}), ("LSTM", {"proj_size": 2, "bidirectional": True, "num_layers": 2}),
    ("GRU", {}), ("GRU", {"num_layers": 2, "bidirectional": True, "bias": False}),
    ("GRU", {"batch_first": True}),
]


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[f"{n}-{k}" for n, k in CONFIGS])
def test_layer_matches_torch_float64(name, kwargs):
    t, e = twins(name, 3, 4, **kwargs)
    ex, tx = both((5, 2, 3))
    compare(t, e, (tx,), (ex,))


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=[f"{n}-{k}" for n, k in CONFIGS])
def test_layer_with_initial_state(name, kwargs):
    t, e = twins(name, 3, 4, **kwargs)
    ex, tx = both((2, 5, 3) if kwargs.get("batch_first") else (5, 2, 3))
    layers = (2 if kwargs.get("bidirectional") else 1) * kwargs.get("num_layers", 1)
    eh, th = both((layers, 2, kwargs.get("proj_size") or 4), seed=2)
    if name == "LSTM":
        ec, tc = both((layers, 2, 4), seed=3)
        compare(t, e, (tx, (th, tc)), (ex, (eh, ec)))
    else:
        compare(t, e, (tx, th), (ex, eh))


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_unbatched_input(name):
    t, e = twins(name, 3, 4, num_layers=2)
    ex, tx = both((5, 3))
    compare(t, e, (tx,), (ex,))


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_float32_with_tolerance(name):
    torch.manual_seed(0)
    t, e = getattr(torch.nn, name)(3, 4, bidirectional=True), getattr(nn, name)(3, 4, bidirectional=True)
    copy_weights(t, e, np.float32)
    ex, tx = both((4, 2, 3), dtype=np.float32)
    out = e(ex)[0]
    assert out.dtype == ember.float32
    compare(t, e, (tx,), (ex,), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_input_and_output(name, enforce_sorted):
    t, e = twins(name, 3, 4, num_layers=2, bidirectional=True)
    lengths = [5, 3, 2] if enforce_sorted else [3, 5, 2]
    ex, tx = both((5, 3, 3))
    tp = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, enforce_sorted=enforce_sorted)
    ep = ernn.pack_padded_sequence(ex, lengths, enforce_sorted=enforce_sorted)
    t_out, t_h = t(tp)
    e_out, e_h = e(ep)
    assert isinstance(e_out, ernn.PackedSequence)
    np.testing.assert_array_equal(e_out.batch_sizes.numpy(), t_out.batch_sizes.numpy())
    close(e_out.data, t_out.data)
    for eh, th in zip(flat(e_h), flat(t_h)):
        close(eh, th)
    t_pad, t_len = torch.nn.utils.rnn.pad_packed_sequence(t_out, batch_first=True)
    e_pad, e_len = ernn.pad_packed_sequence(e_out, batch_first=True)
    close(e_pad, t_pad)
    np.testing.assert_array_equal(e_len.numpy(), t_len.numpy())
    (t_pad.sum() + sum(h.sum() for h in flat(t_h))).backward()
    (e_pad.sum() + sum(h.sum() for h in flat(e_h))).backward()
    close(ex.grad, tx.grad)
    for (_, tp_), (_, ep_) in zip(t.named_parameters(), e.named_parameters()):
        close(ep_.grad, tp_.grad)


@pytest.mark.parametrize("name,chunks", [("RNNCell", 1), ("LSTMCell", 4), ("GRUCell", 3)])
def test_cells_match_torch(name, chunks):
    t, e = twins(name, 3, 4)
    ex, tx = both((2, 3))
    compare(t, e, (tx,), (ex,))
    eh, th = both((2, 4), seed=5)
    if name == "LSTMCell":
        ec, tc = both((2, 4), seed=6)
        compare(t, e, (tx, (th, tc)), (ex, (eh, ec)))
    else:
        compare(t, e, (tx, th), (ex, eh))
    ex1, tx1 = both((3,))
    compare(t, e, (tx1,), (ex1,))
    assert tuple(e.weight_ih.shape) == (chunks * 4, 3)


def test_relu_cell_and_no_bias():
    t, e = twins("RNNCell", 3, 4, bias=False, nonlinearity="relu")
    ex, tx = both((2, 3))
    compare(t, e, (tx,), (ex,))


def test_repr_and_state_dict_keys():
    cases = [("LSTM", (3, 4, 2), {"proj_size": 2, "bidirectional": True, "batch_first": True, "dropout": 0.1}),
             ("RNN", (3, 4), {"nonlinearity": "relu", "bias": False}), ("GRU", (3, 4), {}),
             ("GRUCell", (3, 4), {}), ("RNNCell", (3, 4), {"nonlinearity": "relu", "bias": False}),
             ("LSTMCell", (3, 4), {})]
    for name, args, kwargs in cases:
        t, e = getattr(torch.nn, name)(*args, **kwargs), getattr(nn, name)(*args, **kwargs)
        assert repr(e) == repr(t)
        assert list(e.state_dict()) == list(t.state_dict())
        for (k, tv), ev in zip(t.state_dict().items(), e.state_dict().values()):
            assert tuple(ev.shape) == tuple(tv.shape), k


def outcome(call):
    """What a call returns, or its exception's type and message."""
    try:
        result = call()
    except Exception as error:  # noqa: BLE001 - the comparison is of whatever is raised
        return type(error).__name__, str(error).replace("ember.", "torch.")
    if isinstance(result, tuple) and result and hasattr(result[0], "shape"):
        return [tuple(r.shape) for r in result]
    return tuple(result.shape) if hasattr(result, "shape") else result


@pytest.mark.parametrize("name, args, kwargs", [
    ("LSTM", (3, 4, 2), {"proj_size": 2, "bidirectional": True}), ("GRU", (3, 4), {"batch_first": True}),
    ("RNN", (3, 5, 3), {}),
])
def test_subclass_helpers_match_torch(name, args, kwargs):
    """flatten_parameters, check_forward_args and the rest: public methods that subclasses and scripts call."""
    t, e = getattr(torch.nn, name)(*args, **kwargs), getattr(nn, name)(*args, **kwargs)
    lstm = name == "LSTM"
    for lib, m in ((torch, t), (ember, e)):
        assert m.flatten_parameters() is None
    calls = [
        lambda lib, m: m.get_expected_hidden_size(lib.zeros(5, 2, 3), None),
        lambda lib, m: m.get_expected_hidden_size(lib.zeros(5, 3), lib.tensor([3, 2])),
        lambda lib, m: m.check_input(lib.zeros(5, 2, 3), lib.tensor([1])),
        lambda lib, m: m.check_input(lib.zeros(5, 2, 3, dtype=lib.float64), None),
        lambda lib, m: m.check_input(lib.zeros(5, 2, 2), None),
        lambda lib, m: m.check_hidden_size(lib.zeros(1, 2, 4), (1, 3, 4)),
        lambda lib, m: m.check_hidden_size(lib.zeros(1, 2, 4), (1, 3, 4), "bad {} vs {}"),
        lambda lib, m: m.check_forward_args(lib.zeros(5, 2, 3), (lib.zeros(4, 2, 2), lib.zeros(4, 3, 4)) if lstm
                                            else lib.zeros(3, 2, 5), None),
        lambda lib, m: m.permute_hidden((lib.zeros(4, 2, 1), lib.zeros(4, 2, 1)) if lstm else lib.zeros(1, 2, 4),
                                        lib.tensor([1, 0])),
    ] + ([lambda lib, m: m.get_expected_cell_size(lib.zeros(5, 2, 3), None)] if lstm else [])
    for call in calls:
        assert outcome(lambda: call(ember, e)) == outcome(lambda: call(torch, t))
    h = ember.arange(4.0).reshape(1, 2, 2)
    permuted = e.permute_hidden((h, h) if lstm else h, ember.tensor([1, 0]))
    np.testing.assert_array_equal((permuted[0] if lstm else permuted).numpy(), h.numpy()[:, ::-1])


def test_initialisation_bounds():
    layer = nn.LSTM(3, 16)
    for p in layer.parameters():
        values = p.detach().numpy()
        assert np.abs(values).max() <= 0.25 and values.std() > 0.05


def test_dropout_between_layers_only_in_training():
    layer = nn.GRU(3, 4, num_layers=2, dropout=0.5)
    x = ember.randn(5, 2, 3)
    layer.eval()
    first, _ = layer(x)
    second, _ = layer(x)
    close(first, second, 0, 0)
    layer.train()
    ember.manual_seed(0)
    trained, _ = layer(x)
    assert not np.allclose(trained.detach().numpy(), first.detach().numpy())


def test_gradcheck_and_gradgradcheck():
    ember.manual_seed(0)
    for layer in [nn.LSTM(2, 3, proj_size=2, bidirectional=True).double(), nn.GRU(2, 3).double(),
                  nn.RNN(2, 3, num_layers=2).double()]:
        x = ember.randn(3, 2, 2, dtype=ember.float64, requires_grad=True)
        params = list(layer.parameters())

        def fn(x, *ps):
            return flat(ember.nn.utils.stateless.functional_call(layer, dict(zip([n for n, _ in layer.named_parameters()], ps)),
                                                    (x,)))[0]

        assert ember.autograd.gradcheck(fn, (x, *params))
        assert ember.autograd.gradgradcheck(fn, (x, *params))


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_errors_match_torch(name):
    t, e = getattr(torch.nn, name)(3, 4), getattr(nn, name)(3, 4)
    for shape in [(2, 5), (5, 2, 5), (1, 2, 3, 4)]:
        with pytest.raises(Exception) as t_err:
            t(torch.zeros(shape))
        with pytest.raises(t_err.type) as e_err:
            e(ember.zeros(shape))
        assert name in str(e_err.value) or "input_size" in str(e_err.value)
    bad = ember.zeros(1, 3, 4)
    with pytest.raises(RuntimeError, match=r"hidden.*\(1, 2, 4\)"):
        e(ember.zeros(5, 2, 3), (bad, bad) if name == "LSTM" else bad)


def same_error(t_call, e_call):
    """Both calls fail with the same error type and message."""
    with pytest.raises(Exception) as t_err:
        t_call()
    with pytest.raises(t_err.type) as e_err:
        e_call()
    assert str(e_err.value) == str(t_err.value)


STATE_DIMS_CASES = [
    ((5, 2, 3), [(2, 4), (2, 4)]),  # batched input, 2-D states
    ((5, 3), [(1, 1, 4), (1, 1, 4)]),  # unbatched input, 3-D states
    ((5, 2, 3), [(1, 2, 4), (2, 4)]),  # only the cell state has the wrong rank
    ((5, 3), [(1, 4), (1, 1, 4)]),
    ((5, 2, 3), [(1, 2, 4, 1), (1, 2, 4)]),
    ((5, 2, 3, 1), None),
]


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("input_shape, state_shapes", STATE_DIMS_CASES)
def test_state_rank_errors_match_torch(name, input_shape, state_shapes):
    if name != "LSTM" and len(state_shapes or [None]) > 1 and len(state_shapes[0]) == len(input_shape):
        pytest.skip("the wrong rank is in the cell state, which only an LSTM has")
    t, e = getattr(torch.nn, name)(3, 4), getattr(nn, name)(3, 4)

    def call(lib, module):
        states = None if state_shapes is None else [lib.zeros(shape) for shape in state_shapes]
        if states is not None and name != "LSTM":
            states = states[0]
        return lambda: module(lib.zeros(input_shape), states)
    same_error(call(torch, t), call(ember, e))


def test_lstm_with_a_single_state_is_an_index_error():
    with pytest.raises(IndexError):
        nn.LSTM(3, 4)(ember.zeros(5, 2, 3), (ember.zeros(1, 2, 4),))


def test_cell_errors_match_torch():
    t, e = torch.nn.GRUCell(3, 4), nn.GRUCell(3, 4)
    for shape in [(2, 5), (2, 2, 3)]:
        with pytest.raises(Exception) as t_err:
            t(torch.zeros(shape))
        with pytest.raises(t_err.type):
            e(ember.zeros(shape))
    with pytest.raises(RuntimeError, match="GRUCell"):
        e(ember.zeros(2, 3), ember.zeros(3, 4))


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("args, kwargs", [((3.0, 4.5), {}), ((0, 0), {}), ((-1, 4.5), {}), ((3, 4.0), {}),
                                          ((3, 0), {}), ((3, 4), {"num_layers": 0, "dropout": 2}),
                                          ((3, 4), {"num_layers": 0}), ((3, 4), {"dropout": -0.1}),
                                          ((3, 4), {"dropout": True})], ids=str)
def test_constructor_errors_match_torch(name, args, kwargs):
    same_error(lambda: getattr(torch.nn, name)(*args, **kwargs), lambda: getattr(nn, name)(*args, **kwargs))


def test_dropout_of_a_single_layer_warns_as_torch():
    messages = []
    for lib in (torch, ember):
        with pytest.warns(UserWarning) as caught:
            lib.nn.LSTM(3, 4, dropout=0.5)
        messages.append(str(caught[0].message))
    assert messages[1] == messages[0]


def test_constructor_errors():
    with pytest.raises(ValueError, match="proj_size"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="proj_size has to be smaller"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="gelu")


# ------------------------------------------------------------------------------------------- nn.utils.rnn


def seqs(lengths, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((n, 2)) for n in lengths]
    return ([ember.tensor(a, requires_grad=True) for a in arrays], [torch.tensor(a, requires_grad=True) for a in arrays])


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence(batch_first, padding_side):
    es, ts = seqs([3, 1, 4])
    e = ernn.pad_sequence(es, batch_first, -1.0, padding_side)
    t = torch.nn.utils.rnn.pad_sequence(ts, batch_first, -1.0, padding_side)
    close(e, t, 0, 0)
    e.sum().backward()
    t.sum().backward()
    for ea, ta in zip(es, ts):
        close(ea.grad, ta.grad, 0, 0)


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_roundtrip(enforce_sorted):
    lengths = [4, 3, 1] if enforce_sorted else [3, 4, 1]
    es, ts = seqs(lengths)
    e = ernn.pack_sequence(es, enforce_sorted)
    t = torch.nn.utils.rnn.pack_sequence(ts, enforce_sorted)
    close(e.data, t.data, 0, 0)
    for field in ["batch_sizes", "sorted_indices", "unsorted_indices"]:
        if getattr(t, field) is None:
            assert getattr(e, field) is None
        else:
            np.testing.assert_array_equal(getattr(e, field).numpy(), getattr(t, field).numpy())
    for ea, ta in zip(ernn.unpack_sequence(e), torch.nn.utils.rnn.unpack_sequence(t)):
        close(ea, ta, 0, 0)
    ep, el = ernn.pad_packed_sequence(e, padding_value=2.0, total_length=6)
    tp, tl = torch.nn.utils.rnn.pad_packed_sequence(t, padding_value=2.0, total_length=6)
    close(ep, tp, 0, 0)
    np.testing.assert_array_equal(el.numpy(), tl.numpy())
    for ea, ta in zip(ernn.unpad_sequence(ep, el), torch.nn.utils.rnn.unpad_sequence(tp, tl)):
        close(ea, ta, 0, 0)


@pytest.mark.parametrize("method", ["half", "long", "int", "short", "char", "byte", "double", "float"])
def test_packed_sequence_conversions_match_torch(method):
    es, ts = seqs([3, 4, 1])
    e = getattr(ernn.pack_sequence(es, False), method)()
    t = getattr(torch.nn.utils.rnn.pack_sequence(ts, False), method)()
    assert type(e) is ernn.PackedSequence and str(e.data.dtype)[6:] == str(t.data.dtype)[6:]
    np.testing.assert_array_equal(e.data.detach().numpy(), t.data.detach().numpy())
    np.testing.assert_array_equal(e.unsorted_indices.numpy(), t.unsorted_indices.numpy())
    assert (e.to(e.data.dtype) is e) and (getattr(e, method)() is e)


def test_packed_data_has_torchs_node_and_repr_and_differentiates_twice():
    es, ts = seqs([3, 4, 1])
    e, t = ernn.pack_sequence(es, False), torch.nn.utils.rnn.pack_sequence(ts, False)
    assert type(e.data.grad_fn).__name__ == type(t.data.grad_fn).__name__ == "PackPaddedSequenceBackward0"
    assert repr(e).replace("ember.", "torch.") == repr(t)
    x = ember.tensor(np.random.default_rng(0).standard_normal((4, 3, 2)), requires_grad=True)
    pack = lambda x: ernn.pack_padded_sequence(x, [1, 4, 2], enforce_sorted=False).data
    assert ember.autograd.gradcheck(pack, (x,)) and ember.autograd.gradgradcheck(pack, (x,))


def test_packing_errors():
    with pytest.raises(RuntimeError, match="enforce_sorted"):
        ernn.pack_padded_sequence(ember.zeros(4, 2, 1), [2, 3])
    with pytest.raises(RuntimeError):
        torch.nn.utils.rnn.pack_padded_sequence(torch.zeros(4, 2, 1), [2, 3])
    with pytest.raises(ValueError, match="total_length"):
        ernn.pad_packed_sequence(ernn.pack_sequence([ember.zeros(3)]), total_length=2)


# torch sorts before it checks the count and rank of the lengths, so those two are compared when sorted only
@pytest.mark.parametrize("lengths, enforce_sorted", [([4, 3, 0], True), ([4, 3, 0], False), ([4, 3, -1], True),
                                                     ([0, 3, 4], False), ([4, 3], True), ([4, 3, 2, 1], True),
                                                     ([[4, 3, 2]], True)])
def test_packing_length_errors_match_torch(lengths, enforce_sorted):
    same_error(lambda: torch.nn.utils.rnn.pack_padded_sequence(torch.zeros(4, 3, 2), torch.tensor(lengths),
                                                               enforce_sorted=enforce_sorted),
               lambda: ernn.pack_padded_sequence(ember.zeros(4, 3, 2), ember.tensor(lengths),
                                                 enforce_sorted=enforce_sorted))


def test_lengths_beyond_the_padded_length_are_refused():
    with pytest.raises(RuntimeError, match="at most 4"):
        ernn.pack_padded_sequence(ember.zeros(4, 3, 2), [5, 3, 1])


@pytest.mark.parametrize("shapes", [[], [(2, 3), (3, 2)], [(2, 3, 4), (1, 3, 5)]])
def test_pad_sequence_errors_match_torch(shapes):
    same_error(lambda: torch.nn.utils.rnn.pad_sequence([torch.zeros(s) for s in shapes]),
               lambda: ernn.pad_sequence([ember.zeros(s) for s in shapes]))
    if shapes:
        same_error(lambda: torch.nn.utils.rnn.pack_sequence([torch.zeros(s) for s in shapes]),
                   lambda: ernn.pack_sequence([ember.zeros(s) for s in shapes]))
