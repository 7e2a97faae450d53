"""ember.backends: settable flags and honest availability, as torch's on a CPU-only machine."""
import pytest

from twins import both


@pytest.mark.parametrize("flag", ["benchmark", "deterministic", "enabled", "allow_tf32"])
def test_cudnn_flags_are_settable(flag):
    def program(lib):
        before = getattr(lib.backends.cudnn, flag)
        setattr(lib.backends.cudnn, flag, not before)
        after = getattr(lib.backends.cudnn, flag)
        setattr(lib.backends.cudnn, flag, before)
        return before, after

    both(program)


def test_availability():
    both(lambda lib: (lib.backends.cudnn.is_available(), lib.backends.cudnn.version(), lib.backends.mps.is_available(),
                      lib.backends.mps.is_built(), lib.backends.cuda.is_built(), lib.backends.cuda.matmul.allow_tf32))


def test_matmul_tf32_flag_is_settable():
    def program(lib):
        lib.backends.cuda.matmul.allow_tf32 = True
        seen = lib.backends.cuda.matmul.allow_tf32
        lib.backends.cuda.matmul.allow_tf32 = False
        return seen

    both(program)
