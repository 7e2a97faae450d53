"""Mismatches against torch in the nn.Module API, the containers and the recurrent and transformer modules, found
by a sweep: each test failed before its fix."""
from __future__ import annotations

from collections import OrderedDict

import pytest

import ember

torch = pytest.importorskip("torch")


def _raised(fn) -> BaseException:
    try:
        fn()
    except Exception as error:  # noqa: BLE001 - the test compares whatever was raised
        return error
    raise AssertionError("expected an exception")


def _same_error_type(ember_fn, torch_fn) -> BaseException:
    """Both raise, with the same exception type; return ember's exception for its message."""
    theirs, ours = _raised(torch_fn), _raised(ember_fn)
    assert type(ours) is type(theirs), (ours, theirs)
    return ours


# ---------------------------------------------------------------------------------------------- recurrent cells


@pytest.mark.parametrize("cell", ["RNNCell", "GRUCell"])
@pytest.mark.parametrize("input_shape, hx_shape, words", [
    ((2, 3), (1, 2, 5), "Expected hidden to be 1D or 2D, got 3D"),
    ((2, 4), (1, 2, 5), "Expected hidden to be 1D or 2D, got 3D"),  # before the input's size, as torch
    ((3,), (2, 5), "hidden0 has inconsistent hidden_size: got 2, expected 5"),
    ((2, 3), (3, 5), "Input batch size 2 doesn't match hidden0 batch size 3"),
    ((2, 3), (2, 4), "hidden0 has inconsistent hidden_size: got 4, expected 5"),
    ((2, 3), (5,), "Input batch size 2 doesn't match hidden0 batch size 5"),
])
def test_cell_refuses_a_wrong_hidden_state_as_torch(cell, input_shape, hx_shape, words):
    # the 2-D state of a 1-D input was reported by its unsqueezed shape (1, 2, 5); a 3-D state was no ValueError
    ours, theirs = getattr(ember.nn, cell)(3, 5), getattr(torch.nn, cell)(3, 5)
    error = _same_error_type(lambda: ours(ember.zeros(input_shape), ember.zeros(hx_shape)),
                             lambda: theirs(torch.zeros(input_shape), torch.zeros(hx_shape)))
    assert words in str(error)


@pytest.mark.parametrize("hx_shapes, words", [
    (((2, 2, 5), (2, 5)), "Expected hx[0] to be 1D or 2D, got 3D"),
    (((2, 5), (3, 5)), "Input batch size 2 doesn't match hidden1 batch size 3"),
    (((2, 5), (2, 4)), "hidden1 has inconsistent hidden_size: got 4, expected 5"),
    (((2, 5),), "expects two hidden states"),
    (((2, 5),) * 3, "expects two hidden states"),
])
def test_lstm_cell_refuses_wrong_states_as_torch(hx_shapes, words):
    # a wrong number of states was Python's unpacking ValueError
    ours, theirs = ember.nn.LSTMCell(3, 5), torch.nn.LSTMCell(3, 5)
    error = _same_error_type(lambda: ours(ember.zeros(2, 3), tuple(ember.zeros(s) for s in hx_shapes)),
                             lambda: theirs(torch.zeros(2, 3), tuple(torch.zeros(s) for s in hx_shapes)))
    assert words in str(error)


def test_lstm_cell_refuses_a_single_tensor_state_with_type_error():
    # the tensor was iterated as if it were the pair (h, c), and the error spoke of a wrong shape
    error = _same_error_type(lambda: ember.nn.LSTMCell(3, 5)(ember.zeros(2, 3), ember.zeros(2, 5)),
                             lambda: torch.nn.LSTMCell(3, 5)(torch.zeros(2, 3), torch.zeros(2, 5)))
    assert "tuple" in str(error)


# ---------------------------------------------------------------------------------------------- recurrent layers


@pytest.mark.parametrize("kwargs", [{}, {"num_layers": 2, "bidirectional": True}, {"proj_size": 2, "bias": False}])
def test_rnn_all_weights_names_as_torch(kwargs):
    ours, theirs = ember.nn.LSTM(3, 5, **kwargs), torch.nn.LSTM(3, 5, **kwargs)
    assert ours._all_weights == theirs._all_weights
    assert [[w.shape for w in ws] for ws in ours.all_weights] == [[w.shape for w in ws] for ws in theirs.all_weights]


def test_rnn_base_refuses_an_unknown_mode_with_value_error():
    # it was a KeyError from the table of gate counts
    error = _same_error_type(lambda: ember.nn.RNNBase("FOO", 3, 5), lambda: torch.nn.RNNBase("FOO", 3, 5))
    assert "Unrecognized RNN mode: FOO" in str(error)


# ---------------------------------------------------------------------------------------------- transformer


@pytest.mark.parametrize("encoder, keyword", [(False, "src_key_padding_mask"), (False, "src_mask"),
                                              (True, "src_key_padding_mask"), (True, "mask")])
def test_transformer_encoder_names_its_own_integer_mask(encoder, keyword):
    # the refusal came from the attention inside, by its names key_padding_mask and attn_mask
    shape = (2, 4) if keyword == "src_key_padding_mask" else (4, 4)

    def build(lib):
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        module = lib.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False) if encoder else layer
        return lambda: module(lib.zeros(2, 4, 8), **{keyword: lib.zeros(shape, dtype=lib.int64)})

    error = _same_error_type(build(ember), build(torch))
    assert f"only bool and floating types of {keyword} are supported" == str(error)


# ---------------------------------------------------------------------------------------------- module hooks


def test_global_always_called_hook_with_kwargs_gets_them_when_forward_raises():
    # it was called without the kwargs, so it failed and only a warning said so (torch 2.13 does the same, a bug:
    # the module's own such hook gets them)
    class Failing(ember.nn.Module):
        def forward(self, x, scale=1):
            raise ValueError("boom")

    seen = []
    handle = ember.nn.modules.module.register_module_forward_hook(
        lambda module, args, kwargs, output: seen.append((kwargs, output)), with_kwargs=True, always_call=True)
    try:
        with pytest.raises(ValueError, match="boom"):
            Failing()(ember.ones(1), scale=2)
    finally:
        handle.remove()
    assert seen == [({"scale": 2}, None)]


# ---------------------------------------------------------------------------------------------- state_dict


@pytest.mark.parametrize("strict", [True, False])
def test_load_state_dict_gathers_a_failed_assignment_with_the_other_errors(strict):
    # the first failure escaped as it was, ending the load; torch reports each failed entry in the one RuntimeError
    def load(lib):
        state = {"weight": lib.zeros(3, 2, dtype=lib.int64), "bias": lib.zeros(3, dtype=lib.int64)}
        return lambda: lib.nn.Linear(2, 3).load_state_dict(state, strict=strict, assign=True)

    error = _same_error_type(load(ember), load(torch))
    text = str(error)
    assert text.startswith("Error(s) in loading state_dict for Linear:")
    for key, shape in (("weight", "[3, 2]"), ("bias", "[3]")):
        assert (f'While copying the parameter named "{key}", whose dimensions in the model are ember.Size({shape}) '
                f"and whose dimensions in the checkpoint are ember.Size({shape}), an exception occurred") in text


@pytest.mark.parametrize("name, which", [("LSTM", 0), ("LSTM", 1), ("GRU", 0), ("RNN", 0)])
def test_recurrent_layer_refuses_a_state_of_another_dtype(name, which):
    # an LSTM's float64 state promoted the whole output to float64, where torch refuses it
    def call(lib):
        states = [lib.zeros(1, 2, 4), lib.zeros(1, 2, 4)]
        states[which] = states[which].double()
        hx = tuple(states) if name == "LSTM" else states[0]
        return lambda: getattr(lib.nn, name)(3, 4)(lib.zeros(5, 2, 3), hx)

    error = _same_error_type(call(ember), call(torch))
    assert "float64" in str(error) and "float32" in str(error)


def test_lstm_refuses_more_than_two_states_as_torch():
    # it was an IndexError
    def call(lib):
        return lambda: lib.nn.LSTM(3, 4)(lib.zeros(5, 2, 3), (lib.zeros(1, 2, 4),) * 3)

    assert "lstm expects two hidden states" in str(_same_error_type(call(ember), call(torch)))


def test_removable_handle_is_made_as_torch_makes_it():
    # RemovableHandle(hooks) was a TypeError (it wanted the id too), and a handle had no hooks_dict_ref
    for lib in (torch, ember):
        hooks, flags = OrderedDict(), OrderedDict()  # (torch refers to them weakly, which a plain dict refuses)
        handle = lib.utils.hooks.RemovableHandle(hooks, extra_dict=flags)
        hooks[handle.id] = print
        flags[handle.id] = True
        assert handle.hooks_dict_ref() is hooks and [ref() for ref in handle.extra_dict_ref] == [flags]
        other = lib.utils.hooks.RemovableHandle(hooks, extra_dict=[flags])
        assert other.id != handle.id
        with handle:
            pass
        assert hooks == {} and flags == {}


@pytest.mark.parametrize("name", ["RNN", "GRU"])
@pytest.mark.parametrize("proj_size", [0, 2])
def test_rnn_and_gru_refuse_any_proj_size_keyword(name, proj_size):
    # proj_size=0 was accepted; torch refuses the keyword itself, projections being LSTM's alone
    error = _same_error_type(lambda: getattr(ember.nn, name)(3, 4, proj_size=proj_size),
                             lambda: getattr(torch.nn, name)(3, 4, proj_size=proj_size))
    assert "proj_size argument is only supported for LSTM" in str(error)


@pytest.mark.parametrize("keyword", ["bias", "batch_first"])
@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_recurrent_layer_refuses_a_flag_that_is_not_a_bool(name, keyword):
    # bias=0 built a layer without biases, batch_first=1 was kept as 1
    error = _same_error_type(lambda: getattr(ember.nn, name)(3, 4, **{keyword: 0}),
                             lambda: getattr(torch.nn, name)(3, 4, **{keyword: 0}))
    assert str(error) == f"{keyword} should be of type bool, got: int"


@pytest.mark.parametrize("text", ["Linear()", "Block(\n  (fc): Linear()\n)", ""])
def test_addindent_is_importable_from_the_module_module_as_in_torch(text):
    # modules written for torch import it to nest their reprs; it was missing
    from ember.nn.modules.module import _addindent

    assert _addindent(text, 4) == torch.nn.modules.module._addindent(text, 4)
