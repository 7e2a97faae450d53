"""nn.Module's less travelled API against torch: state_dict's old forms and metadata, loading edge cases,
set_submodule, to()/type() arguments, and pickling a Parameter."""
import pickle
import warnings
from collections import OrderedDict

import pytest
import torch

import ember
from twins import both, both_raise, normalise


def nested(lib):
    """A module with a parameter, buffers (one not persistent), a shared child and a Sequential."""

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(2, 3)
            self.seq = lib.nn.Sequential(self.fc, lib.nn.ReLU())
            self.w = lib.nn.Parameter(lib.ones(2))
            self.register_buffer("b", lib.zeros(2))
            self.register_buffer("scratch", lib.zeros(1), persistent=False)
            self.register_buffer("counts", lib.zeros(2, dtype=lib.int64))

    return Net()


# ---------------------------------------------------------------------------------------------- state_dict


@pytest.mark.parametrize("args", [(None,), ({},), ({}, "p."), (OrderedDict(), "p.", True)], ids=repr)
def test_state_dict_positional_arguments_warn_and_still_work(args):
    def program(lib):
        module = nested(lib)
        with pytest.warns(FutureWarning, match="(?i)positional args are being deprecated"):
            result = module.state_dict(*args)
        assert args[0] is None or result is args[0]
        return [(key, type(value).__name__) for key, value in result.items()]

    both(program)


@pytest.mark.parametrize("prefix", ["", "model."])
def test_state_dict_metadata_records_each_modules_version(prefix):
    def program(lib):
        sd = nested(lib).state_dict(prefix=prefix)
        return type(sd).__name__, type(sd._metadata).__name__, list(sd._metadata.items())

    both(program)


def test_state_dict_metadata_uses_the_class_version_and_not_a_given_dict():
    def program(lib):
        class Versioned(lib.nn.Linear):
            _version = 3

        module = lib.nn.Sequential(Versioned(1, 1))
        return dict(module.state_dict()._metadata), hasattr(module.state_dict(destination={}), "_metadata")

    both(program)


def _key_naming_a_child(lib, sd):
    sd["seq"] = lib.ones(1)  # a plain key that is the name of a child module, not a tensor of this one


def _deep_unknown_keys(lib, sd):
    sd["seq.1.weight"] = lib.ones(1)  # ReLU has no weight
    sd["seq.7.bias"] = lib.ones(1)  # no child 7
    sd["zz.weight"] = lib.ones(1)


def _drop_parameter(lib, sd):
    del sd["seq.0.bias"]  # the shared layer: still loaded as fc.bias, but missing under this name


@pytest.mark.parametrize("mutate", [_key_naming_a_child, _deep_unknown_keys, _drop_parameter])
def test_load_state_dict_reports_the_keys_torch_reports(mutate):
    def program(lib):
        module = nested(lib)
        sd = module.state_dict()
        mutate(lib, sd)
        result = module.load_state_dict(sd, strict=False)
        return type(result).__name__, result.missing_keys, result.unexpected_keys

    both(program)


@pytest.mark.parametrize("value", [[5.0], [5.0, 6.0], [[5.0]]])
def test_load_state_dict_into_a_scalar_takes_the_first_of_a_vector(value):
    def program(lib):
        module = lib.nn.Module()
        module.register_buffer("count", lib.tensor(1.0))
        module.load_state_dict({"count": lib.tensor(value)})
        return module.count

    if value != [5.0]:
        both_raise(program, RuntimeError, r"size mismatch for count")
    else:
        both(program)


@pytest.mark.parametrize("requires_grad", [True, False])
def test_load_state_dict_assign_keeps_a_checkpoints_parameter(requires_grad):
    def program(lib):
        module = lib.nn.Linear(2, 1)
        module.weight.requires_grad_(requires_grad)
        saved = lib.nn.Parameter(lib.ones(1, 2), requires_grad=not requires_grad)
        module.load_state_dict({"weight": saved, "bias": lib.zeros(1)}, assign=True)
        return module.weight is saved, module.weight.requires_grad, type(module.bias).__name__

    both(program)


# ---------------------------------------------------------------------------------------------- set_submodule


@pytest.mark.parametrize("target, strict", [("seq.1", False), ("fc", True), ("new", False), ("seq.new", False)])
def test_set_submodule_puts_the_module_where_torch_does(target, strict):
    def program(lib):
        module = nested(lib)
        module.set_submodule(target, lib.nn.Tanh(), strict=strict)
        return repr(module.get_submodule(target)), [name for name, _ in module.named_modules()]

    both(program)


@pytest.mark.parametrize("target, value, strict, error, message", [
    ("", "module", False, ValueError, "Cannot set the submodule without a target name"),
    ("fc", None, False, ValueError, r"`module` is not an nn.Module, found <class 'NoneType'>"),
    ("new", "module", True, AttributeError, "Net has no attribute `new`"),
    ("w", "module", False, AttributeError, "`w` is not an nn.Module"),
    ("fc.weight", "module", False, AttributeError, "`weight` is not an nn.Module"),
    ("nowhere.fc", "module", False, AttributeError, "Net has no attribute `nowhere`"),
])
def test_set_submodule_errors_match_torch(target, value, strict, error, message):
    def program(lib):
        module = lib.nn.Tanh() if value == "module" else value
        nested(lib).set_submodule(target, module, strict=strict)

    both_raise(program, error, message)


# ---------------------------------------------------------------------------------------------- to, type


@pytest.mark.parametrize("call", [
    lambda lib, m: m.to(lib.float64, True),
    lambda lib, m: m.to("cpu", lib.float64, False),
    lambda lib, m: m.to(lib.device("cpu"), dtype=lib.float16),
    lambda lib, m: m.to(None),
    lambda lib, m: m.to(tensor=lib.ones(1, dtype=lib.float64)),
    lambda lib, m: m.to(lib.ones(1, dtype=lib.float16), non_blocking=True),
    lambda lib, m: m.to(device=None, dtype=lib.float64),
])
def test_to_accepts_torchs_forms(call):
    def program(lib):
        module = nested(lib)
        weight = module.fc.weight
        result = call(lib, module)
        return result is module, module.fc.weight is weight, module.w.dtype, module.counts.dtype

    both(program, prepare=normalise)


@pytest.mark.parametrize("call, error, message", [
    (lambda lib, m: m.to(foo=1), TypeError, r"to\(\) received an invalid combination of arguments - got \(foo=int"),
    (lambda lib, m: m.to(lib.float64, lib.float64), TypeError, "received an invalid combination of arguments"),
    (lambda lib, m: m.to("cpu", "cpu"), TypeError, "received an invalid combination of arguments"),
    (lambda lib, m: m.to(lib.ones(1), lib.float64), TypeError, "received an invalid combination of arguments"),
    (lambda lib, m: m.to("cpu", 1), TypeError, "received an invalid combination of arguments"),
    (lambda lib, m: m.to(lib.float64, copy=True), RuntimeError, "to\\(\\) does not accept (the )?copy argument"),
    (lambda lib, m: m.to(lib.int32), TypeError, "nn.Module.to only accepts floating point or complex dtypes"),
])
def test_to_refuses_what_torch_refuses(call, error, message):
    both_raise(lambda lib: call(lib, nested(lib)), error, message)


def test_cuda_is_refused_as_to_cuda_is():
    # torch without CUDA raises AssertionError("Torch not compiled with CUDA enabled"); ember says why, as for to().
    with pytest.raises(RuntimeError, match="CPU only"):
        nested(ember).cuda()


@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_type_casts_every_parameter_and_buffer(dtype):
    def program(lib):
        module = nested(lib)
        weight = module.fc.weight
        result = module.type(getattr(lib, dtype))
        return result is module, module.fc.weight is weight, [t.dtype for t in module.state_dict().values()]

    both(program, prepare=normalise)


# ---------------------------------------------------------------------------------------------- Parameter


@pytest.mark.parametrize("requires_grad", [True, False])
def test_pickled_parameter_keeps_its_attributes(requires_grad):
    def program(lib):
        param = lib.nn.Parameter(lib.tensor([1.0, 2.0]), requires_grad=requires_grad)
        param.note = "tied"
        copy = pickle.loads(pickle.dumps(param))
        return type(copy).__name__, copy.requires_grad, getattr(copy, "note", None), copy

    both(program)


@pytest.mark.parametrize("make", ["lib.nn.Tanh(1)", "lib.nn.Sigmoid(x=1)", "lib.nn.Module(1, 2)", "lib.nn.ReLU(y=2)"])
def test_arguments_to_a_module_without_its_own_init_are_pythons_type_error_as_torch(make):
    both_raise(lambda lib: eval(make, {"lib": lib}), TypeError,
               r"^\w+\.__init__\(\) (takes 1 positional argument but \d were given|got an unexpected keyword argument)")
