"""Views, strides and memory layout against torch: cases a bug hunt found where ember differed."""
import math

import pytest

from twins import both, both_raise


def layout(t):
    """What a test of layout compares: the values, the shape and the strides."""
    return t, tuple(t.shape), t.stride(), t.is_contiguous()


# ----------------------------------------------------------------- resize_


@pytest.mark.parametrize("fmt, shape", [
    ("channels_last", (2, 3, 2, 2)), ("channels_last_3d", (2, 3, 2, 2, 1)), ("contiguous_format", (3, 8)),
])
@pytest.mark.parametrize("start", [(24,), (30,), (2, 3, 2, 2), (8, 3)])
def test_resize_lays_the_tensor_out_in_the_memory_format_asked(fmt, shape, start):
    def run(lib):
        x = lib.arange(float(math.prod(start))).reshape(start)
        if start == (8, 3):
            x = x.reshape(3, 8).t()
        x.resize_(shape, memory_format=getattr(lib, fmt))
        return layout(x) + (x._version,)
    both(run)


@pytest.mark.parametrize("fmt", ["channels_last", "contiguous_format", "preserve_format", None])
@pytest.mark.parametrize("template_format", ["channels_last", "contiguous_format"])
def test_resize_as_takes_a_memory_format(fmt, template_format):
    def run(lib):
        x = lib.arange(24.)
        template = lib.zeros(2, 3, 2, 2).contiguous(memory_format=getattr(lib, template_format))
        x.resize_as_(template, memory_format=None if fmt is None else getattr(lib, fmt))
        return layout(x)
    both(run)


@pytest.mark.parametrize("shape, fmt, fragment", [
    ((2, 3, 4), "channels_last", "rank 4"), ((2, 3, 4, 1), "channels_last_3d", "rank 5"),
    ((3, 4), "preserve_format", "(?i)preserve"),
])
def test_resize_refuses_a_memory_format_that_does_not_fit(shape, fmt, fragment):
    both_raise(lambda lib: lib.arange(24.).resize_(shape, memory_format=getattr(lib, fmt)), RuntimeError, fragment)
