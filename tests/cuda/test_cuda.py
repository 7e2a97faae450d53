"""ember.cuda and device requests: the answers torch gives on a machine without a GPU."""
import pytest

import ember
from twins import both


def test_questions_have_the_cpu_answers():
    both(lambda lib: (lib.cuda.is_available(), lib.cuda.device_count(), lib.cuda.is_initialized(),
                      lib.cuda.is_bf16_supported(), lib.cuda.memory_allocated(), lib.cuda.max_memory_allocated(),
                      lib.cuda.empty_cache()))


def test_portable_idiom_picks_the_cpu():
    def program(lib):
        device = "cuda" if lib.cuda.is_available() else "cpu"
        model = lib.nn.Linear(2, 1).to(device)
        return model(lib.ones(3, 2, device=device)).shape, str(device)

    both(program, prepare=lambda v: (tuple(v[0]), v[1]))


def test_cuda_seeds_seed_the_cpu_generator():
    def program(lib, seeding):
        seeding(lib)(5)
        return lib.rand(3).tolist()

    for seeding in (lambda lib: lib.cuda.manual_seed, lambda lib: lib.cuda.manual_seed_all):
        ember.manual_seed(0)
        assert program(ember, seeding) == program(ember, lambda lib: lib.manual_seed)


@pytest.mark.parametrize("request_gpu", [
    lambda: ember.ones(2).cuda(), lambda: ember.ones(2).to("cuda"), lambda: ember.zeros(2, device="cuda"),
    lambda: ember.tensor([1.0], device="cuda:0"), lambda: ember.nn.Linear(2, 2).to("cuda"),
    lambda: ember.device("cuda"),
])
def test_asking_for_a_gpu_shows_the_portable_idiom(request_gpu):
    with pytest.raises(RuntimeError, match=r"CPU only.*'cuda' if ember.cuda.is_available\(\) else 'cpu'"):
        request_gpu()


def test_synchronize_is_a_no_op_and_gpu_only_calls_say_why():
    assert ember.cuda.synchronize() is None
    for name in ("current_device", "get_device_name", "init"):
        with pytest.raises(RuntimeError, match=f"ember.cuda.{name}\\(\\): ember runs on the CPU only"):
            getattr(ember.cuda, name)()
