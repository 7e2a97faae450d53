"""C++ extension kernels against the same Functions in ember ops (and torch 2.13 for scale).

Three figures, each the median of REPEATS runs of ``time.process_time``:

1. Per-call overhead: an extension function that adds one to a 16-element float32 tensor, per call, minus the
   kernel alone (the same loop timed inside C++ with ``clock()``, over as many iterations). The rest is the
   crossing: the binding's dispatch, reading the tensor's array, allocating and wrapping the output. Once
   through pybind11 (C++), once through the header's C API (C).
2. SiLU (``x * sigmoid(x)``), forward and backward on 1,000,000 float32 elements: a fused C++ kernel pair made
   a Function with ``kernel_function``, against a Function whose forward and backward are ember ops.
3. The example's LinearFunction (C++ kernels) against the seeds' LinearFunction in ember ops, forward and
   backward, at a small and a larger size.

A step is ``function(*inputs).backward(grad)`` with ``grad`` made beforehand, so it times the Function itself.

Run: ``PYTHONPATH=src python bench/bench_cpp_extension.py`` (builds once into the extension cache).
"""
from __future__ import annotations

import importlib.util
import os
import statistics
import time
from pathlib import Path

# one thread everywhere, as the kernels: the comparison is of the work per call, not of the cores
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402 (after the thread settings, which BLAS reads when loaded)
import torch  # noqa: E402

import ember  # noqa: E402
from ember.autograd import Function  # noqa: E402
from ember.utils import cpp_extension  # noqa: E402

REPEATS = 5
ROOT = Path(__file__).resolve().parents[1]

SOURCE = r"""
#include <cmath>
#include <ctime>

ember::Tensor add_one(ember::Tensor x) {
    ember::Tensor out = ember::empty_like(x);
    const float *in = x.data_ptr<float>();
    float *o = out.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] + 1;
    return out;
}

// CPU seconds of `iterations` runs of add_one's loop alone, into one preallocated output
double add_one_kernel_seconds(ember::Tensor x, int64_t iterations) {
    ember::Tensor out = ember::empty_like(x);
    const float *in = x.data_ptr<float>();
    float *o = out.data_ptr<float>();
    std::clock_t start = std::clock();
    for (int64_t k = 0; k < iterations; ++k) {
        for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] + 1;
        asm volatile("" ::: "memory");  // keeps the compiler from merging the iterations
    }
    return double(std::clock() - start) / CLOCKS_PER_SEC;
}

ember::Tensor silu_forward(ember::Tensor x) {
    ember::Tensor y = ember::empty_like(x);
    const float *in = x.data_ptr<float>();
    float *out = y.data_ptr<float>();
    const int64_t n = x.numel();
    #pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] / (1.0f + std::exp(-in[i]));
    return y;
}

ember::Tensor silu_backward(ember::Tensor grad, ember::Tensor x) {
    ember::Tensor dx = ember::empty_like(x);
    const float *g = grad.data_ptr<float>(), *in = x.data_ptr<float>();
    float *out = dx.data_ptr<float>();
    const int64_t n = x.numel();
    #pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
        float s = 1.0f / (1.0f + std::exp(-in[i]));
        out[i] = g[i] * s * (1.0f + in[i] * (1.0f - s));
    }
    return dx;
}
"""
C_SOURCE = r"""
EMBER_C_FUNCTION(add_one) {
    ember_tensor x, out;
    if (ember_check_nargs("add_one", nargs, 1) < 0 || ember_arg(args[0], "add_one", "x", EMBER_FLOAT32, &x) < 0)
        return NULL;
    PyObject *result = ember_empty_like(&x, &out);
    for (int64_t i = 0; result && i < x.numel; i++) ((float *)out.data)[i] = ((float *)x.data)[i] + 1;
    return result;
}
"""
# -ffast-math lets GCC call glibc's vectorised expf in the `omp simd` loops (-fopenmp-simd: no OpenMP runtime)
CFLAGS = ["-ffast-math", "-fopenmp-simd", "-march=native"]


class SiLUOps(Function):
    """SiLU in ember ops, as a user writes it without a kernel."""

    @staticmethod
    def forward(ctx, x):
        s = x.sigmoid()
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad):
        x, s = ctx.saved_tensors
        return grad * s * (1 + x * (1 - s))


def median_seconds(run, number: int) -> float:
    """Median over REPEATS of the CPU seconds per call of ``run``, called ``number`` times per repeat."""
    times = []
    for _ in range(REPEATS):
        start = time.process_time()
        for _ in range(number):
            run()
        times.append((time.process_time() - start) / number)
    return statistics.median(times)


def call_overhead(kernels, c_kernels) -> None:
    x, number = ember.ones(16), 200_000
    kernel = statistics.median(kernels.add_one_kernel_seconds(x, number) / number for _ in range(REPEATS))
    print("| add_one on 16 float32 | per call, µs | kernel alone, µs | overhead, µs |\n|---|---|---|---|")
    for label, module in [("C++ (pybind11)", kernels), ("C (EMBER_C_FUNCTION)", c_kernels)]:
        per_call = median_seconds(lambda: module.add_one(x), number)
        print(f"| {label} | {per_call * 1e6:.3f} | {kernel * 1e6:.4f} | {(per_call - kernel) * 1e6:.3f} |")
    print()


def step(function, *inputs):
    """One forward and backward of ``function``, fed a gradient of ones made beforehand."""
    grad = function(*inputs).detach().clone().fill_(1.0)

    def run():
        for t in inputs:
            t.grad = None
        function(*inputs).backward(grad)
    return run


def silu(kernels) -> None:
    SiLUKernel = cpp_extension.kernel_function(kernels.silu_forward, kernels.silu_backward, name="SiLUKernel")
    data = np.random.default_rng(0).standard_normal(1_000_000, dtype=np.float32)
    x, tx = ember.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    ops = median_seconds(step(SiLUOps.apply, x), 20)
    kernel = median_seconds(step(SiLUKernel.apply, x), 20)
    reference = median_seconds(step(torch.nn.functional.silu, tx), 20)
    print("| SiLU forward + backward, 1e6 float32 | ms | ember ops / this |\n|---|---|---|")
    for label, seconds in [("Function in ember ops", ops), ("fused C++ kernels (kernel_function)", kernel),
                           ("torch.nn.functional.silu", reference)]:
        print(f"| {label} | {seconds * 1e3:.2f} | {ops / seconds:.2f} |")
    print()


def from_file(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def linear() -> None:
    example = from_file("linear_cpp", ROOT / "examples" / "cpp_extension" / "linear_cpp.py")
    LinearKernel = example.linear_function(example.load_kernels())
    LinearOps = from_file("seed_functions", ROOT / "tests" / "seed_functions.py").linear_function(ember)
    print("| LinearFunction forward + backward | ember ops, µs | C++ kernels, µs | ops / kernels |\n|---|---|---|---|")
    for batch, n_in, n_out in [(16, 32, 16), (128, 256, 128)]:
        rng = np.random.default_rng(0)
        inputs = [ember.tensor(rng.standard_normal(s, dtype=np.float32), requires_grad=True)
                  for s in [(batch, n_in), (n_out, n_in), (n_out,)]]
        number = 2000 if batch < 100 else 50
        ops = median_seconds(step(LinearOps.apply, *inputs), number)
        kernels = median_seconds(step(LinearKernel.apply, *inputs), number)
        print(f"| batch {batch}, {n_in} -> {n_out} | {ops * 1e6:.1f} | {kernels * 1e6:.1f} | {ops / kernels:.2f} |")
    print()


def main() -> None:
    torch.set_num_threads(1)
    kernels = cpp_extension.load_inline("bench_cpp_extension", SOURCE, functions=["add_one", "add_one_kernel_seconds",
                                         "silu_forward", "silu_backward"], extra_cflags=CFLAGS)
    c_kernels = cpp_extension.load_inline("bench_c_extension", c_sources=C_SOURCE, functions=["add_one"])
    call_overhead(kernels, c_kernels)
    silu(kernels)
    linear()


if __name__ == "__main__":
    main()
