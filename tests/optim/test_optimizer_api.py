"""Optimizer corners against torch: a tensor learning rate, loading older or foreign state dicts, error wording."""
import pytest

from twins import both, both_raise


def trained(lib, lr, steps=3, **hyper):
    """A parameter after ``steps`` SGD steps on a small quartic, and its optimizer."""
    w = lib.nn.Parameter(lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64))
    optimizer = lib.optim.SGD([w], lr=lr(lib), **hyper)
    for _ in range(steps):
        optimizer.zero_grad()
        (w ** 4).sum().backward()
        optimizer.step()
    return w, optimizer


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_a_one_element_tensor_learning_rate_steps_like_a_number(momentum):
    both(lambda lib: trained(lib, lambda lib: lib.tensor(0.05), momentum=momentum)[0])
    both(lambda lib: trained(lib, lambda lib: lib.tensor([0.05]), momentum=momentum)[0])


def test_a_learning_rate_tensor_of_several_elements_is_refused():
    both_raise(lambda lib: trained(lib, lambda lib: lib.tensor([0.1, 0.2])), ValueError, "Tensor lr must be 1-element")


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
@pytest.mark.parametrize("flags, message", [
    (dict(foreach=True), "`fused` and `foreach` cannot be `True` together"),
    (dict(differentiable=True, foreach=True), "`fused` does not support `differentiable`"),
])
def test_fused_with_foreach_or_differentiable_is_refused(name, flags, message):
    both_raise(lambda lib: getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(2))], lr=0.1, fused=True, **flags),
               RuntimeError, message)


@pytest.mark.parametrize("dropped", ["nesterov", "maximize", "foreach", "differentiable", "fused"])
def test_loading_a_save_from_before_an_option_existed_gives_it_its_default(dropped):
    def program(lib):
        w, optimizer = trained(lib, lambda lib: 0.05, momentum=0.9)
        saved = optimizer.state_dict()
        del saved["param_groups"][0][dropped]
        optimizer.load_state_dict(saved)
        (w ** 4).sum().backward()
        optimizer.step()  # reads every option
        return sorted(optimizer.param_groups[0].items()).__repr__().replace("torch", "ember"), w

    both(program)


def test_loading_keeps_state_that_belongs_to_no_parameter():
    def program(lib):
        _, optimizer = trained(lib, lambda lib: 0.05, momentum=0.9)
        saved = optimizer.state_dict()
        saved["state"][7] = {"note": 1}
        optimizer.load_state_dict(saved)
        return sorted(key for key in optimizer.state if isinstance(key, int)), optimizer.state[7]

    both(program)


def test_loading_a_save_without_names_keeps_this_optimizers_names():
    def program(lib):
        model = lib.nn.Linear(2, 1)
        named = lib.optim.SGD(model.named_parameters(), lr=0.1)
        unnamed = lib.optim.SGD(model.parameters(), lr=0.2)
        named.load_state_dict(unnamed.state_dict())
        return named.param_groups[0]["param_names"], named.param_groups[0]["lr"]

    both(program)


def test_a_tensor_instead_of_a_list_is_named_by_its_legacy_type():
    both_raise(lambda lib: lib.optim.SGD(lib.nn.Parameter(lib.ones(2)), lr=0.1), TypeError,
               r"should be an iterable of Tensors or dicts, but got (torch|ember)\.FloatTensor")


def test_params_partly_named_are_refused_as_torch():
    def program(lib):
        first, second = lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(2))
        lib.optim.SGD([("first", first), second], lr=0.1)
    both_raise(program, ValueError, "^all optimizer params should be with/without names. Some param names are missing$")
