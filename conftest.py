"""Shared pytest set-up: doctests see ``ember`` (and ``np``) without importing them; hypothesis draws reproducibly."""
import os

import numpy as np
import pytest
from hypothesis import settings

import ember

# The suite is a gate (`make test`, CI): property tests draw the same examples on every run, so a result
# never depends on luck. To explore, run with another profile: pytest --hypothesis-profile=explore
settings.register_profile("gate", derandomize=True, deadline=None)
settings.register_profile("explore", max_examples=1000, deadline=None)
settings.load_profile("gate")


@pytest.fixture(autouse=True, scope="session")
def _extensions_in_tmp(tmp_path_factory):
    # Doctests compile C++ extensions: a test run builds them in its own directory, not the user's cache
    patch = pytest.MonkeyPatch()
    if "EMBER_EXTENSIONS_DIR" not in os.environ:
        patch.setenv("EMBER_EXTENSIONS_DIR", str(tmp_path_factory.mktemp("ember_extensions")))
    yield
    patch.undo()


@pytest.fixture(autouse=True, scope="session")
def _torch_on_one_thread():
    # torch is the tests' oracle, on a few elements at a time: on its thread pool (as many threads as cores, one
    # pool per pytest worker, which already has a core) a tiny linalg op cost up to twenty times the CPU, the
    # waiting threads taking the cores the other workers compute on. Its results are the same on one thread.
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace):
    doctest_namespace["ember"] = ember
    doctest_namespace["np"] = np
