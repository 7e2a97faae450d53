"""ember.utils.data and ember.utils.cpp_extension against torch's on the same programs: arguments, errors and
results."""
import multiprocessing

import pytest
import torch
import torch.utils.data as torch_data

import ember
import ember.utils.data as ember_data


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
