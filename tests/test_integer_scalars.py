"""A number an integer tensor cannot hold (-0.5 or 300 for uint8) is refused where torch refuses it; a fraction
that truncates (2.5) is taken, as torch takes it."""
import pytest

from twins import both, both_raise


@pytest.mark.parametrize("call", [
    lambda lib: lib.index_add(lib.ones(3, dtype=lib.uint8), 0, lib.tensor([0]), lib.ones(1, dtype=lib.uint8), alpha=-0.5),
    lambda lib: lib.nn.functional.threshold(lib.ones(2, 3, dtype=lib.uint8), -0.5, 0.0),
    lambda lib: lib.nn.functional.threshold(lib.ones(2, 3, dtype=lib.uint8), 0.5, 300),
    lambda lib: lib.addbmm(lib.ones(2, 2, dtype=lib.uint8), lib.ones(4, 2, 3, dtype=lib.uint8),
                           lib.ones(4, 3, 2, dtype=lib.uint8), beta=-1.0, alpha=0.5),
])
def test_a_number_an_integer_tensor_cannot_hold_is_refused(call):
    both_raise(call, RuntimeError, "cannot be converted to type uint8")


def test_numbers_that_fit_are_taken():
    both(lambda lib: [lib.index_add(lib.ones(3, dtype=lib.uint8), 0, lib.tensor([0]), lib.ones(1, dtype=lib.uint8),
                                    alpha=2.5),
                      lib.index_add(lib.ones(3, dtype=lib.uint8), 0, lib.tensor([0]), lib.ones(1, dtype=lib.uint8),
                                    alpha=-1),
                      lib.nn.functional.threshold(lib.arange(6, dtype=lib.uint8).reshape(2, 3), 2.5, 9),
                      lib.addbmm(lib.ones(2, 2, dtype=lib.int64), lib.ones(4, 2, 3, dtype=lib.int64),
                                 lib.ones(4, 3, 2, dtype=lib.int64), beta=2, alpha=3)])
