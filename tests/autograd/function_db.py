"""torch's databases of custom autograd.Functions and custom ops, loaded twice: as torch wrote them, and rewritten to
run on ember.

``torch/testing/_internal/autograd_function_db.py`` and ``custom_op_db.py`` hold programs written in the torch API
(Functions with ``setup_context``, ``jvp``, ``vmap``, ``mark_dirty`` ...; ``torch.library.custom_op``s with fake,
autograd and vmap registrations), each listed in an OpInfo with a sample-input generator. ``ember_db`` reads a
file's source and runs it with ``import ember as torch``; the few other lines that name torch objects by an
absolute import are swapped by ``REWRITES``, each of which must match (so a change in torch's file fails loudly
here rather than silently running torch code). The OpInfo and its dtype helper become the small ``Entry`` record
below: the sample generators stay torch's (their inputs are converted with ``opinfo_samples.to_ember``), so both
frameworks see the same numbers.
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import types
from pathlib import Path
from typing import Any, Callable

import torch

DATABASES = ("autograd_function_db", "custom_op_db")

_OPINFO_IMPORT = "from torch.testing._internal.opinfo.core import (\n    OpInfo,\n    SampleInput,\n)"
_LOCAL_OPINFO = "from tests.autograd.function_db import Entry as OpInfo, all_types_and"

# (the text in torch's file, what ember's copy has instead), per database
REWRITES = {
    "autograd_function_db": (
        ("\nimport torch\n", "\nimport ember as torch\n"),
        ("from torch.testing import make_tensor", "from ember.testing import make_tensor"),
        (_OPINFO_IMPORT, _LOCAL_OPINFO),
        ("from torch.testing._internal.common_dtype import all_types_and\n", ""),
    ),
    "custom_op_db": (
        ("\nimport torch\n", "\nimport ember as torch\n"),
        ("from torch.testing import make_tensor", "from ember.testing import make_tensor"),
        (_OPINFO_IMPORT, _LOCAL_OPINFO),
        ("from torch.testing._internal.common_dtype import all_types_and\n", ""),
        ("from torch.testing._internal.autograd_function_db import", "from tests.autograd.function_db import"),
        ("from torch import Tensor", "from ember import Tensor"),
        ("from torch.types import Number", "from ember.types import Number"),
        # torch's fake kernels reach the fake-tensor context through a private module; ember's is public
        ("torch._custom_op.impl.get_ctx()", "torch.library.get_ctx()"),
    ),
}


@dataclasses.dataclass
class Entry:
    """What ember's copy of a database keeps of an OpInfo: its name, the op and its flags."""

    name: str
    op: Callable
    inplace_variant: Callable | None = None
    sample_inputs_func: Callable | None = None
    supports_autograd: bool = True
    supports_forward_ad: bool = False
    supports_fwgrad_bwgrad: bool = False
    gradcheck_wrapper: Callable | None = None
    options: dict = dataclasses.field(default_factory=dict)

    def __init__(self, name: str, *, op: Callable, **options: Any):
        self.name, self.op = name, op
        for field in ("inplace_variant", "sample_inputs_func", "gradcheck_wrapper"):
            setattr(self, field, options.pop(field, None))
        self.supports_autograd = options.pop("supports_autograd", True)
        self.supports_forward_ad = options.pop("supports_forward_ad", False)
        self.supports_fwgrad_bwgrad = options.pop("supports_fwgrad_bwgrad", False)
        self.options = options


def all_types_and(*dtypes):
    """The OpInfos' dtype lists are not read: every comparison here is in float64."""
    return dtypes


def _thaw_backend_flags() -> None:
    # importing torch's testing modules freezes torch.backends' flags, which other tests in the process set
    torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True


@functools.cache
def torch_db(name: str) -> dict[str, Any]:
    """torch's OpInfos of the database ``name``, by name."""
    module = importlib.import_module(f"torch.testing._internal.{name}")
    _thaw_backend_flags()
    return {info.name: info for info in getattr(module, name)}


def _rewritten_source(name: str) -> str:
    source = Path(importlib.util.find_spec(f"torch.testing._internal.{name}").origin).read_text()
    for old, new in REWRITES[name]:
        if old not in source:
            raise AssertionError(f"{name}.py no longer contains {old!r}: update function_db.REWRITES")
        source = source.replace(old, new)
    return source


@functools.cache
def ember_module(name: str) -> types.ModuleType:
    """ember's copy of the database module ``name`` (once per process: its custom ops register themselves)."""
    torch_db(name)  # (custom_op_db imports the sample generators of autograd_function_db)
    module = types.ModuleType(f"ember_{name}")
    exec(compile(_rewritten_source(name), f"<{name}.py rewritten for ember>", "exec"), module.__dict__)
    return module


def ember_db(name: str) -> dict[str, Entry]:
    """ember's entries of the database ``name``, by name."""
    return {entry.name: entry for entry in getattr(ember_module(name), name)}


def __getattr__(attribute: str):
    # custom_op_db imports autograd_function_db's sample generators from here: they are torch's
    if attribute.startswith("sample_inputs_"):
        torch_db("autograd_function_db")
        return getattr(importlib.import_module("torch.testing._internal.autograd_function_db"), attribute)
    raise AttributeError(attribute)
