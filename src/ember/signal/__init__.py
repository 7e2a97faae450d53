"""``ember.signal``: signal processing; ``ember.signal.windows`` holds the window functions.

>>> ember.signal.windows.hann(4, sym=False)
tensor([0.0000, 0.5000, 1.0000, 0.5000])
"""
from ember.signal import windows

__all__ = ["windows"]
