"""ember.utils.benchmark against torch.utils.benchmark: the same raw times give the same statistics and text."""
import pytest
import torch
import torch.utils.benchmark as torch_benchmark
from hypothesis import given, settings, strategies as st

import ember.utils.benchmark as benchmark

_raw_times = st.lists(st.floats(min_value=1e-7, max_value=1e-1), min_size=1, max_size=30)


def _pair(raw_times, number=100, **labels):
    ours = benchmark.Measurement(number, raw_times, benchmark.TaskSpec("x + 1", "pass", **labels))
    theirs = torch_benchmark.Measurement(number, raw_times, torch_benchmark.utils.common.TaskSpec("x + 1", "pass", **labels))
    return ours, theirs


@settings(max_examples=60, deadline=None)
@given(_raw_times)
def test_statistics_match_torch(raw_times):
    ours, theirs = _pair(raw_times)
    assert ours.times == pytest.approx(theirs.times)
    assert ours.median == pytest.approx(theirs.median, rel=1e-6)
    assert ours.mean == pytest.approx(theirs.mean, rel=1e-9)
    assert ours.iqr == pytest.approx(theirs.iqr, rel=1e-6, abs=1e-15)
    assert ours.significant_figures == theirs.significant_figures
    assert ours.meets_confidence(0.2) == theirs.meets_confidence(0.2)


@pytest.mark.parametrize("raw_times", [[1e-5], [1e-5, 1.02e-5, 0.99e-5, 1.01e-5], [1e-5, 3e-5, 1e-5, 2e-5]])
@pytest.mark.parametrize("labels", [{}, {"label": "add", "sub_label": "4", "description": "ones"}])
def test_repr_matches_torch_after_the_first_line(raw_times, labels):
    ours, theirs = _pair(raw_times, **labels)
    assert repr(ours).split("\n")[1:] == repr(theirs).split("\n")[1:]
    assert ours.has_warnings == theirs.has_warnings and ours.title == theirs.title


def test_select_unit_and_trim_sigfig_match_torch():
    for t in (3e-9, 4.5e-7, 2e-5, 7e-3, 2.5):
        assert benchmark.select_unit(t) == torch_benchmark.select_unit(t)
    for x, n in ((123.456, 2), (0.0012345, 3), (9.99, 1)):
        assert benchmark.trim_sigfig(x, n) == pytest.approx(torch_benchmark.utils.common.trim_sigfig(x, n))


def test_timer_blocks_spend_the_time_asked_and_report_each_block():
    seen = []
    timer = benchmark.Timer("sum(values)", setup="values = list(range(50))", label="sum")
    m = timer.blocked_autorange(callback=lambda number, time: seen.append((number, time)), min_run_time=0.02)
    assert sum(t for _, t in seen) >= 0.02 and len(seen) == len(m.times)
    assert all(number == m.number_per_run for number, _ in seen)
    one = timer.timeit(200)
    assert one.number_per_run == 200 and len(one.raw_times) == 1
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        timer.repeat()


def test_compare_lays_out_a_column_per_description():
    spec = lambda d, row: benchmark.TaskSpec("f()", "pass", label="f", sub_label=row, description=d)  # noqa: E731
    table = str(benchmark.Compare([benchmark.Measurement(100, [1e-4], spec("a", "n=4")),
                                   benchmark.Measurement(100, [3e-4], spec("b", "n=4")),
                                   benchmark.Measurement(100, [5e-4], spec("a", "n=8"))]))
    lines = table.splitlines()
    assert lines[0].startswith("[") and " f " in lines[0]
    assert [cell.strip() for cell in lines[1].split("|")[1:]] == ["a", "b"]
    assert [line.split("|")[0].strip() for line in lines[3:5]] == ["n=4", "n=8"]
    assert "Times are in microseconds (us)." in table
