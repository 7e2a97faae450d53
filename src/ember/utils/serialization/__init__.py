"""The settings of ``ember.save`` and ``ember.load``, as ``torch.utils.serialization``: see ``config``."""
from ember.utils.serialization import config

__all__ = ["config"]
