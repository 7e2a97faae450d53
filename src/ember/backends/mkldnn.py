"""``ember.backends.mkldnn``: oneDNN is not used (ember computes with NumPy); ``enabled`` is a settable flag."""
enabled = True


def is_available() -> bool:
    return False


def is_acl_available() -> bool:
    """False: ember is built with neither oneDNN nor Arm's Compute Library."""
    return False
