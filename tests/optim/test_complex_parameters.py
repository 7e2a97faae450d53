"""Complex parameters: modules converted to complex dtypes, and every optimizer on a complex parameter, against
torch, which updates a complex parameter as the real pairs of ``view_as_real`` (its state stays complex)."""
import warnings

import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(3)
START = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
TARGET = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)


def _loss(L, p):
    """Real and imaginary parts weighed differently, and mixed: a complex square would not give this gradient."""
    d = p - L.tensor(TARGET)
    return (L.real(d) ** 2 + 3 * L.imag(d) ** 2 + L.real(p) * L.imag(p)).sum()


def _trained(L, name, options, steps=4):
    p = L.nn.Parameter(L.tensor(START))
    optimizer = getattr(L.optim, name)([p], **options)
    for _ in range(steps):
        optimizer.zero_grad()
        _loss(L, p).backward()
        optimizer.step()
    return p.detach().numpy(), optimizer


@pytest.mark.parametrize("name, options", [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.1, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
    ("Adagrad", dict(lr=0.1)),
    ("Adadelta", dict(lr=1.0)),
    ("Adamax", dict(lr=0.1)),
    ("NAdam", dict(lr=0.1)),
    ("RAdam", dict(lr=0.1)),
    ("ASGD", dict(lr=0.1)),
    ("Rprop", dict(lr=0.1)),
])
def test_optimizers_update_complex_parameters_as_torch(name, options):
    expected, torch_optimizer = _trained(torch, name, options)
    actual, optimizer = _trained(ember, name, options)
    np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-12)
    for key, value in torch_optimizer.state[torch_optimizer.param_groups[0]["params"][0]].items():
        mine = optimizer.state[optimizer.param_groups[0]["params"][0]][key]
        assert str(mine.dtype).split(".")[-1] == str(value.dtype).split(".")[-1] and tuple(mine.shape) == value.shape
        np.testing.assert_allclose(mine.numpy(), value.numpy(), rtol=1e-9, atol=1e-12)


def test_adam_on_a_complex_parameter_is_adam_on_its_real_pairs():
    complex_result, _ = _trained(ember, "Adam", dict(lr=0.1))
    pairs = ember.nn.Parameter(ember.view_as_real(ember.tensor(START)).clone())
    optimizer = ember.optim.Adam([pairs], lr=0.1)
    for _ in range(4):
        optimizer.zero_grad()
        _loss(ember, ember.view_as_complex(pairs)).backward()
        optimizer.step()
    np.testing.assert_array_equal(ember.view_as_complex(pairs.detach()).numpy(), complex_result)


def test_lbfgs_with_complex_and_real_parameters_as_torch():
    results = []
    for L in (torch, ember):
        p, r = L.nn.Parameter(L.tensor(START)), L.nn.Parameter(L.tensor([0.5], dtype=L.float64))
        optimizer = L.optim.LBFGS([p, r], lr=0.5, max_iter=5, line_search_fn="strong_wolfe")

        def closure():
            optimizer.zero_grad()
            loss = _loss(L, p) + (r ** 2).sum() + (L.real(p) * r).sum()
            loss.backward()
            return loss

        optimizer.step(closure)
        results.append((p.detach().numpy(), r.detach().numpy()))
    for expected, actual in zip(*results):
        np.testing.assert_allclose(actual, expected, rtol=1e-8)


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_optimizers_without_complex_support_refuse_as_torch(name):
    for L in (torch, ember):
        p = L.nn.Parameter(L.ones(2, 2, dtype=L.complex64))
        optimizer = getattr(L.optim, name)([p])
        (L.real(p) ** 2).sum().backward()
        with pytest.raises(RuntimeError, match=f"{name} does not support complex parameters"):
            optimizer.step()


def test_module_to_complex_and_back_as_torch():
    def program(L):
        dtypes = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            layer = L.nn.Linear(2, 3).to(L.complex64)
            dtypes.append(layer.weight.dtype)
            dtypes.append(layer(L.ones(1, 2, dtype=L.complex64)).dtype)
            dtypes.append(L.nn.Linear(2, 2).double().to(dtype=L.complex64).weight.dtype)
            made = L.nn.Linear(2, 2, dtype=L.complex128)
            dtypes.append(made.float().weight.dtype)  # float() leaves complex parameters alone
            dtypes.append(made.to(L.float32).weight.dtype)  # to(float32) converts them
            dtypes.append([b.dtype for b in L.nn.BatchNorm1d(2).to(L.complex64).buffers()])
        return str(dtypes).replace("torch.", "ember.")

    assert program(ember) == program(torch)
    with pytest.warns(UserWarning, match="Complex modules"):
        ember.nn.Linear(1, 1).to(ember.complex64)


def test_complex_layers_initialise_each_part_as_torch_does():
    ember.manual_seed(0)
    weight = ember.nn.Linear(400, 50, dtype=ember.complex64).weight.detach()
    bound = 1 / 400 ** 0.5
    for part in (ember.real(weight), ember.imag(weight)):
        assert -bound <= float(part.min()) < -0.9 * bound and 0.9 * bound < float(part.max()) <= bound
    z = ember.zeros(20000, dtype=ember.complex128).normal_(1.0, 2.0)
    assert abs(float(ember.real(z).mean()) - 1) < 0.05 and abs(float(ember.imag(z).mean()) - 1) < 0.05
    assert abs(float((z - z.mean()).abs().pow(2).mean()) - 4) < 0.2  # the complex variance is std ** 2


def test_adam_state_of_a_complex_parameter_moves_between_ember_and_torch(tmp_path):
    p = ember.nn.Parameter(ember.tensor(START))
    optimizer = ember.optim.Adam([p], lr=0.1)
    for _ in range(2):
        optimizer.zero_grad()
        _loss(ember, p).backward()
        optimizer.step()
    ember.save({"p": p.detach(), "opt": optimizer.state_dict()}, tmp_path / "s.pt")
    saved = torch.load(tmp_path / "s.pt")
    q = torch.nn.Parameter(saved["p"].clone())
    torch_optimizer = torch.optim.Adam([q], lr=0.1)
    torch_optimizer.load_state_dict(saved["opt"])
    for L, param, opt in ((ember, p, optimizer), (torch, q, torch_optimizer)):
        for _ in range(2):
            opt.zero_grad()
            _loss(L, param).backward()
            opt.step()
    np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12)
