"""The operators ``ember.library`` defines: ``OpOverload`` (``ember.ops.ns.name.default``), ``OpOverloadPacket``
(``ember.ops.ns.name``), and the ``autograd.Function`` each one runs through.

A call binds its arguments to the schema, lets ``__torch_function__`` handlers and modes see it (as torch's
operators do), then runs the kernel. When autograd applies, the kernel runs as the forward of a Function made
for the op, whose backward is the one given to ``register_autograd``: one graph mechanism for every op.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ember import _ops_namespace
from ember._tensor import Tensor
from ember.autograd import function as _function
from ember.autograd.function import Function
from ember.autograd.grad_mode import no_grad, state as _grad
from ember.library._schema import NO_DEFAULT, FunctionSchema, _checked
from ember.overrides import _modes, _never_dispatch, handle_torch_function, has_torch_function

# Kernel keys, tried in this order: a kernel that handles autograd itself, the CPU kernel, one for every device,
# then one made of ember ops (CompositeImplicitAutograd). Device types other than cpu are kept but never run.
AUTOGRAD_KEY, IMPLICIT_KEY, ANY_DEVICE = "autograd", "implicit", None
_KERNEL_ORDER = (AUTOGRAD_KEY, "cpu", ANY_DEVICE, IMPLICIT_KEY)


class OpOverload:
    """One overload of an operator, ``ember.ops.mylib.foo.default``: its schema, kernels and formulas."""

    def __init__(self, packet: "OpOverloadPacket", schema: FunctionSchema):
        self._schema = schema
        self.overloadpacket = packet
        self._overloadname = schema.overload_name or "default"
        self._kernels: dict = {}
        self._fake: Callable | None = None
        self._vmap: Callable | None = None
        self._autograd: tuple | None = None  # (backward, setup_context) given to register_autograd
        self._autocast: dict = {}  # device type -> the dtype register_autocast casts floating inputs to
        self._custom = False  # made by custom_op: its outputs may not alias its inputs, its kernel runs under no_grad
        self._mutates = bool(schema.mutable_arguments)
        self._function = _function_for(self)
        # calls with between these many positional values and no keywords may take the short path (see
        # _unrecorded_call): the arguments left out all have defaults
        self._most_positional = -1 if schema.keyword_only else len(schema.arguments)
        self._fewest_positional = max((i + 1 for i, a in enumerate(schema.arguments) if a.default is NO_DEFAULT),
                                      default=0)

    @property
    def __name__(self) -> str:
        return f"{self._schema.name.split('::')[1]}.{self._overloadname}"

    @property
    def namespace(self) -> str:
        return self._schema.name.split("::")[0]

    def name(self) -> str:
        """``"ns::name"`` (with ``.overload`` for an overload other than the default)."""
        overload = self._schema.overload_name
        return self._schema.name + (f".{overload}" if overload else "")

    def __str__(self) -> str:
        return f"{self._schema.name.replace('::', '.')}.{self._overloadname}"

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self._schema.name.replace('::', '.')}', overload='{self._overloadname}')>"

    def __call__(self, /, *args, **kwargs):
        if self._fewest_positional <= len(args) <= self._most_positional and not kwargs and self._custom and \
                not self._mutates and not self._autocast and _takes_short_path(args):
            return _unrecorded_call(self, args)
        if not _function._vmap_levels:  # under vmap the Function's batching rule takes the call (see run_bound)
            relevant = _dispatch_candidates(args, kwargs)
            if relevant and has_torch_function(relevant):
                return handle_torch_function(self, _overloaded(relevant), *args, **kwargs)
        front, back = self._schema.bind(args, kwargs)
        return self.run_bound(front, back)

    def run_bound(self, front: list, back: dict):
        """Run the op on values already bound to its schema (``front`` positional, ``back`` keyword-only)."""
        if self._autocast:  # (rare: the module is imported here, as it builds on this one)
            from ember.library import _dispatch_rules

            device = _dispatch_rules.autocast_device(self)
            if device is not None:
                return _dispatch_rules.run_autocast(self, device, front, back)
        if self._mutates:  # torch's rule: a mutating op has no autograd formula
            return self.run_kernel(front, back, below_autograd=self._custom)
        if self._custom or self._autograd is not None or _function._vmap_levels:
            call = _Call(self, front, back)
            return call.finish(self._function.apply(call, *call.flat(front + list(back.values()))))
        return self.run_kernel(front, back, below_autograd=False)  # a Library op's kernel: its ember ops record

    def kernel(self) -> Callable:
        """The kernel a CPU call runs; NotImplementedError when none is registered."""
        for key in _KERNEL_ORDER:
            fn = self._kernels.get(key)
            if fn is not None:
                return fn
        raise NotImplementedError(
            f"Could not run '{self.name()}' with arguments from the 'CPU' backend: no kernel is registered for it. "
            f"Register one with ember.library.impl('{self.name()}', 'cpu', fn) or Library.impl(name, fn, 'CPU')."
        )

    def run_kernel(self, front: list, back: dict, below_autograd: bool):
        """The kernel's output for these values. ``below_autograd``: the kernel runs as torch runs it beneath
        autograd, under no_grad (so that its ops record nothing and ``x.numpy()`` works). A custom op's outputs are checked
        for aliasing and its mutated inputs count as changed."""
        kernel = self.kernel()
        values = front + list(back.values())
        front, back = _without_trailing_defaults(self._schema.arguments, front, back)
        if not below_autograd:
            return kernel(*front, **back)
        if _grad.enabled:  # (inside the op's Function, forward runs with grad mode off already)
            with no_grad():
                output = kernel(*front, **back)
        else:
            output = kernel(*front, **back)
        if self._custom:
            _refuse_aliases(self, kernel, values, output)
            if self._mutates:
                _bump_mutated(self._schema, values)
        return output


class OpOverloadPacket:
    """``ember.ops.mylib.foo``: an operator with its overloads (``.default``, and any others ``define`` added)."""

    def __init__(self, qualified_name: str):
        self._qualified_op_name = qualified_name
        self._overloads: dict[str, OpOverload] = {}

    @property
    def __name__(self) -> str:
        return self._qualified_op_name.split("::")[1]

    def __getattr__(self, name: str) -> OpOverload:
        overload = self.__dict__.get("_overloads", {}).get(name)
        if overload is None:
            raise AttributeError(f"The underlying op of '{self}' has no overload name '{name}'")
        return overload

    def overloads(self) -> list[str]:
        return list(self._overloads)

    def __str__(self) -> str:
        return self._qualified_op_name.replace("::", ".")

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self}')>"

    def __call__(self, /, *args, **kwargs):
        if not _function._vmap_levels:
            relevant = _dispatch_candidates(args, kwargs)
            if relevant and has_torch_function(relevant):
                return handle_torch_function(self, _overloaded(relevant), *args, **kwargs)
        overloads = list(self._overloads.values())
        for overload in overloads[:-1]:  # several overloads: the first whose schema takes the arguments
            try:
                front, back = overload._schema.bind(args, kwargs)
            except RuntimeError:
                continue
            return overload.run_bound(front, back)
        front, back = overloads[-1]._schema.bind(args, kwargs)
        return overloads[-1].run_bound(front, back)


def _takes_short_path(args: tuple) -> bool:
    """Whether a call records nothing and dispatches nowhere: no vmap, no mode, and every argument a plain
    tensor that needs no gradient (or grad mode is off) or a plain value. The everyday inference call."""
    if _function._vmap_levels or _modes:
        return False
    recording = _grad.enabled
    for value in args:
        if type(value) is Tensor:
            if recording and value.requires_grad:
                return False
        elif type(value) not in _never_dispatch:
            return False
    return True


def _unrecorded_call(op: OpOverload, args: tuple):
    """A custom op's call that :func:`_takes_short_path` admits: the kernel on the checked values, without the op's
    Function (it would record nothing). Grad mode stays as it is, as torch leaves it for such a call; the kernel's
    own ops record nothing either, since no input requires grad."""
    schema = op._schema
    values = [_checked(schema, argument, i, value) for i, (argument, value) in enumerate(zip(schema.arguments, args))]
    kernel = op.kernel()
    output = kernel(*values[:_given_count(schema.arguments, values)])  # (defaults left out stay out)
    _refuse_aliases(op, kernel, values, output)
    return output


# ---- the registry: ember.ops' dict of namespaces

def find(qualname: str) -> OpOverload:
    """The overload named ``"ns::name"`` or ``"ns::name.overload"``; AttributeError, as ``ember.ops``, if none."""
    namespace, sep, rest = qualname.partition("::")
    if not sep:
        raise ValueError(f"expected an operator name of the form 'namespace::name', got {qualname!r}")
    name, _, overload = rest.partition(".")
    packet = getattr(getattr(_ops_namespace.ops, namespace), name)
    return getattr(packet, overload or "default")


def add(schema: FunctionSchema, replace: bool = False) -> OpOverload:
    """Register a new overload; RuntimeError if it exists (unless ``replace``: custom_op redefines)."""
    namespace, name = schema.name.split("::")
    packets = _ops_namespace.namespaces.setdefault(namespace, {})
    packet = packets.get(name)
    if packet is None:
        packet = packets[name] = OpOverloadPacket(schema.name)
    overload_name = schema.overload_name or "default"
    if overload_name in packet._overloads and not replace:
        raise RuntimeError(
            f"Tried to register an operator ({schema}) with the same name and overload name multiple times: "
            f"{packet._overloads[overload_name]._schema} is defined already. Define each overload once."
        )
    overload = OpOverload(packet, schema)
    packet._overloads[overload_name] = overload
    return overload


def remove(overload: OpOverload) -> None:
    """Forget an overload (its Library was deleted); the packet goes with its last overload."""
    packet = overload.overloadpacket
    if packet._overloads.get(overload._overloadname) is overload:
        del packet._overloads[overload._overloadname]
    if not packet._overloads:
        namespace, name = packet._qualified_op_name.split("::")
        _ops_namespace.namespaces.get(namespace, {}).pop(name, None)


# ---- __torch_function__

def _dispatch_candidates(args: tuple, kwargs: dict) -> list:
    """The values a handler could come from: the arguments that are not plain numbers, strings or None, and the
    items of lists among them (torch's ops search ``Tensor[]`` arguments too)."""
    found = []
    for value in (*args, *kwargs.values()) if kwargs else args:
        if type(value) in (list, tuple):
            found.extend(v for v in value if v is not None)
        elif value is not None and type(value) not in (int, float, bool, str):
            found.append(value)
    return found


def _overloaded(relevant: list) -> list:
    """As torch's operators: plain tensors are not among the ``types`` a handler receives."""
    return [v for v in relevant if type(v) is not Tensor]


# ---- one call through the op's Function

class _Call:
    """One call of an op through its Function: the op and where each schema argument sits among the flat values.

    The Function takes the arguments flat (the tensors of a ``Tensor[]`` one by one), so that autograd sees
    each tensor; the user's ``setup_context``, ``backward`` and vmap rule see them as the schema has them.
    """

    __slots__ = ("op", "sizes", "n_front", "list_output", "output_sizes")

    def __init__(self, op: OpOverload, front: list, back: dict):
        self.op = op
        self.n_front = len(front)
        self.sizes = [len(v) if a.is_tensor_list and v is not None else -1
                      for a, v in zip(op._schema.arguments, front + list(back.values()))]
        self.list_output = False
        self.output_sizes = None  # for a tuple result holding a Tensor[]: each result's length, -1 for one value

    def flat(self, values: list) -> list:
        return _flattened(values, self.sizes)

    def structured(self, flat) -> list:
        """``flat`` regrouped as the schema's arguments (a list for each ``Tensor[]``)."""
        return _grouped(flat, self.sizes)

    def split(self, values: list) -> tuple[list, dict]:
        names = [a.name for a in self.op._schema.arguments[self.n_front:]]
        return values[:self.n_front], dict(zip(names, values[self.n_front:]))

    def run(self, flat) -> Any:
        output = self.op.run_kernel(*self.split(self.structured(flat)), below_autograd=True)
        if type(output) is list:  # a Tensor[] result: the Function handles tuples of outputs
            self.list_output = True
            return tuple(output)
        if type(output) is tuple and any(type(o) is list for o in output):  # (Tensor[], int): flat, as arguments
            self.output_sizes = [len(o) if type(o) is list else -1 for o in output]
            return tuple(_flattened(output, self.output_sizes))
        return output

    def finish(self, output):
        if self.output_sizes is not None:
            return tuple(_grouped(output, self.output_sizes))
        return list(output) if self.list_output else output


def _flattened(values, sizes: list) -> list:
    """``values`` with each list among them (a size of 0 or more) spread in place: ``_grouped``'s inverse."""
    flat = []
    for size, value in zip(sizes, values):
        if size < 0:
            flat.append(value)
        else:
            flat.extend(value)
    return flat


def _grouped(flat, sizes: list) -> list:
    """``flat`` regrouped: a value for each size of -1, a list of that many values for the others."""
    values, i = [], 0
    for size in sizes:
        if size < 0:
            values.append(flat[i])
            i += 1
        else:
            values.append(list(flat[i:i + size]))
            i += size
    return values


class OpFunction(Function):
    """The Function an op runs through; ``function_for`` makes a subclass per op, named as torch names it."""

    _acts_as_user = True  # the formulas are the user's: they run with __torch_function__ on, as a user's Function
    _tangents_dropped_without_jvp = True  # as torch's custom ops, which have no forward-mode formula

    @staticmethod
    def forward(call: _Call, *flat):
        return call.run(flat)

    @classmethod
    def _operator_call(cls, args: tuple) -> tuple:
        call = args[0]
        return call.op, tuple(call.structured(args[1:]))

    @staticmethod
    def setup_context(ctx, inputs: tuple, output) -> None:
        call = inputs[0]
        ctx._call = call
        ctx.needs_input_grad = tuple(call.structured(ctx.needs_input_grad[1:]))
        ctx._user_formula = call.op._autograd
        values = call.structured(inputs[1:])
        ctx._fewest_grads = _given_count(call.op._schema.arguments, values)
        if ctx._user_formula is not None and ctx._user_formula[1] is not None:
            if len(values) > call.n_front:  # keyword-only arguments: as torch, they come apart, as a dict
                front, back = call.split(values)
                ctx._user_formula[1](ctx, tuple(front), back, call.finish(output))
            else:
                ctx._user_formula[1](ctx, tuple(values), call.finish(output))

    @staticmethod
    def backward(ctx, *grads):
        call = ctx._call
        if ctx._user_formula is None:
            raise RuntimeError(f"Trying to backward through {call.op} but no autograd formula was registered. "
                               "Please use register_autograd to add one.")
        if call.list_output:  # a Tensor[] result has one gradient argument, the list, as in torch
            grads = (list(grads),)
        elif call.output_sizes is not None:
            grads = tuple(_grouped(grads, call.output_sizes))
        result = ctx._user_formula[0](ctx, *grads)
        return (None, *call.flat(_one_per_argument(ctx, call, result)))

    @staticmethod
    def vmap(info, in_dims: tuple, call: _Call, *flat):
        values, dims = call.structured(flat), call.structured(in_dims[1:])
        if call.op._vmap is not None:
            front, back = call.split(values)
            # as torch: in_dims covers the positional arguments (keyword-only ones are never batched)
            return call.op._vmap(info, tuple(call.split(dims)[0]), *front, **back)
        return _looped(call, info.batch_size, values, dims)


def _function_for(op: OpOverload) -> type:
    name = f"GeneratedBackwardFor_{op._schema.name.replace('::', '_')}_{op._overloadname}"
    return type(name, (OpFunction,), {"__module__": __name__, "__qualname__": name})


def _one_per_argument(ctx, call: _Call, result) -> list:
    """The user's backward result checked: one gradient per schema argument (extra trailing Nones allowed), and
    None for each argument that is not a tensor."""
    grads = list(result) if isinstance(result, (tuple, list)) else [result]
    arguments = call.op._schema.arguments
    # as torch: the formula returns gradients for the positional arguments; keyword-only ones get None
    n = sum(not a.kwarg_only for a in arguments)
    if min(ctx._fewest_grads, n) <= len(grads) < n:  # torch drops trailing defaults: no gradients for those either
        grads += [None] * (n - len(grads))
    if len(grads) < n or any(g is not None for g in grads[n:]):
        raise RuntimeError(f"function {ctx.name()} returned an incorrect number of gradients (expected {n}, got "
                           f"{len(grads)})")
    grads = grads[:n] + [None] * (len(arguments) - n)
    for i, (argument, size) in enumerate(zip(arguments, call.sizes)):
        if grads[i] is None:
            grads[i] = [None] * size if size >= 0 else None
        elif not argument.is_tensor_like:
            raise RuntimeError(f"function {ctx.name()} returned a gradient different than None at position {i + 1}, "
                               "but the corresponding forward input was not a Variable")
        elif size >= 0 and (not isinstance(grads[i], (list, tuple)) or len(grads[i]) != size):
            raise RuntimeError(f"function {ctx.name()} returned {type(grads[i]).__name__} as the gradient of the "
                               f"Tensor[] argument '{argument.name}'; return a list of {size} gradients (or None)")
    return grads


def _given_count(arguments: tuple, values: list) -> int:
    """How many arguments torch hands a kernel or formula: trailing ones equal to their defaults are left off."""
    n = len(values)
    while n and arguments[n - 1].default is not NO_DEFAULT and _equal(values[n - 1], arguments[n - 1].default):
        n -= 1
    return n


def _equal(value, default) -> bool:
    return not isinstance(value, Tensor) and type(value) is type(default) and value == default


def _without_trailing_defaults(arguments: tuple, front: list, back: dict) -> tuple[list, dict]:
    """The kernel's arguments as torch passes them: keyword-only ones equal to their defaults dropped, then
    trailing positional ones (so a kernel's own defaults apply where the caller gave the schema's)."""
    if back:
        kept = {a.name for a in arguments[len(front):] if a.default is NO_DEFAULT or not _equal(back[a.name], a.default)}
        back = {k: v for k, v in back.items() if k in kept}
    if not back:
        front = front[:_given_count(arguments, front)]
    return front, back


def _looped(call: _Call, batch_size: int, values: list, dims: list):
    """The batching rule of an op without one: the op on each sample, the results stacked (torch's fallback)."""
    from ember._ops.joining import stack

    def sample(value, d, b):
        if isinstance(value, list):
            return [sample(v, e, b) for v, e in zip(value, d)]
        return value if d is None or not isinstance(value, Tensor) else value.select(d, b)

    results = []
    for b in range(batch_size):
        one = [sample(v, d, b) for v, d in zip(values, dims)]
        results.append(call.op.run_bound(*call.split(one)))
    first = results[0]
    if isinstance(first, Tensor):
        return stack(results), 0
    if first is None:
        return None, None
    outputs = tuple(stack([r[i] for r in results]) if isinstance(first[i], Tensor) else first[i]
                    for i in range(len(first)))
    return (list(outputs) if type(first) is list else outputs), tuple(
        0 if isinstance(o, Tensor) else None for o in outputs)


# ---- the kernel's inputs and outputs

def _tensors_in(values) -> list:
    found = []
    for v in values:
        if isinstance(v, Tensor):
            found.append(v)
        elif isinstance(v, (list, tuple)):
            found.extend(t for t in v if isinstance(t, Tensor))
    return found


def _refuse_aliases(op: OpOverload, kernel: Callable, inputs: list, output) -> None:
    """A custom op must return new tensors: none may be an input, share an input's memory, or another output's."""
    outputs = _tensors_in(output if isinstance(output, (tuple, list)) else (output,))
    if not outputs:
        return
    seen = [_owner(t._data) for t in _tensors_in(inputs)]
    for i, out in enumerate(outputs):
        owner = _owner(out._data)
        if any(owner is other for other in seen):
            raise RuntimeError(
                f"{op.name()} (with implementation in {getattr(kernel, '__module__', None)!r}): output {i} of the "
                "kernel is one of its inputs, a view of one, or shares memory with another output. A custom op "
                "must return new tensors (its outputs may not alias its inputs or each other): return a copy "
                "instead, e.g. x.clone()."
            )
        seen.append(owner)


def _owner(array: np.ndarray):
    """The object that owns an array's memory (views lead back to it): arrays with one owner share memory."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array if array.base is None else array.base


def _bump_mutated(schema: FunctionSchema, values: list) -> None:
    """Each argument the schema marks mutable counts as changed, as torch counts it, so saved copies are checked."""
    for argument, value in zip(schema.arguments, values):
        if argument.mutable:
            for t in value if isinstance(value, list) else (value,):
                if isinstance(t, Tensor):
                    t._bump()
