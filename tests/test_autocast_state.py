"""Twin tests for autocast's state functions (per device type flags and dtypes, the cache switch, the nesting
counter, the deprecated one-device spellings) and their agreement with the ``autocast`` context manager."""
import warnings

import pytest
import torch

import ember
from twins import both, both_raise, normalise

DEVICES_WITH_A_DTYPE = "cpu cuda ipu xpu hip maia xla mps hpu mtia privateuseone".split()


@pytest.fixture(autouse=True)
def _restore_state():
    """Every test leaves both libraries' autocast state as it found it."""
    yield
    for lib in (torch, ember):
        for device in ("cpu", "cuda", "ipu", "xla"):
            lib.set_autocast_enabled(device, False)
        lib.set_autocast_dtype("cpu", lib.bfloat16)
        lib.set_autocast_dtype("cuda", lib.float16)
        lib.set_autocast_dtype("ipu", lib.float16)
        lib.set_autocast_dtype("xla", lib.bfloat16)
        lib.set_autocast_cache_enabled(True)
        while lib.autocast_increment_nesting() <= 0:
            pass
        while lib.autocast_decrement_nesting() > 0:
            pass


def test_defaults():
    both(lambda lib: ([lib.get_autocast_dtype(d) for d in DEVICES_WITH_A_DTYPE], lib.is_autocast_enabled(),
                      lib.is_autocast_enabled("cpu"), lib.is_autocast_enabled(device_type="xla"),
                      lib.is_autocast_cache_enabled()), prepare=normalise)


def test_the_setters_switch_what_ops_do_as_the_context_manager_does():
    def program(lib):
        a = lib.ones(2, 2)
        lib.set_autocast_enabled("cpu", True)
        lib.set_autocast_dtype("cpu", lib.float16)
        inside = ((a @ a).dtype, (a + a).dtype, lib.is_autocast_enabled("cpu"))
        lib.set_autocast_enabled("cpu", False)
        return inside, (a @ a).dtype, lib.is_autocast_enabled("cpu")

    result = both(program, prepare=normalise)
    assert result[0][0] == "ember.float16" and result[1] == "ember.float32"


def test_the_context_manager_sets_and_restores_the_state():
    def program(lib):
        seen = []
        lib.set_autocast_dtype("cpu", lib.float16)
        with lib.autocast("cpu", cache_enabled=False):  # no dtype: the one set takes effect
            seen += [lib.is_autocast_enabled("cpu"), lib.get_autocast_dtype("cpu"), lib.is_autocast_cache_enabled(),
                     (lib.ones(2, 2) @ lib.ones(2, 2)).dtype]
            with lib.autocast("cpu", enabled=False):
                seen += [lib.is_autocast_enabled("cpu"), (lib.ones(2, 2) @ lib.ones(2, 2)).dtype]
            seen += [lib.is_autocast_enabled("cpu")]
        seen += [lib.is_autocast_enabled("cpu"), lib.get_autocast_dtype("cpu"), lib.is_autocast_cache_enabled()]
        return seen

    assert both(program, prepare=normalise)[3] == "ember.float16"


def test_a_region_entered_after_the_setter_leaves_it_on():
    def program(lib):
        lib.set_autocast_enabled("cpu", True)
        lib.set_autocast_dtype("cpu", lib.float16)
        with lib.autocast("cpu", dtype=lib.float16):
            pass
        return lib.is_autocast_enabled("cpu"), (lib.ones(2, 2) @ lib.ones(2, 2)).dtype

    both(program, prepare=normalise)


def test_the_setters_under_a_mode_of_the_users_leave_its_exit_in_order():
    class Count(ember.overrides.TorchFunctionMode):
        calls = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            Count.calls += 1
            return func(*args, **(kwargs or {}))

    with Count():
        ember.set_autocast_enabled("cpu", True)
        ember.set_autocast_dtype("cpu", ember.float16)
        result = ember.ones(2, 2) @ ember.ones(2, 2)
    assert result.dtype is ember.float16 and Count.calls >= 2
    ember.set_autocast_enabled("cpu", False)
    assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype is ember.float32
    assert not ember.overrides._modes  # the casting mode left with the switch


def test_legacy_no_argument_forms_are_cudas():
    def program(lib):
        lib.set_autocast_enabled(True)
        seen = [lib.is_autocast_enabled(), lib.is_autocast_enabled("cuda"), lib.is_autocast_enabled("cpu")]
        lib.set_autocast_enabled(False)
        return seen + [lib.is_autocast_enabled()]

    both(program)


def test_dtypes_of_other_devices_are_kept_apart():
    def program(lib):
        lib.set_autocast_dtype("cuda", lib.bfloat16)
        lib.set_autocast_dtype("xla", lib.float16)
        lib.set_autocast_enabled("ipu", True)
        return (lib.get_autocast_dtype("cuda"), lib.get_autocast_dtype("xla"), lib.get_autocast_dtype("cpu"),
                lib.is_autocast_enabled("ipu"), lib.is_autocast_enabled("cpu"))

    both(program, prepare=normalise)


def test_cache_switch_clear_and_nesting():
    def program(lib):
        lib.set_autocast_cache_enabled(False)
        switched = lib.is_autocast_cache_enabled()
        lib.set_autocast_cache_enabled(True)
        counts = [lib.autocast_increment_nesting(), lib.autocast_increment_nesting(), lib.autocast_decrement_nesting(),
                  lib.autocast_decrement_nesting(), lib.autocast_decrement_nesting()]
        with lib.autocast("cpu", dtype=lib.float16):
            counts.append(lib.autocast_increment_nesting())
            counts.append(lib.autocast_decrement_nesting())
        return switched, counts, lib.clear_autocast_cache()

    both(program)


def test_the_cache_keeps_one_cast_of_a_parameter_per_region_unless_switched_off():
    w = ember.nn.Parameter(ember.ones(2, 2))
    with ember.autocast("cpu", dtype=ember.float16):
        first, second = ember.mm(w, w), ember.mm(w, w)
        assert first.grad_fn.next_functions[0][0] is second.grad_fn.next_functions[0][0]
    with ember.autocast("cpu", dtype=ember.float16, cache_enabled=False):
        first, second = ember.mm(w, w), ember.mm(w, w)
        assert first.grad_fn.next_functions[0][0] is not second.grad_fn.next_functions[0][0]


@pytest.mark.parametrize("name, args", [
    ("get_autocast_cpu_dtype", ()), ("get_autocast_gpu_dtype", ()), ("get_autocast_ipu_dtype", ()),
    ("get_autocast_xla_dtype", ()), ("is_autocast_cpu_enabled", ()), ("is_autocast_ipu_enabled", ()),
    ("is_autocast_xla_enabled", ()), ("set_autocast_cpu_enabled", (False,)), ("set_autocast_ipu_enabled", (False,)),
    ("set_autocast_xla_enabled", (False,)), ("set_autocast_cpu_dtype", ("float16",)),
    ("set_autocast_gpu_dtype", ("bfloat16",)), ("set_autocast_ipu_dtype", ("bfloat16",)),
    ("set_autocast_xla_dtype", ("float16",)),
])
def test_deprecated_device_variants_warn_and_work(name, args):
    device = {"cpu": "cpu", "gpu": "cuda", "ipu": "ipu", "xla": "xla"}[name.split("_")[2]]

    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = getattr(lib, name)(*(getattr(lib, a) if isinstance(a, str) else a for a in args))
        message = str(caught[0].message)
        assert caught[0].category is DeprecationWarning and "is deprecated. Please use" in message
        return result, lib.get_autocast_dtype(device), lib.is_autocast_enabled(device)

    both(program, prepare=normalise)


def test_set_cpu_enabled_casts_as_the_context_does():
    def program(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            lib.set_autocast_cpu_dtype(lib.float16)
            lib.set_autocast_cpu_enabled(True)
            out = lib.nn.functional.linear(lib.ones(3, 2), lib.ones(4, 2))
            lib.set_autocast_cpu_enabled(False)
        return out.dtype, out

    both(program, prepare=normalise)


@pytest.mark.parametrize("program, error, fragment", [
    (lambda lib: lib.is_autocast_enabled("foo"), RuntimeError, "Expected one of cpu, cuda"),
    (lambda lib: lib.set_autocast_enabled("foo", True), RuntimeError, "device type at start of device string: foo"),
    (lambda lib: lib.get_autocast_dtype("gpu"), RuntimeError, "Expected one of"),
    (lambda lib: lib.get_autocast_dtype("meta"), RuntimeError, "unsupported scalarType"),
    (lambda lib: lib.is_autocast_enabled(1), TypeError, "must be str, not int"),
    (lambda lib: lib.set_autocast_enabled(1), TypeError, "argument 'enabled' .* must be bool, not int"),
    (lambda lib: lib.set_autocast_enabled("cpu", 1), TypeError, "must be bool, not int"),
    (lambda lib: lib.set_autocast_dtype("cpu", "x"), TypeError, "argument 'dtype' .* must be .*dtype, not str"),
    (lambda lib: lib.set_autocast_cache_enabled(1), TypeError, r"enabled must be a bool \(got int\)"),
])
def test_errors(program, error, fragment):
    both_raise(program, error, fragment)
