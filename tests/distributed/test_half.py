"""The float16 compression of gradient buckets rounds bit for bit as torch's ``.half()``."""
import numpy as np
import torch
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays

from ember.distributed.algorithms.ddp_comm_hooks._half import to_half

float32s = st.floats(width=32, allow_nan=True, allow_infinity=True)
small = st.floats(-2.0 ** -13, 2.0 ** -13, width=32)  # around float16's subnormals, where rounding is subtle


@given(arrays(np.float32, st.integers(0, 40), elements=st.one_of(float32s, small)))
def test_to_half_is_torchs_half(a):
    expected = torch.from_numpy(a.copy()).half().numpy()
    assert np.array_equal(to_half(a).view(np.uint16), expected.view(np.uint16))


def test_ties_round_to_even_among_subnormals():
    steps = np.arange(0, 2049, dtype=np.float32) / 2 * np.float32(2.0 ** -24)  # every midpoint
    values = np.concatenate([steps, -steps])
    expected = torch.from_numpy(values).half().numpy()
    assert np.array_equal(to_half(values).view(np.uint16), expected.view(np.uint16))
