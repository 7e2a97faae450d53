"""ember's ops neither warn nor raise on inf and nan, whatever NumPy's own settings, and leave those settings alone."""
import warnings

import numpy as np
import pytest

import ember
from ember._ops import _quiet


EDGES = {
    "exp": lambda: ember.tensor([1000.0]).exp(),
    "log": lambda: ember.tensor([0.0, -1.0]).log(),
    "sqrt": lambda: ember.tensor([-1.0]).sqrt(),
    "reciprocal": lambda: ember.tensor([0.0, 1e-40]).reciprocal(),
    "sigmoid": lambda: ember.tensor([-1000.0], dtype=ember.float16).sigmoid(),  # exp(1000) inside
    "half times a number": lambda: ember.ones(1, dtype=ember.float16) * 70000.0,
    "half by a number": lambda: ember.ones(1, dtype=ember.float16) / 1e-39,
    "div": lambda: ember.tensor([1.0, 0.0]) / ember.tensor([0.0, 0.0]),
    "floor div": lambda: ember.div(ember.tensor([1.0]), ember.tensor([0.0]), rounding_mode="floor"),
    "pow": lambda: ember.tensor([0.0, 1e30]) ** ember.tensor([-1.0, 3.0]),
    "mean of nothing": lambda: ember.zeros(0).mean(),
    "half sum": lambda: ember.full((4,), 60000.0, dtype=ember.float16).sum(),
    "half tensor": lambda: ember.tensor([1e6], dtype=ember.float16),
    "linspace in half": lambda: ember.linspace(-65000, 65000, 3, dtype=ember.float16),
    "mse of nothing": lambda: ember.nn.functional.mse_loss(ember.zeros(0), ember.zeros(0)),
}


@pytest.mark.parametrize("name", EDGES)
def test_an_op_on_edge_values_is_silent_even_when_numpy_is_set_to_raise(name):
    before = np.seterr(all="raise")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            EDGES[name]()  # NumPy would raise (or, by default, warn) inside the op
        assert np.geterr() == {"divide": "raise", "over": "raise", "under": "raise", "invalid": "raise"}
    finally:
        np.seterr(**before)


def test_the_settings_are_restored_when_the_call_raises():
    before = np.geterr()

    def failing(x):
        raise KeyError(x)

    with pytest.raises(KeyError):
        _quiet.quietly(_quiet.IGNORE_ALL, failing, 1)
    assert np.geterr() == before


def test_the_public_errstate_stands_in_where_numpy_keeps_its_settings_elsewhere(monkeypatch):
    monkeypatch.setattr(_quiet, "_numpy_settings", None)
    setting = _quiet._ignoring("over")
    assert setting == {"divide": "warn", "over": "ignore", "under": "ignore", "invalid": "warn"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _quiet.quietly(setting, np.exp, np.array([1000.0]))[0] == np.inf
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        _quiet.quietly(setting, np.log, np.array([0.0]))


def test_arithmetic_on_infinities_is_quiet_as_in_torch_while_user_numpy_still_warns():
    import subprocess
    import sys

    program = ("import warnings; warnings.simplefilter('default'); import ember, numpy as np\n"
               "a = ember.tensor([float('inf')])\n"
               "print((a - a).isnan().item(), (a * 0).isnan().item(), (a + (-a)).isnan().item())\n"
               "np.array([np.inf]) - np.inf\n")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert result.stdout.split() == ["True", "True", "True"]
    assert result.stderr.count("RuntimeWarning") == 1 and "<string>:4" in result.stderr, result.stderr
