"""optim.swa_utils against torch: AveragedModel (SWA, EMA, buffers), update_bn and SWALR."""
import numpy as np
import pytest
import torch

import ember
from ember.optim import swa_utils
from optim.test_lr_scheduler import assert_same_sequence

RNG = np.random.default_rng(7)
STATES = [[RNG.normal(size=(2, 3)), RNG.normal(size=2)] for _ in range(6)]


def averaged(lib, steps=6, **options):
    """An AveragedModel of a Linear(3, 2) after ``steps`` updates, each from the next of ``STATES``."""
    model = lib.nn.Linear(3, 2).double()
    average = lib.optim.swa_utils.AveragedModel(model, **options)
    for weight, bias in STATES[:steps]:
        with lib.no_grad():
            model.weight.copy_(lib.tensor(weight))
            model.bias.copy_(lib.tensor(bias))
        average.update_parameters(model)
    return [average.module.weight, average.module.bias, average.n_averaged]


def test_default_is_the_running_mean():
    ours = [t.detach().numpy() for t in averaged(ember)]
    theirs = [t.detach().numpy() for t in averaged(torch)]
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-14)
    np.testing.assert_allclose(ours[0], np.mean([w for w, _ in STATES], axis=0), rtol=1e-14)
    assert ours[2].dtype == np.int64 and int(ours[2]) == 6


@pytest.mark.parametrize("kind", ["ema_multi", "ema", "swa", "swa_multi", "custom"])
def test_averaging_functions_match_torch(kind):
    def options(lib):
        utils = lib.optim.swa_utils
        return {"ema_multi": dict(multi_avg_fn=utils.get_ema_multi_avg_fn(0.7)),
                "ema": dict(avg_fn=utils.get_ema_avg_fn(0.6)),
                "swa": dict(avg_fn=utils.get_swa_avg_fn()),
                "swa_multi": dict(multi_avg_fn=utils.get_swa_multi_avg_fn()),
                "custom": dict(avg_fn=lambda avg, new, n: avg * 0.5 + new * 0.5 + n * 0.01)}[kind]

    ours = averaged(ember, **options(ember))
    theirs = averaged(torch, **options(torch))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-13)


def test_the_copy_is_independent_and_runs_the_module():
    model = ember.nn.Linear(3, 2)
    average = swa_utils.AveragedModel(model)
    assert average.module.weight is not model.weight
    x = ember.ones(4, 3)
    np.testing.assert_allclose(average(x).detach().numpy(), model(x).detach().numpy())
    assert [name for name, _ in average.named_buffers()] == ["n_averaged"]


def test_update_bn_recomputes_the_statistics_like_torch():
    batches = [RNG.normal(loc=2.0, size=(5, 3)) for _ in range(4)]
    ours = ember.nn.Sequential(ember.nn.Linear(3, 3).double(), ember.nn.BatchNorm1d(3, momentum=0.3).double())
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 3).double(), torch.nn.BatchNorm1d(3, momentum=0.3).double())
    with torch.no_grad():
        theirs[0].weight.copy_(torch.tensor(ours[0].weight.detach().numpy()))
        theirs[0].bias.copy_(torch.tensor(ours[0].bias.detach().numpy()))
    ours.eval(), theirs.eval()
    swa_utils.update_bn([(ember.tensor(b), 0) for b in batches], ours)
    torch.optim.swa_utils.update_bn([(torch.tensor(b), 0) for b in batches], theirs)
    np.testing.assert_allclose(ours[1].running_mean.numpy(), theirs[1].running_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours[1].running_var.numpy(), theirs[1].running_var.numpy(), rtol=1e-12)
    assert not ours.training and ours[1].momentum == 0.3


def test_update_bn_without_batch_norm_leaves_the_model_alone():
    model = ember.nn.Linear(2, 2)
    calls = []
    model.register_forward_hook(lambda *args: calls.append(1))
    swa_utils.update_bn([ember.ones(1, 2)], model)
    assert calls == []


def test_averaging_buffers_too():
    def run(lib, layer):
        model = lib.nn.Sequential(lib.nn.Linear(3, 3).double(), layer)
        average = lib.optim.swa_utils.AveragedModel(model, use_buffers=True)
        for i in range(3):
            with lib.no_grad():
                model[1].running_mean.fill_(float(i))
                model[0].weight.fill_(float(i * i))
            average.update_parameters(model)
        return average.module[1].running_mean.numpy(), average.module[0].weight.detach().numpy()

    ours = run(ember, ember.nn.BatchNorm1d(3).double())
    theirs = run(torch, torch.nn.BatchNorm1d(3).double())
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b)


SWALR = {
    "cos": lambda s, o: swa_of(s).SWALR(o, swa_lr=0.05, anneal_epochs=5),
    "linear": lambda s, o: swa_of(s).SWALR(o, swa_lr=[0.05, 0.001], anneal_epochs=7, anneal_strategy="linear"),
    "instant": lambda s, o: swa_of(s).SWALR(o, swa_lr=0.05, anneal_epochs=0),
}


def swa_of(scheduler_module):
    """The swa_utils beside a library's lr_scheduler module."""
    return ember.optim.swa_utils if scheduler_module is ember.optim.lr_scheduler else torch.optim.swa_utils


@pytest.mark.parametrize("name", SWALR)
def test_swalr_sequence_matches_torch(name):
    assert_same_sequence(SWALR[name], steps=15)


def test_swalr_state_dict_drops_the_function():
    scheduler, reference = assert_same_sequence(SWALR["cos"], steps=3)
    assert sorted(scheduler.state_dict()) == sorted(reference.state_dict())
    scheduler.load_state_dict(scheduler.state_dict())
    assert scheduler.anneal_func is swa_utils.SWALR._cosine_anneal


@pytest.mark.parametrize("make,error", [
    (lambda u, m, o: u.AveragedModel(m, avg_fn=u.get_swa_avg_fn(), multi_avg_fn=u.get_swa_multi_avg_fn()),
     AssertionError),
    (lambda u, m, o: u.get_ema_multi_avg_fn(1.5), ValueError),
    (lambda u, m, o: u.get_ema_avg_fn(-0.1), ValueError),
    (lambda u, m, o: u.SWALR(o, 0.1, anneal_strategy="exp"), ValueError),
    (lambda u, m, o: u.SWALR(o, 0.1, anneal_epochs=-1), ValueError),
    (lambda u, m, o: u.SWALR(o, [0.1, 0.2]), ValueError),
])
def test_errors_match_torch(make, error):
    messages = []
    for lib in (torch, ember):
        model = lib.nn.Linear(2, 2)
        with pytest.raises(error) as info:
            make(lib.optim.swa_utils, model, lib.optim.SGD(model.parameters(), lr=0.1))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
