"""grad, vjp, jvp, jacrev, jacfwd, hessian, linearize and their compositions against torch.func."""
import numpy as np
import pytest
import torch

import ember
from seed_functions import linear_function, my_cube
from twins import both, both_raise

RNG = np.random.default_rng(1)
X = RNG.standard_normal(4)
W = RNG.standard_normal((3, 4))


def f(lib):
    return lambda x: (x.sin() * x.exp()).sum() + (x ** 3).prod()


def g(lib):
    return lambda x, w: lib.tanh(w @ x) * x[:3]


def test_grad_and_value_and_argnums():
    both(lambda lib: lib.func.grad(f(lib))(lib.tensor(X)))
    both(lambda lib: lib.func.grad_and_value(f(lib))(lib.tensor(X)))
    both(lambda lib: lib.func.grad(lambda x, w: g(lib)(x, w).sum(), argnums=(0, 1))(lib.tensor(X), lib.tensor(W)))
    both(lambda lib: lib.func.grad(lambda x: (x.sum(), x.cos()), has_aux=True)(lib.tensor(X)))


def test_grad_of_a_dict_of_parameters():
    def program(lib):
        params = {"w": lib.tensor(W), "b": lib.zeros(3, dtype=lib.float64)}
        gr = lib.func.grad(lambda p, x: (p["w"] @ x + p["b"]).tanh().sum())(params, lib.tensor(X))
        return gr["w"], gr["b"]
    both(program)


def test_higher_order_grads():
    both(lambda lib: lib.func.grad(lib.func.grad(lambda x: (x ** 4).sin()))(lib.tensor(0.7, dtype=lib.float64)))
    both(lambda lib: lib.func.grad(lambda x: lib.func.grad(lambda y: (x * y ** 2).sum())(x).sum())(lib.tensor(X)))


def test_vjp_and_jvp():
    def program(lib):
        x, w = lib.tensor(X), lib.tensor(W)
        out, vjp_fn = lib.func.vjp(g(lib), x, w)
        ct = lib.ones(3, dtype=lib.float64)
        value, tangent = lib.func.jvp(g(lib), (x, w), (lib.ones_like(x), lib.ones_like(w)))
        lin_out, jvp_fn = lib.func.linearize(g(lib), x, w)
        return out, vjp_fn(ct), value, tangent, lin_out, jvp_fn(lib.ones_like(x), lib.ones_like(w))
    both(program)


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobians(transform):
    def program(lib):
        jac = getattr(lib.func, transform)
        x, w = lib.tensor(X), lib.tensor(W)
        return jac(g(lib))(x, w), jac(g(lib), argnums=(0, 1))(x, w), jac(lambda x: (x.sin(), x.sum()))(x)
    both(program)


def test_hessian_and_jacfwd_of_jacrev():
    both(lambda lib: lib.func.hessian(f(lib))(lib.tensor(X)))
    both(lambda lib: lib.func.jacfwd(lib.func.jacrev(lambda x, w: g(lib)(x, w).sum()), argnums=0)(
        lib.tensor(X), lib.tensor(W)))


def test_jacrev_chunk_size():
    both(lambda lib: lib.func.jacrev(g(lib), chunk_size=2)(lib.tensor(X), lib.tensor(W)))


def test_grad_errors():
    both_raise(lambda lib: lib.func.grad(lambda x: x * 2)(lib.tensor(X)), RuntimeError, "scalar")
    both_raise(lambda lib: lib.func.grad(lambda x: x.sum(), argnums=3)(lib.tensor(X)), RuntimeError, "argnum")
    both_raise(lambda lib: lib.func.grad(lambda x: x.sum(), has_aux=True)(lib.tensor(X)), RuntimeError,
               "tuple")


@pytest.mark.parametrize("call, error, fragment", [
    (lambda F, x: F.grad(lambda a: a[0].sum())((x, 3.0)), ValueError, "must be Tensor, got <class 'float'>"),
    (lambda F, x: F.jacrev(lambda a: a)(3.0), ValueError, "must be Tensor, got <class 'float'>"),
    (lambda F, x: F.jvp(lambda a: a, ((x, 2.0),), ((x, 1.0),)), RuntimeError, r"primals to only contain Tensors"),
    (lambda F, x: F.jvp(lambda a: a, (x,), (1.0,)), RuntimeError, r"tangents to only contain Tensors"),
    (lambda F, x: F.jvp(lambda a: (a, 3), (x,), (x,)), RuntimeError, r"^jvp.*only tensors.*<class 'int'>"),
    (lambda F, x: F.jacfwd(lambda a: 3)(x), RuntimeError, r"^jvp.*only tensors.*<class 'int'>"),
    (lambda F, x: F.vjp(lambda a: {"a": a, "b": "s"}, x), RuntimeError, r"^vjp.*only tensors.*<class 'str'>"),
    (lambda F, x: F.jacrev(lambda a: 3)(x), RuntimeError, r"^vjp.*only tensors.*<class 'int'>"),
    (lambda F, x: F.jvp(lambda a: (a, 3), (x,), (x,), has_aux=True), RuntimeError, "Expected tensors"),
    (lambda F, x: F.vjp(lambda a: (a, 3), x, has_aux=True), RuntimeError, "Expected tensors"),
    (lambda F, x: F.jacrev(lambda a: (a, 3), has_aux=True)(x), RuntimeError, "Expected tensors"),
    (lambda F, x: F.grad(lambda a: (a.sum(), {"k": a, "n": None}), has_aux=True)(x), RuntimeError,
     "Expected tensors, got unsupported type <class 'NoneType'>"),
    (lambda F, x: F.jacfwd(lambda a: (a, 3), has_aux=True)(x), RuntimeError, "Expected tensors"),
])
def test_transforms_refuse_inputs_and_outputs_that_are_not_tensors(call, error, fragment):
    both_raise(lambda lib: call(lib.func, lib.tensor(X)), error, fragment)


def _mlp(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(6, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3)).double()
    with lib.no_grad():
        for p, shape in zip(model.parameters(), [(8, 6), (8,), (3, 8), (3,)]):
            p.copy_(lib.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape)))
    return model


def _per_sample_grads(lib, model, x, y):
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, sample, target):
        out = lib.func.functional_call(model, p, (sample.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, target.unsqueeze(0))
    grads = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    return [grads[k] for k in sorted(grads)]


def test_per_sample_gradients_of_an_mlp():
    x, y = RNG.standard_normal((5, 6)), RNG.integers(0, 3, 5)
    result = both(lambda lib: _per_sample_grads(lib, _mlp(lib), lib.tensor(x), lib.tensor(y)))
    model = _mlp(ember)  # and they are the gradients of each sample alone
    for i in range(5):
        model.zero_grad()
        ember.nn.functional.cross_entropy(model(ember.tensor(x[i:i + 1])), ember.tensor(y[i:i + 1])).backward()
        np.testing.assert_allclose(result[sorted(dict(model.named_parameters())).index("0.weight")][i],
                                   model[0].weight.grad.numpy(), atol=1e-12)


def _cnn(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.ReLU(), lib.nn.MaxPool2d(2), lib.nn.Flatten(),
                              lib.nn.Linear(8, 3)).double()
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(np.sin(np.arange(p.numel()) + 1.0).reshape(tuple(p.shape))))
    return model


def test_per_sample_gradients_of_a_cnn():
    x, y = RNG.standard_normal((4, 1, 6, 6)), RNG.integers(0, 3, 4)
    both(lambda lib: _per_sample_grads(lib, _cnn(lib), lib.tensor(x), lib.tensor(y)))


def test_ensembling_with_stack_module_state():
    x = RNG.standard_normal((2, 6))

    def program(lib):
        models = [_mlp(lib) for _ in range(3)]
        with lib.no_grad():
            for k, m in enumerate(models):
                m[0].bias.add_(k)
        params, buffers = lib.func.stack_module_state(models)
        base = models[0]
        run = lambda p, b, x: lib.func.functional_call(base, (p, b), (x,))  # noqa: E731
        return lib.func.vmap(run, in_dims=(0, 0, None))(params, buffers, lib.tensor(x))
    both(program)


def _seed_linear(lib, vmappable):
    cls = linear_function(lib, with_setup_context=True)
    return type("LinearFunction", (cls,), {"generate_vmap_rule": True}) if vmappable else cls


def test_seed_linear_function_under_grad_and_vmap():
    x, w, b = RNG.standard_normal((5, 2, 4)), RNG.standard_normal((3, 4)), RNG.standard_normal(3)

    def program(lib):
        lin = _seed_linear(lib, True)
        xs, wt, bt = lib.tensor(x), lib.tensor(w), lib.tensor(b)
        loss = lambda w_, b_, s: lin.apply(s, w_, b_).tanh().sum()  # noqa: E731
        per_sample = lib.func.vmap(lib.func.grad(loss, argnums=(0, 1)), in_dims=(None, None, 0))(wt, bt, xs)
        plain = lib.func.grad(lambda w_: _seed_linear(lib, False).apply(xs[0], w_, bt).sum())(wt)
        return lib.func.vmap(lin.apply, in_dims=(0, None, None))(xs, wt, bt), per_sample, plain
    both(program)


def test_custom_function_vmap_staticmethod_and_errors():
    def program(lib):
        cube = my_cube(lib)

        class Cube(cube):
            @staticmethod
            def vmap(info, in_dims, x):
                return Cube.apply(x), (in_dims[0], in_dims[0])
        x = lib.tensor(X)
        return lib.func.vmap(Cube.apply)(x.reshape(2, 2)), lib.func.vmap(lib.func.grad(
            lambda t: Cube.apply(t)[0].sum()))(x.reshape(2, 2))
    both(program)
    both_raise(lambda lib: lib.func.vmap(linear_function(lib, True).apply, in_dims=(0, None, None))(
        lib.ones(2, 1, 3), lib.ones(2, 3), None), RuntimeError, "does not have vmap support")
    both_raise(lambda lib: lib.func.vmap(linear_function(lib, False).apply, in_dims=(0, None, None))(
        lib.ones(2, 1, 3), lib.ones(2, 3), None), RuntimeError, "setup_context")


def _vmappable(cls):
    return type(cls.__name__, (cls,), {"generate_vmap_rule": True})


def test_a_vmapped_function_is_differentiable_after_vmap_returns():
    # the generated rule's backward runs on batched tensors saved inside the vmap, after it has exited
    x = RNG.standard_normal((3, 4))

    def program(lib):
        cube = _vmappable(my_cube(lib))
        X = lib.tensor(x, requires_grad=True)
        out = lib.func.vmap(lambda s: cube.apply(s)[0])(X * 1)
        (first,) = lib.autograd.grad((out * out).sum(), X, create_graph=True)
        (second,) = lib.autograd.grad(first.sum(), X)
        return out, first, second
    both(program)


@pytest.mark.parametrize("materialize", [True, False])
def test_seed_mul_constant_and_my_cube_with_generated_rules(materialize):
    from seed_functions import mul_constant
    x = RNG.standard_normal((3, 4))

    def program(lib):
        mul, cube = _vmappable(mul_constant(lib, materialize)), _vmappable(my_cube(lib))
        X = lib.tensor(x)
        first = lib.func.vmap(lambda s: mul.apply(s, 2.5))(X)
        per_sample = lib.func.vmap(lib.func.grad(lambda s: (mul.apply(s, 2.5) * cube.apply(s)[0]).sum()))(X)
        second = lib.func.vmap(lib.func.grad(lambda s: lib.func.grad(lambda u: cube.apply(u)[0].sum())(s).sum()))(X)
        return first, per_sample, second
    both(program)


# ---- forward mode in composition: jvp runs on dual tensors, inside and around the other transforms

def _jvp_of(lib, fn, *primals):
    return lambda t: lib.func.jvp(fn, primals, (t,))[1]


def test_forward_mode_compositions():
    x, t, xs = RNG.standard_normal(4), RNG.standard_normal(4), RNG.standard_normal((3, 4))

    def program(lib):
        F, X, T, XS = lib.func, lib.tensor(x), lib.tensor(t), lib.tensor(xs)
        h = lambda v: (v.sin() * v.exp()).cumsum(0) / (1 + v ** 2)  # noqa: E731
        return (F.vmap(lambda v, u: F.jvp(h, (v,), (u,))[1])(XS, XS.cos()),  # a tangent per sample
                F.jvp(F.vmap(h), (XS,), (XS.cos(),)),  # a batched function's products
                F.vmap(_jvp_of(lib, h, X))(XS),  # many tangents at one point
                F.jacfwd(F.jacfwd(lambda v: (v ** 3).sum() * v))(X),  # nested forward mode
                F.jvp(F.grad(lambda v: (v.tanh() ** 2).sum()), (X,), (T,)),  # forward over reverse
                F.grad(lambda v: F.jvp(h, (v,), (T,))[1].sum())(X),  # reverse over forward
                F.jacrev(F.jacfwd(h))(X), F.hessian(lambda v: h(v).sum())(X))
    both(program)


def test_jvp_has_aux_and_linearize_agree_with_torch():
    x = RNG.standard_normal((2, 3))

    def program(lib):
        X = lib.tensor(x)
        value, tangent, aux = lib.func.jvp(lambda v: (v.exp().sum(1), v.max()), (X,), (lib.ones_like(X),),
                                           has_aux=True)
        out, jvp_fn = lib.func.linearize(lambda v: v @ v.T, X)
        return value, tangent, aux, out, jvp_fn(X.sin()), jvp_fn(lib.ones_like(X))
    both(program)


def _cube_with_jvp(lib, calls: list):
    class Cube(my_cube(lib)):
        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def jvp(ctx, x_t):
            calls.append(x_t)
            x, = ctx.saved_tensors
            return 3 * x ** 2 * x_t, 6 * x * x_t

    return Cube


def test_jvp_of_a_custom_function_uses_its_jvp_staticmethod():
    calls = []
    both(lambda lib: lib.func.jvp(_cube_with_jvp(lib, calls).apply, (lib.tensor(X),), (lib.tensor(X).cos(),)))
    assert len(calls) == 2, "in both libraries the Function's own formula gave the tangent"


def test_jacfwd_and_vmapped_jvp_of_a_custom_function_with_a_generated_vmap_rule():
    # forward mode over vmap runs the Function's jvp on batched tangents
    xs = RNG.standard_normal((3, 4))

    def program(lib):
        cube = _vmappable(_cube_with_jvp(lib, []))
        x, XS = lib.tensor(X), lib.tensor(xs)
        return (lib.func.jacfwd(cube.apply)(x),
                lib.func.vmap(lambda v, u: lib.func.jvp(cube.apply, (v,), (u,)))(XS, XS.cos()),
                lib.func.vmap(lib.func.jacfwd(cube.apply))(XS))
    both(program)


def test_jacfwd_of_jacrev_requires_grad_only_when_its_input_does():
    def program(lib):
        h = lib.func.jacfwd(lib.func.jacrev(lambda v: (v.sin() ** 2).sum()))
        plain, tracked = lib.tensor(X), lib.tensor(X, requires_grad=True)
        hess_plain, hess_tracked = h(plain), h(tracked)
        (hess_grad,) = lib.autograd.grad(hess_tracked.sum(), tracked)
        return hess_plain, hess_plain.requires_grad, hess_tracked.requires_grad, hess_grad
    both(program)


@pytest.mark.parametrize("transform", ["grad", "vjp", "jacrev", "jvp", "jacfwd", "hessian", "vmap_grad"])
def test_results_stay_differentiable_in_a_tensor_the_function_closes_over(transform):
    # as torch's: the transform's inputs are its own, but a captured tensor that requires grad keeps its graph
    xs = RNG.standard_normal((2, 4))

    def program(lib):
        F, x, y = lib.func, lib.tensor(X), lib.tensor(X[::-1].copy(), requires_grad=True)
        h = lambda a: (a * y).sin()  # noqa: E731
        one = lib.ones(4, dtype=lib.float64)
        result = {"grad": lambda: F.grad(lambda a: h(a).sum())(x),
                  "vjp": lambda: F.vjp(h, x)[1](one)[0],
                  "jacrev": lambda: F.jacrev(h)(x),
                  "jvp": lambda: F.jvp(h, (x,), (one,))[1],
                  "jacfwd": lambda: F.jacfwd(h)(x),
                  "hessian": lambda: F.hessian(lambda a: h(a).sum())(x),
                  "vmap_grad": lambda: F.vmap(F.grad(lambda a: h(a).sum()))(lib.tensor(xs))}[transform]()
        (result ** 2).sum().backward()
        return result, result.requires_grad, y.grad
    both(program)


def test_gradients_of_some_parameters_stay_differentiable_in_the_others():
    def program(lib):
        model = _mlp(lib)
        last = {"2.weight": model[2].weight.detach()}
        g = lib.func.grad(lambda p: lib.func.functional_call(model, p, (lib.tensor(X[:3].repeat(2)),)).sum())(last)
        g["2.weight"].pow(2).sum().backward()
        return g["2.weight"], model[0].weight.grad, model[2].weight.grad
    both(program)


def test_a_gradient_hook_under_vmap_sees_and_replaces_each_samples_gradient():
    xs = RNG.standard_normal((2, 2, 3))

    def program(lib):
        shapes = []

        def f(a):
            b = a * a.sin()
            b.register_hook(lambda g: shapes.append(tuple(g.shape)) or g * 3 + 1)
            return b.sum()

        once = lib.func.vmap(lib.func.grad(f))(lib.tensor(xs[0]))
        twice = lib.func.vmap(lib.func.vmap(lib.func.grad(f)), in_dims=1)(lib.tensor(xs))
        return once, twice, shapes
    both(program)


def test_the_node_of_a_vmapped_function_with_a_generated_rule_is_named_as_torch_names_it():
    def program(lib):
        cube = _vmappable(my_cube(lib))
        out = lib.func.vmap(lambda s: cube.apply(s)[0])(lib.tensor(RNG.standard_normal((2, 3)), requires_grad=True))
        return type(out.grad_fn).__name__, out.grad_fn.name()
    names = [program(lib) for lib in (torch, ember)]
    assert names[0] == names[1] == ("VmappedMyCubeBackward", "VmappedMyCubeBackward")


def test_replace_all_batch_norm_modules_drops_running_statistics_as_torch():
    def program(lib):
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4),
                                  lib.nn.Sequential(lib.nn.BatchNorm1d(4, track_running_stats=False)))
        same = lib.func.replace_all_batch_norm_modules_(model) is model
        x = lib.linspace(-1, 1, 12).reshape(4, 3)
        model.eval()
        return (same, [(m.running_mean is None, m.track_running_stats) for m in (model[1], model[2][0])],
                sorted(model.state_dict()), model[1](x @ lib.ones(3, 4)).sum().item())

    ours, theirs = program(ember), program(torch)
    assert ours[:3] == theirs[:3] and abs(ours[3] - theirs[3]) < 1e-5


@pytest.mark.parametrize("call", ["lib.func.vjp(lambda t: (), x)", "lib.func.jvp(lambda t: (), (x,), (x,))",
                                  "lib.func.jacrev(lambda t: ())(x)", "lib.func.jacfwd(lambda t: [])(x)"])
def test_a_function_with_no_outputs_is_refused(call):
    """As torch: there is nothing to differentiate, a RuntimeError (not an IndexError, nor an empty result)."""
    messages = []
    for lib in (torch, ember):
        x = lib.ones(3)
        with pytest.raises(RuntimeError, match="non-empty output") as caught:
            eval(call, {"lib": lib, "x": x})
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
