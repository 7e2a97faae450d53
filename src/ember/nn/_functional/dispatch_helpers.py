"""Two helpers ``torch.nn.functional`` also exposes: ``assert_int_or_pair`` (a size argument's check) and
``boolean_dispatch`` (one function out of two, chosen by a boolean argument, as ``max_pool2d`` picks between
returning indices or not).

>>> from ember.nn.functional import boolean_dispatch
>>> pick = boolean_dispatch("loud", 1, False, lambda s, loud=False: s.upper(), lambda s, loud=False: s,
...                         None, "shout")
>>> pick("hi"), pick("hi", True), pick("hi", loud=True)
('hi', 'HI', 'HI')
"""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["assert_int_or_pair", "boolean_dispatch"]


def assert_int_or_pair(arg: Any, arg_name: str, message: str) -> None:
    """Raise ``AssertionError(message.format(arg_name))`` unless ``arg`` is an int or has two items.

    >>> assert_int_or_pair((2, 3), "stride", "{} must be an int or a pair")
    """
    if not isinstance(arg, int) and len(arg) != 2:
        raise AssertionError(message.format(arg_name))


def boolean_dispatch(arg_name: str, arg_index: int, default: bool, if_true: Callable, if_false: Callable,
                     module_name: str | None, func_name: str | None) -> Callable:
    """A function that calls ``if_true`` or ``if_false`` with its arguments, by the flag given as keyword
    ``arg_name`` or at position ``arg_index`` (``default`` when neither). It takes the docstring of whichever
    of the two has one."""
    docs = [f.__doc__ for f in (if_true, if_false) if f.__doc__ is not None]
    if len(docs) > 1:
        raise RuntimeError("boolean_dispatch: only one of if_true and if_false can have a docstring")

    def dispatched(*args: Any, **kwargs: Any) -> Any:
        flag = kwargs[arg_name] if arg_name in kwargs else args[arg_index] if arg_index < len(args) else default
        return (if_true if flag else if_false)(*args, **kwargs)

    dispatched.__doc__ = docs[0] if docs else None
    if module_name is not None:
        dispatched.__module__ = module_name
    if func_name is not None:
        dispatched.__name__ = dispatched.__qualname__ = func_name
    return dispatched
