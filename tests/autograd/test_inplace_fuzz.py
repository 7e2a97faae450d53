"""Views and in-place ops under autograd, run by torch and by ember: everything observable must agree.

Hypothesis draws short programs on three float64 leaves and a few non-leaves
made from them. A step takes a view (indexing with steps, select, narrow, t,
transpose, permute, view, reshape, unsqueeze, squeeze, expand, detach; views of
views), changes a value in place (add_ ... div_, copy_, fill_, zero_, clamp_,
relu_, exp_, setitem with basic and advanced keys; also under no_grad), or
computes a new value. Shapes are drawn from torch's run, so the program fits.
After steps, both libraries must show the same values, versions, grad_fn
names, requires_grad, is_leaf and bases; then the same gradients, through
backward (twice, with retain_graph), autograd.grad, or a double backward. Where
torch raises, ember must raise the same type, saying the same thing.

Known differences, left out of the draw (each one deliberate):
* a view regenerated after an in-place change: torch names it AsStridedBackward0, ember replays the view;
* torch refuses writes from memory that overlaps the target (``x.mul_(x[0])``); ember copies first;
* ``x.mul_(x)``: torch's saved ``other`` is the modified x, so backward refuses; ember's gradient is right;
* torch fills an expanded tensor (``fill_``, ``zero_``); ember refuses every write to one;
* a view made under no_grad of a tensor that requires grad: torch says it requires grad (and is a leaf);
* ``x[0:n]`` in a tuple key over a whole dim: torch names it AliasBackward0, ember SliceBackward0;
* a no_grad view whose base changed since: torch refuses to use it at all, ember only to change it in place;
* a size-1 slice of an expanded dim has no overlap left: torch writes into it, ember still refuses.
"""
import math
import re
import warnings

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from twins import assert_same, both, both_raise, grad_fn_name, leaf

_SHAPES = [(3, 4), (4,), (2, 3)]
_START = [np.round(np.random.default_rng(0).uniform(-1.5, 1.5, s), 3) for s in _SHAPES]


def _constant(lib, shape, seed):
    return lib.tensor(np.round(np.random.default_rng(seed).uniform(0.5, 1.5, shape), 3), dtype=lib.float64)


def _operand(lib, values, spec):
    """("num", x): a number; ("val", i): values[i]; ("const", shape, seed): a constant tensor."""
    return spec[1] if spec[0] == "num" else values[spec[1]] if spec[0] == "val" else _constant(lib, *spec[1:])


def _key(lib, items):
    def item(k):
        if k == "...":
            return Ellipsis
        if isinstance(k, tuple):
            kind, *rest = k
            if kind == "slice":
                return slice(*rest)
            return lib.tensor(list(rest[0]), dtype=lib.bool if kind == "mask" else lib.int64)
        return k

    return tuple(item(k) for k in items)


_VIEWS = {
    "index": lambda lib, x, key: x[_key(lib, key)],
    "select": lambda lib, x, d, i: x.select(d, i),
    "narrow": lambda lib, x, d, s, n: x.narrow(d, s, n),
    "t": lambda lib, x: x.t(),
    "transpose": lambda lib, x, a, b: x.transpose(a, b),
    "permute": lambda lib, x, p: x.permute(*p),
    "view": lambda lib, x, s: x.view(s),
    "reshape": lambda lib, x, s: x.reshape(s),
    "unsqueeze": lambda lib, x, d: x.unsqueeze(d),
    "squeeze": lambda lib, x, d: x.squeeze() if d is None else x.squeeze(d),
    "expand": lambda lib, x, s: x.expand(*s),
    "detach": lambda lib, x: x.detach(),
}

_COMPUTE = {  # exp, sigmoid, tanh, relu and pow save what an in-place change may later modify
    "mul": lambda lib, x, y: x * y,
    "exp": lambda lib, x: (x * 0.3).exp(),
    "sigmoid": lambda lib, x: x.sigmoid(),
    "tanh": lambda lib, x: x.tanh(),
    "pow2": lambda lib, x: x.pow(2),
    "clone": lambda lib, x: x.clone(),
    "scale": lambda lib, x: x * 1.5,
    "sum": lambda lib, x: x.sum(0) if x.dim() else x * 1,
    "relu": lambda lib, x: x.relu(),
}


def _in_place(lib, values, x, name, args):
    if name in ("add_", "sub_"):
        return getattr(x, name)(_operand(lib, values, args[0]), alpha=args[1])
    if name in ("mul_", "div_", "copy_"):
        return getattr(x, name)(_operand(lib, values, args[0]))
    if name == "fill_":
        return x.fill_(args[0])
    if name == "clamp_":
        return x.clamp_(*args)
    if name == "setitem":
        x[_key(lib, args[0])] = _operand(lib, values, args[1])
        return x
    return getattr(x, name)()  # zero_, relu_, exp_, sigmoid_, tanh_


def _step(lib, values, step):
    kind, name, i, *args = step
    if kind in ("view", "no_grad_view"):
        with lib.no_grad() if kind == "no_grad_view" else lib.enable_grad():
            values.append(_VIEWS[name](lib, values[i], *args))
    elif kind == "compute":
        values.append(_COMPUTE[name](lib, values[i], *[values[a] for a in args]))
    else:
        with lib.no_grad() if kind == "no_grad" else lib.enable_grad():
            _in_place(lib, values, values[i], name, args[0])


# ---------------------------------------------------------------- what is compared


def _start(lib, made):
    leaves = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in _START]
    return leaves, leaves + [_COMPUTE[name](lib, leaves[i]) for i, name in made]


def _error(e: Exception) -> tuple:
    return ("error", type(e).__name__, _substance(str(e)))


_SUBSTANCES = {  # what a message says, however each library words it
    "view of a leaf": r"view of a leaf Variable that requires grad",
    "leaf": r"leaf Variable that requires grad",
    "saved tensor modified": r"modified by an inplace operation",
    "expanded target": r"more than one element of the written-to tensor",
    "overlapping source": r"input tensor and the written-to tensor refer to a single memory location",
    "no_grad view": r"created in no_grad mode",
    "second backward": r"backward through the graph a second time",
    "no view possible": r"view size is not compatible",
    "does not fit": r"doesn't match the broadcast shape|number of sizes provided|cannot be broadcast|must match the",
}


def _substance(message: str) -> str:
    for name, pattern in _SUBSTANCES.items():
        if re.search(pattern, message):
            return name
    return message


def _name(t):
    name = None if t.grad_fn is None else t.grad_fn.name().replace("torch::autograd::", "")
    return "a regenerated view" if name == "AsStridedBackward0" or t._base is not None and t._version else name


def _state(values, no_grad_views):
    def base(v):
        return None if v._base is None else next((i for i, w in enumerate(values) if w is v._base), "other")

    return [(v.detach().numpy().copy(), v._version, base(v)) + (
        () if i in no_grad_views else (_name(v), v.requires_grad, v.is_leaf)) for i, v in enumerate(values)]


def _grads(tensors):
    return [None if t.grad is None else t.grad.detach().numpy().copy() for t in tensors]


def _finish(lib, leaves, values, chosen, mode):
    loss = sum((values[i] * _constant(lib, tuple(values[i].shape), i)).sum() for i in chosen
               if values[i].requires_grad)
    if not isinstance(loss, (torch.Tensor, ember.Tensor)):
        return "nothing requires grad"
    if mode == "grad":
        return [None if g is None else g.numpy() for g in lib.autograd.grad(loss, leaves, allow_unused=True)]
    if mode == "double":
        grads = lib.autograd.grad(loss, leaves, allow_unused=True, create_graph=True)
        total = sum((g * g).sum() for g in grads if g is not None and g.requires_grad)
        if isinstance(total, (torch.Tensor, ember.Tensor)):
            total.backward()
        return [None if g is None else g.detach().numpy() for g in grads], _grads(leaves)
    loss.backward(retain_graph=mode == "twice")
    if mode == "backward":
        return _grads(leaves)
    first = _grads(leaves)
    loss.backward()  # the graph was retained: the gradients add up
    return first, _grads(leaves)


def _run(lib, program):
    """Everything observable along the program: states, then gradients; an error ends it."""
    made, steps, looks, (chosen, mode), no_grad_views = program
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        leaves, values = _start(lib, made)
        try:
            for step, look in zip(steps, looks):
                _step(lib, values, step)
                if look:  # reading grad_fn regenerates a view's; sometimes don't, so the lazy path runs too
                    seen.append(_state(values, no_grad_views))
            seen.append(_state(values, no_grad_views))
            seen.append(_finish(lib, leaves, values, chosen, mode))
            seen.append(_state(values, no_grad_views))
        except Exception as e:  # noqa: BLE001 - any error must be the other library's too
            seen.append(_error(e))
    return seen


# ---------------------------------------------------------------- drawing programs


def _fits(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


class _Drawer:
    """Draws steps that fit the values of a torch run of the program so far."""

    def __init__(self, draw, values):
        self.draw, self.values, self.no_grad_views = draw, values, set()

    def pick(self, options):
        return self.draw(st.sampled_from(options))

    def usable(self):  # no_grad views of tensors that require grad are only written to (see the module's notes)
        return [i for i in range(len(self.values)) if i not in self.no_grad_views]

    def operand(self, shape, tensors=True):
        kind = self.pick(["num", "const", "val"] if tensors else ["num", "const"])
        if kind == "num":
            return ("num", self.pick([2.0, -0.5, 3]))
        if kind == "val":
            fitting = [i for i in self.usable() if _fits(tuple(self.values[i].shape), shape)]
            return ("val", self.pick(fitting if fitting and self.draw(st.integers(0, 9)) else self.usable()))
        if shape and self.draw(st.booleans()):
            shape = shape[self.draw(st.integers(0, len(shape) - 1)):]  # one that broadcasts
        return ("const", tuple(shape), self.draw(st.integers(0, 99)))

    def basic_key(self, shape):
        key, dim = [], 0
        for _ in range(self.draw(st.integers(1, max(1, len(shape))))):
            if dim >= len(shape):
                break
            kind = self.pick(["int", "slice", "slice", "none", "all"])
            if kind == "none":
                key.append(None)
                continue
            size, dim = shape[dim], dim + 1
            if kind == "int" and size:
                key.append(self.draw(st.integers(-size, size - 1)))
            elif kind == "all":
                key.append(("slice", None, None, None))
            else:
                start = self.draw(st.integers(0, size))
                stop, step = self.draw(st.integers(start, size)), self.draw(st.integers(1, 3))
                whole = start == 0 and stop == size and step == 1  # torch's name depends on it (see the notes)
                key.append(("slice", None, None, None) if whole else ("slice", start, stop, step))
        if not self.draw(st.integers(0, 4)):
            key.insert(self.draw(st.integers(0, len(key))), "...")
        return tuple(key) or (("slice", None, None, None),)

    def advanced_key(self, shape):
        if not shape:
            return (None,)
        dim = self.draw(st.integers(0, len(shape) - 1))
        size = shape[dim]
        if size and self.draw(st.booleans()):
            index = ("list", tuple(self.draw(st.lists(st.integers(-size, size - 1), min_size=1, max_size=3))))
        else:
            index = ("mask", tuple(self.draw(st.lists(st.booleans(), min_size=size, max_size=size))))
        return (("slice", None, None, None),) * dim + (index,)

    def view(self, i):
        shape = tuple(self.values[i].shape)
        nd, n = len(shape), math.prod(shape)
        name = self.pick(["index", "unsqueeze", "squeeze", "view", "reshape", "expand", "detach"] +
                         (["select", "narrow", "transpose", "permute", "index"] if nd and n else []) +
                         (["t"] if nd <= 2 else []))
        if name == "index":
            return (name, i, self.basic_key(shape))
        if name == "select":
            d = self.draw(st.integers(-nd, nd - 1))
            return (name, i, d, self.draw(st.integers(-shape[d], shape[d] - 1)))
        if name == "narrow":
            d = self.draw(st.integers(0, nd - 1))
            start = self.draw(st.integers(0, shape[d]))
            return (name, i, d, start, self.draw(st.integers(0, shape[d] - start)))
        if name == "transpose":
            return (name, i, self.draw(st.integers(-nd, nd - 1)), self.draw(st.integers(-nd, nd - 1)))
        if name == "permute":
            return (name, i, tuple(self.draw(st.permutations(range(nd)))))
        if name in ("view", "reshape"):  # a view of a non-contiguous tensor fails in both
            return (name, i, self.pick([(-1,), (1, -1), shape[::-1]] + [(d, -1) for d in range(1, n + 1) if n % d == 0]))
        if name == "unsqueeze":
            return (name, i, self.draw(st.integers(-nd - 1, nd)))
        if name == "squeeze":
            return (name, i, self.draw(st.one_of(st.none(), st.integers(-nd, nd - 1))) if nd else None)
        if name == "expand":
            return (name, i, (2,) + shape)
        return (name, i)

    def in_place(self, i):
        x = self.values[i]
        shape = tuple(x.shape)
        name = self.pick(["add_", "sub_", "mul_", "div_", "copy_", "fill_", "clamp_", "setitem", "setitem", "zero_",
                          "relu_", "exp_", "sigmoid_", "tanh_"])
        if name in ("fill_", "zero_", "setitem") and 0 in x.stride() and x.numel() > 1:
            name = "mul_"  # torch fills an expanded tensor, ember refuses (see the module's notes)
        if name in ("add_", "sub_"):
            args = (self.operand(shape), self.pick([1, 2.0, -0.5]))
        elif name == "mul_":
            args = (self.operand(shape),)
            args = (("num", 2.0),) if args[0] == ("val", i) else args  # x.mul_(x): see the module's notes
        elif name == "div_":
            args = (self.operand(shape, tensors=False),)
        elif name == "copy_":
            args = (self.operand(shape),)
            args = (("const", shape, 7),) if args[0][0] == "num" else args
        elif name == "fill_":
            args = (self.pick([0.0, 1.5, -2.0]),)
        elif name == "clamp_":
            args = self.pick([(-0.5, 0.5), (None, 0.2), (0.0, None)])
        elif name == "setitem":
            key = self.advanced_key(shape) if not self.draw(st.integers(0, 3)) else self.basic_key(shape)
            try:
                region = tuple(x[_key(torch, key)].shape)
            except (IndexError, RuntimeError):
                region = shape
            args = (key, self.operand(region))
        else:
            args = ()
        return (self.pick(["in_place"] * 5 + ["no_grad"]), name, i, args)

    def compute(self, i):
        name = self.pick(sorted(_COMPUTE))
        if name == "mul":
            shape = tuple(self.values[i].shape)
            return ("compute", name, i, self.pick([j for j in self.usable() if _fits(tuple(self.values[j].shape), shape)]))
        return ("compute", name, i)


@st.composite
def _programs(draw, max_steps=8):
    made = [(draw(st.integers(0, 2)), draw(st.sampled_from(["scale", "exp", "sigmoid", "pow2", "tanh", "clone"])))
            for _ in range(draw(st.integers(0, 3)))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = _start(torch, made)[1]
        drawer = _Drawer(draw, values)
        steps = []
        for _ in range(draw(st.integers(1, max_steps))):
            i = draw(st.integers(0, len(values) - 1))
            kind = "in_place" if i in drawer.no_grad_views else draw(st.sampled_from(
                ["view", "view", "in_place", "in_place", "in_place", "compute"]))
            if kind == "view":
                step = (draw(st.sampled_from(["view"] * 7 + ["no_grad_view"])),) + drawer.view(i)
            else:
                step = drawer.in_place(i) if kind == "in_place" else drawer.compute(i)
            steps.append(step)
            requires_grad = values[i].requires_grad
            try:
                _step(torch, values, step)
            except (RuntimeError, IndexError, TypeError, ValueError):
                break  # the program ends where torch raises; ember must raise there too
            if step[0] == "no_grad_view" and requires_grad:
                drawer.no_grad_views.add(len(values) - 1)
    looks = [draw(st.booleans()) for _ in steps]
    chosen = draw(st.lists(st.sampled_from(drawer.usable()), min_size=1, max_size=4, unique=True))
    mode = draw(st.sampled_from(["backward", "twice", "grad", "double"]))
    return made, steps, looks, (chosen, mode), frozenset(drawer.no_grad_views)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(_programs())
def test_views_and_in_place_ops_agree_with_torch(program):
    expected, actual = _run(torch, program), _run(ember, program)
    if expected[-1] == ("error", "RuntimeError", "overlapping source"):  # see the module's notes
        expected, actual = expected[:-1], actual[:len(expected) - 1]
    assert_same(expected, actual)


# ---------------------------------------------------------------- what the fuzzer found, one test each


def test_a_saved_output_that_an_in_place_op_made_is_checked_at_backward():
    # relu_, exp_, sigmoid_ and tanh_ save their result, which is the tensor itself: changing it again is an error
    for op in ("relu_", "exp_", "sigmoid_", "tanh_"):
        def program(lib):
            x = leaf(lib, [0.5, -1.0])
            y = getattr(x * 1, op)()
            y.add_(1)
            y.sum().backward()

        both_raise(program, RuntimeError, "modified by an inplace operation", "output 0 of")


def test_a_saved_output_of_an_in_place_op_on_a_view_still_gives_gradients():
    def program(lib):
        x = leaf(lib, [0.5, -1.0, 2.0])
        y = x * 1
        y[1:].exp_()
        y.sum().backward()
        return x.grad, y._version

    both(program)


def test_fill_and_zero_name_their_nodes_as_torch():
    def program(lib):
        x = leaf(lib, [[0.5, -1.0], [2.0, 3.0]])
        made = [(x * 1).zero_(), (x * 1).fill_(2.0), (x * 1).fill_(lib.tensor(2.0, dtype=lib.float64)),
                (x * 1).uniform_(), (x * 1).normal_()]
        whole = []
        for key in (slice(None), Ellipsis, (slice(0, 5), slice(None))):
            y = x * 1
            y[key] = 2.0
            z = x * 1
            z[key] = lib.tensor([1.0, 2.0], dtype=lib.float64)
            whole += [grad_fn_name(y), grad_fn_name(z)]
        return [grad_fn_name(t) for t in made], whole

    both(program)


def test_setitem_of_all_of_a_leaf_is_an_in_place_change_of_the_leaf():
    # a key that takes every dim whole, as written, makes no view: the leaf's own error, not its view's
    for key in (slice(None), Ellipsis, slice(0, 3), (Ellipsis, slice(None, 10))):
        both_raise(lambda lib: leaf(lib, [1.0, 2.0, 3.0]).__setitem__(key, 0.0), RuntimeError,
                   "^a leaf Variable that requires grad")
    both_raise(lambda lib: leaf(lib, [1.0, 2.0, 3.0]).__setitem__(slice(-3, None), 0.0), RuntimeError,
               "a view of a leaf Variable")


def test_setitem_of_all_of_a_non_leaf_gives_gradients():
    def program(lib):
        x, w = leaf(lib, [1.0, 2.0, 3.0]), leaf(lib, [4.0])
        y = x * 2
        y[:] = w * 3
        (y * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        return y, x.grad, w.grad, y._version

    both(program)


def test_advanced_setitem_with_a_value_that_does_not_fit_is_a_runtime_error():
    for key, value in (([0], [1.0, 2.0, 3.0]), ([True, False, True], [[[1.0, 2.0, 3.0]]])):
        both_raise(lambda lib: lib.zeros(3, 2).__setitem__(lib.tensor(key), lib.tensor(value)), RuntimeError,
                   "shape mismatch: value tensor of shape .* cannot be broadcast to indexing result of shape")


def test_in_place_change_through_a_view_made_under_no_grad_is_refused():
    def through_view(lib, change):
        x = leaf(lib, [1.0, 2.0, 3.0])
        y = x * 1
        with lib.no_grad():
            view = y[:2]
        change(lib, view)

    for change in (lambda lib, v: v.mul_(2), lambda lib, v: v.add_(leaf(lib, [1.0, 1.0])),
                   lambda lib, v: v.__setitem__(0, 5.0)):
        both_raise(lambda lib: through_view(lib, change), RuntimeError, "created in no_grad mode")

    def of_a_leaf(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        with lib.no_grad():
            view = x[:2]
        view.mul_(2)

    both_raise(of_a_leaf, RuntimeError, "created in no_grad mode")


def test_views_made_under_no_grad_can_still_be_changed_under_no_grad():
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        y = x * 1
        with lib.no_grad():
            view = y[:2]
            view.mul_(2)
            view[0] = 5.0
        d = y.detach()
        d.add_(1)  # detach() is no view: nothing to refuse
        return y, y._version

    both(program)


def test_the_leaf_error_comes_before_the_shape_error():
    both_raise(lambda lib: leaf(lib, [1.0, 2.0]).copy_(lib.ones(3, 2, dtype=lib.float64)), RuntimeError,
               "^a leaf Variable that requires grad")

    def setitem(lib):  # but x[key] = value checks that the value fits the region first
        leaf(lib, [[1.0, 2.0], [3.0, 4.0]])[0] = lib.ones(3, dtype=lib.float64)

    both_raise(setitem, RuntimeError, "must match the (existing )?size")
