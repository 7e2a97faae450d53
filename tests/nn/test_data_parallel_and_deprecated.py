"""DataParallel without accelerators, NLLLoss2d and Container: torch's behaviour on the CPU."""
import warnings

import numpy as np
import pytest
import torch

import ember


def test_data_parallel_runs_the_module_as_torch_does_without_accelerators():
    ours, theirs = ember.nn.DataParallel(ember.nn.Linear(2, 3)), torch.nn.DataParallel(torch.nn.Linear(2, 3))
    assert repr(ours) == repr(theirs)
    assert ours.device_ids == theirs.device_ids == []
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32)
    # (the weights are drawn unseeded: an output near 0 that cancels may differ from torch's in its last bit)
    np.testing.assert_allclose(ours(ember.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-6, atol=1e-7)
    out = ember.nn.parallel.data_parallel(ours.module, ember.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-7)
    assert ember.nn.parallel.DataParallel is ember.nn.DataParallel


def test_deprecated_layers_warn_and_work_as_torch():
    for name, args in (("NLLLoss2d", {}), ("Container", {"a": "Linear"})):
        made = {}
        for lib in (torch, ember):
            kwargs = {k: getattr(lib.nn, v)(1, 1) for k, v in args.items()}
            with pytest.warns(FutureWarning) as caught:
                made[lib] = getattr(lib.nn, name)(**kwargs)
            assert caught[0].filename == __file__
            made[lib, "message"] = str(caught[0].message)
        assert made[ember, "message"] == made[torch, "message"]
        assert repr(made[ember]) == repr(made[torch])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        logits = np.random.default_rng(1).standard_normal((2, 3, 4, 4))
        target = np.random.default_rng(2).integers(0, 3, (2, 4, 4))
        ours = ember.nn.NLLLoss2d()(ember.tensor(logits).log_softmax(1), ember.tensor(target))
        theirs = torch.nn.NLLLoss2d()(torch.tensor(logits).log_softmax(1), torch.tensor(target))
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-12)
