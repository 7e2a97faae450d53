"""ember.backends.nnpack and ember.backends.mkl.verbose against torch's."""
import pytest
import torch

import ember


def _nnpack_state(lib):
    return torch._C._get_nnpack_enabled() if lib is torch else ember.backends.nnpack._on


@pytest.mark.parametrize("lib", [torch, ember], ids=["torch", "ember"])
def test_nnpack_flags_set_and_restore(lib):
    assert _nnpack_state(lib) is True
    with lib.backends.nnpack.flags():
        assert _nnpack_state(lib) is False
        with lib.backends.nnpack.flags(enabled=True):
            assert _nnpack_state(lib) is True
        assert _nnpack_state(lib) is False
    assert _nnpack_state(lib) is True
    assert lib.backends.nnpack.set_flags(False) == (True,)
    assert lib.backends.nnpack.set_flags(True) == (False,)


def test_nnpack_names_as_torch():
    assert ember.backends.nnpack.__all__ == torch.backends.nnpack.__all__
    assert ember.backends.nnpack.is_available() is False  # ember's convolutions never run on NNPACK


def test_mkl_verbose_levels_as_torch():
    assert (ember.backends.mkl.VERBOSE_OFF, ember.backends.mkl.VERBOSE_ON) == \
        (torch.backends.mkl.VERBOSE_OFF, torch.backends.mkl.VERBOSE_ON)
    for lib in (torch, ember):
        with lib.backends.mkl.verbose(lib.backends.mkl.VERBOSE_OFF) as entered:
            assert entered is None


def test_mkl_verbose_on_runs_with_mkl_and_raises_without():
    if ember.backends.mkl.is_available() and ember._blas.mkl_wanted():
        with ember.backends.mkl.verbose(ember.backends.mkl.VERBOSE_ON):
            ember.ones(512, 512) @ ember.ones(512, 512)
    else:
        with pytest.raises(AssertionError, match="mkl extra"):
            with ember.backends.mkl.verbose(ember.backends.mkl.VERBOSE_ON):
                pass
