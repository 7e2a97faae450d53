"""ember.futures.Future against torch.futures.Future: the same programs, the same results and errors."""
import pytest
import torch

import ember


@pytest.fixture(params=["ember", "torch"])
def fw(request):
    return ember if request.param == "ember" else torch


def test_then_chains_run_in_order_once_the_result_is_set(fw):
    calls = []
    fut = fw.futures.Future()
    first = fut.then(lambda f: calls.append("first") or f.value() + 1)
    second = first.then(lambda f: calls.append("second") or f.value() * 10)
    fut.add_done_callback(lambda f: calls.append("callback"))
    assert not fut.done() and not second.done()
    fut.set_result(1)
    assert second.wait() == 20 and first.value() == 2 and fut.done()
    assert calls == ["first", "second", "callback"]
    late = fut.then(lambda f: f.value() - 1)  # on a completed future, at once
    assert late.done() and late.value() == 0


def test_an_exception_in_a_callback_completes_the_child_with_it(fw):
    fut = fw.futures.Future()
    child = fut.then(lambda f: 1 / 0)
    fut.set_result(3)
    with pytest.raises(RuntimeError, match="error when running the callback: ZeroDivisionError"):
        child.wait()
    failed = fw.futures.Future()
    passed_on = failed.then(lambda f: f.value() + 1)
    failed.set_exception(ValueError("bad bucket"))
    with pytest.raises(RuntimeError, match="running the callback: ValueError: bad bucket"):
        passed_on.wait()
    with pytest.raises(ValueError, match="bad bucket"):
        failed.wait()
    assert passed_on.done()


def test_a_future_completes_only_once(fw):
    fut = fw.futures.Future()
    fut.set_result(fw.tensor([1.0]))
    with pytest.raises(RuntimeError, match="can only be marked completed once"):
        fut.set_result(fw.tensor([2.0]))
    assert fut.value().tolist() == [1.0]


def test_collect_all_and_wait_all(fw):
    a, b = fw.futures.Future(), fw.futures.Future()
    both = fw.futures.collect_all([a, b])
    a.set_result(1)
    assert not both.done()
    b.set_result(2)
    assert [f.value() for f in both.wait()] == [1, 2]
    assert fw.futures.wait_all([a, b]) == [1, 2]


def test_value_before_completion_is_an_error():
    with pytest.raises(RuntimeError, match="not complete yet; call wait"):
        ember.futures.Future().value()
