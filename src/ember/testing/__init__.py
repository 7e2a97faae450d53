"""``ember.testing``: :func:`assert_close` and :func:`make_tensor`, as torch's.

>>> import ember
>>> ember.testing.assert_close(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0000001]))
>>> ember.testing.make_tensor(2, 3, dtype=ember.int64, device="cpu", low=0, high=5).shape
ember.Size([2, 3])
"""
from ember.testing._comparison import assert_allclose, assert_close
from ember.testing._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
