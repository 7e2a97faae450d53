"""The rest of ``torch.serialization``'s public names, for code that calls them: storage locations (always the
CPU here), the warning class old code filters, a scratch directory, and a version check.

>>> import ember
>>> ember.serialization.location_tag(ember.ones(2))
'cpu'
>>> ember.serialization.check_module_version_greater_or_equal(ember, (0,))
True
"""
from __future__ import annotations

import contextlib
import shutil
import tempfile
import warnings
from typing import Any, Iterator


class SourceChangeWarning(Warning):
    """torch's warning that a pickled module's source changed since it was saved; ember saves no source, so it
    never raises it, but programs filter it by name."""


@contextlib.contextmanager
def mkdtemp() -> Iterator[str]:
    """A new temporary directory for the ``with`` block, removed with its contents afterwards."""
    path = tempfile.mkdtemp()
    try:
        yield path
    finally:
        shutil.rmtree(path)


def location_tag(storage: Any) -> str:
    """Where a storage (or tensor) lives, as a checkpoint records it: always ``'cpu'`` in ember."""
    return "cpu"


def validate_cuda_device(location: Any) -> int:
    """torch's check of a ``cuda`` location before restoring onto it: ember has no CUDA, so it always refuses."""
    raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
                       "If you are running on a CPU-only machine, please use torch.load with "
                       "map_location=torch.device('cpu') to map your storages to the CPU.")


def default_restore_location(storage: Any, location: str) -> Any:
    """``storage`` restored to ``location``: itself for ``'cpu'``; any other location is refused (ember runs on
    the CPU; pass ``map_location='cpu'`` to ``load``)."""
    if location == "cpu":
        return storage
    if location.startswith("cuda"):
        validate_cuda_device(location)
    raise RuntimeError(f"don't know how to restore data location of {type(storage).__module__}."
                       f"{type(storage).__qualname__} (tagged with {location})")


def check_module_version_greater_or_equal(module: Any, req_version_tuple: tuple,
                                          error_if_malformed: bool = True) -> bool:
    """Whether ``module.__version__`` is at least ``req_version_tuple``, compared field by field in the tuple's
    types; a version string that does not parse raises RuntimeError (or, with ``error_if_malformed=False``,
    warns and counts as met)."""
    try:
        fields = module.__version__.split(".")
        version = tuple(type(required)(fields[i]) for i, required in enumerate(req_version_tuple))
        return version >= req_version_tuple
    except Exception as error:
        message = (f"'{module.__name__}' module version string is malformed '{module.__version__}' and cannot be "
                   f"compared with tuple {req_version_tuple}")
        if error_if_malformed:
            raise RuntimeError(message) from error
        warnings.warn(message + ", but continuing assuming that requirement is met", stacklevel=2)
        return True
