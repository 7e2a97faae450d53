"""Logging for TensorBoard: ``SummaryWriter`` writes scalars, histograms, images, text, hyperparameters,
precision-recall curves, embeddings and meshes into event files that TensorBoard reads.

It builds on the ``tensorboard`` package (the ``tensorboard`` extra: ``pip install 'ember[tensorboard]'``):
its protocol buffers and its event-file writer, so the files are TensorBoard's own. Images also need Pillow,
figures matplotlib.

>>> import tempfile, ember
>>> from ember.utils.tensorboard import SummaryWriter
>>> with SummaryWriter(tempfile.mkdtemp()) as writer:
...     for step in range(3):
...         writer.add_scalar("loss", ember.tensor(1.0 / (step + 1)), step)
"""
from __future__ import annotations

try:
    import tensorboard  # noqa: F401
except ImportError as missing:
    raise ImportError(
        "ember.utils.tensorboard needs the tensorboard package, which is not installed; install it with "
        "pip install 'ember[tensorboard]' (or pip install tensorboard)"
    ) from missing

from ember.utils.tensorboard.writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter"]
