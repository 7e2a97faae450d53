"""The grammar of einops patterns, as ``rearrange`` reads them: ``"b (h w) c -> b h w c"``.

A side of a pattern is a list of dims separated by spaces. A dim is an axis name, a group of names in
parentheses (one dim made of several axes, outermost first), ``...`` (the dims the pattern does not name)
or a unit axis, written ``()`` or ``1``. A ``1`` inside a group stands for nothing.
"""
from __future__ import annotations

import functools
import keyword
import re
import warnings
from dataclasses import dataclass

# "..." is read as one symbol (the one character a name cannot otherwise hold), so a side splits into words
ELLIPSIS = "\u2026"



@dataclass(frozen=True)
class Side:
    """One side of a pattern: its ``dims`` in order, each a tuple of axis names or a bare ``ELLIPSIS``.

    ``names`` holds every axis named on the side (``ELLIPSIS`` too, if present) and ``numbers`` the lengths
    written as numbers other than 1, which ``rearrange`` refuses.

    >>> parse_side("b (h w) 1 ...", "b (h w) 1 ... -> b h w ...")
    Side(dims=(('b',), ('h', 'w'), (), '…'), names=('b', 'h', 'w', '…'), numbers=())
    """

    dims: tuple
    names: tuple
    numbers: tuple

    @property
    def has_ellipsis(self) -> bool:
        return ELLIPSIS in self.names


@dataclass(frozen=True)
class Pattern:
    """A pattern ``"left -> right"``, both sides parsed; ``text`` is the pattern as written."""

    text: str
    left: Side
    right: Side

    def check_rearrangeable(self) -> None:
        """Raise ValueError unless every axis is on both sides and unit axes are the only numbers."""
        if self.left.numbers or self.right.numbers:
            numbers = ", ".join(map(str, self.left.numbers + self.right.numbers))
            raise ValueError(f"rearrange only supports unnamed axes of size 1, pattern '{self.text}' has {numbers}: "
                             "name the axis and give its length as a keyword (e.g. 'b (h h2) -> b h h2', h2=2)")
        only_left = [name for name in self.left.names if name not in self.right.names]
        only_right = [name for name in self.right.names if name not in self.left.names]
        if only_left or only_right:
            raise ValueError(f"Identifiers only on one side of rearrange expression (should be on both): pattern "
                             f"'{self.text}' has {_listed(only_left)} only on the left and {_listed(only_right)} only "
                             "on the right; rearrange moves axes and cannot create or drop them")


@functools.lru_cache(256)
def parse_pattern(text: str) -> Pattern:
    """``text`` (``"left -> right"``) parsed; ValueError names what is malformed.

    >>> parse_pattern("b c -> (b c)").right.dims
    (('b', 'c'),)
    """
    if not isinstance(text, str):
        raise TypeError(f"rearrange: the pattern must be a str such as 'b c -> c b', got {type(text).__name__}")
    sides = text.split("->")
    if len(sides) != 2:
        raise ValueError(f"Pattern must contain a single '->' separator, '{text}' has {len(sides) - 1}")
    left, right = (parse_side(side, text) for side in sides)
    if right.has_ellipsis and not left.has_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern '{text}': "
                         "'...' on the right stands for the dims it stands for on the left")
    if left.has_ellipsis and ELLIPSIS not in left.dims:
        raise ValueError(f"Ellipsis is parenthesized in the left side of pattern '{text}', which is not allowed: "
                         "write '...' on its own on the left (a group '(...)' is allowed on the right)")
    return Pattern(text, left, right)


def parse_side(text: str, pattern: str) -> Side:
    """One side of ``pattern``, ``text``, parsed into its dims (see :class:`Side`)."""
    dims, names, numbers = [], [], []
    group = None  # the names of the group being read, None outside parentheses
    for word in _words(_ellipsis_as_symbol(text, pattern)):
        if word == "(":
            if group is not None:
                raise ValueError(f"Axis composition is one-level (brackets inside brackets not allowed), in "
                                 f"pattern '{pattern}': write one group of names, e.g. '(a b c)'")
            group = []
        elif word == ")":
            if group is None:
                raise ValueError(f"Brackets are not balanced in pattern '{pattern}': a ')' closes no '('")
            dims.append(tuple(group))
            group = None
        elif word.isdecimal():
            _read_number(int(word), pattern, numbers, dims if group is None else None)
        else:
            _check_name(word, pattern, names)
            names.append(word)
            if group is not None:
                group.append(word)
            else:
                dims.append(word if word == ELLIPSIS else (word,))
    if group is not None:
        raise ValueError(f"Imbalanced parentheses in expression '{text}' of pattern '{pattern}': a '(' is never "
                         "closed")
    return Side(tuple(dims), tuple(names), tuple(numbers))


def _ellipsis_as_symbol(text: str, pattern: str) -> str:
    if ELLIPSIS in text:
        raise ValueError(f"Unknown character {ELLIPSIS!r} in rearrange pattern '{pattern}': write the ellipsis as "
                         "three dots, '...'")
    if "." not in text:
        return text
    if "..." not in text:
        raise ValueError(f"Expression may contain dots only inside ellipsis (...), pattern '{pattern}' has a "
                         "lone '.'")
    if text.count("...") != 1 or text.count(".") != 3:
        raise ValueError(f"Expression may contain dots only inside ellipsis (...); only one ellipsis for tensor: "
                         f"'{text}' of pattern '{pattern}' has {text.count('.')} dots")
    return text.replace("...", ELLIPSIS)


def _words(text: str) -> list:
    """``text`` split into "(", ")" and words; only a space separates words."""
    words = [piece for piece in re.split(r"([() ])", text) if piece and piece != " "]
    for word in words:
        for char in word:
            if not (char.isalnum() or char in "()_" + ELLIPSIS):
                raise ValueError(f"Unknown character {char!r} in rearrange pattern: axis names are letters, digits "
                                 "and '_', separated by spaces")
    return words


def _read_number(value: int, pattern: str, numbers: list, dims: list | None) -> None:
    """A number in a side: 1 is a unit axis (a dim of its own outside a group, nothing inside one)."""
    if value == 1:
        if dims is not None:
            dims.append(())
    elif value < 1:
        raise ValueError(f"Anonymous axis should have positive length, not {value}, in pattern '{pattern}'")
    else:
        numbers.append(value)


def _check_name(word: str, pattern: str, names: list) -> None:
    if word in names:
        shown = "..." if word == ELLIPSIS else word
        raise ValueError(f"Indexing expression contains duplicate dimension '{shown}' in pattern '{pattern}': "
                         "each axis appears once per side")
    if word == ELLIPSIS:
        return
    if not word.isidentifier():
        raise ValueError(f"Invalid axis identifier: {word} in pattern '{pattern}'\nnot a valid python identifier")
    if word.startswith("_") or word.endswith("_"):
        raise ValueError(f"Invalid axis identifier: {word} in pattern '{pattern}'\n"
                         "axis name should not start or end with underscore")
    if keyword.iskeyword(word):
        warnings.warn(f"It is discouraged to use axes names that are keywords: {word}", RuntimeWarning)
    if word == "axis":
        warnings.warn("It is discouraged to use 'axis' as an axis name and will raise an error in future",
                      FutureWarning)


def _listed(names: list) -> str:
    return "{" + ", ".join("..." if name == ELLIPSIS else repr(name) for name in names) + "}"
