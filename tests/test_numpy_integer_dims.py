"""A dim given as a NumPy integer (from an array's shape or an argmax) is taken, as torch takes it."""
import numpy as np
import pytest

from twins import both

CALLS = {
    "sum": lambda lib, x: x.sum(np.int64(1)),
    "sum_of_dims": lambda lib, x: x.sum((np.int64(0), np.int32(1))),
    "mean": lambda lib, x: x.mean(dim=np.int32(0)),
    "std": lambda lib, x: x.std(np.int64(1)),
    "prod": lambda lib, x: x.prod(np.int64(1)),
    "logsumexp": lambda lib, x: x.logsumexp(np.int64(1)),
    "unsqueeze": lambda lib, x: x.unsqueeze(np.int64(0)),
    "softmax": lambda lib, x: lib.nn.functional.softmax(x, np.int64(1)),
    "log_softmax": lambda lib, x: x.log_softmax(np.int64(-1)),
    "cat": lambda lib, x: lib.cat([x, x], np.int64(0)),
    "normalize": lambda lib, x: lib.nn.functional.normalize(x, dim=np.int64(0)),
    "cosine_similarity": lambda lib, x: lib.nn.functional.cosine_similarity(x, x + 1, dim=np.int64(0)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_numpy_integer_dims_are_taken_as_torch(name):
    both(lambda lib: CALLS[name](lib, lib.arange(6.0, dtype=lib.float64).reshape(2, 3)))
