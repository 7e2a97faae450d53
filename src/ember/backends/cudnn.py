"""``ember.backends.cudnn``: there is no cuDNN; ``benchmark``, ``deterministic`` and the rest are settable flags.

>>> import ember
>>> ember.backends.cudnn.deterministic = True
>>> ember.backends.cudnn.deterministic, ember.backends.cudnn.version()
(True, None)
>>> ember.backends.cudnn.deterministic = False
"""
enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version() -> None:
    """None: no cuDNN library is loaded (torch's answer without one)."""
    return None
