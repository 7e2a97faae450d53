"""State dicts of every layer with state, optimizer states and a training run, moved between ember and torch
through files in both directions."""
import numpy as np
import pytest
import torch

import ember

# Every layer that has parameters or buffers, built the same way in both libraries.
LAYERS = {
    "Linear": lambda nn: nn.Linear(3, 2),
    "Bilinear": lambda nn: nn.Bilinear(2, 3, 2),
    "Conv1d": lambda nn: nn.Conv1d(2, 3, 3),
    "Conv2d": lambda nn: nn.Conv2d(2, 3, 3, bias=False),
    "Conv3d": lambda nn: nn.Conv3d(1, 2, 2),
    "ConvTranspose1d": lambda nn: nn.ConvTranspose1d(2, 3, 3),
    "ConvTranspose2d": lambda nn: nn.ConvTranspose2d(2, 3, 3, groups=1),
    "ConvTranspose3d": lambda nn: nn.ConvTranspose3d(1, 2, 2),
    "BatchNorm1d": lambda nn: nn.BatchNorm1d(3),
    "BatchNorm2d": lambda nn: nn.BatchNorm2d(3),
    "BatchNorm3d": lambda nn: nn.BatchNorm3d(3),
    "InstanceNorm1d": lambda nn: nn.InstanceNorm1d(3, affine=True),
    "InstanceNorm2d": lambda nn: nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
    "InstanceNorm3d": lambda nn: nn.InstanceNorm3d(2, track_running_stats=True),
    "LayerNorm": lambda nn: nn.LayerNorm(4),
    "GroupNorm": lambda nn: nn.GroupNorm(2, 4),
    "RMSNorm": lambda nn: nn.RMSNorm(4),
    "Embedding": lambda nn: nn.Embedding(5, 3),
    "EmbeddingBag": lambda nn: nn.EmbeddingBag(5, 3),
    "PReLU": lambda nn: nn.PReLU(3),
    "RNN": lambda nn: nn.RNN(3, 4, num_layers=2),
    "LSTM": lambda nn: nn.LSTM(3, 4, bidirectional=True, proj_size=2),
    "GRU": lambda nn: nn.GRU(3, 4),
    "RNNCell": lambda nn: nn.RNNCell(3, 4),
    "LSTMCell": lambda nn: nn.LSTMCell(3, 4),
    "GRUCell": lambda nn: nn.GRUCell(3, 4),
    "MultiheadAttention": lambda nn: nn.MultiheadAttention(4, 2, kdim=3, vdim=5),
    "TransformerEncoderLayer": lambda nn: nn.TransformerEncoderLayer(4, 2, dim_feedforward=8),
    "TransformerDecoderLayer": lambda nn: nn.TransformerDecoderLayer(4, 2, dim_feedforward=8),
    "Transformer": lambda nn: nn.Transformer(4, 2, 1, 1, dim_feedforward=8),
    "TransformerEncoder": lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 2, nn.LayerNorm(4),
                                                           enable_nested_tensor=False),
    "TransformerDecoder": lambda nn: nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 8), 2),
    "ParameterList": lambda nn: nn.ParameterList([nn.Parameter(torch_or_ember(nn).ones(2)),
                                                  torch_or_ember(nn).zeros(1)]),
    "ParameterDict": lambda nn: nn.ParameterDict({"a": nn.Parameter(torch_or_ember(nn).ones(2))}),
    "ModuleDict": lambda nn: nn.ModuleDict({"lin": nn.Linear(2, 2), "norm": nn.LayerNorm(2)}),
    "CrossEntropyLoss": lambda nn: nn.CrossEntropyLoss(weight=torch_or_ember(nn).ones(3)),
    "Sequential": lambda nn: nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.BatchNorm1d(3)),
}


def torch_or_ember(nn):
    return torch if nn is torch.nn else ember


def check_same(loaded_into, source) -> None:
    mine, theirs = loaded_into.state_dict(), source.state_dict()
    assert list(mine) == list(theirs)
    for key in mine:
        assert str(mine[key].dtype).split(".")[-1] == str(theirs[key].dtype).split(".")[-1], key
        np.testing.assert_array_equal(mine[key].detach().numpy(), theirs[key].detach().numpy(), err_msg=key)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_state_dict_ember_to_torch(name, tmp_path):
    source = LAYERS[name](ember.nn)
    ember.save(source.state_dict(), tmp_path / "layer.pt")
    loaded = torch.load(tmp_path / "layer.pt")
    target = LAYERS[name](torch.nn)
    target.load_state_dict(loaded)  # strict: the same keys
    check_same(target, source)
    assert dict(loaded._metadata) == dict(target.state_dict()._metadata)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_state_dict_torch_to_ember(name, tmp_path):
    source = LAYERS[name](torch.nn)
    torch.save(source.state_dict(), tmp_path / "layer.pt")
    target = LAYERS[name](ember.nn)
    target.load_state_dict(ember.load(tmp_path / "layer.pt"))
    check_same(target, source)


OPTIMIZERS = {
    "SGD": lambda optim, params: optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True),
    "Adam": lambda optim, params: optim.Adam(params, lr=0.01, amsgrad=True),
    "AdamW": lambda optim, params: optim.AdamW(params, lr=0.01),
    "RMSprop": lambda optim, params: optim.RMSprop(params, lr=0.01, momentum=0.5, centered=True),
    "Adagrad": lambda optim, params: optim.Adagrad(params, lr=0.1),
    "Adamax": lambda optim, params: optim.Adamax(params, lr=0.01),
    "NAdam": lambda optim, params: optim.NAdam(params, lr=0.01),
    "RAdam": lambda optim, params: optim.RAdam(params, lr=0.01),
    "Adadelta": lambda optim, params: optim.Adadelta(params, lr=0.5),
    "Rprop": lambda optim, params: optim.Rprop(params, lr=0.01),
    "ASGD": lambda optim, params: optim.ASGD(params, lr=0.01),
}


def mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 1))


def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((16, 4)).astype(np.float32), rng.standard_normal((16, 1)).astype(np.float32)


def train(lib, model, optimizer, steps):
    x, y = (lib.from_numpy(a) for a in data())
    for _ in range(steps):
        optimizer.zero_grad()
        lib.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()


def start(lib, name):
    model = mlp(lib)
    if lib is ember:  # the same initial weights in both libraries
        model.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in mlp(torch).state_dict().items()})
    return model, OPTIMIZERS[name](lib.optim, model.parameters())


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("first, second", [(torch, ember), (ember, torch)])
def test_training_resumes_from_a_checkpoint_in_the_other_library(name, first, second, tmp_path):
    """10 steps in one library, saved, loaded by the other and trained 10 more: the same as 20 steps in one."""
    model, optimizer = start(first, name)
    train(first, model, optimizer, 10)
    first.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 10}, tmp_path / "c.pt")

    checkpoint = second.load(tmp_path / "c.pt")
    resumed, resumed_optimizer = start(second, name)
    resumed.load_state_dict(checkpoint["model"])
    resumed_optimizer.load_state_dict(checkpoint["optimizer"])
    train(second, resumed, resumed_optimizer, 10)

    reference, reference_optimizer = start(first, name)
    train(first, reference, reference_optimizer, 20)
    for key, value in reference.state_dict().items():
        np.testing.assert_allclose(resumed.state_dict()[key].detach().numpy(), value.detach().numpy(),
                                   rtol=1e-5, atol=1e-5, err_msg=key)


def test_optimizer_state_round_trips_exactly(tmp_path):
    model, optimizer = start(torch, "Adam")
    train(torch, model, optimizer, 3)
    torch.save(optimizer.state_dict(), tmp_path / "t.pt")
    ember_model, ember_optimizer = start(ember, "Adam")
    ember_optimizer.load_state_dict(ember.load(tmp_path / "t.pt"))
    ember.save(ember_optimizer.state_dict(), tmp_path / "e.pt")
    back, original = torch.load(tmp_path / "e.pt"), optimizer.state_dict()
    assert back["param_groups"] == original["param_groups"]
    for index, state in original["state"].items():
        for key, value in state.items():
            np.testing.assert_array_equal(back["state"][index][key].numpy(), value.numpy())
