"""Mismatches with torch found by a hunt over the training utilities (schedulers, weight averaging)."""
import numpy as np
import pytest
import torch

import ember


def test_old_scheduler_name_is_a_subclass_not_an_alias():
    # torch's built-in schedulers are not instances of _LRScheduler; code telling old from new relies on it
    for lib in (torch, ember):
        schedulers = lib.optim.lr_scheduler
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)
        assert not isinstance(schedulers.StepLR(opt, 2), schedulers._LRScheduler)
        assert issubclass(schedulers._LRScheduler, schedulers.LRScheduler)
        assert schedulers._LRScheduler.__name__ == "_LRScheduler"


def instance_norm_statistics_after_update_bn(lib):
    """An InstanceNorm tracking running statistics, run twice in training, then passed to update_bn."""
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.InstanceNorm1d(3, track_running_stats=True), lib.nn.BatchNorm1d(3))
    rng = np.random.default_rng(0)
    batches = [lib.tensor(rng.normal(size=(4, 3, 5))) for _ in range(3)]
    model.double().train()
    model(batches[0])
    model(batches[1])
    lib.optim.swa_utils.update_bn(batches, model)
    return [model[0].running_mean.numpy(), model[0].running_var.numpy(), model[1].running_mean.numpy()]


def test_update_bn_leaves_instance_norm_statistics_alone():
    # only batch norm layers are reset and recomputed: an InstanceNorm keeps what training gave it
    ours, theirs = instance_norm_statistics_after_update_bn(ember), instance_norm_statistics_after_update_bn(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    assert not np.allclose(ours[0], 0.0)


def test_averaged_model_refuses_a_model_with_other_buffers():
    for lib in (torch, ember):
        average = lib.optim.swa_utils.AveragedModel(lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2)))
        other = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2), lib.nn.BatchNorm1d(2))
        with pytest.raises(ValueError):
            average.update_parameters(other)


@pytest.mark.parametrize("make", [lambda su: su.get_swa_multi_avg_fn(), lambda su: su.get_ema_multi_avg_fn(0.9)])
def test_multi_tensor_averages_are_rounded_as_torchs_foreach_lerp(make):
    # one rounding of start + weight * (end - start), not a multiply then an add
    rng = np.random.default_rng(0)
    starts = [rng.normal(size=(30, 4)).astype(np.float32), rng.normal(size=50).astype(np.float32)]
    ends = [rng.normal(size=(30, 4)).astype(np.float32), rng.normal(size=50).astype(np.float32)]

    def averaged(lib):
        averages = [lib.tensor(a) for a in starts]
        make(lib.optim.swa_utils)(averages, [lib.tensor(e) for e in ends], lib.tensor(2))
        return [a.numpy() for a in averages]

    for ours, theirs in zip(averaged(ember), averaged(torch)):
        np.testing.assert_array_equal(ours, theirs)

