"""Custom differentiable operations: ``Function``, its ``ctx``, and ``once_differentiable``.

Every built-in op of ember is a ``Function`` written with exactly this API.

>>> import ember
>>> class MulConstant(ember.autograd.Function):
...     @staticmethod
...     def forward(ctx, tensor, constant):
...         ctx.constant = constant
...         return tensor * constant
...     @staticmethod
...     def backward(ctx, grad_output):
...         return grad_output * ctx.constant, None
>>> x = ember.tensor([1.], requires_grad=True)
>>> y = MulConstant.apply(x, 2.0)
>>> y
tensor([2.], grad_fn=<MulConstantBackward>)
>>> y.backward(); x.grad
tensor([2.])

A backward of plain arithmetic may also run on NumPy arrays, which is faster
when no graph of the gradient is needed (``create_graph`` off):

>>> class Square(ember.autograd.Function):
...     backward_on_arrays = True
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x
...     @staticmethod
...     def backward(ctx, grad):
...         (x,) = ctx.saved_tensors  # a NumPy array here, a tensor under create_graph
...         return 2 * x * grad
>>> x = ember.tensor([3.], requires_grad=True)
>>> Square.apply(x).backward(); x.grad
tensor([6.])
>>> ember.autograd.grad(Square.apply(x), x, create_graph=True)
(tensor([6.], grad_fn=<MulBackward0>),)
"""
from __future__ import annotations

import functools
import inspect
import itertools
import traceback
import warnings
from typing import Any

from ember._aten_names import note_builtin, op_of_node
from ember._dtype import kind as _kind_of
from ember._tensor import IN_CUSTOM_FUNCTION, OF_MULTIPLE_OUTPUTS, Tensor, version_counter, view_requires_grad
from ember.autograd._forward_state import state as _forward
from ember.autograd.anomaly_mode import state as _anomaly
from ember.autograd.grad_mode import state as _grad
from ember.autograd._saved_hooks import SavedPack as _SavedPack, saved_hooks_stack as _saved_hooks
from ember.autograd.node import Node
from ember.autograd.saved_attributes import give_names
from ember._ops._quiet import IGNORE_ALL, numpy_objection, quietly

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable", "InplaceFunction"]

# None, or what every Function call goes to first: the profiler's recorder while ember.profiler records (it times
# every Function's forward and backward), or a selective checkpoint's mode (ember.autograd._op_interception)
_interceptor = None
_vmap_levels: list = []  # the vmap levels now running (ember.func keeps this list); almost always empty
_transforms_running = [0]  # how many of ember.func's gradient transforms (grad, vjp, jvp ...) are running

SETUP_CONTEXT_NEEDED = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), it must override "
    "the setup_context staticmethod (forward(*args) without ctx, and setup_context(ctx, inputs, output) to fill ctx). "
    "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"
)
_batched_apply: list = []  # ember.func's runner for a user's Function called on batched inputs
_sequence = itertools.count(0, -1)  # each recorded node's number: newer nodes get smaller ones, and run first
_FREED = ("freed",)  # marks saved tensors released by a backward without retain_graph
# The node whose backward runs on NumPy arrays now (see Function.backward_on_arrays): its saved_tensors come as
# arrays. The engine sets it around such a call, and puts back what was there (a backward run inside one).
# A list cell, not an attribute of the node: storing into it costs a fraction of an attribute write that
# CPython 3.11 cannot specialise (the engine's write sites meet every class of node).
arrays_for = [None]


class _AllFalse(dict):
    """``needs_input_grad`` of a built-in op under no_grad, by number of arguments: one lookup, any count."""

    def __missing__(self, n: int) -> tuple:
        return (False,) * n


_NOTHING_NEEDED = _AllFalse({n: (False,) * n for n in range(8)})
_NOT_ONE, _NEITHER, _ONE = _NOTHING_NEEDED[1], _NOTHING_NEEDED[2], (True,)
_SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
    "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second "
    "time or if you need to access saved tensors after calling backward."
)


class FunctionCtx:
    """What ``forward``/``setup_context`` use to talk to ``backward``: saved tensors and flags."""

    _to_save = None
    _saved = None
    _dirty = ()
    _non_differentiable = ()
    _marked = False  # whether mark_dirty or mark_non_differentiable was called: outputs need the careful path
    _saved_returned = ()  # positions of outputs that setup_context saved and forward returned as inputs, unchanged
    materialize_grads = True
    _fw_out = None  # (dual level, tangent of each output): a saved output comes back with its tangent

    def save_for_backward(self, *values) -> None:
        """Keep values for ``backward``: tensors (inputs, outputs, intermediates) and None.

        ember also accepts plain Python values here (numbers, tuples ...); they come
        back unchanged from ``saved_tensors``, so an op with a number argument needs
        no second place to keep it. Tensors are version-checked when unpacked.
        """
        self._to_save = values

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for ``jvp``, which reads them from ``ctx.saved_tensors`` (forward-mode AD)."""
        if not all(t is None or isinstance(t, Tensor) for t in tensors):
            raise AssertionError(  # (torch's type: it asserts)
                "save_for_forward expects all arguments to be tensors; you should save non-tensors as attributes "
                "on ctx (ctx.value = ...)."
            )
        self._saved_for_forward = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare inputs that ``forward`` modified in place (they must also be returned)."""
        self._dirty = tensors
        self._marked = True

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that have no gradient; they will not require grad."""
        self._non_differentiable = tensors
        self._marked = True

    def set_materialize_grads(self, value: bool) -> None:
        """With ``False``, ``backward`` receives None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)

    # What forward declared, as torch's ctx shows it until apply has taken it in (None afterwards, and before).
    @property
    def to_save(self) -> tuple | None:
        """The values given to ``save_for_backward`` in this forward (None once apply has saved them)."""
        return self._to_save

    @to_save.setter
    def to_save(self, values) -> None:
        self._to_save = None if values is None else tuple(values)

    @property
    def saved_for_forward(self) -> tuple | None:
        """The tensors given to ``save_for_forward`` (kept for the ``jvp``; None if there are none)."""
        return getattr(self, "_saved_for_forward", None)

    def mark_shared_storage(self, *pairs) -> None:
        """Deprecated and without effect: tensors that share memory are tracked by themselves."""
        warnings.warn(
            "`mark_shared_storage` is deprecated. Tensors with shared storages are automatically tracked. Note "
            "that calls to `set_()` are not tracked",
            FutureWarning,
            stacklevel=2,
        )

    @property
    def dirty_tensors(self) -> tuple | None:
        """The tensors given to ``mark_dirty`` in this forward (None once apply has taken them in)."""
        return self._dirty or None

    @property
    def non_differentiable(self) -> tuple | None:
        """The tensors given to ``mark_non_differentiable`` in this forward (None once apply has taken them in)."""
        return self._non_differentiable or None

    @property
    def saved_tensors(self) -> tuple:
        saved = self._saved
        if saved is None:
            return self._to_save if self._to_save is not None else ()
        if saved is _FREED:
            raise RuntimeError(_SECOND_BACKWARD)
        values = []
        arrays = arrays_for[0] is self
        for record in saved:
            if type(record) is not tuple:  # None or a plain value, kept as it is (or packed by saved_tensors_hooks)
                values.append(record.unpack(self, arrays) if type(record) is _SavedPack else record)
                continue
            obj, counter, version, output_nr = record
            if counter is None:  # a plain tuple, kept in a record so as not to look like one
                values.append(obj)
                continue
            if counter[0] != version:
                raise RuntimeError(_modified_message(self, obj, counter[0], version, output_nr))
            if arrays:
                values.append(obj if output_nr >= 0 else obj._data)
            else:
                values.append(obj if output_nr < 0 else self._saved_output(obj, counter, output_nr))
        return tuple(values)

    @property
    def saved_variables(self) -> tuple:
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    def _saved_output(self, data, counter: list, output_nr: int) -> Tensor:
        """A saved output comes back attached to this node, so double backward can flow through it."""
        out = Tensor._wrap(data)
        out._vc = counter
        out._requires_grad = True
        out._grad_fn = self
        out._output_nr = output_nr
        if self._fw_out is not None and self._fw_out[0] is _forward.key and self._fw_out[1][output_nr] is not None:
            out._fw = (_forward.key, self._fw_out[1][output_nr])
        return out


def _modified_message(node, obj, now: int, saved: int, output_nr: int) -> str:
    data = obj if output_nr >= 0 else obj._data
    shape = list(data.shape)
    owner = f", which is output {output_nr} of {node.name()}," if output_nr >= 0 else ""
    return (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[{data.dtype} tensor of shape {shape}]{owner} is at version {now}; expected version {saved} instead. "
        "Hint: the operation that saved it is "
        f"{node.name()}; avoid modifying it in place (use an out-of-place op such as x = x + 1), or clone it "
        "before the in-place change."
    )


class BackwardCFunction(FunctionCtx, Node):
    """The graph node (and ``ctx``) of one call of a custom Function: ``y.grad_fn``."""

    _forward_cls = None

    def apply(self, *grads):
        """Run this node's backward on ``grads`` (one per output of the forward)."""
        return self._formula(self, *grads)


class Function(BackwardCFunction):
    """Base class of differentiable operations. Subclass it with static ``forward`` and ``backward``.

    ``forward(ctx, *args)`` computes the outputs (or ``forward(*args)`` together
    with ``setup_context(ctx, inputs, output)``); ``backward(ctx, *grad_outputs)``
    returns one gradient per input (None where there is none). Call it as
    ``MyFunction.apply(*args)``.
    """

    backward_name: str | None = None  # how the node prints; built-ins use PyTorch's names
    backward_on_arrays: bool = False
    """Set True when ``backward`` uses only what NumPy arrays also have (``* + - / **``, comparisons).

    A backward that needs no graph of its own (no ``create_graph``) then runs
    on NumPy arrays: its gradients and ``ctx.saved_tensors`` arrive as arrays,
    and the arrays it returns become the gradients. It is the same formula, so
    nothing can drift; it only skips the cost of ember ops. With
    ``create_graph`` it runs on tensors, as always. As with tensors, the
    formula must not change what it receives in place: other nodes may share it.
    """
    graph_inputs: tuple[int, ...] | None = None
    """The positions of ``forward``'s arguments that ``grad_fn.next_functions`` lists (None: the tensors).

    torch turns the number in ``x * 2`` into a tensor, so its node lists ``(None, 0)`` for it; built-ins that
    take numbers where torch's op takes tensors name those positions here, to show the same graph.
    """
    torch_saved_tensors: dict = {}
    """A built-in op's torch names of its saved tensors: ``{"self": 0}`` makes ``grad_fn._saved_self`` (and
    ``_raw_saved_self``) the first value given to ``save_for_backward``. See ``autograd/saved_attributes.py``."""
    torch_saved_values: dict = {}
    """A built-in op's torch names of its other saved values (dims, flags, sizes): name -> a ctx attribute's name,
    a position among the saved values, or a function of the node."""
    _new_style = False
    _n_params = 0
    _user = False  # defined outside ember: its unrecorded calls get torch's output processing (see _unrecorded)
    _acts_as_user = False  # set on a Function of ember's that must behave as a user's (nn's backward hooks)
    _tangents_dropped_without_jvp = False  # forward AD without a jvp: no tangent rather than an error (custom ops)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._new_style = cls.setup_context is not Function.setup_context
        name = cls.__dict__.get("backward_name") or cls.__name__ + "Backward"
        cls._backward_cls = type(name, (BackwardCFunction,), {"_forward_cls": cls, "__module__": cls.__module__})
        cls._backward_impl = cls._choose_backward()
        cls._backward_cls._formula = staticmethod(cls._backward_impl)
        # ember's own ops (defined in its modules) run their backward with the __torch_function__ protocol
        # off, as torch's built-in formulas do: a mode or subclass sees the user's calls, not ember's insides
        cls._backward_cls._builtin = cls.__module__.startswith("ember.") and not cls._acts_as_user
        if cls._backward_cls._builtin:
            note_builtin(name)
        cls._user = not cls._backward_cls._builtin
        cls._backward_cls._checks_outputs = cls._user  # _connect checks a user's outputs (see _check_user_outputs)
        cls._backward_cls._on_arrays = bool(cls.backward_on_arrays)
        cls._backward_cls._array_formula = staticmethod(cls._backward_impl) if cls.backward_on_arrays else None
        cls._backward_cls._graph_inputs = cls.graph_inputs
        tensors, values = cls.__dict__.get("torch_saved_tensors", {}), cls.__dict__.get("torch_saved_values", {})
        if (tensors or values) and not cls._user:  # (a subclass saves what it saves: it declares its own names)
            give_names(cls._backward_cls, tensors, values)
        if cls._new_style:
            params = inspect.signature(cls.forward).parameters.values()
            cls._n_params = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)

    def __init__(self, *args, **kwargs):
        if _static_forward(type(self)):  # a new-style class instantiated: harmless, but torch warns
            warnings.warn(
                f"{type(self).__name__} should not be instantiated: its forward and backward are static, and the "
                f"Function is used through its class, as {type(self).__name__}.apply(...). A future version will "
                "make this an error.",
                DeprecationWarning,
                stacklevel=2,
            )
            return
        warnings.warn(
            f"{type(self).__name__}: legacy autograd Functions (instances with non-static forward, called as "
            f"{type(self).__name__}()(...)) are deprecated; use static forward/backward and "
            f"{type(self).__name__}.apply(...)",
            DeprecationWarning,
            stacklevel=2,
        )

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"{_function_name(ctx)}: You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            f"{_function_name(ctx)}: You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    generate_vmap_rule: bool = False
    """Set True to run ``forward``, ``setup_context`` and ``backward`` as they are under ``vmap``, on batched tensors."""

    @staticmethod
    def vmap(info: Any, in_dims: tuple, *args: Any) -> Any:
        """The Function's batching rule: ``(outputs, out_dims)`` for inputs batched along ``in_dims`` (None: not)."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod or set "
            "generate_vmap_rule=True."
        )

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."
        )

    @staticmethod
    def _both_defined(ctx, *grads):
        raise RuntimeError(
            f"{_function_name(ctx)}: Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
            "You should only implement one of them."
        )

    @classmethod
    def _operator_call(cls, args: tuple) -> tuple:
        """The operator one call runs (``ember.ops.aten.mm.default``) and its arguments, for code that picks ops
        by name; None for a user's Function, whose forward is the user's ops."""
        if not cls._backward_cls._builtin:
            return None, args
        return op_of_node(cls._backward_cls.__name__), args

    @classmethod
    def _choose_backward(cls):
        """``backward`` or its alias ``vjp``, whichever the subclass defines."""
        has_backward = cls.backward is not Function.backward
        has_vjp = cls.vjp is not Function.vjp and cls.vjp is not cls.backward
        if has_backward and has_vjp:
            return Function._both_defined
        return cls.vjp if has_vjp else cls.backward

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` and, if any input requires grad, record the call in the graph."""
        try:
            if _interceptor is not None and _interceptor.takes(cls):  # the one check: a global, None when off
                return _interceptor.run(cls, args, kwargs)
            if _vmap_levels:  # inside ember.func.vmap: batched inputs go to the Function's batching rule
                result = _batched_apply[0](cls, args, kwargs)
                if result is not NotImplemented:
                    return result
            if _forward.key is not None:  # a dual level is open: forward_ad runs the call (see forward_ad.py)
                return _forward.apply(cls, args, kwargs)
            if cls._new_style:
                if kwargs or len(args) < cls._n_params:
                    args = _bind(cls.forward, args, kwargs)
                    kwargs = {}
                return _run(cls._backward_cls(), cls.forward, args, kwargs, cls.setup_context)
            # The ctx-in-forward style, which every built-in op uses: _run inlined, as this is ember's hottest path.
            if kwargs:  # as torch: keywords become positions, so needs_input_grad and backward's results count them
                args, kwargs = _bind_after_ctx(cls.forward, args, kwargs)
            ctx = cls._backward_cls()
            if not _grad.enabled:
                if cls._user:  # as torch, needs_input_grad tells which inputs require grad, even under no_grad
                    ctx.needs_input_grad = _needs_of(args)
                    output = cls.forward(ctx, *args, **kwargs) if kwargs else cls.forward(ctx, *args)
                    return _unrecorded(ctx, args, output)
                ctx.needs_input_grad = _NOTHING_NEEDED[len(args)]
                n = 0 if kwargs else len(args)  # (one or two operands one by one, as below)
                return (cls.forward(ctx, args[0], args[1]) if n == 2 else cls.forward(ctx, args[0]) if n == 1 else
                        cls.forward(ctx, *args, **kwargs))
            # Nothing to record: an ember forward given no input that requires grad records nothing in grad mode
            # either, so it runs without switching the mode off and on (a user's runs as under no_grad, as torch's).
            # Most ops take one or two operands: spelled out (and passed one by one: Python 3.11 runs f(*args) on a
            # slower path), their usual call runs forward at once.
            n = 0 if kwargs else len(args)
            if n == 2:
                a, b = args
                need_a = (a._requires_grad or a._base is not None and view_requires_grad(a)) if isinstance(a, Tensor) \
                    else False
                need_b = (b._requires_grad or b._base is not None and view_requires_grad(b)) if isinstance(b, Tensor) \
                    else False
                if not (need_a or need_b or cls._user):
                    ctx.needs_input_grad = _NEITHER
                    return cls.forward(ctx, a, b)
                needs = (need_a, need_b)
            elif n == 1:
                a = args[0]
                if isinstance(a, Tensor) and (a._requires_grad or a._base is not None and view_requires_grad(a)):
                    needs = _ONE
                elif cls._user:
                    needs = _NOT_ONE
                else:
                    ctx.needs_input_grad = _NOT_ONE
                    return cls.forward(ctx, a)
            elif n == 3:  # (addmm, where, addcmul, a layer's input, weight and bias ...: spelled out as two are)
                a, b, c = args
                needs = ((a._requires_grad or a._base is not None and view_requires_grad(a)) if isinstance(a, Tensor)
                         else False,
                         (b._requires_grad or b._base is not None and view_requires_grad(b)) if isinstance(b, Tensor)
                         else False,
                         (c._requires_grad or c._base is not None and view_requires_grad(c)) if isinstance(c, Tensor)
                         else False)
                if not (needs[0] or needs[1] or needs[2] or cls._user):
                    ctx.needs_input_grad = _NOTHING_NEEDED[3]
                    return cls.forward(ctx, a, b, c)
            else:
                for a in args:  # _needs_of's first loop, inlined: the usual answer, nothing requires grad, at once
                    if isinstance(a, Tensor) and (a._requires_grad or a._base is not None and view_requires_grad(a)):
                        needs = _needs_each(args)
                        break
                else:
                    needs = _NOTHING_NEEDED[len(args)]
                    if not cls._user:
                        ctx.needs_input_grad = needs
                        return cls.forward(ctx, *args, **kwargs)
            ctx.needs_input_grad = needs
            _grad.enabled = False
            try:
                output = (cls.forward(ctx, args[0], args[1]) if n == 2 else cls.forward(ctx, args[0]) if n == 1 else
                          cls.forward(ctx, args[0], args[1], args[2]) if n == 3 else cls.forward(ctx, *args, **kwargs))
            finally:
                _grad.enabled = True
            if True not in needs:
                return _unrecorded(ctx, args, output) if cls._user else output
            return _connect(ctx, args, needs, output)
        except (FloatingPointError, RuntimeWarning) as objection:  # (no cost until raised: Python 3.11)
            if cls._user or not numpy_objection(objection):
                raise
            return quietly(IGNORE_ALL, _apply_again, cls, args, kwargs)

    def __call__(self, *args, **kwargs):
        """The legacy calling style: ``MyFunction()(inputs)`` with an instance as ctx."""
        if _static_forward(type(self)):
            name = type(self).__name__
            raise RuntimeError(
                f"{name}: an instance of a Function with a static forward was called; call the class's apply "
                f"instead: {name}.apply(...), not {name}()(...) (only legacy Functions, whose forward is a method, "
                "are called as instances)"
            )
        node = self
        if "needs_input_grad" in self.__dict__:  # called before: self is that call's graph node
            node = _unused_copy(self)
        if kwargs:
            args = _bind(node.forward, args, kwargs)
        return _run(node, _LegacyForward(node), args, {}, None)

    @staticmethod
    def _formula(node, *grads):
        return node.backward(*grads)  # only legacy instances are nodes themselves: their backward is a method

    def name(self) -> str:
        return type(self).__name__


# The base class gets its node class as its subclasses do, so that ``Function.apply(x)`` reaches the base
# forward and raises its NotImplementedError, as torch's does, rather than failing on a missing attribute.
Function.__init_subclass__()


def _static_forward(cls: type) -> bool:
    """Whether ``cls`` is a new-style Function (its ``forward`` is a staticmethod it defines)."""
    return cls.forward is not Function.forward and isinstance(inspect.getattr_static(cls, "forward"), staticmethod)


def _unused_copy(function: "Function") -> "Function":
    """A legacy instance as it was before its first call (its own settings kept), to record another call."""
    recorded = {"needs_input_grad", "materialize_grads", "_next", "_seq", "_out_meta"}
    per_call = set(vars(FunctionCtx)) | set(vars(Node)) | recorded
    fresh = object.__new__(type(function))
    fresh.__dict__.update({k: v for k, v in function.__dict__.items() if k not in per_call})
    return fresh


def _function_name(ctx) -> str:
    """The name of the Function class that ``ctx`` (a node, or a legacy instance) belongs to, for error messages."""
    owner = getattr(ctx, "_forward_cls", None) or type(ctx)
    return owner.__name__ if isinstance(owner, type) and issubclass(owner, Function) else "Function"


class _LegacyForward:
    """Calls a legacy instance's bound forward with the ``ctx`` argument dropped."""

    __slots__ = ("fn",)

    def __init__(self, instance):
        self.fn = instance.forward

    def __call__(self, ctx, *args):
        return self.fn(*args)


def _bind(forward, args: tuple, kwargs: dict) -> tuple:
    bound = inspect.signature(forward).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args


def _bind_after_ctx(forward, args: tuple, kwargs: dict) -> tuple:
    """``forward(ctx, *args, **kwargs)``'s arguments, those that can be positional made positional (defaults too)."""
    bound = inspect.signature(forward).bind(None, *args, **kwargs)
    bound.apply_defaults()
    return bound.args[1:], bound.kwargs


class InplaceFunction(Function):
    """Kept for compatibility: a Function that takes an ``inplace`` flag."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace


def _apply_again(cls, args: tuple, kwargs: dict):
    """``cls.apply``, for a call that NumPy objected to under the user's strict settings, now run quietly.

    torch computes inf and nan without a word; ember's ops leave NumPy's objections to its warnings filter (see
    ``_ops/_quiet``), which a user's ``warnings.simplefilter("error")`` (pytest's ``-W error``) or
    ``np.seterr(all="raise")`` overrides. A built-in forward takes its inputs as they are (one that writes into
    an input writes the same values again), so it runs once more with NumPy's objections off.
    """
    return cls.apply(*args, **kwargs)


def _run(node, forward, args: tuple, kwargs: dict, setup_context):
    """Function.apply's body for the setup_context and legacy styles (only users write those).

    As torch, ``needs_input_grad`` tells which inputs require grad even under no_grad.
    """
    recording = _grad.enabled
    node.needs_input_grad = needs = _needs_of(args)
    _grad.enabled = False
    try:
        if setup_context is None:
            output = forward(node, *args, **kwargs)
        else:
            output = forward(*args)
            setup_context(node, args, output)
    finally:
        _grad.enabled = recording
    if setup_context is not None and node._to_save:
        node._saved_returned = _saved_and_returned(node, args, output)
    if not recording or True not in needs:
        return _unrecorded(node, args, output)
    return _connect(node, args, needs, output)


def _saved_and_returned(node, args: tuple, output) -> list:
    """The positions of the outputs that are inputs returned as they are (not dirty) and saved."""
    outputs = output if type(output) is tuple else (output,)
    return [i for i, out in enumerate(outputs)
            if isinstance(out, Tensor) and _contains(node._to_save, out) and _contains(args, out)
            and not (node._dirty and _contains(node._dirty, out))]


def _refuse_saved_input(node) -> None:
    """setup_context may not save an input that forward returned as it is: the output is a view of it by then."""
    raise RuntimeError(
        f"{node.name()}: setup_context saved an input that forward returned as it is. An input returned as-is as "
        "output is being saved for backward; this is not supported if you override setup_context. Return and save "
        "a view of the input instead (x.view_as(x)), or set ctx up inside forward."
    )


def _plain_tuple(output):
    """A named tuple that forward returns holds several outputs: as torch, they come back as a plain tuple."""
    return tuple(output) if type(output) is not tuple and isinstance(output, tuple) else output


def _unrecorded(node, args: tuple, output):
    """A user Function's outputs when nothing is recorded, as torch makes them.

    No output is an input object: an input returned as it is comes back as a view of it, or detached if it
    requires grad (under no_grad). Dirty inputs must still be returned, and marking them counts as a change.
    """
    output = _plain_tuple(output)
    single = type(output) is not tuple
    outputs = (output,) if single else output
    if node._dirty:
        _check_dirty(node, outputs)
    new = []
    for i, out in enumerate(outputs):
        new.append(_not_differentiable(node, out, i, args) if isinstance(out, Tensor) else out)
    if node._marked:
        node._dirty = node._non_differentiable = ()
    return new[0] if single else tuple(new)


def _not_differentiable(node, out: Tensor, index: int, args: tuple) -> Tensor:
    """An output without a gradient: cut from the graph if it had one, a new tensor if it is an unchanged input."""
    if out._requires_grad or out._base is not None and view_requires_grad(out) and out._grad_fn is not None:
        return out.detach()  # a new object: the input itself keeps its place in the graph
    # (a view without history, made in forward, stays a view: as in torch it requires grad if its base does)
    if _contains(args, out) and not (node._dirty and _contains(node._dirty, out)):
        if index in node._saved_returned:
            _refuse_saved_input(node)
        return out._alias()
    return out


def _connect(node, args: tuple, needs: tuple, output):
    """Make ``node`` the grad_fn of the outputs and remember where each input's gradient goes.

    Every op passes here, so the usual case (one fresh floating output, nothing
    marked dirty or non-differentiable) is spelled out; the rest goes through the general helpers.
    """
    if len(args) == 2:  # most ops are binary: their edges spelled out here, as a call costs 2% of a small op
        a, b = args
        node._next = (_edge(a) if needs[0] else (False if isinstance(a, Tensor) else None),
                      _edge(b) if needs[1] else (False if isinstance(b, Tensor) else None))
        returned_input = output is a or output is b
    elif len(args) == 1:  # connected at all: the one input needs a gradient
        a = args[0]
        node._next = (_edge(a),)
        returned_input = output is a
    elif len(args) == 3:  # (as two)
        a, b, c = args
        node._next = (_edge(a) if needs[0] else (False if isinstance(a, Tensor) else None),
                      _edge(b) if needs[1] else (False if isinstance(b, Tensor) else None),
                      _edge(c) if needs[2] else (False if isinstance(c, Tensor) else None))
        returned_input = output is a or output is b or output is c
    else:
        node._next = _edges(args, needs)
        returned_input = _contains(args, output)
    node._seq = next(_sequence)
    marked = node._marked
    if type(output) is Tensor and not marked:
        data = output._data
        dtype = data.dtype
        if not returned_input and dtype.kind in "fc":  # a fresh floating output: three stores
            output._grad_fn = node
            output._output_nr = 0
            output._requires_grad = True
        else:
            output = _attach_unusual(node, output, 0, args)
        node._out_meta = ((data.shape, dtype),)
        if node._to_save is not None:
            _keep_saved(node, (output,))
    else:
        outputs, output = _attach_outputs(node, args, output)
        if node._to_save is not None:
            _keep_saved(node, outputs)
    if marked:
        node._dirty = node._non_differentiable = ()  # done with; a dirty output points back at node (a cycle)
    # a user's Function: the usual call (one fresh tensor, no transform of ember.func running) needs no check
    if node._checks_outputs and (_transforms_running[0] or type(output) is not Tensor or output._base is not None):
        _check_user_outputs(node, output if type(output) is tuple else (output,))
    if _anomaly.enabled:
        node._trace = _forward_stack()
    return output


def _check_user_outputs(node, outputs: tuple) -> None:
    """What a user's Function's recorded call is checked for: under a transform of ember.func, its style (as torch,
    only setup_context Functions work there); the views among its outputs are marked."""
    if _transforms_running[0]:
        refuse_ctx_style_under_transforms(node._forward_cls)
    if len(outputs) == 1:  # the usual case, without building a list
        out = outputs[0]
        if isinstance(out, Tensor) and out._base is not None and out._grad_fn is node and out._view_origin is None:
            out._view_origin = IN_CUSTOM_FUNCTION
        return
    _mark_views_made_inside(node, outputs)


def refuse_ctx_style_under_transforms(cls) -> None:
    """As torch: under ember.func's transforms a user's Function must use setup_context (ember's own Functions
    that act as a user's, such as the rule vmap generates, are exempt)."""
    if not cls._new_style and not cls._acts_as_user:
        raise RuntimeError(SETUP_CONTEXT_NEEDED)


def _mark_views_made_inside(node, outputs: tuple) -> None:
    """As torch: a view that a custom Function returns (or an input it returns as it is) refuses in-place changes,
    of itself, of views of it, and of its base once it is used: replaying the view would bypass the Function's
    backward. Of a Function with several tensor outputs, it counts as one of several views (unbind's)."""
    tensors = [out for out in outputs if isinstance(out, Tensor)]
    origin = OF_MULTIPLE_OUTPUTS if len(tensors) > 1 else IN_CUSTOM_FUNCTION
    for out in tensors:
        if out._base is not None and out._grad_fn is node and out._view_origin is None:
            out._view_origin = origin


def _keep_saved(node, outputs: tuple) -> None:
    """Turn what forward saved into records; a saved output held as it is would make a cycle.

    A saved tensor's record is (the tensor, or its array if it is an output; its version counter; its version;
    which output it is, or -1). Records are the only tuples among the saved values: anything else (None, a
    number) is kept as it is. A non-differentiable output is no part of the node's graph (no cycle): it is kept,
    and comes back, as it is.
    """
    if _saved_hooks:
        return _keep_packed(node, outputs)
    records = []  # a loop: in Python 3.11 a comprehension is a function call, which costs more here
    for value in node._to_save:
        if isinstance(value, Tensor):
            if value._inference:
                _refuse_inference()
            counter = value._vc
            if counter is None:  # (an op's fresh output, usually: its counter starts here)
                counter = value._vc = [0] if value._base is None else version_counter(value)
            if value._grad_fn is node:  # an output (attached before its saving): no search among the outputs
                records.append((value._data, counter, counter[0], value._output_nr))
            elif node._marked:
                records.append(_marked_record(node, value, counter, outputs))
            else:
                records.append((value, counter, counter[0], -1))
        else:
            records.append((value, None, None, -1) if type(value) is tuple else value)
    node._saved = tuple(records)
    node._to_save = None


def _refuse_inference() -> None:
    raise RuntimeError("Inference tensors cannot be saved for backward. Please do not use Tensors created in "
                       "inference mode in computation tracked by autograd. To work around this, you can make a clone "
                       "to get a normal tensor and use it in autograd, or use `ember.no_grad()` instead of "
                       "`ember.inference_mode()`.")


def _marked_record(node, value: Tensor, counter: list, outputs: tuple) -> tuple:
    """The record of a saved tensor of a node with dirty outputs: a dirty view, rebased onto a node of its own
    (so its grad_fn is no longer this one), is still saved as the output it is."""
    for i, out in enumerate(outputs):
        if value is out and value._requires_grad:
            return (value._data, counter, counter[0], i)
    return (value, counter, counter[0], -1)


def _keep_packed(node, outputs: tuple) -> None:
    """As _keep_saved, with the innermost saved_tensors_hooks' pack hook given each saved tensor."""
    pack, unpack = _saved_hooks[-1]
    records = []
    for value in node._to_save:
        if isinstance(value, Tensor):
            if value._inference:
                _refuse_inference()
            output_nr = next((i for i, o in enumerate(outputs) if o is value and value._requires_grad), -1)
            records.append(_SavedPack(value, output_nr, pack, unpack))
        else:
            records.append((value, None, None, -1) if type(value) is tuple else value)
    node._saved = tuple(records)
    node._to_save = None


def _attach_outputs(node, args: tuple, output) -> tuple:
    """The general case of _connect: any number of outputs, dirty or non-differentiable ones, non-tensors."""
    output = _plain_tuple(output)
    if type(output) is not tuple:
        if node._dirty:
            _warn_dirty_non_inputs(node, args)
            _check_dirty(node, (output,))
        output = _attach(node, output, 0, args)
        node._out_meta = ((output._data.shape, output._data.dtype),) if isinstance(output, Tensor) else (None,)
        return (output,), output
    node._n_outputs = len(output)  # before attaching: a dirty view may be the only output (see _attach_unusual)
    if node._dirty:
        _warn_dirty_non_inputs(node, args)
        _check_dirty(node, output)
    outputs = tuple([_attach(node, o, i, args) for i, o in enumerate(output)])
    node._out_meta = tuple([(o._data.shape, o._data.dtype) if isinstance(o, Tensor) else None for o in outputs])
    return outputs, outputs


def _edges(args: tuple, needs: tuple) -> tuple:
    """One entry per input: its edge if it needs a gradient, else False (a tensor) or None (anything else).

    (_connect spells out the two inputs of a binary op itself.)
    """
    if len(args) == 1:
        return (_edge(args[0]),)  # connected at all: the one input needs a gradient
    edges = []  # a loop: in Python 3.11 a comprehension is a function call, which costs more here
    for a, n in zip(args, needs):
        edges.append(_edge(a) if n else (False if isinstance(a, Tensor) else None))
    return tuple(edges)


def _needs_of(args: tuple) -> tuple:
    """``needs_input_grad``: for each argument, whether it is a tensor that requires grad."""
    for a in args:  # the usual answer first, without building a list: nothing requires grad
        if isinstance(a, Tensor) and (a._requires_grad or a._base is not None and view_requires_grad(a)):
            break
    else:
        return _NOTHING_NEEDED[len(args)]
    return _needs_each(args)


def _needs_each(args: tuple) -> tuple:
    """``needs_input_grad`` when some argument requires grad (apply has found one: no second search)."""
    needs = []
    for a in args:
        needs.append((a._requires_grad or a._base is not None and view_requires_grad(a)) if isinstance(a, Tensor)
                     else False)
    return tuple(needs)


def _forward_stack() -> str:
    """The stack of the forward call being recorded (anomaly mode), without ember's own frames in this module."""
    frames = [f for f in traceback.extract_stack() if f.filename != __file__]
    return "".join(traceback.format_list(frames))


def _edge(arg) -> tuple:
    """Where the gradient of an input goes: its grad_fn (and which output of it), or the leaf itself.

    The input's shape and dtype come along, to check the gradient that will arrive.
    """
    if arg._base is not None and arg._vc[0] != arg._view_version:
        arg._sync_view()
    fn = arg._grad_fn
    data = arg._data
    if fn is None:
        if not arg._requires_grad:  # a view made under no_grad: as in torch, its gradient goes nowhere
            return False
        return (arg, 0, data.shape, data.dtype)
    return (fn, arg._output_nr, data.shape, data.dtype)


def _check_dirty(node, outputs: tuple) -> None:
    for t in node._dirty:
        if not _contains(outputs, t):
            raise RuntimeError(
                f"{node.name()}: some elements marked as dirty during the forward method were not returned as "
                "output; the inputs that forward modifies in place (ctx.mark_dirty) must all be returned as outputs"
            )
        t._bump()  # as torch: marking dirty is a change, even if forward wrote the memory without telling


def _warn_dirty_non_inputs(node, args: tuple) -> None:
    """As torch, when the call is recorded: marking a tensor that is no input dirty is harmless but a mistake."""
    if any(not _contains(args, t) for t in node._dirty):
        warnings.warn(
            f"{node.name()}: ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that "
            "have been mutated should be passed to ctx.mark_dirty(); a tensor made inside forward needs no marking.",
            UserWarning,
            stacklevel=5,  # (the caller of apply, for a Function that sets ctx up in forward)
        )


def _contains(items, value) -> bool:
    """Membership by identity (``in`` would compare tensors elementwise)."""
    for item in items:
        if item is value:
            return True
    return False


def _attach(node, out, index: int, args: tuple):
    """Make ``out`` an output of ``node``; the usual case (a fresh floating tensor) costs three stores."""
    if not isinstance(out, Tensor):
        return out
    unusual = node._dirty or node._non_differentiable or out._data.dtype.kind not in "fc"
    for a in args:
        if a is out:
            unusual = True
    if unusual:
        return _attach_unusual(node, out, index, args)
    out._grad_fn = node
    out._output_nr = index
    out._requires_grad = True
    return out


def _attach_unusual(node, out, index: int, args: tuple):
    if _kind_of(out._data.dtype) not in "fc" or node._non_differentiable and _contains(node._non_differentiable, out):
        return _not_differentiable(node, out, index, args)
    dirty = node._dirty and _contains(node._dirty, out)
    if not dirty and _contains(args, out):
        if index in node._saved_returned:
            _refuse_saved_input(node)
        out = out._alias()  # an input returned unchanged: a new tensor that shares its data
    if dirty:
        _check_dirty_output(node, out)
    elif out._base is not None:  # a view made before forward changed its base: its history is this node, now
        out._view_version = out._vc[0]
    out._grad_fn = node
    out._output_nr = index
    out._requires_grad = True
    if dirty and out._base is not None:
        from ember._ops.inplace import rebase_view

        rebase_view(out)
    return out


def _check_dirty_output(node, out: Tensor) -> None:
    """A differentiable output that forward changed in place: its history is rewritten, which some cannot have."""
    if out._grad_fn is None and out._requires_grad:
        raise RuntimeError(
            f"{node.name()}: a leaf Variable that requires grad has been used in an in-place operation "
            "(ctx.mark_dirty of a leaf: pass a non-leaf, e.g. x.clone(), or modify it under ember.no_grad() outside "
            "the Function)"
        )
    if out._base is None or node._n_outputs == 1:
        return
    # the view's new history is replayed from one output of the node: the others would have no place in it
    raise RuntimeError(
        f"{node.name()}: forward modified in place (ctx.mark_dirty) an input that is a view of another Tensor, "
        f"and returns {node._n_outputs} outputs; such a Function cannot return more than one Tensor. Pass a copy "
        "(x.clone()) instead of the view, or split it in two Functions: one that changes the view in place and "
        "returns only it, and one that computes the other outputs."
    )


def once_differentiable(backward):
    """Mark a ``backward`` that is not itself differentiable: double backward through it raises.

    The wrapped backward runs with grad off; if its inputs require grad, the
    gradients it returns carry a node that raises when differentiated.
    """

    @functools.wraps(backward)
    def wrapper(ctx, *grad_outputs):
        prev = _grad.enabled
        _grad.enabled = False
        try:
            outputs = backward(ctx, *grad_outputs)
        finally:
            _grad.enabled = prev
        if not prev or not any(isinstance(g, Tensor) and g._requires_grad for g in grad_outputs):
            return outputs
        # as torch: each gradient hangs from a node that raises, whose input is a fresh leaf requiring grad (not
        # the grad_outputs), so only a backward that reaches those leaves (g.backward()) raises, while
        # autograd.grad of the gradient with respect to other tensors finds no path and gives None
        single = not isinstance(outputs, tuple)
        results = tuple(
            _DelayedError.apply(g.detach().requires_grad_()) if isinstance(g, Tensor) else g
            for g in ((outputs,) if single else outputs)
        )
        return results[0] if single else results

    wrapper.once_differentiable = True  # (check_function reads it)
    return wrapper


class _DelayedError(Function):
    """Passes a gradient through; differentiating it raises (see ``once_differentiable``)."""

    backward_name = "Error"  # as torch names the node

    @staticmethod
    def forward(ctx, value, *depends_on):
        return value._alias()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")
