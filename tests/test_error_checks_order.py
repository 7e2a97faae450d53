"""Calls torch refuses that OpInfo's error inputs do not reach: each is refused by ember with torch's exception
type, for the same fault (the one torch reports first where the call has several), named with its facts."""
from __future__ import annotations

import re

import pytest
import torch

import ember

# id -> (the call, given the library, the regex of the facts ember's message must carry)
CASES = {
    "softshrink lambda above float32's range": (
        lambda m: m.nn.functional.softshrink(m.ones(2), 1e39),
        r"softshrink: lambda must be in range \[0, 3\.40282e\+38\] for input dtype ember\.float32, but found 1e\+39"),
    "softshrink lambda above half's range": (
        lambda m: m.nn.functional.softshrink(m.ones(2, dtype=m.float16), 70000.0),
        r"lambda must be in range \[0, 65504\] for input dtype ember\.float16"),
    "conv_transpose2d stride before channels": (
        lambda m: m.nn.functional.conv_transpose2d(m.ones(1, 3, 4, 4), m.ones(2, 2, 1, 1), stride=-1),
        r"non-positive stride is not supported"),
    "conv_transpose2d padding before channels": (
        lambda m: m.nn.functional.conv_transpose2d(m.ones(1, 3, 4, 4), m.ones(2, 2, 1, 1), padding=-1),
        r"negative padding is not supported"),
    "conv2d weight of fewer outputs than groups": (
        lambda m: m.nn.functional.conv2d(m.ones(1, 4, 4, 4), m.ones(1, 2, 1, 1), groups=2),
        r"Given groups=2, expected weight to be at least 2 at dimension 0, but got weight of size \[1, 2, 1, 1\]"),
    "multinomial over more than 2^24 categories": (
        lambda m: m.multinomial(m.ones(2 ** 24 + 1), 1),
        r"multinomial: number of categories cannot exceed 2\^24, but got 16777217"),
    "scatter index larger than src": (
        lambda m: m.zeros(4, 4).scatter(0, m.zeros(2, 3, dtype=m.int64), m.ones(2, 2)),
        r"Size does not match at dimension 1: expected index \[2, 3\] to be no larger than self \[4, 4\] apart from "
        r"dimension 0 and to be no larger than src \[2, 2\]"),
    "multi_margin_loss shape before the input's dtype": (
        lambda m: m.nn.functional.multi_margin_loss(m.ones(5, 0, dtype=m.int32), m.zeros(5, dtype=m.int64)),
        r"multi_margin_loss: Expected non-empty vector or matrix with optional 0-dim batch size, but got: \[5, 0\]"),
    "multilabel_margin_loss target shape before the input's dtype": (
        lambda m: m.nn.functional.multilabel_margin_loss(m.ones(5, 4, dtype=m.int32), m.zeros(4, dtype=m.int64)),
        r"inconsistent target size: \[4\] for input of size: \[5, 4\]"),
    "max_pool2d kernel before stride": (
        lambda m: m.nn.functional.max_pool2d(m.ones(1, 3, 3), kernel_size=0),
        r"max_pool2d: kernel_size must be greater than zero, but got \[0, 0\]"),
    "avg_pool1d padding before the input's shape": (
        lambda m: m.nn.functional.avg_pool1d(m.ones(0, 1), kernel_size=2, padding=-1),
        r"avg_pool1d: pad must be non-negative, but got pad: -1"),
    "tensor_split by a string": (
        lambda m: m.tensor_split(m.ones(4), "ab"),
        r"tensor_split\(\): argument 'indices_or_sections' must be int, a sequence of ints or a tensor, not str"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_refused_as_torch_refuses(case):
    call, facts = CASES[case]
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(expected.type) as raised:
        call(ember)
    assert re.search(facts, str(raised.value)), f"{raised.value!s} lacks {facts!r}"
