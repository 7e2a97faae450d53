"""Run torch's own docstring examples with torch and with ember, and say where the two print differently.

torch's docstrings carry ``>>>`` examples for most public callables. They exercise the signatures and
printed forms that users copy first, so they make a broad check of ember against the oracle: each
example runs twice from the same seed, once as written and once with ``torch`` renamed ``ember``, and
what each prints (the values of expressions, as at the interactive prompt, and ``print`` calls) must
agree once ember's name is read as torch's.

>>> import torch
>>> ran = run_both(examples_of(torch.neg))
>>> agree(ran.torch, ran.ember)
True

Printed numbers agree to the last digit shown, give or take one, or as closely as float32 sums of the
largest number printed with them can: a product or a factorisation rounds differently from torch's
kernel in its last bits, and the printout shows that in a residual or in a sum that cancels.
"""
from __future__ import annotations

import contextlib
import doctest
import importlib
import io
import re
from typing import NamedTuple

_EMBER_NAME = re.compile(r"\bember\b")
_TORCH_NAME = re.compile(r"\btorch\b")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
# the default repr of a Generator names the module its class is defined in, a private one in each library
_OUR_GENERATOR, _THEIR_GENERATOR = "<torch._random.Generator object>", "<torch._C.Generator object>"
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|nan|inf")
# torch's own doctests skip some examples, and run some only where a GPU, the network or a module is at hand;
# those that need no more than a CPU (autograd, LAPACK, the data loader, POSIX) run here
_UNRUNNABLE = re.compile(r"SKIP|REQUIRES\((?!env:TORCH_DOCTEST_(AUTOGRAD|LAPACK|ANOMALY|DATALOADER)|POSIX|LINUX)|"
                         r"cuda|\.to\(['\"]cuda|device=['\"]cuda|mps|xpu|distributed|"
                         r"torch\.jit|torch\.compile|torch\.onnx|torch\.export|quantized|fbgemm|mkldnn")


def examples_of(obj) -> list[doctest.Example]:
    """The ``>>>`` examples of ``obj``'s docstring, in order; none if a line asks for a device, a skip or a
    library ember does not stand in for (the block's later lines usually depend on it)."""
    text = getattr(obj, "__doc__", None)
    if not isinstance(text, str) or ">>>" not in text:
        return []
    try:
        examples = doctest.DocTestParser().get_examples(text)
    except ValueError:  # inconsistent indentation: torch's docstring is not a doctest
        return []
    prompts = (line.strip() for line in text.splitlines() if line.strip().startswith((">>>", "...")))
    if any(_UNRUNNABLE.search(line) for line in prompts):  # (comment lines, e.g. a skip directive, included)
        return []
    return examples


class Outputs(NamedTuple):
    """What each example printed, per library (a raised exception prints as ``raises TypeName``)."""

    torch: list[str]
    ember: list[str]


def run_both(examples: list[doctest.Example], module: str = "torch") -> Outputs:
    """Run ``examples`` with torch and then with ember, each from ``manual_seed(0)`` and with the public names
    of ``module`` (a torch module's name) at hand, as in the module the docstring comes from; ember's output is
    read with ``torch`` for ``ember``, so the two compare as strings."""
    torch_printed = _run(examples, "torch", module)
    ember_run = _run(examples, "ember", _TORCH_NAME.sub("ember", module))
    ember_printed = [_EMBER_NAME.sub("torch", text).replace(_OUR_GENERATOR, _THEIR_GENERATOR) for text in ember_run]
    return Outputs(torch_printed, ember_printed)


def agree(torch_printed: list[str], ember_printed: list[str]) -> bool:
    """Whether the two printouts say the same: the same text between numbers (spaces aside: a column's width
    follows its widest number), and numbers equal to the precision shown."""
    return len(torch_printed) == len(ember_printed) and all(
        _same_text(a, b) for a, b in zip(torch_printed, ember_printed))


def _same_text(a: str, b: str) -> bool:
    if a == b:
        return True
    words_a, words_b = _NUMBER.split(a), _NUMBER.split(b)
    if [w.replace(" ", "") for w in words_a] != [w.replace(" ", "") for w in words_b]:
        return False
    numbers_a, numbers_b = _NUMBER.findall(a), _NUMBER.findall(b)
    largest = max((abs(float(x)) for x in numbers_a if float(x) == float(x)), default=0.0)
    return all(_same_number(x, y, 1e-5 + 3e-6 * largest) for x, y in zip(numbers_a, numbers_b))


def _same_number(a: str, b: str, absolute: float) -> bool:
    """Equal as printed, or apart by at most one in the last digit shown or by ``absolute`` (a float32 sum's
    rounding, relative to the largest number printed with it)."""
    x, y = float(a), float(b)
    if x == y or (x != x and y != y):
        return True
    digits = a.split("e")[0]
    last_shown = 10.0 ** -len(digits.split(".")[1]) if "." in digits else 1.0
    scale = 10.0 ** int(a.split("e")[1]) if "e" in a else 1.0
    return abs(x - y) <= 1.01 * last_shown * scale or abs(x - y) <= absolute


def _run(examples: list[doctest.Example], library: str, module: str) -> list[str]:
    namespace: dict = {}
    exec(_PRELUDE.format(library=library), namespace)
    home = importlib.import_module(module)
    # what a docstring's module offers its examples (``__all__`` may list names the module lacks)
    names = getattr(home, "__all__", [name for name in dir(home) if not name.startswith("_")])
    namespace.update((name, getattr(home, name)) for name in names if hasattr(home, name))
    printed = []
    for example in examples:
        source = example.source if library == "torch" else _TORCH_NAME.sub("ember", example.source)
        printed.append(_ADDRESS.sub("", _printed_by(source, namespace)))
        if printed[-1].startswith("raises "):
            break  # the later lines depend on this one
    return printed


_PRELUDE = """\
import io
import itertools
import math
import numpy
import numpy as np
import {library}
from {library} import nn
from {library}.nn import functional as F
{library}.manual_seed(0)
{library}.set_default_dtype({library}.float32)
{library}.set_grad_enabled(True)
"""
"""What the examples take as already imported (as torch's doctest runner provides ``nn`` and ``F``), and the
state each run starts from: an example may change the default dtype or turn gradients off and not restore
either."""


def _printed_by(source: str, namespace: dict) -> str:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            exec(compile(source, "<example>", "single"), namespace)
    except Exception as error:  # noqa: BLE001  (any failure is the finding)
        return f"raises {type(error).__name__}"
    return out.getvalue()
