"""Mismatches with torch.nn.utils found by a hunt over the training utilities."""
import warnings

import numpy as np
import pytest
import torch

import ember


def caught_warnings(program):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program()
    return [str(w.message) for w in caught]


def test_clip_grad_norm_warns_about_an_empty_generator():
    # a generator already drained (say by an earlier clip of the same model.parameters()) clips nothing
    for lib in (torch, ember):
        messages = caught_warnings(lambda: lib.nn.utils.clip_grad_norm_((p for p in []), 1.0))
        assert messages == ["`parameters` is an empty generator, no gradient clipping will occur."]
        assert caught_warnings(lambda: lib.nn.utils.clip_grad_norm_([], 1.0)) == []


class Deconv(torch.nn.ConvTranspose2d):
    pass


class EmberDeconv(ember.nn.ConvTranspose2d):
    pass


@pytest.mark.parametrize("which", ["hooks", "parametrization"])
def test_spectral_norm_of_a_transposed_convolution_subclass_normalises_over_dim_1(which):
    # the default dim is 1 for every ConvTranspose1d/2d/3d, subclasses included (the class, not its name)
    def estimate(lib):
        lib.manual_seed(0)
        module = (Deconv if lib is torch else EmberDeconv)(2, 3, 3)
        lib.manual_seed(1)
        if which == "hooks":
            module = lib.nn.utils.spectral_norm(module)
            return module.weight_u.numpy(), module.weight_v.numpy()
        module = lib.nn.utils.parametrizations.spectral_norm(module)
        found = module.parametrizations.weight[0]
        return found._u.numpy(), found._v.numpy()

    ours, theirs = estimate(ember), estimate(torch)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["weight_norm", "spectral_norm"])
def test_norms_refuse_a_lazy_module_before_changing_it(name):
    for lib in (torch, ember):
        module = lib.nn.LazyLinear(3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            with pytest.raises(ValueError, match="can't have uninitialized parameters"):
                getattr(lib.nn.utils, name)(module)
        assert sorted(module._parameters) == ["bias", "weight"]  # the module is left as it was
