"""ember.profiler against torch.profiler: the same programs, the same schedule, the table's format."""
import json
import re

import pytest
import torch
from hypothesis import given, settings, strategies as st

import ember
from ember.autograd import function as function_module
from twins import LIBS, both


def _program(lib, x):
    with lib.profiler.record_function("model"):
        y = (x * 2).relu().exp().sum()
    y.backward()


def _profiled(lib, **options):
    x = lib.linspace(-1, 1, 64).reshape(8, 8).requires_grad_()
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], **options) as prof:
        _program(lib, x)
    return prof


def _backward_rows(prof) -> dict:
    return {e.key: e.count for e in prof.key_averages() if re.fullmatch(r"\w+Backward0", e.key)}


def test_every_backward_node_is_timed_as_torch_names_it():
    torch_rows, ember_rows = (_backward_rows(_profiled(lib)) for lib in LIBS)
    assert torch_rows and ember_rows == torch_rows


def test_table_has_torchs_columns_and_layout():
    tables = [_profiled(lib, profile_memory=True).key_averages().table(sort_by="cpu_time_total", row_limit=5)
              for lib in LIBS]
    for table in tables:
        lines = table.strip().split("\n")
        assert set(lines[0]) == {"-", " "} and lines[0] == lines[2] == lines[-2]
        assert lines[-1].startswith("Self CPU time total: ")
        assert len(lines) == 5 + 5  # three rules, the header, five rows, the total
    header = [re.split(r"\s{2,}", t.split("\n")[1].strip()) for t in tables]
    assert header[0] == header[1] == ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                                      "CPU Mem", "Self CPU Mem", "# of Calls"]
    widths = [[len(cell) for cell in t.split("\n")[0].split("  ")][1:] for t in tables]  # all but the name column
    assert widths[0] == widths[1]


def test_shares_and_nesting_add_up():
    prof = _profiled(ember, record_shapes=True)
    events = list(prof.events())
    (model,) = [e for e in events if e.name == "model"]
    inside = [e for e in events if e is not model and model.start_ns <= e.start_ns and e.end_ns <= model.end_ns]
    top = [e for e in inside if not any(o is not e and o.start_ns <= e.start_ns and e.end_ns <= o.end_ns
                                        for o in inside)]
    assert {"MulScalar", "Relu", "Exp", "SumAll"} <= {e.name for e in top}
    assert model.self_cpu_time_total + sum(e.cpu_time_total for e in top) == pytest.approx(model.cpu_time_total)
    rows = prof.key_averages()
    assert sum(e.self_cpu_time_total for e in events) == pytest.approx(sum(e.self_cpu_time_total for e in rows))
    shapes = {e.key: e.input_shapes for e in prof.key_averages(group_by_input_shape=True)}
    assert shapes["MulScalar"] == [[8, 8], []]


def test_ops_that_are_no_function_are_timed_too():
    x = ember.linspace(-1, 1, 6)
    with ember.profiler.profile() as prof:
        (x > 0, x.argmax(), ember.zeros(3), x.exp())
    names = [e.name for e in prof.events()]
    assert names == ["ember.Tensor.gt", "ember.Tensor.argmax", "ember.zeros", "Exp"]  # exp is its Function's event


def test_custom_function_and_its_backward_are_events_with_their_children():
    class Cube(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x * x * grad

    x = ember.linspace(0, 1, 5).requires_grad_()
    with ember.profiler.profile() as prof:
        Cube.apply(x).sum().backward()
    events = {e.name: e for e in prof.events()}
    assert {"Cube", "CubeBackward"} <= set(events)
    cube = events["Cube"]
    assert cube.cpu_time_total >= cube.self_cpu_time_total > 0
    assert x.grad.tolist() == pytest.approx((3 * ember.linspace(0, 1, 5) ** 2).tolist())


def test_off_means_the_global_is_none_even_after_an_error():
    assert function_module._interceptor is None
    with pytest.raises(ValueError):
        with ember.profiler.profile():
            assert function_module._interceptor is not None
            raise ValueError("inside")
    assert function_module._interceptor is None
    with ember.profiler.record_function("nothing to record"):
        ember.ones(2) * 2


@settings(max_examples=30)
@given(st.integers(0, 3), st.integers(0, 2), st.integers(1, 3), st.integers(0, 2), st.integers(0, 2))
def test_schedule_matches_torchs(wait, warmup, active, repeat, skip_first):
    both(lambda lib: [lib.profiler.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat,
                                            skip_first=skip_first)(step).name for step in range(14)])


def test_scheduled_profile_calls_on_trace_ready_with_the_same_steps():
    def program(lib):
        traces = []

        def ready(prof):
            traces.append(sorted(e.key for e in prof.key_averages() if e.key.startswith("ProfilerStep")))

        x = lib.ones(4, requires_grad=True)
        with lib.profiler.profile(schedule=lib.profiler.schedule(wait=1, warmup=1, active=2, repeat=2),
                                  on_trace_ready=ready) as prof:
            for _ in range(10):
                (x * 3).sum().backward()
                prof.step()
        return traces

    both(program)


def test_chrome_trace_is_json_that_viewers_read(tmp_path):
    path = tmp_path / "trace.json"
    prof = _profiled(ember, record_shapes=True, with_stack=True)
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    assert {e["ph"] for e in events} == {"X"} and all(e["dur"] >= 0 and "ts" in e for e in events)
    names = {e["name"] for e in events}
    assert {"model", "SumBackward0"} <= names
    assert any("test_profiler.py" in e["args"].get("Call stack", "") for e in events)


def test_sort_key_must_be_known():
    with pytest.raises(ValueError, match="cannot sort by 'speed'"):
        _profiled(ember).key_averages().table(sort_by="speed")


def test_the_older_autograd_profiler_spelling():
    def program(lib):
        x = lib.linspace(-1, 1, 6).requires_grad_()
        with lib.autograd.profiler.profile(enabled=False) as off:
            (x * 2).sum().backward()
        with lib.autograd.profiler.profile(record_shapes=True) as prof:
            with lib.autograd.profiler.record_function("step"):
                (x * 2).sum().backward()
        keys = {e.key for e in prof.key_averages()}
        return off is None, sorted(k for k in keys if re.fullmatch(r"\w+Backward0", k) or k == "step"), \
            prof.self_cpu_time_total > 0

    both(program)
