"""ember.library's autocast rules, fall-through marker, kernel look-up and compatibility names against torch's."""
import itertools
import warnings

import pytest
import torch

import ember

_ids = itertools.count()


def _add_op(lib):
    """A fresh custom op ``x + y`` (unique name: registrations outlive a test)."""
    name = f"subspaces_lib::add{next(_ids)}"

    @lib.library.custom_op(name, mutates_args=())
    def add(x: lib.Tensor, y: lib.Tensor) -> lib.Tensor:
        return x + y.to(x.dtype)

    return name, add


def _dtypes(lib, cast_to, second):
    name, add = _add_op(lib)
    lib.library.register_autocast(name, "cpu", getattr(lib, cast_to))
    with lib.autocast("cpu"):
        inside = add(lib.ones(2), lib.ones(2, dtype=getattr(lib, second))).dtype
        nested = lib.is_autocast_enabled("cpu")
    outside = add(lib.ones(2), lib.ones(2, dtype=getattr(lib, second))).dtype
    return str(inside).split(".")[1], str(outside).split(".")[1], nested


@pytest.mark.parametrize("cast_to", ["bfloat16", "float16", "float64"])
@pytest.mark.parametrize("second", ["float32", "float64", "int64"])
def test_register_autocast_casts_floating_inputs_as_torch(cast_to, second):
    assert _dtypes(ember, cast_to, second) == _dtypes(torch, cast_to, second)


def test_autocast_is_off_inside_the_op_as_torch():
    seen = {}
    for lib in (torch, ember):
        name = f"subspaces_lib::probe{next(_ids)}"

        @lib.library.custom_op(name, mutates_args=())
        def probe(x: lib.Tensor) -> lib.Tensor:
            seen[lib.__name__] = lib.is_autocast_enabled("cpu")
            return x.clone()

        lib.library.register_autocast(name, "cpu", lib.bfloat16)
        with lib.autocast("cpu"):
            probe(lib.ones(1))
    assert seen["ember"] is seen["torch"] is False


def test_register_autocast_errors_as_torch():
    for lib in (torch, ember):
        name, _ = _add_op(lib)
        with pytest.raises(AttributeError):
            lib.library.register_autocast(name, "xla", lib.float16)
        with pytest.raises(AttributeError):
            lib.library.register_autocast("subspaces_lib::never_defined", "cpu", lib.float16)


def test_fallthrough_kernel_is_never_called_and_drops_the_autocast_rule():
    for lib in (torch, ember):
        with pytest.raises(NotImplementedError, match="should never be called"):
            lib.library.fallthrough_kernel()
    results = []
    for lib in (torch, ember):
        name, add = _add_op(lib)
        lib.library.register_autocast(name, "cpu", lib.bfloat16)
        keep = lib.library.Library("subspaces_lib", "IMPL")
        keep.impl(name.split("::")[1], lib.library.fallthrough_kernel, "AutocastCPU")
        with lib.autocast("cpu"):
            results.append(str(add(lib.ones(2), lib.ones(2)).dtype).split(".")[1])
    assert results == ["float32", "float32"]


def test_get_kernel_runs_the_kernel_as_torch():
    results = []
    for lib in (torch, ember):
        name, _ = _add_op(lib)
        kernel = lib.library.get_kernel(name, "CPU")
        keyset = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU) if lib is torch else None
        results.append(kernel.call_boxed(keyset, lib.ones(2), lib.full((2,), 3.0)).tolist())
        assert kernel.op_handle is not None
        with pytest.raises(RuntimeError):
            lib.library.get_kernel("subspaces_lib::never_defined", "CPU")
    assert results[0] == results[1] == [4.0, 4.0]


def test_get_ctx_is_none_outside_a_fake_impl_as_torch():
    assert ember.library.get_ctx() is None and torch.library.get_ctx() is None


def test_impl_abstract_warns_and_registers_the_fake():
    for lib in (torch, ember):
        name, add = _add_op(lib)
        with pytest.warns(FutureWarning, match="register_fake"):
            lib.library.impl_abstract(name, lambda x, y: lib.empty_like(x))
        lib.library.opcheck(add, (lib.ones(2), lib.ones(2)))


def test_triton_op_runs_its_body_without_triton_as_torch():
    results = []
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")

            @lib.library.triton_op(f"subspaces_lib::triple{next(_ids)}", mutates_args=())
            def triple(x: lib.Tensor) -> lib.Tensor:
                return x * 3

        results.append(triple(lib.ones(2)).tolist())
        with pytest.raises(ModuleNotFoundError):
            lib.library.wrap_triton(lambda: None)
    assert results[0] == results[1]


def test_register_torch_dispatch_refuses_clearly():
    name, _ = _add_op(ember)
    with pytest.raises(NotImplementedError, match="__torch_function__"):
        ember.library.register_torch_dispatch(name, ember.Tensor, lambda *a: None)


def test_all_lists_torchs_names():
    assert set(torch.library.__all__) <= set(ember.library.__all__)
