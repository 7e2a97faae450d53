"""A pickle reader that runs nothing but the calls a checkpoint needs (``weights_only=True``).

It interprets the opcodes itself rather than subclassing ``pickle.Unpickler``:
restricting ``find_class`` alone would still let a file call methods of
whatever it builds (``BUILD``, ``APPENDS``) and size the C unpickler's memo
table (a 5-byte ``LONG_BINPUT`` reserves gigabytes). Here containers are plain
lists, dicts and sets, the memo is a dict, every length is checked against the
bytes that are there, and a global is looked up only in the allow-list.
"""
from __future__ import annotations

import _compat_pickle
import pickle
import pickletools
import struct
from collections import Counter, OrderedDict
from typing import Callable

from ember._tensor import Tensor
from ember.serialization._rebuild import TORCH_GLOBALS, ember_layer
from ember.serialization import _safe_globals


class UnpicklingError(pickle.UnpicklingError):
    """A checkpoint's pickle asks for something a weights-only load does not do, or is malformed."""

    __module__ = "ember.serialization"  # where users find it


_DICTS = (dict, OrderedDict, Counter)
_HOW_TO_ALLOW = (
    "If you trust the file, load it with weights_only=False; to allow just this global, call "
    "ember.serialization.add_safe_globals([{name}]) or use the ember.serialization.safe_globals([{name}]) "
    "context manager."
)


def _allowed(module: str, name: str):
    full = _python3_name(module, name)  # protocol 2 names some as Python 2 did (__builtin__.long for int)
    found = TORCH_GLOBALS.get(full)
    if found is None:
        found = _safe_globals.user_global(full) or _allowed_layer(full)
    if found is None:
        layer = ember_layer(*full.rsplit(".", 1))  # a torch layer: the user allows ember's class of it
        allow = full if layer is None else f"{layer.__module__}.{layer.__qualname__}"
        raise UnpicklingError(
            f"Weights only load failed: the file asks for the global {full}, which is not an allowed global. "
            + _HOW_TO_ALLOW.format(name=allow)
        )
    return found


def _allowed_layer(full: str):
    """ember's class for a torch layer the file names (``torch.nn.modules.linear.Linear``), if the user allowed
    that class (``add_safe_globals([ember.nn.Linear])``), as torch allows its own under ``torch.nn.Linear``."""
    if not full.startswith("torch.nn."):
        return None
    layer = ember_layer(*full.rsplit(".", 1))
    return layer if layer is not None and _safe_globals.is_user_global(layer) else None


def unsafe_globals(data: bytes) -> list[str]:
    """The globals the pickle in ``data`` names that are not allowed, sorted; read without running it."""
    names, strings, memo, memoized = set(), [], {}, 0
    try:
        for opcode, arg, _ in pickletools.genops(data):
            kind, top = opcode.name, None
            if kind == "GLOBAL":
                names.add(_python3_name(*arg.split(" ", 1)))
            elif kind == "STACK_GLOBAL" and len(strings) >= 2:
                names.add(f"{strings[-2]}.{strings[-1]}")  # the two strings pushed last: module, then name
            elif kind in ("MEMOIZE", "BINPUT", "LONG_BINPUT", "PUT"):  # (the top of the stack stays)
                memo[memoized if kind == "MEMOIZE" else arg] = strings[-1] if pushed_string else None
                memoized += kind == "MEMOIZE"
                continue
            elif isinstance(arg, str) and "UNICODE" in kind:
                top = arg
            elif kind in ("BINGET", "LONG_BINGET", "GET"):
                top = memo.get(arg)
            pushed_string = top is not None
            if pushed_string:
                strings.append(top)
    except ValueError as error:
        raise UnpicklingError(f"malformed pickle: {error}") from None
    return sorted(name for name in names if not _is_allowed(name))


def _python3_name(module: str, name: str) -> str:
    """A global of a protocol 2 pickle (``__builtin__.print``) as Python 3 names it (``builtins.print``)."""
    module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
    return f"{_compat_pickle.IMPORT_MAPPING.get(module, module)}.{name}"


def _is_allowed(full: str) -> bool:
    return (TORCH_GLOBALS.get(full) is not None or _safe_globals.user_global(full) is not None
            or _allowed_layer(full) is not None)


class RestrictedUnpickler:
    """``RestrictedUnpickler(data, persistent_load).load()``: the object the pickle in ``data`` describes."""

    def __init__(self, data: bytes, persistent_load: Callable, position: int = 0):
        self.data = data
        self.pos = position
        self.persistent_load = persistent_load
        self.callables: dict[int, str] = {}  # id of each global handed out -> its name, for REDUCE's check

    # ---- reading bytes
    def read(self, n: int) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.data):
            raise UnpicklingError(f"the pickle is truncated: {n} bytes needed at offset {self.pos}")
        chunk, self.pos = self.data[self.pos:end], end
        return chunk

    def unpack(self, fmt: str):
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def readline(self) -> str:
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise UnpicklingError(f"the pickle is truncated: a line was expected at offset {self.pos}")
        line, self.pos = self.data[self.pos:end], end + 1
        return _text(line)

    # ---- the stack
    def pop_mark(self) -> list:
        if not self.marks:
            raise UnpicklingError("malformed pickle: an opcode needs a MARK that is not there")
        items, self.stack = self.stack, self.marks.pop()
        return items

    def pop(self):
        if not self.stack:
            raise UnpicklingError(f"malformed pickle: the stack is empty at offset {self.pos}")
        return self.stack.pop()

    def top(self, kinds: tuple, op: str):
        if not self.stack or type(self.stack[-1]) not in kinds:
            found = type(self.stack[-1]).__name__ if self.stack else "nothing"
            raise UnpicklingError(f"Weights only load failed: {op} applied to {found}, which it does not change")
        return self.stack[-1]

    def load(self):
        self.stack, self.marks, self.memo = [], [], {}
        while True:
            code = self.read(1)
            handler = _OPCODES.get(code)
            if handler is None:
                raise UnpicklingError(
                    f"Weights only load failed: unsupported pickle opcode {code!r} at offset {self.pos - 1}"
                )
            if handler is _stop:
                return self.pop()
            handler(self)

    # ---- calls
    def call(self, func, args):
        name = self.callables.get(id(func))
        if name is None:
            raise UnpicklingError(
                f"Weights only load failed: the pickle calls a {type(func).__name__}, which is not an allowed global"
            )
        if func is Tensor:
            raise UnpicklingError(
                "Weights only load failed: the pickle calls torch.Tensor(...) itself, which would allocate as much "
                "memory as the file asks for; checkpoints build tensors with torch._utils._rebuild_tensor_v2"
            )
        if not isinstance(args, tuple):
            raise UnpicklingError(f"malformed pickle: the call to {name} has no tuple of arguments")
        return _guarded(name, func, *args)

    def find(self, module: str, name: str):
        found = _allowed(module, name)
        self.callables[id(found)] = f"{module}.{name}"
        return found


def _guarded(name: str, func: Callable, *args):
    """``func(*args)``; any failure of an allowed call means a malformed file, and says so."""
    try:
        return func(*args)
    except Exception as error:
        raise UnpicklingError(f"the file's call to {name} failed: {type(error).__name__}: {error}") from error


def _stop(u):  # handled in load()
    pass


def _global(u):
    u.stack.append(u.find(u.readline(), u.readline()))


def _stack_global(u):
    name, module = u.pop(), u.pop()
    if not isinstance(name, str) or not isinstance(module, str):
        raise UnpicklingError("malformed pickle: STACK_GLOBAL needs two strings")
    u.stack.append(u.find(module, name))


def _reduce(u):
    args = u.pop()
    u.stack.append(u.call(u.pop(), args))


def _newobj(u):
    args, cls = u.pop(), u.pop()
    if (not isinstance(cls, type) or issubclass(cls, Tensor) or id(cls) not in u.callables
            or not isinstance(args, tuple)):
        raise UnpicklingError(f"Weights only load failed: NEWOBJ of {cls!r}, which is not an allowed class")
    u.stack.append(_guarded(f"{cls.__qualname__}.__new__", cls.__new__, cls, *args))


def _build(u):
    state, inst = u.pop(), (u.stack[-1] if u.stack else None)
    if type(inst) is OrderedDict and isinstance(state, dict) and all(isinstance(k, str) for k in state):
        inst.__dict__.update(state)  # a state_dict's _metadata
    elif id(type(inst)) not in u.callables and not _safe_globals.is_user_global(type(inst)):
        raise UnpicklingError(f"Weights only load failed: BUILD of {type(inst).__name__}, which is not allowed")
    elif hasattr(inst, "__setstate__"):  # (a class the user allowed may be built by another global: np.dtype)
        _guarded(f"{type(inst).__qualname__}.__setstate__", inst.__setstate__, state)
    elif _safe_globals.is_user_global(type(inst)):  # a class the user allowed: its attributes, as pickle sets them
        _guarded(f"{type(inst).__qualname__} attributes", _set_attributes, inst, state)
    else:
        raise UnpicklingError(f"Weights only load failed: BUILD of {type(inst).__name__}, which is not allowed")


def _set_attributes(inst, state) -> None:
    """Restore an instance without ``__setstate__``: ``state`` is its ``__dict__``, or that and its slots."""
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        inst.__dict__.update(state)
    for name, value in (slots or {}).items():
        setattr(inst, name, value)


def _persid(u):
    u.stack.append(u.persistent_load(u.pop()))


def _setitems(u):
    items = u.pop_mark()
    target = u.top(_DICTS, "SETITEMS")
    if len(items) % 2:
        raise UnpicklingError("malformed pickle: SETITEMS needs keys and values in pairs")
    _put(target, items)


def _setitem(u):
    value, key = u.pop(), u.pop()
    _put(u.top(_DICTS, "SETITEM"), [key, value])


def _put(target: dict, items: list) -> None:
    try:
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]
    except TypeError as error:  # an unhashable key
        raise UnpicklingError(f"malformed pickle: {error}") from None


def _append(u):
    item = u.pop()
    u.top((list,), "APPEND").append(item)


def _appends(u):
    items = u.pop_mark()
    u.top((list,), "APPENDS").extend(items)


def _additems(u):
    items = u.pop_mark()
    try:
        u.top((set,), "ADDITEMS").update(items)
    except TypeError as error:
        raise UnpicklingError(f"malformed pickle: {error}") from None


def _get(size: str):
    def get(u):
        key = u.unpack(size)
        if key not in u.memo:
            raise UnpicklingError(f"malformed pickle: memo entry {key} is read before it is written")
        u.stack.append(u.memo[key])
    return get


def _put_memo(size: str):
    def put(u):
        key = u.unpack(size)
        if not u.stack:
            raise UnpicklingError("malformed pickle: PUT with an empty stack")
        u.memo[key] = u.stack[-1]
    return put


def _memoize(u):
    if not u.stack:
        raise UnpicklingError("malformed pickle: MEMOIZE with an empty stack")
    u.memo[len(u.memo)] = u.stack[-1]


def _push(make: Callable):
    def push(u):
        value = make(u)  # first: make may pop a mark, which replaces u.stack
        u.stack.append(value)
    return push


def _sized(size: str, convert: Callable):
    return _push(lambda u: convert(u.read(u.unpack(size))))


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as error:
        raise UnpicklingError(f"malformed pickle: a string is not UTF-8 ({error})") from None


def _long(raw: bytes) -> int:
    return int.from_bytes(raw, "little", signed=True)


def _tuple(n: int):
    def make(u):
        items = [u.pop() for _ in range(n)]
        return tuple(reversed(items))
    return _push(make)


def _proto(u):
    version = u.read(1)[0]
    if version > pickle.HIGHEST_PROTOCOL:
        raise UnpicklingError(f"the pickle uses protocol {version}, newer than this Python reads")


def _pop(u):
    if u.stack:
        u.stack.pop()
    else:
        u.pop_mark()


_OPCODES = {
    pickle.PROTO: _proto, pickle.FRAME: lambda u: u.read(8), pickle.STOP: _stop,
    pickle.MARK: lambda u: (u.marks.append(u.stack), setattr(u, "stack", [])),
    pickle.POP: _pop, pickle.POP_MARK: lambda u: u.pop_mark(),
    pickle.DUP: _push(lambda u: u.stack[-1] if u.stack else u.pop()),
    pickle.NONE: _push(lambda u: None),
    pickle.NEWTRUE: _push(lambda u: True), pickle.NEWFALSE: _push(lambda u: False),
    pickle.BININT: _push(lambda u: u.unpack("<i")), pickle.BININT1: _push(lambda u: u.unpack("<B")),
    pickle.BININT2: _push(lambda u: u.unpack("<H")), pickle.BINFLOAT: _push(lambda u: u.unpack(">d")),
    pickle.LONG1: _sized("<B", _long), pickle.LONG4: _sized("<i", _long),
    pickle.BINUNICODE: _sized("<I", _text), pickle.SHORT_BINUNICODE: _sized("<B", _text),
    pickle.BINUNICODE8: _sized("<Q", _text),
    pickle.BINBYTES: _sized("<I", bytes), pickle.SHORT_BINBYTES: _sized("<B", bytes),
    pickle.BINBYTES8: _sized("<Q", bytes), pickle.BYTEARRAY8: _sized("<Q", bytearray),
    pickle.EMPTY_TUPLE: _push(lambda u: ()), pickle.TUPLE: _push(lambda u: tuple(u.pop_mark())),
    pickle.TUPLE1: _tuple(1), pickle.TUPLE2: _tuple(2), pickle.TUPLE3: _tuple(3),
    pickle.EMPTY_LIST: _push(lambda u: []), pickle.LIST: _push(lambda u: u.pop_mark()),
    pickle.APPEND: _append,
    pickle.APPENDS: _appends,
    pickle.EMPTY_DICT: _push(lambda u: {}), pickle.SETITEM: _setitem, pickle.SETITEMS: _setitems,
    pickle.EMPTY_SET: _push(lambda u: set()), pickle.ADDITEMS: _additems,
    pickle.GLOBAL: _global, pickle.STACK_GLOBAL: _stack_global, pickle.REDUCE: _reduce,
    pickle.NEWOBJ: _newobj, pickle.BUILD: _build, pickle.BINPERSID: _persid,
    pickle.BINGET: _get("<B"), pickle.LONG_BINGET: _get("<I"),
    pickle.BINPUT: _put_memo("<B"), pickle.LONG_BINPUT: _put_memo("<I"), pickle.MEMOIZE: _memoize,
}
