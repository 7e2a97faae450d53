"""nn.Module against torch: backward hooks (full, pre, legacy), global hooks, state_dict and load_state_dict hooks,
extra state, to_empty, share_memory, call_super_init, and the methods ember refuses (CPU only)."""
import copy
import os
import warnings

import pytest

import ember
from twins import both, both_raise, grad_fn_name, leaf


def modules(lib):
    return lib.nn.modules.module


def three_ins_three_outs(lib):
    """forward(x, k, y, s=None) -> (x * y, k, x + 1): a non-tensor input and output, keyword ignored by hooks."""

    class Three(lib.nn.Module):
        def forward(self, x, k, y, s=None):
            return x * y, k, x + 1

    return Three()


def scaled(lib):
    """x * w: a module with a parameter, whose input need not require grad."""

    class Scaled(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.tensor([1.0, 2.0], dtype=lib.float64))

        def forward(self, x):
            return x * self.w

    return Scaled()


def recorder(log, tag):
    def hook(module, *grads):
        log.append((tag, *grads))

    return hook


# ---------------------------------------------------------------------------------------------- full backward hooks


@pytest.mark.parametrize("use_b", [False, True])
def test_full_backward_hook_sees_one_entry_per_input_and_output(use_b):
    # Non-tensor positions are None; a tensor input that does not require grad gets zeros;
    # an output that received no gradient is None in grad_output.
    def program(lib):
        log = []
        m = three_ins_three_outs(lib)
        m.register_full_backward_hook(recorder(log, "full"))
        m.register_full_backward_pre_hook(recorder(log, "pre"))
        x, y = leaf(lib, [1.0, 2.0]), lib.tensor([3.0, 4.0], dtype=lib.float64)
        a, k, b = m(x, 5, y, s=x)
        loss = a.sum() + (b.sum() * 2 if use_b else 0)
        loss.backward()
        return log, k, grad_fn_name(a), grad_fn_name(b), x.grad

    both(program)


def test_hook_replaces_grad_input_and_pre_hook_replaces_grad_output():
    def program(lib):
        log = []
        m = three_ins_three_outs(lib)
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 100, None, go[2]))
        m.register_full_backward_hook(recorder(log, "after pre"))
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1, None, None))
        x = leaf(lib, [1.0, 2.0])
        a, _, _ = m(x, 5, lib.tensor([3.0, 4.0], dtype=lib.float64))
        a.sum().backward()
        return log, x.grad

    both(program)


@pytest.mark.parametrize("kind, message", [
    ("full", r"Backward hook returned an invalid number of grad_input, got 1, but expected 3"),
    ("pre", r"Backward pre hook returned an invalid number of grad_output, got 1, but expected 3"),
])
def test_a_replacement_of_the_wrong_length_is_refused(kind, message):
    def program(lib):
        m = three_ins_three_outs(lib)
        if kind == "full":
            m.register_full_backward_hook(lambda mod, gi, go: (gi[0],))
        else:
            m.register_full_backward_pre_hook(lambda mod, go: (go[0],))
        x = leaf(lib, [1.0, 2.0])
        m(x, 5, x)[0].sum().backward()

    both_raise(program, RuntimeError, message)


@pytest.mark.parametrize("returned", [None, (None,)])
def test_when_no_input_requires_grad_the_hook_fires_with_the_output_gradients(returned):
    def program(lib):
        log = []
        m = scaled(lib)
        m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, go)) or returned)
        with pytest.warns(UserWarning, match="no inputs require gradients"):
            m(lib.ones(2, dtype=lib.float64)).sum().backward()
        return log, m.w.grad

    both(program)


def test_when_no_input_requires_grad_the_hook_may_not_return_gradients():
    def program(lib):
        m = scaled(lib)
        m.register_full_backward_hook(lambda mod, gi, go: (lib.ones(2),))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m(lib.ones(2, dtype=lib.float64)).sum().backward()

    both_raise(program, RuntimeError, "no input requires gradient should always return None or None for all")


def test_no_backward_hook_runs_for_a_call_under_no_grad():
    def program(lib):
        log = []
        m = scaled(lib)
        m.register_full_backward_hook(recorder(log, "full"))
        x = leaf(lib, [1.0, 2.0])
        with lib.no_grad():
            out = m(x)
        return out.requires_grad, log

    both(program)


def test_an_output_that_is_not_a_tensor_or_tuple_warns_and_runs_no_hook():
    def program(lib):
        class Listed(lib.nn.Module):
            def forward(self, x):
                return [x * 2]

        log = []
        m = Listed()
        m.register_full_backward_hook(recorder(log, "full"))
        x = leaf(lib, [1.0])
        with pytest.warns(UserWarning, match="module output should be a Tensor or a tuple of Tensors but received"):
            out = m(x)
        out[0].sum().backward()
        return log, grad_fn_name(out[0])

    both(program)


def test_each_call_of_a_module_gets_its_own_hook_call_in_graph_order():
    def program(lib):
        log = []
        m = three_ins_three_outs(lib)
        m.register_full_backward_hook(recorder(log, "full"))
        x, y = leaf(lib, [1.0, 2.0]), lib.tensor([3.0, 4.0], dtype=lib.float64)
        a1, _, _ = m(x, 1, y)
        a2, _, _ = m(x * 2, 1, y)
        (a1.sum() + a2.sum() * 3).backward(retain_graph=True)
        a1.sum().backward()  # a second backward through the same call runs its hooks again
        return log, x.grad

    both(program)


def test_order_of_forward_and_backward_hooks_in_nested_modules():
    def program(lib):
        log = []

        def tagged(name, module):
            module.register_forward_pre_hook(lambda m, args: log.append(f"{name} forward pre"))
            module.register_forward_hook(lambda m, args, out: log.append(
                (f"{name} forward", grad_fn_name(args[0]), grad_fn_name(out))))
            module.register_full_backward_pre_hook(lambda m, go: log.append(f"{name} backward pre"))
            module.register_full_backward_hook(lambda m, gi, go: log.append((f"{name} backward", gi, go)))

        inner, outer = lib.nn.Tanh(), lib.nn.Sequential()
        outer.append(scaled(lib)).append(inner)
        tagged("inner", inner)
        tagged("outer", outer)
        x = leaf(lib, [1.0, -1.0])
        out = outer(x)
        out.sum().backward()
        return log, grad_fn_name(out)

    both(program)


def test_prepend_and_removal_of_backward_hooks():
    def program(lib):
        log = []
        m = scaled(lib)
        first = m.register_full_backward_hook(lambda mod, gi, go: log.append("first"))
        m.register_full_backward_hook(lambda mod, gi, go: log.append("prepended"), prepend=True)
        m.register_full_backward_pre_hook(lambda mod, go: log.append("pre"))
        gone = m.register_full_backward_pre_hook(lambda mod, go: log.append("pre prepended"), prepend=True)
        x = leaf(lib, [1.0, 2.0])
        m(x).sum().backward()
        first.remove()
        gone.remove()
        m(x).sum().backward()
        return log

    both(program)


def test_a_hooked_module_returns_views_made_by_the_hook_function():
    def program(lib):
        class Same(lib.nn.Module):
            def forward(self, x):
                self.seen = x
                return x

        m = Same()
        m.register_full_backward_hook(lambda mod, gi, go: None)
        x = leaf(lib, [1.0]) * 1
        out = m(x)
        return out is x, m.seen is x, out is m.seen, grad_fn_name(out), grad_fn_name(m.seen)

    both(program)


@pytest.mark.parametrize("where", ["non-leaf input in forward", "output after the call"])
def test_changing_a_hooked_tensor_in_place_is_refused(where):
    def program(lib):
        class Doubler(lib.nn.Module):
            def forward(self, x):
                return x.mul_(2) if where.startswith("non-leaf") else x * 2

        m = Doubler()
        m.register_full_backward_hook(lambda mod, gi, go: None)
        m(leaf(lib, [1.0]) * 1).add_(1)

    both_raise(program, RuntimeError, r"Output 0 of BackwardHookFunction(Backward)? is a view and is being modified "
                                      "inplace. This view was created inside a custom Function")


def test_changing_a_hooked_leaf_input_in_place_names_the_hook_function():
    def program(lib):
        class Doubler(lib.nn.Module):
            def forward(self, x):
                return x.mul_(2)

        m = Doubler()
        m.register_full_backward_hook(lambda mod, gi, go: None)
        m(leaf(lib, [1.0]))

    both_raise(program, RuntimeError, "Output 0 of BackwardHookFunction")


@pytest.mark.parametrize("second", ["register_backward_hook", "register_full_backward_hook"])
def test_full_and_legacy_backward_hooks_do_not_mix_on_a_module(second):
    def program(lib):
        m = lib.nn.ReLU()
        first = "register_full_backward_hook" if second == "register_backward_hook" else "register_backward_hook"
        getattr(m, first)(lambda *a: None).remove()  # the kind stays chosen after removal
        getattr(m, second)(lambda *a: None)

    both_raise(program, RuntimeError, "Cannot use both regular backward hooks and full backward hooks on a single "
                                      "Module. Please use only one of them")


# ---------------------------------------------------------------------------------------------- legacy hooks


@pytest.mark.parametrize("case", ["single op, non-leaf input", "single op, leaf input", "two inputs",
                                  "list output", "replacement"])
def test_legacy_backward_hook_sees_the_last_nodes_gradients_and_warns_as_torch(case):
    def program(lib):
        log = []
        m = scaled(lib) if case == "two inputs" else lib.nn.Sigmoid()
        if case == "list output":
            class Listed(lib.nn.Module):
                def forward(self, x):
                    return [lib.sigmoid(x)]
            m = Listed()
        if case == "replacement":
            m.register_backward_hook(lambda mod, gi, go: (gi[0] * 0 + 7,))
        else:
            m.register_backward_hook(lambda mod, gi, go: log.append((gi, go)))
        x = leaf(lib, [0.0, 1.0])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = m(x if "leaf input" in case and "non-leaf" not in case or case == "two inputs" else x * 1)
        out = out[0] if isinstance(out, list) else out
        out.sum().backward()
        messages = [(w.category.__name__, str(w.message).split(" is deprecated")[0][-40:]) for w in caught]
        return log, messages, x.grad

    both(program)


# ---------------------------------------------------------------------------------------------- global hooks


def test_global_forward_hooks_run_before_the_modules_own_and_are_removable():
    def program(lib):
        log = []
        mm = modules(lib)
        m = lib.nn.ReLU()
        m.register_forward_pre_hook(lambda mod, args: log.append("own pre"))
        m.register_forward_hook(lambda mod, args, out: log.append("own"))
        handles = [
            mm.register_module_forward_pre_hook(lambda mod, args: (args[0] + 1,)),
            mm.register_module_forward_hook(lambda mod, args, kwargs, out: log.append(("global", kwargs)) or out * 2,
                                            with_kwargs=True),
        ]
        first = m(lib.tensor([-3.0, 1.0]))
        for handle in handles:
            handle.remove()
        return log, first, m(lib.tensor([-3.0, 1.0]))

    both(program)


def test_global_always_call_forward_hook_runs_when_forward_raises():
    def program(lib):
        log = []
        mm = modules(lib)

        class Broken(lib.nn.Module):
            def forward(self, x):
                raise ValueError("broken forward")

        handles = [
            mm.register_module_forward_hook(lambda mod, args, out: log.append(("global", out)), always_call=True),
            mm.register_module_forward_hook(lambda mod, args, out: 1 / 0, always_call=True),
        ]
        try:
            with pytest.warns(UserWarning, match="global module forward hook with ``always_call=True`` raised"):
                with pytest.raises(ValueError, match="broken forward"):
                    Broken()(lib.ones(1))
        finally:
            for handle in handles:
                handle.remove()
        return log

    both(program)


def test_an_always_call_hook_runs_once_when_a_later_forward_hook_raises():
    def program(lib):
        log = []
        m = lib.nn.ReLU()
        m.register_forward_hook(lambda mod, args, out: log.append(("always", out)) or out + 1, always_call=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("second", out)) or 1 / 0)
        with pytest.raises(ZeroDivisionError):
            m(lib.tensor([-1.0, 2.0]))
        return log

    both(program)


def test_global_backward_hooks_run_before_the_modules_own():
    def program(lib):
        log = []
        mm = modules(lib)
        m = scaled(lib)
        m.register_full_backward_hook(lambda mod, gi, go: log.append("own"))
        m.register_full_backward_pre_hook(lambda mod, go: log.append("own pre"))
        handles = [mm.register_module_full_backward_hook(lambda mod, gi, go: log.append(("global", type(mod).__name__))),
                   mm.register_module_full_backward_pre_hook(lambda mod, go: log.append("global pre"))]
        try:
            m(leaf(lib, [1.0, 2.0])).sum().backward()
        finally:
            for handle in handles:
                handle.remove()
        return log

    both(program)


def test_global_legacy_backward_hook_is_refused_once_a_global_full_one_was_registered():
    def program(lib):
        modules(lib).register_module_full_backward_hook(lambda *a: None).remove()
        modules(lib).register_module_backward_hook(lambda *a: None)

    both_raise(program, RuntimeError, "Cannot use both regular backward hooks and full backward hooks as a global "
                                      "Module hook")


def test_registration_hooks_see_and_may_replace_what_is_registered():
    def program(lib):
        log = []
        mm = modules(lib)
        handles = [
            mm.register_module_parameter_registration_hook(lambda m, name, p: log.append(("param", name)) or None),
            mm.register_module_buffer_registration_hook(
                lambda m, name, b: log.append(("buffer", name, b is None)) or (None if b is None else b * 2)),
            mm.register_module_module_registration_hook(
                lambda m, name, child: log.append(("module", name, type(child).__name__))),
        ]
        try:
            m = lib.nn.Sequential(lib.nn.Linear(1, 1))
            m.register_buffer("b", lib.ones(1))
            m.b = lib.ones(1) * 3  # assigning to an existing buffer registers again
            m.register_buffer("nothing", None)
            m.register_parameter("p", None)  # None parameters are not passed to the hooks
            m.extra = lib.nn.ReLU()
            m.extra = None
            m.add_module("more", lib.nn.Tanh())
        finally:
            for handle in handles:
                handle.remove()
        return log, m.b

    both(program)


# ---------------------------------------------------------------------------------------------- state_dict hooks


def tree(lib):
    """root -> (inner -> leaf Linear), with a buffer at the root."""
    root = lib.nn.Module()
    root.inner = lib.nn.Sequential(lib.nn.Linear(1, 1))
    root.register_buffer("count", lib.zeros(1))
    return root


def test_state_dict_hooks_run_around_each_module_in_order():
    def program(lib):
        log = []
        root = tree(lib)
        for name, module in root.named_modules():
            module.register_state_dict_pre_hook(lambda m, prefix, keep_vars, n=name: log.append(("pre", n, prefix,
                                                                                                 keep_vars)))
            module.register_state_dict_post_hook(
                lambda m, sd, prefix, meta, n=name: log.append(("post", n, prefix, list(sd), dict(meta))))
        sd = root.state_dict(prefix="model.", keep_vars=True)
        return log, list(sd)

    both(program)


def test_a_public_state_dict_post_hook_may_not_return_a_dict():
    def program(lib):
        m = lib.nn.Linear(1, 1)
        m.register_state_dict_post_hook(lambda m, sd, prefix, meta: {})
        m.state_dict()

    both_raise(program, RuntimeError, "state_dict post-hook must return None")


def test_the_private_state_dict_hook_may_return_a_new_dict_but_not_be_a_public_one():
    def program(lib):
        m = lib.nn.Linear(1, 1)
        m._register_state_dict_hook(lambda m, sd, prefix, meta: {"replaced": 1})
        result = m.state_dict()

        def public(m, sd, prefix, meta):
            return None

        m.register_state_dict_post_hook(public)
        with pytest.raises(RuntimeError, match="Cannot register the same function as the state dict post hook"):
            m._register_state_dict_hook(public)
        return result

    both(program)


# ---------------------------------------------------------------------------------------------- extra state


def counted(lib):
    class Counted(lib.nn.Linear):
        def __init__(self):
            super().__init__(1, 1)
            self.calls = 0

        def get_extra_state(self):
            return {"calls": self.calls}

        def set_extra_state(self, state):
            self.calls = state["calls"]

    return Counted()


def test_extra_state_is_saved_and_loaded():
    def program(lib):
        source = lib.nn.Sequential(counted(lib))
        source[0].calls = 7
        sd = source.state_dict()
        target = lib.nn.Sequential(counted(lib))
        result = target.load_state_dict(sd)
        return list(sd), sd["0._extra_state"], target[0].calls, repr(result)

    both(program)


@pytest.mark.parametrize("strict", [True, False])
def test_extra_state_missing_or_unexpected_is_reported(strict):
    def program(lib):
        with_extra = lib.nn.Sequential(counted(lib))
        plain = lib.nn.Sequential(lib.nn.Linear(1, 1))
        missing = with_extra.load_state_dict(plain.state_dict(), strict=False)
        unexpected = plain.load_state_dict(with_extra.state_dict(), strict=False)
        if strict:
            plain.load_state_dict(with_extra.state_dict())
        return tuple(missing), tuple(unexpected)

    if strict:
        both_raise(program, RuntimeError, r'Unexpected key\(s\) in state_dict: "0._extra_state"')
    else:
        both(program)


def test_default_extra_state_methods_raise():
    def program(lib):
        lib.nn.Linear(1, 1).get_extra_state()

    both_raise(program, RuntimeError, "get_extra_state")


# ---------------------------------------------------------------------------------------------- load_state_dict hooks


@pytest.mark.parametrize("strict", [True, False])
def test_load_hooks_see_what_torch_passes_them(strict):
    def program(lib):
        log = []
        root = tree(lib)

        def pre(module, sd, prefix, meta, strict_, missing, unexpected, errors):
            log.append(("pre", prefix, sorted(sd), dict(meta), strict_, list(missing), list(unexpected)))
            if prefix + "w" in sd:  # an old name, renamed before loading
                sd[prefix + "weight"] = sd.pop(prefix + "w")

        def post(module, keys):
            log.append(("post", type(module).__name__, list(keys.missing_keys), list(keys.unexpected_keys)))

        for module in root.modules():
            module.register_load_state_dict_pre_hook(pre)
            module.register_load_state_dict_post_hook(post)
        sd = tree(lib).state_dict()
        sd["inner.0.w"] = sd.pop("inner.0.weight")
        sd["stray"] = lib.ones(1)
        result = root.load_state_dict(sd, strict=False) if not strict else None
        if strict:
            with pytest.raises(RuntimeError, match=r'Unexpected key\(s\) in state_dict: "stray"'):
                root.load_state_dict(sd)
        return log, result and tuple(result), "inner.0.w" in sd

    both(program)


def test_a_load_post_hook_may_clear_the_keys_strict_would_refuse():
    def program(lib):
        m = lib.nn.Linear(1, 1)

        def forgive(module, keys):
            keys.missing_keys.clear()

        m.register_load_state_dict_post_hook(forgive)
        return repr(m.load_state_dict({"weight": lib.ones(1, 1)})), m.weight

    both(program)


def test_a_load_post_hook_may_not_return_a_value():
    def program(lib):
        m = lib.nn.Linear(1, 1)
        m.register_load_state_dict_post_hook(lambda module, keys: keys)
        m.load_state_dict(m.state_dict())

    both_raise(program, AssertionError, "not expected to return new values")


def test_a_subclass_reads_an_old_format_by_its_version():
    def program(lib):
        class Renamed(lib.nn.Linear):
            _version = 2

            def _load_from_state_dict(self, sd, prefix, meta, *rest):
                if meta.get("version", 1) < 2 and prefix + "kernel" in sd:
                    sd[prefix + "weight"] = sd.pop(prefix + "kernel")
                super()._load_from_state_dict(sd, prefix, meta, *rest)

        old = lib.nn.Sequential(lib.nn.Linear(1, 1))
        sd = old.state_dict()
        sd["0.kernel"] = sd.pop("0.weight")
        new = lib.nn.Sequential(Renamed(1, 1))
        result = new.load_state_dict(sd)
        return repr(result), new[0].weight.tolist() == old[0].weight.tolist(), dict(new.state_dict()._metadata)

    both(program)


# ---------------------------------------------------------------------------------------------- the rest of the API


@pytest.mark.parametrize("recurse", [True, False])
def test_to_empty_keeps_parameters_shapes_and_dtypes(recurse):
    def program(lib):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3))
        m.register_buffer("b", lib.zeros(2, dtype=lib.int64))
        weight = m[0].weight
        result = m.to_empty(device="cpu", recurse=recurse)
        return (result is m, m[0].weight is weight, m[0].weight.requires_grad, type(m[0].weight).__name__,
                [(n, tuple(t.shape), str(t.dtype).split(".")[-1]) for n, t in m.state_dict().items()])

    both(program)


def test_to_empty_refuses_another_device_and_needs_the_keyword():
    with pytest.raises(RuntimeError, match="CPU only"):
        ember.nn.Linear(1, 1).to_empty(device="cuda")
    both_raise(lambda lib: lib.nn.Linear(1, 1).to_empty("cpu"), TypeError, "positional argument")


def test_share_memory_lets_a_forked_process_update_the_parameters():
    def program(lib):
        m = lib.nn.Linear(2, 1)
        weight = m.weight
        assert m.share_memory() is m and m.weight is weight
        pid = os.fork()
        if pid == 0:  # the child: an in-place update, seen by the parent through the shared pages
            with lib.no_grad():
                m.weight.fill_(5.0)
                m.bias.fill_(-1.0)
            os._exit(0)
        os.waitpid(pid, 0)
        return m.weight, m.bias

    both(program)


def test_call_super_init_passes_arguments_along_the_mro():
    def program(lib):
        class Named:
            def __init__(self, name="anonymous"):
                self.name = name

        class Layer(lib.nn.Module, Named):
            call_super_init = True

        class Plain(lib.nn.Module, Named):
            pass

        return Layer(name="x").name, Layer().name, hasattr(Plain(), "name"), lib.nn.Module.call_super_init

    both(program)


def test_arguments_without_call_super_init_report_the_keyword_first():
    both_raise(lambda lib: lib.nn.Module(1, x=2), TypeError, "got an unexpected keyword argument 'x'")


def test_class_attributes_torch_has():
    def program(lib):
        return lib.nn.Module.dump_patches, lib.nn.Module.T_destination.__name__, lib.nn.Module.T_destination.__bound__

    both(program)


@pytest.mark.parametrize("call, message", [
    (lambda m: m.ipu(), "CPU only; there is no IPU"),
    (lambda m: m.xpu(0), "CPU only; there is no XPU"),
    (lambda m: m.mtia(), "CPU only; there is no MTIA"),
])
def test_what_ember_cannot_do_is_refused_with_the_reason(call, message):
    with pytest.raises(RuntimeError, match=message):
        call(ember.nn.Linear(1, 1))


def _double_output(module, args, output):
    return output * 2


def test_a_copied_or_unpickled_module_keeps_its_hooks():
    def program(lib):
        m = lib.nn.ReLU()
        m.register_forward_hook(_double_output)
        copied = copy.deepcopy(m)
        state = m.__getstate__() if hasattr(m, "__getstate__") else dict(m.__dict__)
        for name in ("_forward_hooks_always_called", "_backward_pre_hooks", "_state_dict_pre_hooks"):
            state.pop(name)  # as a module pickled by an older version
        revived = lib.nn.ReLU.__new__(lib.nn.ReLU)
        revived.__setstate__(state)
        x = lib.tensor([1.0])
        return copied(x), revived(x), revived.state_dict(), revived._is_full_backward_hook

    both(program)
