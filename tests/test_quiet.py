"""ember's ops neither warn nor raise on inf and nan, whatever NumPy's own settings, and leave those settings alone."""
import functools
import warnings

import numpy as np
import pytest

import ember
from ember._ops import _quiet


def _index_reduce_quietly_in_beta(x, *args):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "index_reduce.. is in beta", UserWarning)  # torch's own, once
        return x.index_reduce(*args)


def _infinities():
    return ember.tensor([float("inf"), -float("inf"), 1e308], dtype=ember.float64)


def _twice_backward(f):
    x = ember.ones(3, dtype=ember.float64, requires_grad=True)
    f(x).sum().backward()
    (-f(x)).sum().backward()  # .grad: inf + -inf


def _sum_of_two_paths():
    x = ember.ones(3, dtype=ember.float64, requires_grad=True)
    (x * _infinities() - x * _infinities()).sum().backward()


def _step_on_infinities(name: str, options: dict):
    parameter = ember.nn.Parameter(_infinities())
    optimizer = getattr(ember.optim, name)([parameter], **options)
    for _ in range(2):
        parameter.grad = -_infinities()
        optimizer.step()


EDGES = {
    "exp": lambda: ember.tensor([1000.0]).exp(),
    "log": lambda: ember.tensor([0.0, -1.0]).log(),
    "sqrt": lambda: ember.tensor([-1.0]).sqrt(),
    "reciprocal": lambda: ember.tensor([0.0, 1e-40]).reciprocal(),
    "sigmoid": lambda: ember.tensor([-1000.0], dtype=ember.float16).sigmoid(),  # exp(1000) inside
    "sigmoid in single": lambda: ember.tensor([-1000.0]).sigmoid(),
    "square": lambda: ember.tensor([1e30]) ** 2,
    "sine of infinity": lambda: ember.tensor([float("inf")]).sin(),
    "half times a number": lambda: ember.ones(1, dtype=ember.float16) * 70000.0,
    "half by a number": lambda: ember.ones(1, dtype=ember.float16) / 1e-39,
    "div": lambda: ember.tensor([1.0, 0.0]) / ember.tensor([0.0, 0.0]),
    "div_": lambda: ember.tensor([1.0, 0.0]).div_(ember.tensor([0.0, 0.0])),
    "floor div": lambda: ember.div(ember.tensor([1.0]), ember.tensor([0.0]), rounding_mode="floor"),
    "pow": lambda: ember.tensor([0.0, 1e30]) ** ember.tensor([-1.0, 3.0]),
    "mean of nothing": lambda: ember.zeros(0).mean(),
    "half sum": lambda: ember.full((4,), 60000.0, dtype=ember.float16).sum(),
    "half tensor": lambda: ember.tensor([1e6], dtype=ember.float16),
    "linspace in half": lambda: ember.linspace(-65000, 65000, 3, dtype=ember.float16),
    "mse of nothing": lambda: ember.nn.functional.mse_loss(ember.zeros(0), ember.zeros(0)),
    # NumPy's own Python functions warn from their frames, not ember's: each is called quietly
    "round to decimals": lambda: ember.tensor([3e38]).round(decimals=3),
    "cross": lambda: ember.linalg.cross(ember.full((3,), 3e38), ember.tensor([3e38, -3e38, 1.0])),
    "cross gradient": lambda: ember.linalg.cross(ember.full((3,), 3e38, requires_grad=True), ember.ones(3)).backward(
        ember.full((3,), 3e38)),
    "trace": lambda: ember.full((2, 2), 3e38).trace(),
    "det": lambda: ember.linalg.det(ember.eye(3) * 3e38),
    "slogdet of nan": lambda: ember.linalg.slogdet(ember.full((2, 2), float("nan"))),
    "qr": lambda: ember.linalg.qr(ember.tensor([[3e38, 1.0], [3e38, -1.0], [1.0, 3e38]])),
    "svdvals": lambda: ember.linalg.svdvals(ember.full((3, 3), 3e38)),
    "pinv": lambda: ember.linalg.pinv(ember.full((3, 2), 1e-40)),
    # ops that call NumPy at once and again quietly only if it objects: under "raise" it does
    "softmax of infinities": lambda: ember.tensor([[float("inf"), 1.0], [-float("inf"), -1e30]]).softmax(1),
    "log_softmax of infinities": lambda: ember.tensor([[float("inf"), 1.0], [-float("inf"), -1e30]]).log_softmax(1),
    "cumsum beyond single's range": lambda: ember.tensor([3e38, 3e38, -float("inf")]).cumsum(0),
    "scatter_reduce's amax of nan": lambda: ember.tensor([1.0, float("nan")]).scatter_reduce(
        0, ember.tensor([0, 1]), ember.tensor([float("nan"), 2.0]), "amax"),
    "index_reduce's amin of nan": lambda: _index_reduce_quietly_in_beta(
        ember.tensor([1.0, 2.0]), 0, ember.tensor([0, 0]), ember.tensor([float("nan"), 2.0]), "amin"),
    "var of infinity and its gradient": lambda: ember.tensor([float("inf"), 1.0, 2.0], requires_grad=True).var().backward(),
    # in-place arithmetic with nothing to record writes into the tensor at once: NumPy objects after writing
    "add_ of opposite infinities": lambda: _infinities().add_(-_infinities()),
    "sub_ of infinities": lambda: _infinities().sub_(_infinities()),
    "+= of opposite infinities": lambda: _infinities().__iadd__(-_infinities()),
    "mul_ of infinity by 0": lambda: _infinities().mul_(0.0),
    "add_ with alpha in single": lambda: ember.full((2,), 3e38).add_(ember.full((2,), 3e38), alpha=2.0),
    "add_ with alpha in double": lambda: ember.full((2,), 1e308, dtype=ember.float64).add_(
        ember.full((2,), 1e308, dtype=ember.float64), alpha=2.0),
    # a product of batches with nothing to record goes to NumPy directly
    "batched product beyond single's range": lambda: ember.full((2, 2, 2), 3e38) @ ember.full((2, 2, 2), 3e38),
    # the backward pass's own steps: a gradient summed into .grad, a bias's gradient summed over the batch, two
    # gradients of one tensor added
    ".grad of infinity plus its opposite": lambda: _twice_backward(lambda x: x * _infinities()),
    "bias gradient of opposite infinities": lambda: (ember.zeros(3, requires_grad=True) + ember.tensor(
        [[float("inf")] * 3, [-float("inf")] * 3])).backward(ember.ones(2, 3)),
    "two opposite gradients of one tensor": lambda: _sum_of_two_paths(),
    # optimizers' updates compute on arrays
    **{f"{name} step on infinite gradients": functools.partial(_step_on_infinities, name, options)
       for name, options in [("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9}),
                             ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1}), ("Adam", {}),
                             ("AdamW", {}), ("RMSprop", {}), ("Adagrad", {}), ("Adadelta", {}), ("Adamax", {}),
                             ("NAdam", {}), ("RAdam", {}), ("Rprop", {}), ("ASGD", {}), ("Adam", {"foreach": True})]},
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


_EVERYDAY_OVERFLOWS = """
import warnings, numpy as np, ember
big, inf = ember.tensor([3e38, 3e38]), ember.tensor([float('inf'), 1.0])
w = ember.tensor([[3e38], [3e38]], requires_grad=True)
results = [big.sum(), big * 10, big @ w, inf - ember.tensor([float('inf'), 0.0]), big.square().mean(),
           ember.nn.functional.linear(big[None], w.t()), ember.nn.functional.layer_norm(big[None] * 10, (2,)),
           ember.nn.functional.cross_entropy(big[None] * 10, ember.tensor([0])), big.cumsum(0), big.var()]
(big @ w).sum().backward()
print(sum(r.isnan().any().item() for r in results))  # inf - inf, layer_norm and cross_entropy of inf
np.array([3e38], np.float32) * 10  # the user's own NumPy call still warns
"""


def test_ops_that_overflow_or_meet_infinities_do_not_warn_as_torchs_do_not():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-W", "default", "-c", _EVERYDAY_OVERFLOWS], capture_output=True,
                            text=True, timeout=120)
    assert result.stdout.split() == ["3"], result.stderr
    assert result.stderr.count("RuntimeWarning") == 1 and "<string>:10" in result.stderr, result.stderr


def test_a_call_numpy_objects_to_runs_again_quietly_and_one_it_does_not_runs_once():
    calls = []

    def exp(values):
        calls.append(values)
        return np.exp(values)

    before = np.seterr(all="raise")
    try:
        assert _quiet.quietly_on_objection(_quiet.IGNORE_ALL, exp, np.array([1000.0]))[0] == np.inf
        assert len(calls) == 2 and np.geterr()["over"] == "raise"
        assert _quiet.quietly_on_objection(_quiet.IGNORE_ALL, exp, np.array([0.0]))[0] == 1.0
        assert len(calls) == 3
    finally:
        np.seterr(**before)
    with warnings.catch_warnings():  # a user's filter that turns NumPy's warnings into errors: the same
        warnings.simplefilter("error")
        assert _quiet.quietly_on_objection(_quiet.IGNORE_ALL, exp, np.array([1000.0]))[0] == np.inf
    assert len(calls) == 5


def test_softmax_and_cumsum_of_nonfinite_values_match_torch_when_numpy_is_set_to_raise():
    torch = pytest.importorskip("torch")
    values = [[float("inf"), 1.0, 2.0], [-float("inf"), -1e30, 0.5], [3e38, 3e38, -1.0]]
    before = np.seterr(all="raise")
    try:
        for op in ("softmax", "log_softmax", "cumsum"):
            mine = getattr(ember.tensor(values), op)(1).numpy()
            theirs = getattr(torch.tensor(values), op)(1).numpy()
            np.testing.assert_array_equal(mine, theirs)
    finally:
        np.seterr(**before)


_UNARY_EDGES = """
import numpy as np, ember
x = ember.tensor([1000.0, 0.0, -1.0])
for result in (x.exp(), x.log(), x.sqrt(), x.sigmoid(), x.cosh(), x / ember.zeros(3), (-x).exp().log()):
    print(result.tolist())
np.array([0.0]) / 0  # the user's own NumPy call still warns
"""


def test_unary_ops_and_division_on_edge_values_do_not_warn_under_pythons_default_filters():
    # they call NumPy at once (its warnings from ember's modules filtered out), not under NumPy's quiet settings
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-W", "default", "-c", _UNARY_EDGES], capture_output=True, text=True,
                            timeout=120)
    assert result.stdout.splitlines()[0] == "[inf, 1.0, 0.3678794205188751]", result.stdout
    assert result.stderr.count("RuntimeWarning") == 1 and "<string>:6" in result.stderr, result.stderr


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("size", [4, 50_000])
def test_division_in_place_by_zero_writes_every_element_when_numpy_objects(dtype, size):
    """NumPy objects to a division by 0 after its loop: the in-place result is whole, and counted once."""
    numerators = ember.arange(size, dtype=dtype) - 2
    divisors = ember.where(ember.arange(size) % 3 == 0, 0.0, 2.0).to(dtype)
    expected = numerators / divisors
    before = np.seterr(all="raise")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            x = numerators.clone()
            x.div_(divisors)
            y = numerators.clone()
            y /= 0
    finally:
        np.seterr(**before)
    assert ember.equal(x.isnan(), expected.isnan()) and ember.equal(x.nan_to_num(), expected.nan_to_num())
    assert x._version == 1 and y.isinf().sum() + y.isnan().sum() == size
