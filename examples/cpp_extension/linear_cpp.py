"""The seeds' LinearFunction with its forward and backward written as a C++ kernel.

The kernels are compiled on first use with ``load_inline`` (cached afterwards), wrapped in an autograd
``Function``, used inside an ``nn.Module``, and checked with ``gradcheck``. Run it:

    python examples/cpp_extension/linear_cpp.py
"""
from __future__ import annotations

import ember
from ember import nn
from ember.autograd import Function
from ember.utils import cpp_extension

SOURCE = r"""
// y[n, o] = b[o] + sum_i x[n, i] w[o, i]
template <typename scalar_t>
void forward_kernel(const scalar_t *x, const scalar_t *w, const scalar_t *b, scalar_t *y, int64_t batch,
                    int64_t in, int64_t out) {
    for (int64_t n = 0; n < batch; ++n)
        for (int64_t o = 0; o < out; ++o) {
            scalar_t acc = b ? b[o] : 0;
            #pragma omp simd reduction(+ : acc)
            for (int64_t i = 0; i < in; ++i) acc += x[n * in + i] * w[o * in + i];
            y[n * out + o] = acc;
        }
}

// gx = g w, gw = g^T x, gb = g summed over the batch (all zero-initialised; gb may be null)
template <typename scalar_t>
void backward_kernel(const scalar_t *g, const scalar_t *x, const scalar_t *w, scalar_t *gx, scalar_t *gw,
                     scalar_t *gb, int64_t batch, int64_t in, int64_t out) {
    for (int64_t n = 0; n < batch; ++n)
        for (int64_t o = 0; o < out; ++o) {
            const scalar_t go = g[n * out + o];
            if (gb) gb[o] += go;
            #pragma omp simd
            for (int64_t i = 0; i < in; ++i) {
                gx[n * in + i] += go * w[o * in + i];
                gw[o * in + i] += go * x[n * in + i];
            }
        }
}

// x @ w.T + b for x [batch, in], w [out, in], b [out]; x and w contiguous, float32 or float64
ember::Tensor linear_forward(ember::Tensor x, ember::Tensor w, std::optional<ember::Tensor> b) {
    EMBER_CHECK(x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(1), "linear_forward: expected x [batch, in] ",
                "and w [out, in] with the same in, got ", x.dim(), "-d x and ", w.dim(), "-d w");
    EMBER_CHECK(x.is_contiguous() && w.is_contiguous(), "linear_forward: x and w must be contiguous");
    ember::Tensor y = ember::empty({x.size(0), w.size(0)}, x.dtype());
    EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "linear_forward", [&] {
        forward_kernel<scalar_t>(x.data_ptr<scalar_t>(), w.data_ptr<scalar_t>(),
                                 b ? b->data_ptr<scalar_t>() : nullptr, y.data_ptr<scalar_t>(), x.size(0),
                                 x.size(1), w.size(0));
    });
    return y;
}

// (grad_x, grad_w, grad_b) of linear_forward; grad_b is None without a bias
std::tuple<ember::Tensor, ember::Tensor, std::optional<ember::Tensor>> linear_backward(
        ember::Tensor g, ember::Tensor x, ember::Tensor w, bool with_bias) {
    EMBER_CHECK(g.is_contiguous() && g.dim() == 2 && g.size(0) == x.size(0) && g.size(1) == w.size(0),
                "linear_backward: grad_output must be a contiguous [", x.size(0), ", ", w.size(0), "] tensor");
    ember::Tensor gx = ember::zeros(x.sizes(), x.dtype()), gw = ember::zeros(w.sizes(), x.dtype());
    std::optional<ember::Tensor> gb;
    if (with_bias) gb = ember::zeros({w.size(0)}, x.dtype());
    EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "linear_backward", [&] {
        backward_kernel<scalar_t>(g.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), w.data_ptr<scalar_t>(),
                                  gx.data_ptr<scalar_t>(), gw.data_ptr<scalar_t>(),
                                  gb ? gb->data_ptr<scalar_t>() : nullptr, x.size(0), x.size(1), w.size(0));
    });
    return {gx, gw, gb};
}
"""
FUNCTIONS = {"linear_forward": "x @ w.T + b", "linear_backward": "(grad_x, grad_w, grad_b) of linear_forward"}
CFLAGS = ["-fopenmp-simd"]  # lets the compiler vectorise the `omp simd` loops; no OpenMP runtime is needed


def load_kernels(verbose: bool = False):
    """The compiled module (built on the first call on this machine, then taken from the cache)."""
    return cpp_extension.load_inline("linear_cpp", SOURCE, functions=FUNCTIONS, extra_cflags=CFLAGS,
                                     verbose=verbose)


def linear_function(kernels) -> type[Function]:
    """The seeds' LinearFunction, its arithmetic done by ``kernels`` (a module built from ``SOURCE``)."""

    class LinearFunction(Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            input, weight = input.contiguous(), weight.contiguous()
            ctx.save_for_backward(input, weight, bias)
            return kernels.linear_forward(input, weight, bias)

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input, grad_weight, grad_bias = kernels.linear_backward(
                grad_output.contiguous(), input, weight, bias is not None)
            needs = ctx.needs_input_grad
            return (grad_input if needs[0] else None, grad_weight if needs[1] else None,
                    grad_bias if bias is not None and needs[2] else None)

    return LinearFunction


class Linear(nn.Module):
    """The seeds' Linear module, running a LinearFunction."""

    def __init__(self, function: type[Function], input_features: int, output_features: int, bias: bool = True):
        super().__init__()
        self.function = function
        self.weight = nn.Parameter(ember.empty(output_features, input_features).uniform_(-0.1, 0.1))
        self.bias = nn.Parameter(ember.empty(output_features).uniform_(-0.1, 0.1)) if bias else None

    def forward(self, input):
        return self.function.apply(input, self.weight, self.bias)

    def extra_repr(self):
        return f"input_features={self.weight.shape[1]}, output_features={self.weight.shape[0]}, " \
               f"bias={self.bias is not None}"


def main() -> None:
    LinearFunction = linear_function(load_kernels(verbose=True))
    inputs = (ember.randn(8, 5, dtype=ember.float64, requires_grad=True),
              ember.randn(3, 5, dtype=ember.float64, requires_grad=True),
              ember.randn(3, dtype=ember.float64, requires_grad=True))
    print("gradcheck:", ember.autograd.gradcheck(LinearFunction.apply, inputs, eps=1e-6, atol=1e-4))

    ember.manual_seed(0)
    model = nn.Sequential(Linear(LinearFunction, 2, 16), nn.Tanh(), Linear(LinearFunction, 16, 1))
    optimizer = ember.optim.Adam(model.parameters(), lr=0.02)
    x = ember.rand(256, 2) * 4 - 2
    target = (x[:, :1] * x[:, 1:]).sin()
    for step in range(301):
        loss = nn.functional.mse_loss(model(x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(f"step {step}: loss {loss.item():.4f}")
    print(model)


if __name__ == "__main__":
    main()
