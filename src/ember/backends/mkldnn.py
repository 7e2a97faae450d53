"""``ember.backends.mkldnn``: oneDNN is not used (ember computes with NumPy); ``enabled`` is a settable flag."""
enabled = True


def is_available() -> bool:
    return False
