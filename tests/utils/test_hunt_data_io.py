"""ember.utils.data and ember.utils.cpp_extension against torch's on the same programs: arguments, errors and
results."""
import ctypes
import inspect
import multiprocessing
import os
import warnings

import pytest
import torch
import torch.utils.cpp_extension as torch_cpp_extension
import torch.utils.data as torch_data
import torch.utils.data._utils.collate as torch_collate

import ember
import ember.utils.data as ember_data
import ember.utils.data._utils.collate as ember_collate
from ember.utils import cpp_extension


def raised(call) -> tuple[str, str]:
    with pytest.raises(Exception) as info:
        call()
    return type(info.value).__name__, str(info.value)


# ---- DataLoader(multiprocessing_context=...)


@pytest.mark.parametrize("num_workers, context", [(0, "fork"), (1, "no-such-method"), (1, 3)])
def test_a_multiprocessing_context_the_loader_cannot_use_is_refused_as_torch_refuses_it(num_workers, context):
    expected = raised(lambda: torch_data.DataLoader(range(3), num_workers=num_workers,
                                                    multiprocessing_context=context))
    assert raised(lambda: ember_data.DataLoader(range(3), num_workers=num_workers,
                                                multiprocessing_context=context)) == expected


def test_a_multiprocessing_context_object_starts_the_workers():
    context = multiprocessing.get_context("fork")
    expected = [b.tolist() for b in torch_data.DataLoader(range(5), batch_size=2, num_workers=2,
                                                          multiprocessing_context=context)]
    loader = ember_data.DataLoader(range(5), batch_size=2, num_workers=2, multiprocessing_context=context)
    assert [b.tolist() for b in loader] == expected
    assert loader.multiprocessing_context is context


def test_a_start_method_name_becomes_its_context_as_in_torch():
    expected = torch_data.DataLoader(range(3), num_workers=1, multiprocessing_context="spawn")
    loader = ember_data.DataLoader(range(3), num_workers=1, multiprocessing_context="spawn")
    assert type(loader.multiprocessing_context) is type(expected.multiprocessing_context)
    assert ember_data.DataLoader(range(3), num_workers=1).multiprocessing_context is None


def test_setting_the_context_on_a_loader_without_workers_is_refused():
    def set_context(library):
        loader = library.utils.data.DataLoader(range(3))
        loader.multiprocessing_context = "spawn"
    assert raised(lambda: set_context(ember)) == raised(lambda: set_context(torch))


# ---- samplers


def test_weighted_random_sampler_keeps_its_weights_as_a_tensor_of_doubles():
    expected = torch_data.WeightedRandomSampler([1, 2, 3], 4).weights
    weights = ember_data.WeightedRandomSampler([1, 2, 3], 4).weights
    assert isinstance(weights, ember.Tensor) and str(weights.dtype) == "ember.float64"
    assert weights.tolist() == expected.tolist()
    seeded = ember_data.WeightedRandomSampler(ember.tensor([0.1, 0.9, 0.4]), 6,
                                              generator=ember.Generator().manual_seed(5))
    assert list(seeded) == list(torch_data.WeightedRandomSampler(torch.tensor([0.1, 0.9, 0.4]), 6,
                                                                    generator=torch.Generator().manual_seed(5)))


# ---- cpp_extension: torch's signatures, and what ember does with torch's arguments


@pytest.mark.parametrize("function", ["load", "load_inline"])
def test_cpp_extension_loaders_take_torchs_arguments_in_torchs_order(function):
    expected = list(inspect.signature(getattr(torch_cpp_extension, function)).parameters.items())
    parameters = list(inspect.signature(getattr(cpp_extension, function)).parameters.items())

    def described(name, parameter):  # ember's cpp_sources may be left out, for a load of C sources alone
        default = inspect.Parameter.empty if name == "cpp_sources" else parameter.default
        return name, default, parameter.kind

    assert [described(*p) for p in parameters[:len(expected)]] == [described(*p) for p in expected]
    assert [name for name, p in parameters[len(expected):]] == ([] if function == "load" else ["c_sources"])


@pytest.mark.parametrize("arguments", [{"cuda_sources": "__global__ void k() {}"}, {"with_cuda": True}])
def test_a_cuda_build_is_refused_with_torchs_error_type_on_a_machine_without_cuda(arguments, tmp_path):
    # torch.load_inline raises OSError (no CUDA_HOME) before compiling anything
    with pytest.raises(OSError):
        torch_cpp_extension.load_inline("cuda_ext", "int f() { return 1; }", build_directory=str(tmp_path),
                                        **arguments)
    with pytest.raises(OSError, match="ember runs on the CPU only"):
        cpp_extension.load_inline("cuda_ext", "int f() { return 1; }", build_directory=str(tmp_path), **arguments)


LIBRARY_SOURCE = """
__attribute__((visibility("default"))) int ember_hunt_answer(void) { return 42; }
"""


def test_is_python_module_false_loads_the_library_and_returns_its_path(tmp_path):
    path = cpp_extension.load_inline("plain_library", c_sources=LIBRARY_SOURCE, build_directory=str(tmp_path),
                                     is_python_module=False, with_cuda=False, keep_intermediates=True,
                                     use_pch=False, no_implicit_headers=True)
    assert isinstance(path, str) and os.path.isfile(path)  # what torch returns: the library's path
    answer = ctypes.CDLL(None).ember_hunt_answer  # loaded into the process, its symbols global
    assert answer() == 42


def test_is_standalone_is_refused(tmp_path):
    with pytest.raises(ValueError, match="is_standalone"):
        cpp_extension.load("standalone", [str(tmp_path / "main.cpp")], is_standalone=True)


def test_more_workers_than_usable_cpus_warns_as_torch_does():
    too_many = len(os.sched_getaffinity(0)) + 1
    for library in (torch, ember):
        with pytest.warns(UserWarning, match=f"This DataLoader will create {too_many} worker processes in total. "
                                             f"Our suggested max number of worker in current system is {too_many - 1}"):
            library.utils.data.DataLoader(range(3), num_workers=too_many)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember_data.DataLoader(range(3), num_workers=too_many - 1)


# ---- extending default_collate through collate_fn_map (torch's documented recipe)


class Point:
    def __init__(self, x: float, y: float):
        self.x, self.y = x, y


def collate_points(library):
    def batch_points(batch, *, collate_fn_map=None):
        return library.tensor([[p.x, p.y] for p in batch])
    return batch_points


def test_collate_with_a_map_that_batches_a_type_of_ones_own():
    samples = [{"point": Point(1, 2), "label": 0}, {"point": Point(3, 4), "label": 1}]
    results = []
    for library, module in ((torch, torch_collate), (ember, ember_collate)):
        collate_fn_map = {**module.default_collate_fn_map, Point: collate_points(library)}
        results.append(module.collate(samples, collate_fn_map=collate_fn_map))
    assert {k: v.tolist() for k, v in results[1].items()} == {k: v.tolist() for k, v in results[0].items()}


def test_a_type_added_to_default_collate_fn_map_is_batched_by_the_default_loader():
    samples = [(Point(1, 2), 1.5), (Point(3, 4), 2.5)]
    results = []
    for library, module in ((torch, torch_collate), (ember, ember_collate)):
        module.default_collate_fn_map[Point] = collate_points(library)
        try:
            results.append([[x.tolist() for x in batch]
                            for batch in library.utils.data.DataLoader(samples, batch_size=2)])
        finally:
            del module.default_collate_fn_map[Point]
    assert results[1] == results[0]
    assert raised(lambda: ember_data.default_collate(samples))[0] == raised(
        lambda: torch_data.default_collate(samples))[0] == "TypeError"


def test_numpy_scalars_that_are_not_numbers_are_refused_with_default_collates_error():
    import numpy as np

    samples = [np.datetime64("2020-01-01"), np.datetime64("2021-01-01")]
    expected = raised(lambda: torch_data.default_collate(samples))
    kind, message = raised(lambda: ember_data.default_collate(samples))
    assert kind == expected[0] and message.startswith(expected[1])


def test_pin_memory_warns_when_a_pass_starts_not_when_the_loader_is_made():
    for library in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            loader = library.utils.data.DataLoader(range(2), pin_memory=True)
        with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found"):
            assert [b.tolist() for b in loader] == [[0], [1]]


def test_cpp_extension_helpers_answer_as_torchs_do_on_a_cpu_machine(monkeypatch, tmp_path):
    for name in ("CUDA_HOME", "ROCM_HOME", "SYCL_HOME"):
        assert getattr(cpp_extension, name) == getattr(torch_cpp_extension, name) is None
    assert cpp_extension.get_cxx_compiler() == torch_cpp_extension.get_cxx_compiler()
    assert cpp_extension.is_ninja_available() == torch_cpp_extension.is_ninja_available()
    monkeypatch.setenv("EMBER_EXTENSIONS_DIR", str(tmp_path / "ember"))  # (torch's root ignores its variable)
    assert cpp_extension.get_default_build_root() == str(tmp_path / "ember")
    assert cpp_extension.include_paths("cpu") == cpp_extension.include_paths()
    assert cpp_extension.include_paths(torch_include_dirs=False) == []
    assert cpp_extension.library_paths() == []
    for function in ("include_paths", "library_paths"):
        assert list(inspect.signature(getattr(cpp_extension, function)).parameters) == \
            list(inspect.signature(getattr(torch_cpp_extension, function)).parameters)
