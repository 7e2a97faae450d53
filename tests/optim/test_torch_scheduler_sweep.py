"""Every public scheduler of torch.optim.lr_scheduler, with a sweep of its documented options, run beside ember's
for 30 steps: the same ``get_last_lr()``, group lrs (and momentum or Adam's beta1 where the scheduler cycles
them), ``state_dict()`` (keys and values), warnings, and, through a ``state_dict``/``load_state_dict`` round
trip halfway, the same continuation; bad arguments raise torch's exception types.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import pytest
import torch

import ember

STEPS = 30
METRICS = [1.0, 0.9, 0.9, 0.95, 0.9, 0.89, 0.9, 0.9, 0.9, 0.91, 0.7, 0.7, 0.7, 0.7, 0.71, 0.7, 0.69, 0.7, 0.7, 0.7,
           0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
FRACTIONAL_EPOCHS = [0.5 * i for i in range(1, STEPS + 1)]


def decay(epoch: int) -> float:
    return 0.95 ** epoch


def halving(epoch: int) -> float:
    return 0.5 if epoch % 4 == 0 else 1.0


def linear_decay(epoch: int) -> float:
    return 1 / (1 + epoch)


class Scaled:
    """A callable object as a lambda or scale_fn: state dicts keep its attributes (not a function's)."""

    def __init__(self, factor: float):
        self.factor = factor

    def __call__(self, epoch: int) -> float:
        return self.factor ** epoch


def optimizer(lib, kind: str = "SGD", lrs: tuple = (0.1, 0.02), initial: bool = False):
    """An optimizer with a group per lr of ``lrs``; ``initial`` gives each group the ``initial_lr`` that a
    scheduler resumed with ``last_epoch`` reads."""
    groups = [{"params": [lib.zeros(2, requires_grad=True)], "lr": lib.tensor(lr) if "tensor" in kind else lr}
              for lr in lrs]
    if initial:
        for group in groups:
            group["initial_lr"] = group["lr"] * 2
    if kind.startswith("SGD"):
        return lib.optim.SGD(groups, lr=0.5, momentum=0.9)
    return getattr(lib.optim, kind)(groups, lr=0.5)


class Case:
    """A scheduler made by ``make(lr_scheduler, optimizer)``, stepped plainly, with ``METRICS`` (``"metrics"``,
    as tensors: ``"tensor-metrics"``, with epochs: ``"metrics-epochs"``) or with explicit epochs (``"epochs"``:
    1, 2, ...; ``"fractional"``: 0.5, 1.0, ...); ``"nudged"`` drives halve the lrs themselves a third of the
    way."""

    def __init__(self, make: Callable, kind: str = "SGD", drive: str = "plain", initial: bool = False,
                 lrs: tuple = (0.1, 0.02)):
        self.make, self.kind, self.drive, self.initial, self.lrs = make, kind, drive, initial, lrs

    def build(self, lib) -> tuple:
        opt = optimizer(lib, self.kind, self.lrs, self.initial)
        return opt, self.make(lib.optim.lr_scheduler, opt)

    def step(self, scheduler, index: int) -> None:
        if "nudged" in self.drive and index == STEPS // 3:  # a user's own change of the lr, kept by chained forms
            for group in scheduler.optimizer.param_groups:
                group["lr"] *= 0.5
        if self.drive in ("metrics", "metrics-nudged"):
            scheduler.step(METRICS[index])
        elif self.drive == "metrics-epochs":
            scheduler.step(METRICS[index], index + 1)
        elif self.drive == "tensor-metrics":
            scheduler.step(torch.tensor(METRICS[index]) if isinstance(scheduler, torch.optim.lr_scheduler.LRScheduler)
                           else ember.tensor(METRICS[index]))
        elif self.drive == "epochs":
            scheduler.step(index + 1)
        elif self.drive == "fractional":
            scheduler.step(FRACTIONAL_EPOCHS[index])
        else:
            scheduler.step()


def _sequential_two(s, o):
    return s.SequentialLR(o, [s.ConstantLR(o, factor=0.5, total_iters=3), s.ExponentialLR(o, 0.9)], milestones=[3])


def _sequential_three(s, o):
    return s.SequentialLR(o, [s.LinearLR(o, start_factor=0.2, total_iters=3), s.StepLR(o, 2, 0.5),
                              s.CosineAnnealingLR(o, T_max=6)], milestones=[3, 9])


def _one_cycle_resumed(s, o):
    """A second OneCycleLR resuming at step 5 where a first, which set each group's max_lr, min_lr and
    momentum bounds, left off."""
    s.OneCycleLR(o, max_lr=0.1, total_steps=2 * STEPS)
    return s.OneCycleLR(o, max_lr=0.1, total_steps=2 * STEPS, last_epoch=5)


def _subclassed(s, o):
    """A user's own scheduler: the public base class with a ``get_lr`` of its own."""
    class EveryFifth(s.LRScheduler):
        def get_lr(self):
            return [group["lr"] * (0.5 if self.last_epoch % 5 == 0 else 1.0) for group in self.optimizer.param_groups]

    return EveryFifth(o)


CASES = {
    "LRScheduler-subclass": Case(_subclassed),
    "StepLR": Case(lambda s, o: s.StepLR(o, step_size=3)),
    "StepLR-gamma": Case(lambda s, o: s.StepLR(o, step_size=1, gamma=0.9)),
    "StepLR-resumed": Case(lambda s, o: s.StepLR(o, step_size=4, gamma=0.5, last_epoch=5), initial=True),
    "StepLR-epochs": Case(lambda s, o: s.StepLR(o, step_size=3, gamma=0.5), drive="epochs"),
    "MultiStepLR": Case(lambda s, o: s.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3)),
    "MultiStepLR-epochs": Case(lambda s, o: s.MultiStepLR(o, milestones=[2, 5, 9], gamma=0.3), drive="epochs"),
    "ConstantLR": Case(lambda s, o: s.ConstantLR(o)),
    "ConstantLR-options": Case(lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=4)),
    "ConstantLR-resumed": Case(lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=8, last_epoch=3), initial=True),
    "LinearLR": Case(lambda s, o: s.LinearLR(o)),
    "LinearLR-options": Case(lambda s, o: s.LinearLR(o, start_factor=0.25, end_factor=0.75, total_iters=7)),
    "LinearLR-decreasing": Case(lambda s, o: s.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=10)),
    "LinearLR-epochs": Case(lambda s, o: s.LinearLR(o, start_factor=0.5, total_iters=6), drive="epochs"),
    "ExponentialLR": Case(lambda s, o: s.ExponentialLR(o, gamma=0.9)),
    "ExponentialLR-resumed": Case(lambda s, o: s.ExponentialLR(o, gamma=0.8, last_epoch=2), initial=True),
    "ExponentialLR-epochs": Case(lambda s, o: s.ExponentialLR(o, gamma=0.9), drive="epochs"),
    "PolynomialLR": Case(lambda s, o: s.PolynomialLR(o)),
    "PolynomialLR-options": Case(lambda s, o: s.PolynomialLR(o, total_iters=10, power=2.0)),
    "PolynomialLR-root": Case(lambda s, o: s.PolynomialLR(o, total_iters=20, power=0.5)),
    "PolynomialLR-epochs": Case(lambda s, o: s.PolynomialLR(o, total_iters=10, power=2.0), drive="epochs"),
    "CosineAnnealingLR": Case(lambda s, o: s.CosineAnnealingLR(o, T_max=7, eta_min=0.001)),
    "CosineAnnealingLR-long": Case(lambda s, o: s.CosineAnnealingLR(o, T_max=30)),
    "CosineAnnealingLR-resumed": Case(lambda s, o: s.CosineAnnealingLR(o, T_max=10, last_epoch=4), initial=True),
    "CosineAnnealingLR-epochs": Case(lambda s, o: s.CosineAnnealingLR(o, T_max=7, eta_min=0.001), drive="epochs"),
    "WarmRestarts": Case(lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=4)),
    "WarmRestarts-T_mult": Case(lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01)),
    "WarmRestarts-fractional": Case(lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2),
                                    drive="fractional"),
    "WarmRestarts-epochs": Case(lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=5), drive="epochs"),
    "WarmRestarts-resumed": Case(lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, last_epoch=3),
                                 initial=True),
    "CyclicLR": Case(lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4)),
    "CyclicLR-triangular2": Case(lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="triangular2")),
    "CyclicLR-exp_range": Case(lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="exp_range",
                                                       gamma=0.9)),
    "CyclicLR-lists": Case(lambda s, o: s.CyclicLR(o, base_lr=[0.01, 0.002], max_lr=[0.1, 0.05], step_size_up=3,
                                                   step_size_down=2, base_momentum=[0.8, 0.7],
                                                   max_momentum=[0.9, 0.95])),
    "CyclicLR-scale_fn": Case(lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=2, scale_fn=halving,
                                                      scale_mode="iterations")),
    "CyclicLR-no-momentum": Case(lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=2, cycle_momentum=False)),
    "CyclicLR-Adam": Case(lambda s, o: s.CyclicLR(o, 0.001, 0.01, step_size_up=3, base_momentum=0.85,
                                                  max_momentum=0.95), kind="Adam"),
    "CyclicLR-Adam-no-momentum": Case(lambda s, o: s.CyclicLR(o, 0.001, 0.01, step_size_up=3, cycle_momentum=False),
                                      kind="Adam"),
    "OneCycleLR": Case(lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=STEPS + 1)),
    "OneCycleLR-linear": Case(lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=STEPS + 1,
                                                        anneal_strategy="linear")),
    "OneCycleLR-three_phase": Case(lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=STEPS + 1, three_phase=True,
                                                             pct_start=0.2)),
    "OneCycleLR-epochs": Case(lambda s, o: s.OneCycleLR(o, max_lr=[0.1, 0.05], epochs=4, steps_per_epoch=8,
                                                        div_factor=10.0, final_div_factor=100.0)),
    "OneCycleLR-Adam": Case(lambda s, o: s.OneCycleLR(o, max_lr=0.01, total_steps=STEPS + 1, base_momentum=0.8,
                                                      max_momentum=0.9), kind="Adam"),
    "OneCycleLR-no-momentum": Case(lambda s, o: s.OneCycleLR(o, max_lr=0.01, total_steps=STEPS + 1,
                                                             cycle_momentum=False)),
    "LambdaLR": Case(lambda s, o: s.LambdaLR(o, decay)),
    "LambdaLR-per-group": Case(lambda s, o: s.LambdaLR(o, [decay, linear_decay])),
    "LambdaLR-object": Case(lambda s, o: s.LambdaLR(o, [Scaled(0.9), decay])),
    "MultiplicativeLR-object": Case(lambda s, o: s.MultiplicativeLR(o, Scaled(0.99))),
    "CyclicLR-scale_fn-object": Case(lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=2, scale_fn=Scaled(0.9))),
    "StepLR-tensor-lr": Case(lambda s, o: s.StepLR(o, step_size=3), kind="SGD-tensor-lr"),
    "CyclicLR-tensor-lr": Case(lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=3), kind="SGD-tensor-lr"),
    "OneCycleLR-tensor-lr": Case(lambda s, o: s.OneCycleLR(o, 0.1, total_steps=STEPS + 1), kind="SGD-tensor-lr"),
    "ReduceLROnPlateau-tensor-lr": Case(lambda s, o: s.ReduceLROnPlateau(o, patience=0), kind="SGD-tensor-lr",
                                        drive="metrics"),
    "LambdaLR-epochs": Case(lambda s, o: s.LambdaLR(o, decay), drive="epochs"),
    "MultiplicativeLR": Case(lambda s, o: s.MultiplicativeLR(o, lambda epoch: 0.9)),
    "MultiplicativeLR-per-group": Case(lambda s, o: s.MultiplicativeLR(o, [halving, lambda epoch: 0.95])),
    "SequentialLR": Case(_sequential_two),
    "SequentialLR-three": Case(_sequential_three),
    "ChainedScheduler": Case(lambda s, o: s.ChainedScheduler([s.ConstantLR(o, factor=0.5, total_iters=4),
                                                              s.ExponentialLR(o, gamma=0.9)])),
    "ChainedScheduler-optimizer": Case(lambda s, o: s.ChainedScheduler([s.StepLR(o, 3, 0.5),
                                                                        s.MultiplicativeLR(o, halving)], optimizer=o)),
    "ReduceLROnPlateau": Case(lambda s, o: s.ReduceLROnPlateau(o, patience=2), drive="metrics"),
    "ReduceLROnPlateau-max": Case(lambda s, o: s.ReduceLROnPlateau(o, mode="max", patience=1), drive="metrics"),
    "ReduceLROnPlateau-abs": Case(lambda s, o: s.ReduceLROnPlateau(o, patience=1, threshold=0.05,
                                                                   threshold_mode="abs"), drive="metrics"),
    "ReduceLROnPlateau-max-abs": Case(lambda s, o: s.ReduceLROnPlateau(o, mode="max", threshold_mode="abs",
                                                                       patience=0), drive="metrics"),
    "ReduceLROnPlateau-cooldown": Case(lambda s, o: s.ReduceLROnPlateau(o, factor=0.5, patience=1, cooldown=2),
                                       drive="metrics"),
    "ReduceLROnPlateau-min_lr": Case(lambda s, o: s.ReduceLROnPlateau(o, factor=0.2, patience=0,
                                                                      min_lr=[0.01, 0.005]), drive="metrics"),
    "ReduceLROnPlateau-eps": Case(lambda s, o: s.ReduceLROnPlateau(o, factor=0.9, patience=0, eps=0.005),
                                  drive="metrics"),
    "ReduceLROnPlateau-epochs": Case(lambda s, o: s.ReduceLROnPlateau(o, patience=1), drive="metrics-epochs"),
    "ReduceLROnPlateau-tensor-metrics": Case(lambda s, o: s.ReduceLROnPlateau(o, patience=1), drive="tensor-metrics"),
    "ReduceLROnPlateau-nudged": Case(lambda s, o: s.ReduceLROnPlateau(o, patience=1), drive="metrics-nudged"),
    "StepLR-nudged": Case(lambda s, o: s.StepLR(o, step_size=3, gamma=0.5), drive="nudged"),
    "LinearLR-nudged": Case(lambda s, o: s.LinearLR(o, start_factor=0.5, total_iters=20), drive="nudged"),
    "CosineAnnealingLR-nudged": Case(lambda s, o: s.CosineAnnealingLR(o, T_max=7), drive="nudged"),
    "PolynomialLR-nudged": Case(lambda s, o: s.PolynomialLR(o, total_iters=20), drive="nudged"),
    "CyclicLR-nudged": Case(lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=4), drive="nudged"),
    "WarmRestarts-nudged": Case(lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=4), drive="nudged"),
    "ConstantLR-epochs": Case(lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=4), drive="epochs"),
    "MultiplicativeLR-epochs": Case(lambda s, o: s.MultiplicativeLR(o, lambda epoch: 0.9), drive="epochs"),
    "CyclicLR-epochs": Case(lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=4), drive="epochs"),
    "OneCycleLR-epochs-driven": Case(lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=STEPS + 1),
                                     drive="epochs"),
    "CyclicLR-resumed": Case(lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=4, last_epoch=5), initial=True),
    "OneCycleLR-resumed": Case(_one_cycle_resumed),
    "LinearLR-resumed": Case(lambda s, o: s.LinearLR(o, start_factor=0.5, total_iters=10, last_epoch=4),
                             initial=True),
    "PolynomialLR-resumed": Case(lambda s, o: s.PolynomialLR(o, total_iters=10, last_epoch=4), initial=True),
    "MultiStepLR-resumed": Case(lambda s, o: s.MultiStepLR(o, [3, 8], last_epoch=4), initial=True),
    "LambdaLR-resumed": Case(lambda s, o: s.LambdaLR(o, decay, last_epoch=4), initial=True),
    "CosineAnnealingLR-short": Case(lambda s, o: s.CosineAnnealingLR(o, T_max=1, eta_min=0.05)),
    "ExponentialLR-one": Case(lambda s, o: s.ExponentialLR(o, gamma=1.0)),
    "LinearLR-zero-iters": Case(lambda s, o: s.LinearLR(o, start_factor=0.5, total_iters=0)),
    "ReduceLROnPlateau-one-group": Case(lambda s, o: s.ReduceLROnPlateau(o, patience=0, min_lr=0.02),
                                        drive="metrics", lrs=(0.1,)),
}


def _observed(opt, scheduler) -> list:
    """What the scheduler has set: its last lrs, each group's lr and (where there is one) momentum or beta1."""
    seen = [list(scheduler.get_last_lr())]
    for group in opt.param_groups:
        seen.append(group["lr"])
        seen.append(group["betas"][0] if "betas" in group else group.get("momentum"))
    return _plain(seen)  # (a tensor lr, which schedulers fill in place, as its value now)


def _plain(value: Any) -> Any:
    """A state dict value comparable across the libraries: tensors as lists, callables as their names."""
    if isinstance(value, (torch.Tensor, ember.Tensor)):
        return value.tolist()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if callable(value):
        return getattr(value, "__name__", type(value).__name__)
    return value


def _same(expected: Any, got: Any, where: str = "") -> str | None:
    """Where two plain values differ (numbers to 1e-12 relative), or None."""
    if isinstance(expected, dict) and isinstance(got, dict):
        if list(expected) != list(got):
            return f"{where}: keys {list(expected)} (torch) against {list(got)} (ember)"
        return next((found for key in expected if (found := _same(expected[key], got[key], f"{where}.{key}"))),
                    None)
    if isinstance(expected, list) and isinstance(got, list):
        if len(expected) != len(got):
            return f"{where}: {expected} (torch) against {got} (ember)"
        return next((found for i, (e, g) in enumerate(zip(expected, got)) if (found := _same(e, g, f"{where}[{i}]"))),
                    None)
    if isinstance(expected, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        if math.isclose(expected, got, rel_tol=1e-12, abs_tol=1e-15) or expected == got:
            return None
    elif type(expected) is type(got) and expected == got:
        return None
    return f"{where}: {expected!r} (torch) against {got!r} (ember)"


def _run(lib, case: Case, reload_at: int | None = None) -> tuple:
    """The observations after construction and after each step, the state dicts after each step, and the
    warnings given; with ``reload_at``, the scheduler and optimizer are rebuilt from their state dicts there."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt, scheduler = case.build(lib)
        seen, states = [_observed(opt, scheduler)], []
        for index in range(STEPS):
            if index == reload_at:
                saved, optimizer_saved = scheduler.state_dict(), opt.state_dict()
                opt, scheduler = case.build(lib)
                opt.load_state_dict(optimizer_saved)
                scheduler.load_state_dict(saved)
            opt.step()
            case.step(scheduler, index)
            seen.append(_observed(opt, scheduler))
            states.append(_plain(scheduler.state_dict()))
    return seen, states, [(w.category.__name__, str(w.message)) for w in caught]


@pytest.mark.parametrize("name", list(CASES))
def test_schedule_state_dict_and_warnings_match_torch(name):
    case = CASES[name]
    expected, expected_states, expected_warnings = _run(torch, case)
    got, got_states, got_warnings = _run(ember, case)
    assert _same(_plain(expected), _plain(got), "schedule") is None, _same(_plain(expected), _plain(got), "schedule")
    found = _same(expected_states, got_states, "state_dict")
    assert found is None, found
    assert [category for category, _ in got_warnings] == [category for category, _ in expected_warnings], \
        (expected_warnings, got_warnings)
    for (_, theirs), (_, ours) in zip(expected_warnings, got_warnings):
        assert theirs.split(".")[0].split("`")[0][:30].lower() in ours.lower() or theirs == ours, (theirs, ours)


@pytest.mark.parametrize("name", list(CASES))
def test_a_state_dict_round_trip_continues_identically(name):
    case = CASES[name]
    expected = _run(torch, case)[0]
    got = _run(ember, case, reload_at=STEPS // 2)[0]
    found = _same(_plain(expected), _plain(got), "schedule")
    assert found is None, found


def test_get_lr_outside_step_warns_as_torch():
    for lib in (torch, ember):
        scheduler = Case(lambda s, o: s.StepLR(o, 2)).build(lib)[1]
        with pytest.warns(UserWarning, match=r"To get the last learning rate computed by the scheduler, please use "
                                             r"`get_last_lr\(\)`"):
            scheduler.get_lr()


def test_stepping_the_scheduler_before_the_optimizer_warns_as_torch():
    for lib in (torch, ember):
        opt, scheduler = Case(lambda s, o: s.StepLR(o, 2)).build(lib)
        with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
            scheduler.step()


BAD_ARGUMENTS = {
    "not-an-optimizer": lambda s, o: s.StepLR("optimizer", 3),
    "resumed-without-initial_lr": lambda s, o: s.StepLR(o, 3, last_epoch=4),
    "lambdas-count": lambda s, o: s.LambdaLR(o, [decay]),
    "multiplicative-lambdas-count": lambda s, o: s.MultiplicativeLR(o, [decay, decay, decay]),
    "ConstantLR-factor": lambda s, o: s.ConstantLR(o, factor=1.5),
    "ConstantLR-negative-factor": lambda s, o: s.ConstantLR(o, factor=-0.1),
    "LinearLR-start": lambda s, o: s.LinearLR(o, start_factor=0),
    "LinearLR-start-above-one": lambda s, o: s.LinearLR(o, start_factor=1.5),
    "LinearLR-end": lambda s, o: s.LinearLR(o, end_factor=1.5),
    "WarmRestarts-T_0": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=0),
    "WarmRestarts-T_0-float": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2.5),
    "WarmRestarts-T_mult": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    "WarmRestarts-T_mult-float": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5),
    "WarmRestarts-eta_min": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"),
    "WarmRestarts-negative-epoch": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    "CyclicLR-mode": lambda s, o: s.CyclicLR(o, 0.01, 0.1, mode="square"),
    "CyclicLR-lists": lambda s, o: s.CyclicLR(o, [0.01], 0.1),
    "CyclicLR-no-momentum": lambda s, o: s.CyclicLR(s_adagrad(o), 0.01, 0.1),
    "OneCycleLR-no-length": lambda s, o: s.OneCycleLR(o, max_lr=0.1),
    "OneCycleLR-total_steps": lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=0),
    "OneCycleLR-epochs": lambda s, o: s.OneCycleLR(o, max_lr=0.1, epochs=0, steps_per_epoch=3),
    "OneCycleLR-steps_per_epoch": lambda s, o: s.OneCycleLR(o, max_lr=0.1, epochs=3, steps_per_epoch=-1),
    "OneCycleLR-pct_start": lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=10, pct_start=1.5),
    "OneCycleLR-anneal": lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=10, anneal_strategy="square"),
    "OneCycleLR-max_lr-list": lambda s, o: s.OneCycleLR(o, max_lr=[0.1], total_steps=10),
    "OneCycleLR-past-the-end": lambda s, o: _steps(s.OneCycleLR(o, max_lr=0.1, total_steps=2), 3),
    "OneCycleLR-no-momentum": lambda s, o: s.OneCycleLR(s_adagrad(o), max_lr=0.1, total_steps=10),
    "ReduceLROnPlateau-factor": lambda s, o: s.ReduceLROnPlateau(o, factor=1.0),
    "ReduceLROnPlateau-mode": lambda s, o: s.ReduceLROnPlateau(o, mode="middle"),
    "ReduceLROnPlateau-threshold_mode": lambda s, o: s.ReduceLROnPlateau(o, threshold_mode="relative"),
    "ReduceLROnPlateau-min_lr": lambda s, o: s.ReduceLROnPlateau(o, min_lr=[0.1, 0.2, 0.3]),
    "ReduceLROnPlateau-not-an-optimizer": lambda s, o: s.ReduceLROnPlateau(None),
    "SequentialLR-milestones": lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2), s.StepLR(o, 3)], milestones=[1, 2]),
    "SequentialLR-empty": lambda s, o: s.SequentialLR(o, [], milestones=[]),
    "SequentialLR-other-optimizer": lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2), s.StepLR(s_adagrad(o), 3)],
                                                                milestones=[1]),
    "SequentialLR-plateau": lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2), s.ReduceLROnPlateau(o)], milestones=[1]),
    "ChainedScheduler-other-optimizer": lambda s, o: s.ChainedScheduler([s.StepLR(o, 2),
                                                                         s.StepLR(s_adagrad(o), 3)]),
    "ChainedScheduler-empty": lambda s, o: s.ChainedScheduler([]),
    "ChainedScheduler-epoch": lambda s, o: s.ChainedScheduler([s.StepLR(o, 3), s.ExponentialLR(o, 0.9)]).step(1),
    "SequentialLR-epoch": lambda s, o: _sequential_two(s, o).step(1),
    "OneCycleLR-resumed-unset": lambda s, o: s.OneCycleLR(o, max_lr=0.1, total_steps=10, last_epoch=4),
    "CyclicLR-resumed-unset": lambda s, o: s.CyclicLR(o, 0.01, 0.1, last_epoch=4),
    "ReduceLROnPlateau-no-metrics": lambda s, o: s.ReduceLROnPlateau(o).step(),
    "LambdaLR-not-callable": lambda s, o: s.LambdaLR(o, 0.5),
}


def _steps(scheduler, count: int) -> None:
    for _ in range(count):
        scheduler.step()


def s_adagrad(opt):
    """An optimizer (of ``opt``'s library) without momentum, for the schedulers that cycle momentum."""
    lib = torch if isinstance(opt, torch.optim.Optimizer) else ember
    return lib.optim.Adagrad([lib.zeros(2, requires_grad=True)], lr=0.1)


def _raised(lib, make: Callable) -> Exception | None:
    opt = optimizer(lib)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make(lib.optim.lr_scheduler, opt)
    except Exception as error:  # noqa: BLE001 - the exception raised is what is compared
        return error
    return None


@pytest.mark.parametrize("name", list(BAD_ARGUMENTS))
def test_bad_arguments_raise_torchs_exception_type(name):
    """torch's exception type, and a message that opens as torch's (ember's may go on to say how to fix it)."""
    expected = _raised(torch, BAD_ARGUMENTS[name])
    assert expected is not None, "torch takes these arguments: the case is no bad-argument case"
    got = _raised(ember, BAD_ARGUMENTS[name])
    assert got is not None and type(got).__name__ == type(expected).__name__, (expected, got)
    opening = str(expected)[:40].replace("torch", "ember")
    assert str(got).startswith(opening), (str(expected), str(got))


@pytest.mark.parametrize("name", ["StepLR", "CyclicLR-Adam", "OneCycleLR", "ReduceLROnPlateau", "SequentialLR",
                                  "ChainedScheduler", "LambdaLR-object", "WarmRestarts-T_mult"])
@pytest.mark.parametrize("copy_of", ["deepcopy", "pickle"])
def test_a_copied_scheduler_steps_its_copied_optimizer_as_torchs(name, copy_of):
    """A deep copy or a pickled copy of a scheduler (and with it its optimizer) goes on as torch's does, with
    the same warnings."""
    import copy
    import pickle

    case = CASES[name]
    found = []
    for lib in (torch, ember):
        scheduler = case.build(lib)[1]
        copied = copy.deepcopy(scheduler) if copy_of == "deepcopy" else pickle.loads(pickle.dumps(scheduler))
        seen = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for index in range(4):
                copied.optimizer.step()
                case.step(copied, index)
                seen.append(_observed(copied.optimizer, copied))
        found.append(seen + [[str(warning.message)[:60] for warning in caught]])
    difference = _same(*found, "schedule")
    assert difference is None, difference
