"""The custom autograd Functions of the "Extending PyTorch" seeds (/work/shared/seeds), built for a given library.

(At the end, small Functions of the tests' own that more than one test file builds.)

Each factory takes the module ``lib`` (torch or ember) and returns a fresh
``lib.autograd.Function`` subclass, so one source serves both libraries and
the tests can compare them::

    Exp = exp_function(ember)
    Exp.apply(ember.tensor([0.0]))  # tensor([1.])

The seeds write the same Function in two styles: forward(ctx, ...) saving on
ctx (seeds 000 and 001), and forward without ctx plus setup_context (seed 003);
``with_setup_context`` picks one.
"""


def linear_function(lib, with_setup_context: bool = False, squeeze_bias_grad: bool = False):
    """LinearFunction, y = input @ weight.T + bias, in the combined or the separate setup_context style.

    Seeds 000 and 001 write the bias gradient as ``grad_output.sum(0).squeeze(0)``
    (``squeeze_bias_grad=True``); that makes it 0-d when there is one output
    feature, which torch rejects, so the default is seed 003's plain ``sum(0)``.
    """

    class LinearBackward:
        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0).squeeze(0) if squeeze_bias_grad else grad_output.sum(0)
            return grad_input, grad_weight, grad_bias

    def compute(input, weight, bias):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    if with_setup_context:

        class LinearFunction(LinearBackward, lib.autograd.Function):
            @staticmethod
            def forward(input, weight, bias=None):
                return compute(input, weight, bias)

            @staticmethod
            def setup_context(ctx, inputs, output):
                input, weight, bias = inputs
                ctx.save_for_backward(input, weight, bias)

    else:

        class LinearFunction(LinearBackward, lib.autograd.Function):
            @staticmethod
            def forward(ctx, input, weight, bias=None):
                ctx.save_for_backward(input, weight, bias)
                return compute(input, weight, bias)

    return LinearFunction


def mul_constant(lib, materialize: bool = True, with_setup_context: bool = True):
    """MulConstant, y = tensor * constant; ``materialize=False`` is seed 003's set_materialize_grads(False).

    Its backward answers a missing (None) gradient with None, as it may get one when grads are not materialized.
    """

    class MulConstantBackward:
        @staticmethod
        def backward(ctx, grad_output):
            if grad_output is None:
                return None, None
            return grad_output * ctx.constant, None

    if with_setup_context:

        class MulConstant(MulConstantBackward, lib.autograd.Function):
            @staticmethod
            def forward(tensor, constant):
                return tensor * constant

            @staticmethod
            def setup_context(ctx, inputs, output):
                tensor, constant = inputs
                ctx.set_materialize_grads(materialize)
                ctx.constant = constant

    else:

        class MulConstant(MulConstantBackward, lib.autograd.Function):
            @staticmethod
            def forward(ctx, tensor, constant):
                ctx.set_materialize_grads(materialize)
                ctx.constant = constant
                return tensor * constant

    return MulConstant


def exp_function(lib):
    """Exp, which saves its own output for backward."""

    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            output = input.exp()
            ctx.save_for_backward(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            (output,) = ctx.saved_tensors
            return grad_output * output

    return Exp


def my_cube(lib):
    """MyCube of seed 003: dx is an output, so its backward is differentiable (double backward works)."""

    class MyCube(lib.autograd.Function):
        @staticmethod
        def forward(x):
            dx = 3 * x ** 2
            result = x ** 3
            return result, dx

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            result, dx = output
            ctx.save_for_backward(x, dx)

        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            x, dx = ctx.saved_tensors
            return grad_output * dx + grad_dx * 6 * x

    return MyCube


# ---------------------------------------------------------------- the tests' own, shared between files


def inplace_double(lib):
    """InplaceDouble: doubles its input in place and marks it dirty (``ctx.mark_dirty``)."""

    class InplaceDouble(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    return InplaceDouble
