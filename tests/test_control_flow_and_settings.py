"""cond, while_loop, swap_tensors, from_file and the process-wide switches, against torch."""
import numpy as np
import pytest
import torch

import ember


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_cond_picks_a_branch_and_keeps_its_gradient(m):
    x = m.tensor([1., 2.], dtype=m.float64, requires_grad=True)
    y = m.cond(x.sum() > 0, lambda a: a.sin(), lambda a: a.cos(), (x,))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos([1., 2.]))
    assert m.cond(False, lambda a: a * 2, lambda a: a * 3, [x]).tolist() == [3., 6.]
    with pytest.raises(RuntimeError, match="Expected pred to be bool or single-element tensor"):
        m.cond(m.tensor([True, False]), lambda a: a, lambda a: a, (x,))


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_while_loop_runs_until_the_condition_fails(m):
    x = m.tensor([1., 2.], dtype=m.float64, requires_grad=True)
    i, s = m.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2), (m.tensor(0), x))
    assert int(i) == 3 and s.tolist() == [8., 16.]
    s.sum().backward()
    assert x.grad.tolist() == [8., 8.]
    count, _ = m.while_loop(lambda n, t: 2 * n < t.shape[0], lambda n, t: (n + 1, t + n), (0, m.zeros(5)))
    assert count == 3


def test_while_loop_refuses_a_body_that_changes_the_carried_values():
    with pytest.raises(RuntimeError, match="keep its input's shape"):
        ember.while_loop(lambda s: s.sum() < 10, lambda s: ember.cat([s, s]), (ember.ones(2),))
    with pytest.raises(RuntimeError, match="as many values"):
        ember.while_loop(lambda a, b: a < 2, lambda a, b: a + 1, (ember.tensor(0), ember.ones(1)))


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_swap_tensors_exchanges_values_grad_state_and_class(m):
    a, b = m.ones(2), m.zeros(3, requires_grad=True)
    m.utils.swap_tensors(a, b)
    assert a.tolist() == [0., 0., 0.] and a.requires_grad and b.tolist() == [1., 1.] and not b.requires_grad
    p, t = m.nn.Parameter(m.ones(2)), m.zeros(2)
    m.utils.swap_tensors(p, t)
    assert type(p) is m.Tensor and type(t) is m.nn.Parameter and t.tolist() == [1., 1.]


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_from_file_reads_and_maps_a_file(m, tmp_path):
    path = str(tmp_path / "values.bin")
    np.arange(6, dtype=np.float32).tofile(path)
    assert m.from_file(path, size=4).tolist() == [0., 1., 2., 3.]
    assert m.from_file(path, size=0).numel() == 0
    shared = m.from_file(path, shared=True, size=6)
    shared[0] = 9
    assert np.fromfile(path, np.float32).tolist() == [9., 1., 2., 3., 4., 5.]
    with pytest.raises(RuntimeError, match="is smaller than the required mapping size <40>"):
        m.from_file(path, size=10)


@pytest.mark.parametrize("m", [torch, ember], ids=["torch", "ember"])
def test_small_process_queries(m):
    x = m.ones(2)
    assert m.get_device(x) == -1 and m.is_distributed(x) is False
    assert m.GradScaler is m.amp.GradScaler
    m.set_warn_always(True)
    try:
        assert m.is_warn_always_enabled()
    finally:
        m.set_warn_always(False)
    assert not m.is_warn_always_enabled()
    assert np.asarray(m.from_dlpack(m.to_dlpack(x))).tolist() == [1., 1.]


def test_warn_always_repeats_a_once_per_program_warning():
    x = ember.ones(1, requires_grad=True)
    ember.set_warn_always(True)
    try:
        for _ in range(2):
            with pytest.warns(UserWarning, match="requires_grad=True to a scalar"):
                float(x)
    finally:
        ember.set_warn_always(False)


@pytest.mark.parametrize("name, call", [
    ("solve", lambda m, a: m.solve(a, a)), ("lstsq", lambda m, a: m.lstsq(a, a)), ("symeig", lambda m, a: m.symeig(a)),
    ("eig", lambda m, a: m.eig(a)), ("matrix_rank", lambda m, a: m.matrix_rank(a)),
    ("Tensor.eig", lambda m, a: a.eig()), ("Tensor.solve", lambda m, a: a.solve(a)),
])
def test_removed_functions_say_what_replaced_them_as_torch_does(name, call):
    with pytest.raises(RuntimeError, match="removed"):
        call(torch, torch.eye(2))
    with pytest.raises(RuntimeError, match=r"removed \(deprecated since torch 1.9\): use ember\.linalg\."):
        call(ember, ember.eye(2))
