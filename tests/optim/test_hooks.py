"""Optimizer hooks against torch: step pre/post hooks (per optimizer and global), state_dict and load hooks."""
import importlib

import pytest
import torch

import ember


def optimizer(lib, name="Adam"):
    w = lib.nn.Parameter(lib.ones(2))
    w.grad = lib.ones(2)
    return getattr(lib.optim, name)([w], lr=0.1)


def record(lib, setup):
    """The calls hooks saw while ``setup(lib, opt, log)`` registered them and ran the optimizer."""
    log = []
    opt = optimizer(lib)
    setup(lib, opt, log)
    return log


def test_step_hooks_run_in_torchs_order_and_can_replace_arguments():
    def setup(lib, opt, log):
        module = importlib.import_module(f"{lib.__name__}.optim.optimizer")
        handles = [
            module.register_optimizer_step_pre_hook(lambda o, a, k: log.append(("global pre", len(a), a[0] is o, k))),
            module.register_optimizer_step_post_hook(lambda o, a, k: log.append(("global post", len(a), a[0] is o))),
            opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", o is opt, len(a)))),
            opt.register_step_pre_hook(lambda o, a, k: (a, {"closure": lambda: log.append("closure") or 1.5})),
            opt.register_step_post_hook(lambda o, a, k: log.append(("post", len(a), sorted(k)))),
        ]
        log.append(("loss", opt.step()))
        for handle in handles:
            handle.remove()
        opt.step()  # no hook runs now
        log.append("end")

    assert record(ember, setup) == record(torch, setup)


def test_a_pre_hook_returning_something_else_is_an_error():
    for lib in (ember, torch):
        opt = optimizer(lib)
        opt.register_step_pre_hook(lambda o, a, k: 3)
        with pytest.raises(RuntimeError, match="must return None or a tuple of \\(new_args, new_kwargs\\)"):
            opt.step()


def test_a_users_subclass_gets_the_hooks_too():
    for lib in (ember, torch):
        class Halving(lib.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, {"lr": 0.5})

            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        with lib.no_grad():
                            p.mul_(group["lr"])

        w = lib.nn.Parameter(lib.ones(1))
        opt = Halving([w])
        seen = []
        opt.register_step_post_hook(lambda o, a, k: seen.append(float(w.detach()[0])))
        opt.step()
        opt.step()
        assert seen == [0.5, 0.25]


def test_state_dict_hooks_match_torch():
    def setup(lib, opt, log):
        opt.step()
        opt.register_state_dict_pre_hook(lambda o: log.append("pre"))
        opt.register_state_dict_pre_hook(lambda o: log.append("pre first"), prepend=True)
        opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
        opt.register_state_dict_post_hook(lambda o, sd: log.append(("post", sorted(sd))))
        saved = opt.state_dict()
        log.append(sorted(saved))
        opt.register_load_state_dict_pre_hook(lambda o, sd: log.append(("load pre", sorted(sd))))
        opt.register_load_state_dict_pre_hook(
            lambda o, sd: {"state": sd["state"], "param_groups": [dict(sd["param_groups"][0], lr=0.25)]})
        opt.register_load_state_dict_post_hook(lambda o: log.append(("load post", o.param_groups[0]["lr"])))
        opt.load_state_dict(saved)
        log.append(("caller's dict kept", sorted(saved), saved["param_groups"][0]["lr"]))

    assert record(ember, setup) == record(torch, setup)


@pytest.mark.parametrize("name", ["SGD", "Adam", "LBFGS"])
def test_hooks_wrap_every_optimizer(name):
    for lib in (ember, torch):
        opt = optimizer(lib, name)
        calls = []
        opt.register_step_post_hook(lambda o, a, k: calls.append(type(o).__name__))
        opt.step((lambda: lib.ones(()).sum()) if name == "LBFGS" else None)
        assert calls == [name]
