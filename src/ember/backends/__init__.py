"""``ember.backends``: the switches programs set for torch's backends, kept and reported honestly.

ember computes with NumPy on the CPU, so cuDNN, MPS and CUDA are never available; their flags are
plain settable values, so a program that sets them runs unchanged (they change nothing in ember).

>>> import ember
>>> ember.backends.cudnn.benchmark = True
>>> ember.backends.cudnn.benchmark, ember.backends.cudnn.is_available(), ember.backends.mps.is_available()
(True, False, False)
>>> ember.backends.cudnn.benchmark = False
"""
from ember.backends import cpu, cuda, cudnn, mha, mkl, mkldnn, mps, nnpack, openmp, opt_einsum  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mha", "mkl", "mkldnn", "mps", "nnpack", "openmp", "opt_einsum"]
