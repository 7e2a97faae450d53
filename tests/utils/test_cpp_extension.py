"""C and C++ extensions compiled by the machine's compiler: calls, no-copy crossing, strides, dtype errors,
compile errors, the build cache and its lock, setuptools builds, and kernels made differentiable.

One C++ module (the example's LinearFunction kernels plus this file's) is built once per run; the cache,
error and concurrency tests use tiny C sources, which compile in a fraction of a second.
"""
import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember.utils import cpp_extension
from ember.utils.cpp_extension import _build

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("linear_cpp", ROOT / "examples" / "cpp_extension" / "linear_cpp.py")
linear_cpp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(linear_cpp)

CPP_SOURCE = r"""
extern "C" double c_sum(const float *data, int64_t n);  // from the C file built beside this one

ember::Tensor same(ember::Tensor x) { return x; }
ember::Tensor dense(ember::Tensor x) { return x.contiguous(); }

ember::Tensor scale(ember::Tensor x, double factor) {
    EMBER_CHECK(x.is_contiguous(), "scale: x must be contiguous");
    ember::Tensor out = ember::empty_like(x);
    const float *in = x.data_ptr<float>();
    float *o = out.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = static_cast<float>(in[i] * factor);
    return out;
}

// Sums a 2-d tensor through its strides, so it reads a transposed or sliced view in place.
double strided_sum(ember::Tensor x) {
    EMBER_CHECK(x.dim() == 2, "strided_sum: expected a 2-d tensor, got ", x.dim(), "-d");
    return EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "strided_sum", [&] {
        const scalar_t *p = x.data_ptr<scalar_t>();
        double total = 0;
        for (int64_t i = 0; i < x.size(0); ++i)
            for (int64_t j = 0; j < x.size(1); ++j) total += p[i * x.stride(0) + j * x.stride(1)];
        return total;
    });
}

double sum_by_c(ember::Tensor x) { return c_sum(x.contiguous().data_ptr<float>(), x.numel()); }

std::tuple<std::vector<int64_t>, std::vector<int64_t>, bool, std::string> describe(ember::Tensor x) {
    return {x.sizes(), x.strides(), x.is_contiguous(), ember_dtype_name(x.dtype())};
}

template <typename scalar_t> scalar_t sigmoid(scalar_t v) { return 1 / (1 + std::exp(-v)); }

ember::Tensor silu_forward(ember::Tensor x) {
    ember::Tensor y = ember::empty_like(x);
    EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "silu_forward", [&] {
        const scalar_t *in = x.data_ptr<scalar_t>();
        scalar_t *out = y.data_ptr<scalar_t>();
        for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] * sigmoid(in[i]);
    });
    return y;
}

ember::Tensor silu_backward(ember::Tensor grad, ember::Tensor x) {
    ember::Tensor dx = ember::empty_like(x);
    EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "silu_backward", [&] {
        const scalar_t *g = grad.data_ptr<scalar_t>(), *in = x.data_ptr<scalar_t>();
        scalar_t *out = dx.data_ptr<scalar_t>();
        for (int64_t i = 0; i < x.numel(); ++i) {
            scalar_t s = sigmoid(in[i]);
            out[i] = g[i] * s * (1 + in[i] * (1 - s));
        }
    });
    return dx;
}
"""
C_HELPER = "double c_sum(const float *data, int64_t n) { double t = 0; while (n--) t += *data++; return t; }"
TEST_FUNCTIONS = ["same", "dense", "scale", "strided_sum", "sum_by_c", "describe", "silu_forward", "silu_backward"]

ADD_ONE = r"""
EMBER_C_FUNCTION(add_one) {
    ember_tensor x, out;
    if (ember_check_nargs("add_one", nargs, 1) < 0 || ember_arg(args[0], "add_one", "x", EMBER_FLOAT32, &x) < 0)
        return NULL;
    if (!x.contiguous) {
        PyErr_SetString(PyExc_ValueError, "add_one: x must be contiguous");
        return NULL;
    }
    PyObject *result = ember_empty_like(&x, &out);
    for (int64_t i = 0; result && i < x.numel; i++) ((float *)out.data)[i] = ((float *)x.data)[i] + OFFSET;
    return result;
}
"""


@pytest.fixture(scope="session")
def extensions_dir(tmp_path_factory):
    """The build cache of this run, shared by its xdist workers: each build is keyed by its sources and flags and
    made under a lock, so the C++ module compiles once per run rather than once per worker, and every test here
    uses an extension name of its own."""
    run_dir = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run_dir = run_dir.parent  # a worker's directory sits in the run's
    path = run_dir / "ember_extensions"
    path.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EMBER_EXTENSIONS_DIR", str(path))
        yield path


@pytest.fixture(scope="session")
def cpp(extensions_dir):
    functions = {**linear_cpp.FUNCTIONS, **{f: f for f in TEST_FUNCTIONS}}
    return cpp_extension.load_inline("ember_test_cpp", [linear_cpp.SOURCE, CPP_SOURCE], functions=functions,
                                     extra_cflags=linear_cpp.CFLAGS, c_sources=C_HELPER)


def add_one_module(name, offset="1.0f", **kwargs):
    return cpp_extension.load_inline(name, c_sources=f"#define OFFSET {offset}\n" + ADD_ONE, functions=["add_one"],
                                     **kwargs)


def forbid_compiling(monkeypatch):
    def fail(command, what, name):
        raise AssertionError(f"the compiler ran ({what}) where the cache should have answered")

    monkeypatch.setattr(_build, "run_compiler", fail)


# ---- C kernels


def test_c_kernel_matches_ember(extensions_dir):
    module = add_one_module("c_add_one")
    x = ember.randn(3, 4)
    np.testing.assert_array_equal(module.add_one(x).numpy(), (x + 1).numpy())
    assert module.add_one(ember.ones(0)).shape == (0,)


def test_c_kernel_errors(extensions_dir):
    module = add_one_module("c_add_one")
    with pytest.raises(RuntimeError, match=r"add_one\(\): expected argument 'x' to be a float32 tensor, but got "
                                           r"float64; convert it before the call \(x.to\(ember.float32\)\)"):
        module.add_one(ember.ones(2, dtype=ember.float64))
    with pytest.raises(TypeError, match=r"add_one\(\): argument 'x' must be Tensor, not list"):
        module.add_one([1.0])
    with pytest.raises(TypeError, match=r"add_one\(\) takes 1 positional argument but 2 were given"):
        module.add_one(ember.ones(2), ember.ones(2))
    with pytest.raises(ValueError, match="must be contiguous"):
        module.add_one(ember.ones(3, 2).t())


def test_load_inline_without_functions_takes_the_sources_module(extensions_dir):
    source = "#define OFFSET 0.5f\n" + ADD_ONE + 'EMBER_MODULE(EMBER_FUNCTION(add_one, "x + 0.5"))\n'
    module = cpp_extension.load_inline("c_own_module", c_sources=source)
    assert module.add_one(ember.zeros(1)).item() == 0.5


def test_load_c_file_that_defines_its_module(tmp_path, extensions_dir):
    source = tmp_path / "shift.c"
    source.write_text("#include <ember/extension.h>\n#define OFFSET 2.5f\n" + ADD_ONE +
                      'EMBER_MODULE(EMBER_FUNCTION(add_one, "x + 2.5"))\n')
    module = cpp_extension.load("c_shift", [str(source)])
    assert module.add_one.__doc__ == "x + 2.5"
    np.testing.assert_array_equal(module.add_one(ember.zeros(2)).numpy(), [2.5, 2.5])


# ---- C++ kernels


def test_cpp_kernel_matches_ember_and_shares_memory(cpp):
    x = ember.randn(5, 3)
    np.testing.assert_allclose(cpp.scale(x, 2.5).numpy(), (x * 2.5).numpy(), rtol=1e-6)
    assert cpp.same(x) is x  # the Tensor object itself crosses, both ways
    weight = ember.nn.Parameter(ember.ones(2))
    assert cpp.same(weight) is weight and cpp.scale(weight, 3.0).tolist() == [3.0, 3.0]  # subclasses too
    assert cpp.dense(x).data_ptr() == x.data_ptr()  # contiguous already: no copy
    assert cpp.sum_by_c(x) == pytest.approx(float(x.double().sum()), rel=1e-6)


def test_cpp_kernel_reads_non_contiguous_input_through_strides(cpp):
    base = ember.arange(24, dtype=ember.float64).reshape(4, 6)
    for view in (base.t(), base[1:, ::2], base[:, 2:3]):
        assert cpp.strided_sum(view) == pytest.approx(float(view.sum()))
        sizes, strides, contiguous, dtype = cpp.describe(view)
        assert (tuple(sizes), tuple(strides), contiguous, dtype) == (
            tuple(view.shape), view.stride(), view.is_contiguous(), "float64")
    made = cpp.dense(base.t())
    assert made.is_contiguous() and made.data_ptr() != base.data_ptr()
    assert ember.equal(made, base.t())


@settings(max_examples=40)
@given(rows=st.integers(0, 5), cols=st.integers(0, 5), row_step=st.integers(1, 3), col_step=st.integers(-3, 3),
       transpose=st.booleans(), double=st.booleans())
def test_strided_views_cross_as_they_are(cpp, rows, cols, row_step, col_step, transpose, double):
    base = ember.arange(rows * cols, dtype=ember.float64 if double else ember.float32).reshape(rows, cols)
    view = base.flip(1)[::row_step, ::abs(col_step)] if col_step < 0 else base[::row_step, ::max(col_step, 1)]
    view = view.t() if transpose else view
    sizes, strides, contiguous, dtype = cpp.describe(view)
    assert (tuple(sizes), contiguous) == (tuple(view.shape), view.is_contiguous())
    # a stride says where elements are: only those of dims longer than 1, in a tensor that has elements, do
    meaningful = [d for d in range(view.dim()) if view.shape[d] > 1 and view.numel()]
    assert [strides[d] for d in meaningful] == [view.stride(d) for d in meaningful]
    assert dtype == str(view.dtype).removeprefix("ember.")
    assert cpp.strided_sum(view) == pytest.approx(float(view.double().sum()))
    dense = cpp.dense(view)
    assert ember.equal(dense, view) and dense.is_contiguous()
    assert (dense.data_ptr() == view.data_ptr()) == (view.is_contiguous() or view.numel() == 0)


def test_cpp_errors(cpp):
    with pytest.raises(RuntimeError, match="data_ptr: expected a float32 tensor but got float64; convert it"):
        cpp.scale(ember.ones(2, dtype=ember.float64), 2.0)
    with pytest.raises(RuntimeError, match="strided_sum: expected a float32 or float64 tensor but got int64"):
        cpp.strided_sum(ember.ones(2, 2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="strided_sum: expected a 2-d tensor, got 1-d"):
        cpp.strided_sum(ember.ones(2))
    with pytest.raises(TypeError, match=r"incompatible function arguments(.|\n)*ember.Tensor"):
        cpp.scale(np.ones(2, np.float32), 2.0)


# ---- kernels made differentiable


def test_kernel_function_gradcheck_and_torch(cpp):
    SiLU = cpp_extension.kernel_function(cpp.silu_forward, cpp.silu_backward, name="SiLU")
    x = ember.randn(4, 3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(SiLU.apply, (x,))
    y = SiLU.apply(x.t())  # a non-contiguous input reaches the kernel contiguous
    y.sum().backward()
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    torch.nn.functional.silu(tx.t()).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), torch.nn.functional.silu(tx.t()).detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    assert type(y.grad_fn).__name__ == "SiLUBackward"
    v = ember.ones(4, 3, dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(SiLU.apply(x), x, grad_outputs=v, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


@pytest.mark.parametrize("bias", [True, False])
def test_example_linear_function_against_torch(cpp, bias):
    LinearFunction = linear_cpp.linear_function(cpp)
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=(6, 5)), rng.normal(size=(4, 5))] + ([rng.normal(size=4)] if bias else [])
    inputs = [ember.tensor(a, requires_grad=True) for a in arrays]
    assert ember.autograd.gradcheck(LinearFunction.apply, tuple(inputs))
    out = LinearFunction.apply(*inputs)
    (out * out).sum().backward()
    t_inputs = [torch.tensor(a, requires_grad=True) for a in arrays]
    t_out = torch.nn.functional.linear(*t_inputs)
    (t_out * t_out).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12)
    for mine, theirs in zip(inputs, t_inputs):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


def test_example_module_trains(cpp):
    ember.manual_seed(0)
    model = linear_cpp.Linear(linear_cpp.linear_function(cpp), 3, 2)
    assert repr(model) == "Linear(input_features=3, output_features=2, bias=True)"
    optimizer = ember.optim.SGD(model.parameters(), lr=0.5)
    x, target = ember.randn(16, 3), ember.randn(16, 2)
    losses = []
    for _ in range(20):
        loss = ember.nn.functional.mse_loss(model(x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.9 * losses[0]
    assert model.weight.grad.shape == (2, 3)


# ---- building: errors, cache, lock, setuptools


def test_compile_error_shows_the_failing_line(extensions_dir):
    with pytest.raises(cpp_extension.CompileError) as caught:
        cpp_extension.load_inline("c_broken", c_sources="int ok(void) { return 1; }\nint broken(void) { return 1 +; }\n")
    message = str(caught.value)
    assert message.startswith("Error building extension 'c_broken': compiling kernels.c failed")
    assert "kernels.c:3:" in message and "return 1 +; }" in message  # line 3: the header include comes first
    assert isinstance(caught.value, RuntimeError)


def test_second_load_takes_no_compile(extensions_dir, monkeypatch, capsys):
    first = add_one_module("c_cached", offset="3.0f")
    forbid_compiling(monkeypatch)
    second = add_one_module("c_cached", offset="3.0f", verbose=True)
    assert "(cached)" in capsys.readouterr().out
    assert second.add_one(ember.zeros(1)).item() == first.add_one(ember.zeros(1)).item() == 3.0


def test_changed_source_or_flags_rebuild(extensions_dir, monkeypatch):
    assert add_one_module("c_changing", offset="1.0f").add_one(ember.zeros(1)).item() == 1.0
    assert add_one_module("c_changing", offset="7.0f").add_one(ember.zeros(1)).item() == 7.0
    builds = [p for p in (extensions_dir / "c_changing").iterdir() if p.is_dir()]
    assert len(builds) == 2
    add_one_module("c_changing", offset="7.0f", extra_cflags=["-O1"])
    assert len([p for p in (extensions_dir / "c_changing").iterdir() if p.is_dir()]) == 3


def test_two_processes_build_the_same_new_extension_once(extensions_dir):
    program = textwrap.dedent(f"""
        import ember
        from ember.utils import cpp_extension
        source = {("#define OFFSET 5.0f" + ADD_ONE)!r}
        module = cpp_extension.load_inline("c_race", c_sources=source, functions=["add_one"], verbose=True)
        print("result", module.add_one(ember.zeros(1)).item())
    """)
    env = {**os.environ, "EMBER_EXTENSIONS_DIR": str(extensions_dir), "PYTHONPATH": str(ROOT / "src")}
    runs = [subprocess.Popen([sys.executable, "-c", program], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert all(run.returncode == 0 for run in runs), outputs
    stdout = "".join(out for out, _ in outputs)
    assert stdout.count("result 5.0") == 2
    assert stdout.count("Building extension module c_race") == 1
    assert stdout.count("(cached)") == 1


def test_setup_py_build_with_build_extension(tmp_path):
    (tmp_path / "offset.c").write_text("#include <ember/extension.h>\n#define OFFSET 4.0f\n" + ADD_ONE +
                                       'EMBER_MODULE(EMBER_FUNCTION(add_one, "x + 4"))\n')
    (tmp_path / "setup.py").write_text(textwrap.dedent("""
        from setuptools import setup
        from ember.utils.cpp_extension import BuildExtension, CppExtension
        setup(name="offset", ext_modules=[CppExtension("offset", ["offset.c"], extra_compile_args={"c": ["-O2"]})],
              cmdclass={"build_ext": BuildExtension})
    """))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    built = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tmp_path, env=env,
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    check = subprocess.run([sys.executable, "-c", "import ember, offset; print(offset.add_one(ember.ones(2)))"],
                           cwd=tmp_path, env=env, capture_output=True, text=True)
    assert check.stdout.strip() == "tensor([5., 5.])", check.stderr


def test_bad_arguments():
    with pytest.raises(ValueError, match="must be a Python identifier"):
        cpp_extension.load_inline("my-ext", c_sources="int x;")
    with pytest.raises(ValueError, match="has no sources"):
        cpp_extension.load_inline("empty")
    with pytest.raises(ValueError, match="functions must be C identifiers"):
        cpp_extension.load_inline("named", c_sources="int x;", functions=["not a name"])
    with pytest.raises(FileNotFoundError, match="not found"):
        cpp_extension.load("missing", ["/nonexistent/kernel.c"])


def test_unknown_source_suffix(tmp_path):
    source = tmp_path / "kernel.f90"
    source.write_text("end")
    with pytest.raises(ValueError, match=r"cannot tell the language of .*kernel.f90"):
        cpp_extension.load("fortran", [str(source)])


def test_include_paths_hold_the_headers():
    paths = cpp_extension.include_paths()
    assert (Path(paths[0]) / "ember" / "extension.h").is_file()
    assert (Path(paths[1]) / "numpy" / "arrayobject.h").is_file()
    assert (Path(paths[2]) / "pybind11" / "pybind11.h").is_file()
