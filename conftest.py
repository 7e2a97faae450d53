"""Shared pytest set-up: doctests see ``ember`` (and ``np``) without importing them."""
import numpy as np
import pytest

import ember


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace):
    doctest_namespace["ember"] = ember
    doctest_namespace["np"] = np
