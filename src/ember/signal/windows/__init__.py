"""Window functions, as ``torch.signal.windows`` (SciPy's ``scipy.signal.windows``): ``sym=False`` gives the
periodic window, for spectral analysis.

>>> ember.signal.windows.bartlett(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""
from ember.signal.windows.windows import (
    bartlett, blackman, cosine, exponential, gaussian, general_cosine, general_hamming, hamming, hann, kaiser,
    nuttall,
)

__all__ = [
    "bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming", "hamming",
    "hann", "kaiser", "nuttall",
]
