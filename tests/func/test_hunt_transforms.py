"""ember.func and ember.autograd.functional against torch, on programs written as torch users write them."""
import numpy as np
import pytest

from twins import both, both_raise

RNG = np.random.default_rng(11)
X = RNG.standard_normal((4, 3))
SAMPLE_BATCHES = RNG.standard_normal((2, 2, 4, 3))  # 2 x 2 samples, each a batch of 4 vectors of 3 channels
IMAGES = RNG.standard_normal((4, 2, 3, 3, 3))  # 4 samples, each a batch of 2 images of 3 channels


def t(lib, values, dtype="float64"):
    return lib.tensor(np.asarray(values), dtype=getattr(lib, dtype))


def shapes_and_values(tree: dict) -> list:
    return [(key, tuple(tree[key].shape), tree[key]) for key in sorted(tree)]


# ---- vmap's out_dims

def test_out_dims_may_be_a_dict_for_dict_outputs():
    def program(lib):
        f = lambda x: {"p": x * 2, "s": x.unsqueeze(0).expand(2, 3)}  # noqa: E731
        plain = lib.func.vmap(f, out_dims={"p": 0, "s": 1})(t(lib, X))
        chunked = lib.func.vmap(f, out_dims={"p": 0, "s": 1}, chunk_size=3)(t(lib, X))
        return shapes_and_values(plain) + shapes_and_values(chunked)
    both(program)


def test_out_dims_dict_nested_in_a_tuple():
    def program(lib):
        f = lambda x: (x, {"a": x.sum(), "b": x.unsqueeze(1)})  # noqa: E731
        first, second = lib.func.vmap(f, out_dims=(1, {"a": 0, "b": 2}))(t(lib, X))
        return first, shapes_and_values(second)
    both(program)


def test_a_one_tuple_of_out_dims_stands_for_a_single_output():
    both(lambda lib: lib.func.vmap(lambda x: x * 2, out_dims=(1,))(t(lib, X)))


@pytest.mark.parametrize("out_dims", ["a", 1.0, (0, "a")])
def test_out_dims_that_are_not_ints_are_refused(out_dims):
    both_raise(lambda lib: lib.func.vmap(lambda x: (x, x), out_dims=out_dims)(t(lib, X)), ValueError,
               "`out_dims` must be an int, None or a python collection of ints")


def test_out_dims_of_another_structure_than_the_outputs_are_refused():
    both_raise(lambda lib: lib.func.vmap(lambda x: x, out_dims={"a": 0})(t(lib, X)), ValueError,
               "out_dims is not compatible with the structure of `outputs`")


# ---- vmap's chunks with randomness="same"

def test_chunks_draw_the_same_values_when_randomness_is_same():
    def program(lib):
        lib.manual_seed(0)
        out = lib.func.vmap(lambda x: x + lib.rand(3), chunk_size=2, randomness="same")(lib.zeros(5, 3))
        return bool((out == out[0]).all())
    assert both(program) is True


# ---- argnums

@pytest.mark.parametrize("transform", ["grad", "jacrev", "jacfwd"])
@pytest.mark.parametrize("argnums, message", [
    (1.0, r"argnums must be int or Tuple\[int, \.\.\.\], got: <class 'float'>"),
    ([0, 1], r"argnums must be int or Tuple\[int, \.\.\.\], got: <class 'list'>"),
    ((0, 1.0), "argnum must be int, got: <class 'float'>"),
    ((0, 0), r"argnums elements must be unique, got \(0, 0\)"),
    ((0, -2), r"argnums elements must be unique, got \(0, 0\)"),
])
def test_argnums_are_checked_as_torch_checks_them(transform, argnums, message):
    def program(lib):
        f = lambda x, y: (x * y).sum()  # noqa: E731
        getattr(lib.func, transform)(f, argnums=argnums)(t(lib, X[0]), t(lib, X[1]))
    both_raise(program, RuntimeError, message)


# ---- batch norm in training under vmap, without running statistics

def _small_convnet(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 2), lib.nn.BatchNorm2d(4), lib.nn.ReLU(), lib.nn.Flatten(),
                              lib.nn.Linear(16, 1)).double()
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(t(lib, np.sin(np.arange(p.numel()) * 0.3 + i).reshape(tuple(p.shape))))
    return lib.func.replace_all_batch_norm_modules_(model)


def test_per_sample_gradients_through_batch_norm_after_replace_all_batch_norm_modules():
    def program(lib):
        model = _small_convnet(lib)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x):
            return lib.func.functional_call(model, p, (x,)).pow(2).mean()
        return shapes_and_values(lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))(params, t(lib, IMAGES)))
    both(program)


def test_an_ensemble_with_batch_norm_in_training():
    def program(lib):
        models = [_small_convnet(lib) for _ in range(3)]
        for i, model in enumerate(models):
            with lib.no_grad():
                model[1].weight.add_(i)
        params, buffers = lib.func.stack_module_state(models)

        def run(p, b, x):
            return lib.func.functional_call(models[0], (p, b), (x,))
        return lib.func.vmap(run, in_dims=(0, 0, None))(params, buffers, t(lib, IMAGES[0]))
    both(program)


def test_batch_norm_in_training_under_nested_vmaps_and_its_gradient():
    def program(lib):
        norm = lib.nn.BatchNorm1d(3, track_running_stats=False).double()
        x = t(lib, SAMPLE_BATCHES).requires_grad_()
        out = lib.func.vmap(lib.func.vmap(norm))(x)
        out.pow(3).sum().backward()
        return out, x.grad, norm.weight.grad
    both(program)


def test_batch_norm_in_training_under_vmap_in_single_precision():
    norm = lambda lib: lib.nn.BatchNorm1d(3, track_running_stats=False)  # noqa: E731
    both(lambda lib: lib.func.vmap(norm(lib))(t(lib, SAMPLE_BATCHES[0], "float32")))


def test_functional_batch_norm_in_training_with_per_sample_weights():
    def program(lib):
        x, w, b = t(lib, IMAGES[:, :, 0, 0]), t(lib, X), t(lib, X[::-1].copy())
        return lib.func.vmap(lambda x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, training=True,
                                                                            eps=0.1))(x, w, b)
    both(program)


def test_batch_norm_in_training_needs_more_than_one_value_per_channel_per_sample():
    norm = lambda lib: lib.nn.BatchNorm1d(3, track_running_stats=False).double()  # noqa: E731
    both_raise(lambda lib: lib.func.vmap(norm(lib))(t(lib, X[:, None])), ValueError,
               r"Expected more than 1 value per channel when training, got input size \w+\.Size\(\[1, 3\]\)")


# ---- functionalize and debug_unwrap

@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
@pytest.mark.parametrize("body", ["view", "view_then_add_", "identity", "clone_then_mul_"])
def test_functionalize_keeps_results_and_aliasing_as_torch(remove, body):
    bodies = {"view": lambda x: x.view(-1), "view_then_add_": lambda x: x.view(-1).add_(1),
              "identity": lambda x: x, "clone_then_mul_": lambda x: x.clone().mul_(2)}

    def program(lib):
        x = t(lib, X)
        out = lib.func.functionalize(bodies[body], remove=remove)(x)
        returned_input = out is x
        out.add_(10)  # shows whether the result shares memory with the input
        return x, out, returned_input
    both(program)


def test_functionalize_composes_with_vmap_and_grad():
    both(lambda lib: lib.func.vmap(lib.func.functionalize(lambda x: x.clone().mul_(2).sin()))(t(lib, X)))
    both(lambda lib: lib.func.grad(lib.func.functionalize(lambda x: x.clone().mul_(2).sin().sum()))(t(lib, X)))


def test_functionalize_refuses_an_unknown_remove():
    both_raise(lambda lib: lib.func.functionalize(lambda x: x, remove="views"), RuntimeError,
               "received invalid argument for remove=views")


@pytest.mark.parametrize("recurse", [True, False])
def test_debug_unwrap_under_nested_vmaps(recurse):
    def program(lib):
        inner = lambda x: lib.func.debug_unwrap(x, recurse=recurse) * 1  # noqa: E731
        return lib.func.vmap(lib.func.vmap(inner))(t(lib, X))
    both(program)


def test_debug_unwrap_of_a_plain_tensor_is_the_tensor():
    both(lambda lib: lib.func.debug_unwrap(t(lib, X)))


# ---- vmap's inputs

def test_vmap_without_inputs_is_refused_as_in_torch():
    both_raise(lambda lib: lib.func.vmap(lambda: lib.ones(2))(), ValueError, r"got no inputs\. Maybe you forgot")


def test_vmap_in_dims_none_is_refused_as_in_torch():
    both_raise(lambda lib: lib.func.vmap(lambda x: x, in_dims=None)(t(lib, X)), ValueError,
               r"in_dims=None, \.\.\.\)\(<inputs>\): expected `in_dims` to be int or a \(potentially nested\) tuple")


def test_vmap_that_maps_no_input_is_refused_as_in_torch():
    both_raise(lambda lib: lib.func.vmap(lambda x: x, in_dims=(None,))(t(lib, X)), ValueError,
               "vmap: Expected at least one Tensor to vmap over")


# ---- autograd.functional

@pytest.mark.parametrize("call", [
    lambda lib: lib.autograd.functional.jacobian(lambda x: x * 2, lib.ones(2), strategy="sideways"),
    lambda lib: lib.autograd.functional.hessian(lambda x: x.sum(), lib.ones(2), outer_jacobian_strategy="sideways"),
])
def test_an_unknown_jacobian_strategy_fails_its_assertion_as_in_torch(call):
    both_raise(call, AssertionError, 'Expected strategy to be either "forward-mode" or "reverse-mode"')


def test_forward_mode_jacobians_nest_their_results_in_lists_as_torch():
    def kinds(result):
        if isinstance(result, (tuple, list)):
            return (type(result).__name__, [kinds(r) for r in result])
        return "tensor"

    def program(lib):
        jacobian = lib.autograd.functional.jacobian
        x = t(lib, X[0])
        options = dict(vectorize=True, strategy="forward-mode")
        results = [jacobian(lambda a, b: (a * b, a.sum()), (x, x), **options),
                   jacobian(lambda a, b: a * b, (x, x), **options),
                   jacobian(lambda a: (a, a * 2), x, **options),
                   jacobian(lambda a: a * 2, x, **options),
                   lib.autograd.functional.hessian(lambda a, b: (a * b).sum(), (x, x), vectorize=True,
                                                   outer_jacobian_strategy="forward-mode")]
        return [kinds(r) for r in results], results[0]
    both(program)


# ---- linearize's checks

def _linearized(lib):
    return lib.func.linearize(lambda a, b: a.sin() + b, t(lib, X), t(lib, X))[1]


@pytest.mark.parametrize("tangents, message", [
    (lambda lib: (t(lib, X[0]), t(lib, X)), r"tangent:0 with shape \w+\.Size\(\[3\]\) in flattened pytree doesn't "
                                            r"match the shape \w+\.Size\(\[4, 3\]\) of the corresponding primal"),
    (lambda lib: (t(lib, X, "float32"), t(lib, X)), r"tangent:0 with dtype \w+\.float32 in flattened pytree doesn't "
                                                    r"match the dtype \w+\.float64 of the corresponding primal"),
    (lambda lib: (t(lib, X),), "(?s)Expected the tangents .* to have the same argspec as the primals"),
    (lambda lib: ([t(lib, X), t(lib, X)],), "(?s)Expected the tangents .* to have the same argspec as the primals"),
])
def test_linearize_checks_its_tangents_against_the_primals(tangents, message):
    both_raise(lambda lib: _linearized(lib)(*tangents(lib)), RuntimeError, message)


def test_linearize_refuses_integer_primals():
    both_raise(lambda lib: lib.func.linearize(lambda a: a * 2, lib.tensor([1, 2])), ValueError,
               r"Expected primal to be floating point or complex, but got: \w+\.int64")


def test_linearize_of_a_dict_of_primals():
    both(lambda lib: lib.func.linearize(lambda d: d["a"].sin() * d["b"], {"a": t(lib, X), "b": t(lib, X)})[1](
        {"a": t(lib, X), "b": t(lib, X[::-1].copy())}))


# ---- stack_module_state

def test_stack_module_state_names_what_differs_between_the_models():
    def mixed_modes(lib):
        models = [lib.nn.Linear(2, 2), lib.nn.Linear(2, 2).eval()]
        lib.func.stack_module_state(models)

    def mixed_classes(lib):
        lib.func.stack_module_state([lib.nn.Linear(2, 2), lib.nn.Bilinear(2, 2, 2)])
    both_raise(mixed_modes, RuntimeError, "Expected all models to have the same training/eval mode")
    both_raise(mixed_classes, RuntimeError, "Expected all models to be of the same class")


# ---- random ops under vmap(randomness='different') and 'same'

def _draw_summary(out) -> tuple:
    """What two libraries' draws can agree on: shape, dtype, whether the samples differ, and the range."""
    values = out.double()
    return tuple(out.shape), str(out.dtype).split(".")[-1], bool((out == out[0]).all()), \
        bool(values.min() >= RANGE[0]), bool(values.max() < RANGE[1])


RANGE = (3, 5)


@pytest.mark.parametrize("draw", [
    lambda lib, x: lib.randint(RANGE[0], RANGE[1], size=(50,)),
    lambda lib, x: lib.randint(RANGE[1], size=(50,)),
    lambda lib, x: lib.normal(4.0, 0.01, (50,), dtype=lib.float64),
    lambda lib, x: lib.normal(4.0, 0.01, size=(50,), dtype=lib.float64) + x[0] * 0,
    lambda lib, x: lib.normal(lib.full((50,), 4.0, dtype=lib.float64), x[:1] * 0.01),
    lambda lib, x: lib.normal(x * 0 + 4.0, x * 0.01),
    lambda lib, x: lib.normal(mean=lib.full((50,), 4.0, dtype=lib.float64), std=x[0] * 0.01 + 0.01),
], ids=["randint size=", "randint(high, size=)", "normal(float, float, size)", "normal(..., size=) + x",
        "normal(mean, batched std)", "normal(batched, batched)", "normal(mean=, std=batched)"])
def test_random_ops_draw_per_sample_with_randomness_different(draw):
    def program(lib):
        lib.manual_seed(0)
        x = lib.rand(4, 50, dtype=lib.float64) + 0.5
        return _draw_summary(lib.func.vmap(lambda row: draw(lib, row), randomness="different")(x))
    summary = both(program)
    assert summary[2] is False  # the samples got draws of their own


@pytest.mark.parametrize("draw", [
    lambda lib, x: lib.normal(x, 1.0),
    lambda lib, x: lib.normal(lib.zeros(3, dtype=lib.float64), x),
    lambda lib, x: lib.poisson(x),
    lambda lib, x: lib.multinomial(x, 2),
], ids=["normal(batched mean)", "normal(batched std)", "poisson", "multinomial"])
def test_draws_that_depend_on_batched_values_are_refused_with_randomness_same(draw):
    both_raise(lambda lib: lib.func.vmap(lambda row: draw(lib, row), randomness="same")(t(lib, X * X + 0.1)),
               RuntimeError, "Vmap does not currently support same randomness with a batched tensor input")


def test_bernoulli_of_a_given_probability_ignores_the_batched_values_with_randomness_same():
    import ember
    x = ember.full((4, 2000), 0.01)
    out = ember.func.vmap(lambda row: row.bernoulli(0.5), randomness="same")(x)
    assert bool((out == out[0]).all()) and abs(out.mean().item() - 0.5) < 0.05  # p=0.5, not x's 0.01


# ---- results that stay differentiable for the caller: jacrev's aux, linearize's output

def _jacrev_with_aux(lib):
    return lib.func.jacrev(lambda y: (y ** 3, (y.sin() * y).sum()), has_aux=True)


def test_grad_through_the_aux_of_jacrev():
    both(lambda lib: lib.func.grad(lambda x: _jacrev_with_aux(lib)(x)[1])(t(lib, X[0])))
    both(lambda lib: lib.func.grad(lambda x: (lambda jac, aux: jac.sum() * aux)(*_jacrev_with_aux(lib)(x)))(
        t(lib, X[0])))


def test_jacobians_of_the_aux_of_jacrev():
    both(lambda lib: lib.func.jacrev(lambda x: lib.func.jacrev(lambda y: (y ** 2, y.sin()), has_aux=True)(x)[1])(
        t(lib, X[0])))
    both(lambda lib: lib.func.jacfwd(lambda x: lib.func.jacrev(lambda y: (y ** 2, y.sin()), has_aux=True)(x)[1])(
        t(lib, X[0])))


def test_backward_from_the_aux_of_jacrev():
    def program(lib):
        x = t(lib, X[0]).requires_grad_()
        jac, aux = _jacrev_with_aux(lib)(x)
        aux.backward()
        return aux.requires_grad, jac.requires_grad, x.grad
    both(program)


def test_the_output_of_linearize_stays_differentiable():
    def program(lib):
        x = t(lib, X[0]).requires_grad_()
        out, _ = lib.func.linearize(lambda y: y.sin() * y, x)
        out.sum().backward()
        with lib.no_grad():
            quiet, _ = lib.func.linearize(lambda y: y.sin() * y, x)
        return out.requires_grad, quiet.requires_grad, x.grad
    both(program)
    both(lambda lib: lib.func.grad(lambda x: lib.func.linearize(lambda y: (y ** 3).sum(), x)[0])(t(lib, X[0])))


# ---- a sample's strides under vmap

BLOCKS = np.arange(48.0).reshape(4, 3, 2, 2)


@pytest.mark.parametrize("make, in_dims", [
    (lambda lib: t(lib, BLOCKS), 0), (lambda lib: t(lib, BLOCKS), 1), (lambda lib: t(lib, BLOCKS), 3),
    (lambda lib: t(lib, BLOCKS).mT, 0), (lambda lib: t(lib, BLOCKS)[:, ::2], 0),
    (lambda lib: t(lib, BLOCKS[:, :1]).expand(4, 3, 2, 2), 0), (lambda lib: lib.zeros(4, 0, 2, 2), 0),
], ids=["contiguous", "in_dims=1", "in_dims=3", "transposed", "sliced", "expanded", "empty"])
def test_stride_and_is_contiguous_of_a_sample(make, in_dims):
    def program(lib):
        seen = []

        def inspect(x):
            seen.append((x.stride(), x.stride(0), x.stride(-1), x.is_contiguous(), x.mT.is_contiguous(),
                         x.is_contiguous(memory_format=lib.contiguous_format)))
            return x
        lib.func.vmap(inspect, in_dims=in_dims)(make(lib))
        return seen
    both(program)


def test_is_contiguous_in_another_memory_format_is_refused_under_vmap_as_in_torch():
    both_raise(lambda lib: lib.func.vmap(lambda x: x.is_contiguous(memory_format=lib.channels_last))(
        lib.zeros(2, 1, 3, 2, 2)), RuntimeError, "NYI: querying is_contiguous inside of vmap for memory_format other")


def test_a_contiguity_guard_runs_under_vmap():
    def flattened(lib, x):
        x = x.mT
        return (x if x.is_contiguous() else x.contiguous()).view(-1)
    both(lambda lib: lib.func.vmap(lambda x: flattened(lib, x))(t(lib, BLOCKS)))


@pytest.mark.parametrize("in_dims", [0, 1])
def test_facts_a_sample_shares_with_its_batch_under_vmap(in_dims):
    def program(lib):
        seen = []

        def inspect(x):
            seen.append((x.storage_offset(), x.type().split(".")[-1], x.is_conj(), x.is_neg(), x.is_inference(),
                         x.nbytes))
            return x
        source = t(lib, X)[:, 1:] if in_dims == 0 else t(lib, X)[1:]
        lib.func.vmap(inspect, in_dims=in_dims)(source)
        return seen
    both(program)


def test_type_with_a_dtype_converts_each_sample():
    both(lambda lib: lib.func.vmap(lambda x: x.type(lib.float32))(t(lib, X)))
