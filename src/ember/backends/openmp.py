"""``ember.backends.openmp``: ember runs no OpenMP code of its own (NumPy's BLAS may, out of ember's sight)."""


def is_available() -> bool:
    return False
