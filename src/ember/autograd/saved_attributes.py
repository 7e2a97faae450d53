"""What a built-in op's node saved, under torch's names: ``grad_fn._saved_<name>`` and ``grad_fn._raw_saved_<name>``.

A built-in ``Function`` names what it saved in torch's vocabulary with two class attributes:
``torch_saved_tensors`` maps torch's name of each saved tensor to its position among the values its forward
gave ``save_for_backward``; ``torch_saved_values`` maps torch's name of each other saved value (a dim, a
flag, an input's sizes) to where ember keeps it: an attribute of ctx (a str), a position among the saved
values (an int), or a function of the node. Its node gets one property per name; nothing is read until the
attribute is, so recording and backward do not pay for the names. A user's Function declares none, as torch's
custom nodes have none. (A number an op keeps among its saved values, as pow its exponent, goes with them when
backward frees them: reading it then raises, where torch's stays readable.)

>>> import ember
>>> x = ember.randn(5, requires_grad=True)
>>> y = x.pow(2)
>>> y.grad_fn._saved_self is x, y.grad_fn._saved_exponent
(True, 2)
"""
from __future__ import annotations

from typing import Callable

from ember.autograd._saved_hooks import SavedPack

_FREED_HOOKS = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the graph are "
    "freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through "
    "the graph a second time or if you need to access saved variables after calling backward."
)
_HOOKS_SET = (
    "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one pair of hooks is "
    "allowed at a time."
)


def give_names(backward_cls: type, tensors: dict, values: dict) -> None:
    """Give a built-in op's node class one property per name of torch's that its Function declares."""
    taken = [name for name in (*tensors, *values) if hasattr(backward_cls, "_saved_" + name)]
    if taken:  # (FunctionCtx's own _saved_output, _saved_returned)
        raise TypeError(f"{backward_cls.__name__}: torch's saved names {taken} would hide attributes of the node")
    backward_cls._torch_saved = {**tensors, **values}
    for name in tensors:
        setattr(backward_cls, "_saved_" + name, property(_reader(name)))
        setattr(backward_cls, "_raw_saved_" + name, property(_raw_reader(name)))
    for name in values:
        setattr(backward_cls, "_saved_" + name, property(_reader(name)))


def input_sizes(position: int) -> Callable:
    """A value of torch's ``<input>_sym_sizes``: the sizes of that input, from the node's edge to it."""
    return lambda node: _sizes_on_edge(node._next, position)


def _sizes_on_edge(edges: tuple, position: int) -> tuple | None:
    edge = edges[position] if position < len(edges) else None
    return tuple(edge[2]) if edge else None


def saved_strides(position: int) -> Callable:
    """A value of torch's ``<input>_sym_strides``: the strides of the input saved at that position (None if it
    was not saved)."""
    return lambda node: _strides_of(unpack_one(node, position))


def _strides_of(value) -> tuple | None:
    return None if value is None else value.stride()


def reduction_number(reduction: str) -> int:
    """torch's number for a loss's ``reduction`` (its enum: none, mean, sum), as its nodes save it."""
    return ("none", "mean", "sum").index(reduction)


def _reader(name: str) -> Callable:
    return lambda node: saved_value(node, name)


def _raw_reader(name: str) -> Callable:
    return lambda node: SavedTensor(node, _declared(node, name, "_raw_saved_"))


def _declared(node, name: str, prefix: str):
    """Where ember keeps what torch calls ``name`` on this node; an AttributeError, as torch's, for a name its
    class lacks (a composite op's node renamed as torch's inherits its last op's properties but not its names)."""
    names = type(node)._torch_saved
    if names is None or name not in names:
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{prefix}{name}'")
    return names[name]


def saved_value(node, name: str):
    """``node._saved_<name>``: an input saved is that input, an output saved a new tensor on its memory."""
    where = _declared(node, name, "_saved_")
    if isinstance(where, str):
        return getattr(node, where, None)
    if isinstance(where, int):
        return unpack_one(node, where)
    return where(node)


def unpack_one(node, position: int):
    """One of the values save_for_backward kept, as ``ctx.saved_tensors`` would give it (unpacking only it)."""
    from ember.autograd.function import _FREED, _SECOND_BACKWARD, _modified_message  # (it imports this module)

    saved = node._saved
    if saved is _FREED:
        raise RuntimeError(_SECOND_BACKWARD)
    if saved is None or position >= len(saved):
        return None
    record = saved[position]
    if type(record) is SavedPack:
        return record.unpack(node, False)
    if type(record) is not tuple:
        return record
    obj, counter, version, output_nr = record
    if counter is None:  # a plain tuple, kept inside a record
        return obj
    if counter[0] != version:
        raise RuntimeError(_modified_message(node, obj, counter[0], version, output_nr))
    return obj if output_nr < 0 else node._saved_output(obj, counter, output_nr)


class SavedTensor:
    """One tensor a node saved (``grad_fn._raw_saved_<name>``): hooks may be set on it alone."""

    def __init__(self, node, where):
        self._node, self._where = node, where

    def register_hooks(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        """Pack the saved tensor now with ``pack_hook``; ``unpack_hook`` gives it back when it is used."""
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError(
                "register_hooks(): incompatible function arguments: expected (pack_hook: Callable, "
                f"unpack_hook: Callable), got ({type(pack_hook).__name__}, {type(unpack_hook).__name__})"
            )
        from ember.autograd.function import _FREED

        node, position = self._node, self._where
        saved = node._saved
        if saved is _FREED:
            raise RuntimeError(_FREED_HOOKS)
        record = saved[position] if isinstance(position, int) and saved is not None and position < len(saved) else None
        if type(record) is SavedPack:
            raise RuntimeError(_HOOKS_SET)
        value = unpack_one(node, position) if record is not None else None
        if value is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        output_nr = record[3] if type(record) is tuple else -1
        packed = SavedPack(value, output_nr, pack_hook, unpack_hook)
        node._saved = saved[:position] + (packed,) + saved[position + 1:]

    def __repr__(self) -> str:
        return f"<ember.autograd.saved_attributes.SavedTensor object at {hex(id(self))}>"
