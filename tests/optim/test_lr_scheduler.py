"""optim.lr_scheduler against torch: the learning-rate (and momentum) sequences, saving, warnings and errors."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember


def optimizer_of(lib, name="SGD", lrs=(0.1, 0.02)):
    """An optimizer with one parameter group per learning rate of ``lrs``."""
    groups = [{"params": [lib.nn.Parameter(lib.ones(2))], "lr": lr} for lr in lrs]
    if name == "SGD":
        return lib.optim.SGD(groups, lr=0.5, momentum=0.9)
    return getattr(lib.optim, name)(groups, lr=0.5)


def sequence(lib, make, steps=40, optimizer="SGD", metrics=None, epochs=None):
    """What the scheduler sets over ``steps`` steps: per step, each group's lr and momentum (or beta1)."""
    opt = optimizer_of(lib, optimizer)
    scheduler = make(lib.optim.lr_scheduler, opt)
    seen = [scheduler.get_last_lr()]
    for i in range(steps):
        opt.step()
        if metrics is not None:
            scheduler.step(metrics[i])
        elif epochs is not None:
            scheduler.step(epochs[i])
        else:
            scheduler.step()
        momenta = [g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups]
        seen.append(scheduler.get_last_lr() + [g["lr"] for g in opt.param_groups] + momenta)
    return seen, scheduler


def assert_same_sequence(make, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the epoch-argument deprecation, compared in its own test
        ours, scheduler = sequence(ember, make, **options)
        theirs, reference = sequence(torch, make, **options)
    assert len(ours) == len(theirs)
    for step, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(np.array(a, dtype=float), np.array(b, dtype=float), rtol=1e-13, atol=1e-15,
                                   err_msg=f"step {step}")
    return scheduler, reference


SCHEDULES = {
    "StepLR": lambda s, o: s.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda s, o: s.MultiStepLR(o, milestones=[2, 5, 5, 11], gamma=0.3),
    "ConstantLR": lambda s, o: s.ConstantLR(o, factor=0.25, total_iters=6),
    "LinearLR": lambda s, o: s.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=17),
    "LinearLR-down": lambda s, o: s.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=8),
    "ExponentialLR": lambda s, o: s.ExponentialLR(o, gamma=0.93),
    "PolynomialLR": lambda s, o: s.PolynomialLR(o, total_iters=13, power=2.5),
    "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "CosineAnnealingLR-long": lambda s, o: s.CosineAnnealingLR(o, T_max=25),
    "CosineAnnealingWarmRestarts": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2, eta_min=0.01),
    "CosineAnnealingWarmRestarts-1": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=6),
    "LambdaLR": lambda s, o: s.LambdaLR(o, lambda e: 0.95 ** e + 0.1 * math.sin(e)),
    "LambdaLR-per-group": lambda s, o: s.LambdaLR(o, [lambda e: 1 / (1 + e), lambda e: 0.9 ** e]),
    "MultiplicativeLR": lambda s, o: s.MultiplicativeLR(o, lambda e: 0.97 if e % 2 else 1.01),
    "CyclicLR": lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5),
    "CyclicLR-triangular2": lambda s, o: s.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=3,
                                                    step_size_down=7, mode="triangular2"),
    "CyclicLR-exp_range": lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4, mode="exp_range",
                                                  gamma=0.97, base_momentum=0.7, max_momentum=0.95),
    "CyclicLR-scale_fn": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=3, scale_fn=lambda x: 1 / (1 + x),
                                                 scale_mode="iterations", cycle_momentum=False),
    "OneCycleLR": lambda s, o: s.OneCycleLR(o, max_lr=0.3, total_steps=40),
    "OneCycleLR-linear": lambda s, o: s.OneCycleLR(o, max_lr=[0.3, 0.1], epochs=4, steps_per_epoch=10,
                                                   anneal_strategy="linear", pct_start=0.4, div_factor=10.0),
    "OneCycleLR-three-phase": lambda s, o: s.OneCycleLR(o, max_lr=0.3, total_steps=45, three_phase=True,
                                                        base_momentum=0.8, max_momentum=0.9, final_div_factor=100.0),
    "SequentialLR": lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.1, total_iters=5), s.ExponentialLR(o, gamma=0.9),
            s.CosineAnnealingLR(o, T_max=6)], milestones=[5, 15]),
    "ChainedScheduler": lambda s, o: s.ChainedScheduler(
        [s.ConstantLR(o, factor=0.5, total_iters=4), s.ExponentialLR(o, gamma=0.9), s.StepLR(o, 3)]),
}


@pytest.mark.parametrize("name", SCHEDULES)
def test_sequence_matches_torch(name):
    assert_same_sequence(SCHEDULES[name])


@pytest.mark.parametrize("name", ["CyclicLR", "OneCycleLR", "OneCycleLR-three-phase"])
def test_beta1_cycles_with_adam(name):
    assert_same_sequence(SCHEDULES[name], optimizer="Adam")


def test_cycling_momentum_needs_an_optimizer_with_one():
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
            lib.optim.lr_scheduler.CyclicLR(optimizer_of(lib, "Adagrad"), 0.01, 0.1)


@pytest.mark.parametrize("mode,threshold_mode", [("min", "rel"), ("min", "abs"), ("max", "rel"), ("max", "abs")])
def test_reduce_on_plateau_matches_torch(mode, threshold_mode):
    rng = np.random.default_rng(3)
    metrics = list(np.cumsum(rng.normal(size=60)) * (1 if mode == "min" else -1))
    assert_same_sequence(lambda s, o: s.ReduceLROnPlateau(o, mode=mode, factor=0.5, patience=2, cooldown=1,
                                                          threshold=0.05, threshold_mode=threshold_mode,
                                                          min_lr=[0.001, 0.0005]),
                         steps=60, metrics=metrics)


def test_reduce_on_plateau_ignores_changes_below_eps():
    assert_same_sequence(lambda s, o: s.ReduceLROnPlateau(o, patience=0, eps=0.005, min_lr=0.015),
                         steps=6, metrics=[1.0] * 6)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR", "PolynomialLR",
                                  "CosineAnnealingLR", "CosineAnnealingWarmRestarts"])
def test_explicit_epochs_use_the_closed_form(name):
    epochs = [0, 3, 4, 7, 2, 9, 12, 12, 20, 31]
    assert_same_sequence(SCHEDULES[name], steps=len(epochs), epochs=epochs)


def test_warm_restarts_take_fractional_epochs():
    epochs = [0.5, 1.25, 3.99, 4.0, 5.5, 13.1, 27.0, 2.2]
    assert_same_sequence(SCHEDULES["CosineAnnealingWarmRestarts"], steps=len(epochs), epochs=epochs)


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "CyclicLR", "OneCycleLR", "LambdaLR",
                                  "SequentialLR", "ChainedScheduler"])
def test_state_dict_resumes_the_sequence(name):
    make = SCHEDULES[name]
    straight, _ = sequence(ember, make, steps=20)
    opt = optimizer_of(ember)
    first = make(ember.optim.lr_scheduler, opt)
    for _ in range(8):
        opt.step()
        first.step()
    saved = first.state_dict()
    assert "optimizer" not in saved
    fresh = optimizer_of(ember)
    second = make(ember.optim.lr_scheduler, fresh)
    fresh.load_state_dict(opt.state_dict())  # the chainable schedules continue from the groups' lr
    second.load_state_dict(saved)
    for _ in range(12):
        fresh.step()
        second.step()
    np.testing.assert_allclose(second.get_last_lr(), straight[-1][:2], rtol=1e-13)


def test_state_dict_keys_match_torch():
    for name in ["StepLR", "LambdaLR", "CyclicLR", "SequentialLR", "OneCycleLR"]:
        ours = sequence(ember, SCHEDULES[name], steps=3)[1].state_dict()
        theirs = sequence(torch, SCHEDULES[name], steps=3)[1].state_dict()
        assert sorted(ours) == sorted(theirs), name


def step_order_warnings(lib, optimizer_first):
    opt = optimizer_of(lib)
    scheduler = lib.optim.lr_scheduler.StepLR(opt, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if optimizer_first:
            opt.step()
        scheduler.step()
        scheduler.step(5)
        scheduler.get_lr()
    return [str(w.message).split(".")[0] for w in caught]


@pytest.mark.parametrize("optimizer_first", [True, False])
def test_warnings_match_torch(optimizer_first):
    assert step_order_warnings(ember, optimizer_first) == step_order_warnings(torch, optimizer_first)
    assert len(step_order_warnings(ember, optimizer_first)) == (2 if optimizer_first else 3)


def test_overriding_optimizer_step_after_the_scheduler_warns():
    for lib in (ember, torch):
        opt = optimizer_of(lib)
        scheduler = lib.optim.lr_scheduler.StepLR(opt, 2)
        opt.step = lambda: None
        with pytest.warns(UserWarning, match="has been overridden after learning rate scheduler"):
            scheduler.step()


def test_tensor_learning_rates_are_filled_in_place():
    def run(lib):
        lr = lib.tensor(0.1)
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=lr)
        scheduler = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        opt.step()
        scheduler.step()
        return opt.param_groups[0]["lr"] is lr, float(lr), float(scheduler.get_last_lr()[0])

    assert run(ember) == run(torch)


ERRORS = [
    (lambda s, o: s.StepLR(object(), 2), TypeError),
    (lambda s, o: s.StepLR(o, 2, last_epoch=3), KeyError),
    (lambda s, o: s.ConstantLR(o, factor=1.5), ValueError),
    (lambda s, o: s.LinearLR(o, start_factor=0), ValueError),
    (lambda s, o: s.LinearLR(o, end_factor=2), ValueError),
    (lambda s, o: s.LambdaLR(o, [lambda e: 1]), ValueError),
    (lambda s, o: s.MultiplicativeLR(o, 0.5), TypeError),
    (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=0), ValueError),
    (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0), ValueError),
    (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"), ValueError),
    (lambda s, o: s.CyclicLR(o, 0.1, 1.0, mode="sawtooth"), ValueError),
    (lambda s, o: s.CyclicLR(o, [0.1], 1.0), ValueError),
    (lambda s, o: s.OneCycleLR(o, 1.0), ValueError),
    (lambda s, o: s.OneCycleLR(o, 1.0, total_steps=0), ValueError),
    (lambda s, o: s.OneCycleLR(o, 1.0, epochs=2, steps_per_epoch=0), ValueError),
    (lambda s, o: s.OneCycleLR(o, 1.0, total_steps=10, pct_start=1), ValueError),
    (lambda s, o: s.OneCycleLR(o, 1.0, total_steps=10, anneal_strategy="exp"), ValueError),
    (lambda s, o: s.ReduceLROnPlateau(o, factor=1.0), ValueError),
    (lambda s, o: s.ReduceLROnPlateau(o, mode="up"), ValueError),
    (lambda s, o: s.ReduceLROnPlateau(o, threshold_mode="ratio"), ValueError),
    (lambda s, o: s.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError),
    (lambda s, o: s.SequentialLR(o, [], milestones=[]), ValueError),
    (lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2), s.StepLR(o, 3)], milestones=[]), ValueError),
    (lambda s, o: s.SequentialLR(o, [s.ReduceLROnPlateau(o)], milestones=[]), ValueError),
    (lambda s, o: s.ChainedScheduler([]), ValueError),
    (lambda s, o: s.ChainedScheduler([s.StepLR(o, 2), 3]), TypeError),
]


@pytest.mark.parametrize("make,error", ERRORS)
def test_errors_match_torch(make, error):
    messages = []
    for lib in (torch, ember):
        with warnings.catch_warnings(), pytest.raises(error) as info:
            warnings.simplefilter("ignore")
            make(lib.optim.lr_scheduler, optimizer_of(lib))
        messages.append(str(info.value).replace("torch", "ember"))
    assert messages[1][:40] == messages[0][:40]


def test_one_cycle_refuses_to_run_past_its_end():
    for lib in (ember, torch):
        opt = optimizer_of(lib)
        scheduler = lib.optim.lr_scheduler.OneCycleLR(opt, 1.0, total_steps=3)
        for _ in range(3):
            opt.step()
            scheduler.step()
        with pytest.raises(ValueError, match="Tried to step 4 times"):
            scheduler.step()


def test_a_group_added_after_a_lambda_scheduler_is_refused_at_its_step_as_torch():
    def program(lib):
        first, second = lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(2))
        optimizer = lib.optim.SGD([first], lr=0.1)
        scheduler = lib.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 0.5 ** epoch)
        optimizer.add_param_group({"params": [second], "lr": 0.01})
        optimizer.step()
        scheduler.step()
    for lib in (torch, ember):
        with pytest.raises(ValueError, match=r"zip\(\) argument 2 is shorter than argument 1"):
            program(lib)
