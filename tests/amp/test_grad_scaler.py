"""ember.amp.GradScaler (and ember.cuda.amp.GradScaler) against torch's, step by step."""
import warnings

import pytest
from hypothesis import given, settings, strategies as st

import ember
from twins import both, both_raise


def _training(lib, grads, init_scale=8.0, growth_interval=2):
    """Steps of SGD through a scaler, with the gradients given (inf for overflow); what the scaler did."""
    scaler = lib.amp.GradScaler("cpu", init_scale=init_scale, growth_interval=growth_interval)
    p = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([p], lr=0.5)
    seen = []
    for g in grads:
        opt.zero_grad()
        scaler.scale((p * lib.tensor(g)).sum()).backward()
        scaler.step(opt)
        scaler.update()
        seen.append((scaler.get_scale(), p.detach().clone(), scaler.state_dict()["_growth_tracker"]))
    return seen


@settings(max_examples=15)
@given(st.lists(st.sampled_from([(1.0, 2.0), (float("inf"), 1.0), (0.5, float("nan")), (-3.0, 0.25)]),
                min_size=1, max_size=6))
def test_scaler_backs_off_grows_and_skips_like_torch(grads):
    both(lambda lib: _training(lib, grads))


def test_scale_of_containers_and_state_dict_round_trip():
    def program(lib):
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        loss = lib.tensor(2.0)
        scaled = scaler.scale([loss, (loss,)])
        other = lib.amp.GradScaler("cpu")
        other.load_state_dict(scaler.state_dict())
        return scaled, other.get_scale(), other.state_dict(), scaler.is_enabled()

    both(program)


def test_unscale_twice_and_closure_are_errors():
    def unscale_twice(lib):
        scaler = lib.amp.GradScaler("cpu")
        p = lib.nn.Parameter(lib.ones(1))
        p.grad = lib.ones(1)
        opt = lib.optim.SGD([p], lr=0.1)
        scaler.scale(lib.ones(1))
        scaler.unscale_(opt)
        scaler.unscale_(opt)

    both_raise(unscale_twice, RuntimeError, "unscale_\\(\\) has already been called on this optimizer")
    both_raise(lambda lib: lib.amp.GradScaler("cpu").step(lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=1),
                                                           closure=lambda: 0),
               RuntimeError, "Closure use is not currently supported")


def test_unscale_then_clip_then_step():
    def program(lib):
        scaler = lib.amp.GradScaler("cpu", init_scale=64.0)
        p = lib.nn.Parameter(lib.tensor([3.0, 4.0]))
        opt = lib.optim.SGD([p], lr=1.0)
        scaler.scale((p * p).sum()).backward()
        scaler.unscale_(opt)
        norm = lib.nn.utils.clip_grad_norm_([p], 1.0)
        scaler.step(opt)
        scaler.update()
        return norm, p.detach()

    both(program)


@pytest.mark.parametrize("make", [lambda lib: lib.cuda.amp.GradScaler(), lambda lib: lib.amp.GradScaler()])
def test_cuda_scaler_is_disabled_and_passes_through(make):
    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scaler = make(lib)
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.5)
        loss = (p * 3).sum()
        scaled = scaler.scale(loss)
        scaled.backward()
        scaler.step(opt)
        scaler.update()
        messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
        return (scaler.is_enabled(), scaled is loss, scaler.get_scale(), scaler.state_dict(), p.detach(),
                ["Disabling" in m for m in messages])

    both(program)
