"""ember.special.airy_ai against torch (and, where torch 2.13 is off, against mpmath at 30 digits)."""
import mpmath
import numpy as np
import torch
from twins import both, both_raise, normalise

import ember

# torch 2.13's Ai is off by up to 3e-6 on [-4.53, -2.09] (it fails mpmath there): that stretch is checked
# against mpmath instead
TORCH_OFF = (-4.6, -2.05)


def _grid():
    return np.concatenate([np.linspace(-1000.0, -30.0, 20001), np.linspace(-30.0, 30.0, 60001),
                           np.linspace(30.0, 120.0, 2001), [0.0, -0.0, 8.75, -8.75, 8.7499999, -8.7500001]])


def test_values_as_torch_to_1e_12_over_a_wide_range():
    x = _grid()
    x = x[(x < TORCH_OFF[0]) | (x > TORCH_OFF[1])]
    ours = ember.special.airy_ai(ember.tensor(x)).numpy()
    theirs = torch.special.airy_ai(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    assert np.all(ours[(x > 0) & (x < 100)] > 0)  # positive, not a rounding to 0, down to 1e-290
    np.testing.assert_allclose(ours[x > 30], theirs[x > 30], rtol=1e-12, atol=0)


def test_values_as_mpmath_where_torch_is_off_and_near_zeros():
    x = np.concatenate([np.linspace(-9.5, 9.5, 381), np.linspace(*TORCH_OFF, 97), [-2.338107410459767]])
    with mpmath.workdps(30):
        exact = np.array([float(mpmath.airyai(v)) for v in x])
    np.testing.assert_allclose(ember.special.airy_ai(ember.tensor(x)).numpy(), exact, rtol=1e-12, atol=1e-14)


def test_dtypes_shapes_specials_and_no_gradient_as_torch():
    def program(lib):
        special = lib.tensor([float("nan"), float("inf"), -float("inf"), 200.0, -1e6], dtype=lib.float64)
        grad_input = lib.tensor([0.5, -3.0], requires_grad=True)
        y = lib.special.airy_ai(grad_input)
        t = lib.arange(6.0).reshape(2, 3).t()
        return (lib.special.airy_ai(special), lib.special.airy_ai(lib.tensor([1, 2])), y, y.requires_grad,
                lib.special.airy_ai(lib.tensor(0.5)), lib.special.airy_ai(lib.ones(0, 3)).shape,
                lib.special.airy_ai(t), lib.special.airy_ai(x=lib.tensor([1.0], dtype=lib.float64)).dtype)

    both(program, prepare=normalise)


def test_out_and_errors_as_torch():
    def program(lib):
        out = lib.empty(2, dtype=lib.float64)
        returned = lib.special.airy_ai(lib.tensor([0.0, 1.0], dtype=lib.float64), out=out)
        return returned is out, out

    both(program)
    both_raise(lambda lib: lib.special.airy_ai([1.0]), TypeError, "airy_ai\\(\\)")


def test_single_precision_is_double_rounded():
    """torch computes a float32 Ai in float32 (off by up to 3e-6 at x = -20); ember computes in float64 and
    rounds, so its float32 values are the float64 ones, rounded."""
    x = ember.linspace(-20, 20, 1001)
    single = ember.special.airy_ai(x)
    assert single.dtype == ember.float32
    np.testing.assert_array_equal(single.numpy(), ember.special.airy_ai(x.double()).float().numpy())
    theirs = torch.special.airy_ai(torch.linspace(-20, 20, 1001)).numpy()
    np.testing.assert_allclose(single.numpy(), theirs, rtol=1e-4, atol=5e-6)


def test_under_vmap():
    from ember.func import vmap

    x = ember.randn(3, 5, dtype=ember.float64)
    assert ember.equal(vmap(ember.special.airy_ai)(x), ember.special.airy_ai(x))
