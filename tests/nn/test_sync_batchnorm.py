"""SyncBatchNorm in one process (the multi-rank checks run under mpiexec: tests/distributed/test_mpi.py)."""
import numpy as np
import pytest

import ember
import ember.nn as enn

torch = pytest.importorskip("torch")


def _model(nn):
    return nn.Sequential(nn.Conv2d(1, 3, 1), nn.BatchNorm2d(3), nn.Sequential(nn.BatchNorm1d(4, affine=False)))


def test_convert_sync_batchnorm_as_torch():
    ours, theirs = _model(enn), _model(torch.nn)
    ours[1].eval()
    theirs[1].eval()
    weight, running_mean = ours[1].weight, ours[1].running_mean
    converted = enn.SyncBatchNorm.convert_sync_batchnorm(ours)
    assert repr(converted) == repr(torch.nn.SyncBatchNorm.convert_sync_batchnorm(theirs))
    assert converted[1].weight is weight and converted[1].running_mean is running_mean
    assert not converted[1].training and converted[2][0].training
    assert isinstance(enn.SyncBatchNorm.convert_sync_batchnorm(enn.BatchNorm1d(2)), enn.SyncBatchNorm)


def test_without_a_process_group_it_is_batch_norm():
    x = ember.randn(6, 3, 4)
    synced, plain = enn.SyncBatchNorm(3), enn.BatchNorm1d(3)
    np.testing.assert_allclose(synced(x).detach().numpy(), plain(x).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(synced.running_var.numpy(), plain.running_var.numpy(), rtol=1e-6)
    synced.eval()
    plain.eval()
    np.testing.assert_allclose(synced(x).detach().numpy(), plain(x).detach().numpy(), rtol=1e-6)


def test_errors_as_torch():
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        enn.SyncBatchNorm(3)(ember.randn(3))
    with pytest.raises(ValueError, match="number of input channels should be non-zero"):
        enn.SyncBatchNorm(0)(ember.randn(2, 0))
    assert repr(enn.SyncBatchNorm(3, momentum=None)) == repr(torch.nn.SyncBatchNorm(3, momentum=None))
