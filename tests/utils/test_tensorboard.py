"""SummaryWriter against torch's: the same calls write the same events (everything but the wall time)."""
import glob
import os

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboard")

from tensorboard.backend.event_processing.event_file_loader import EventFileLoader  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402

import torch.utils.tensorboard  # noqa: E402

import ember.utils.tensorboard  # noqa: E402
from ember.utils.tensorboard import SummaryWriter  # noqa: E402


def _module(lib):
    return lib.utils.tensorboard


def _events(log_dir: str) -> dict:
    """Per run directory (relative to ``log_dir``): its events, without their wall times, as protos."""
    runs = {}
    for path in sorted(glob.glob(os.path.join(log_dir, "**", "events.out.tfevents.*"), recursive=True)):
        run = os.path.relpath(os.path.dirname(path), log_dir)
        events = []
        for event in EventFileLoader(path).Load():
            event.ClearField("wall_time")
            if not event.HasField("file_version"):
                events.append(event)
        runs.setdefault(run, []).extend(events)
    return runs


def _same_events(tmp_path, log):
    """``log(lib, writer)`` run with torch's writer and with ember's; their event files compared."""
    for lib in (torch, ember):
        lib.manual_seed(0)
        module = _module(lib)
        with module.SummaryWriter(str(tmp_path / lib.__name__)) as writer:
            log(lib, writer)
    theirs, ours = _events(str(tmp_path / "torch")), _events(str(tmp_path / "ember"))
    assert ours.keys() == theirs.keys()
    for run in theirs:
        assert ours[run] == theirs[run], run
    return ours


VALUES = np.random.default_rng(0).standard_normal(1000)


def test_scalars(tmp_path):
    def log(lib, w):
        for step in range(3):
            w.add_scalar("loss", lib.tensor(0.5 / (step + 1)), step)
            w.add_scalar("plain", 1.25 * step, step, new_style=True)
            w.add_scalar("double", 1 / 3, step, new_style=True, double_precision=True)
        w.add_scalars("run", {"train": 0.5, "test": lib.tensor(0.25)}, 7, walltime=1.0)
    runs = _same_events(tmp_path, log)
    assert set(runs) == {".", "run_train", "run_test"}


def test_histograms(tmp_path):
    def log(lib, w):
        w.add_histogram("default", lib.tensor(VALUES), 1)
        w.add_histogram("counted", lib.tensor(VALUES, dtype=lib.float32), 2, bins=30)
        w.add_histogram("merged", VALUES, 3, bins=100, max_bins=7)
        w.add_histogram("auto", VALUES * 3 + 1, 4, bins="auto")
        w.add_histogram_raw("raw", 0.0, 3.0, 6, 9.0, 21.0, [1.0, 2.0, 3.0], [1, 2, 3], 5)
    _same_events(tmp_path, log)


def test_images_text_and_audio(tmp_path):
    rng = np.random.default_rng(1)
    chw, batch = rng.random((3, 8, 10)), rng.random((5, 1, 6, 6))

    def log(lib, w):
        w.add_image("chw", lib.tensor(chw), 0)
        w.add_image("hw", (chw[0] * 255).astype(np.uint8), 0, dataformats="HW")
        w.add_image("hwc", lib.tensor(chw).permute(1, 2, 0), 0, dataformats="HWC")
        w.add_images("batch", lib.tensor(batch), 1)
        w.add_image_with_boxes("boxes", lib.tensor(chw), lib.tensor([[1.0, 1.0, 6.0, 5.0]]), 2, labels=["a"])
        w.add_text("note", "**bold** text", 3)
        w.add_audio("tone", lib.tensor(np.sin(np.linspace(0, 20, 400))), 4, sample_rate=8000)
    _same_events(tmp_path, log)


def test_figure(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def log(lib, w):
        figure = plt.figure(figsize=(2, 2), dpi=20)
        plt.plot([0, 1], [1, 0])
        w.add_figure("plot", figure, 0)
        assert not plt.fignum_exists(figure.number)  # closed after logging
    _same_events(tmp_path, log)


def test_tensors_pr_curves_and_custom_scalars(tmp_path):
    rng = np.random.default_rng(2)
    labels, predictions = rng.integers(0, 2, 50), rng.random(50)

    def log(lib, w):
        w.add_tensor("t32", lib.tensor([[1.5, 2.0], [3.0, 4.0]]), 0)
        w.add_tensor("t64", lib.arange(6).reshape(2, 3), 0)
        w.add_tensor("flags", lib.tensor([True, False]), 0)
        w.add_pr_curve("pr", lib.tensor(labels), lib.tensor(predictions), 1)
        w.add_pr_curve("weighted", labels, predictions, 2, num_thresholds=300, weights=np.full(50, 0.5))
        counts = np.arange(5.0)
        w.add_pr_curve_raw("raw", counts, counts, counts, counts, counts / 5, counts / 4, 3, num_thresholds=5)
        w.add_custom_scalars_multilinechart(["loss", "plain"], title="losses")
        w.add_custom_scalars_marginchart(["a", "lo", "hi"], category="c")
        w.add_custom_scalars({"x": {"y": ["Multiline", ["loss"]], "z": ["Margin", ["a", "b", "c"]]}})
    _same_events(tmp_path, log)


def test_half_tensor_keeps_its_values(tmp_path):
    """A half tensor's values read back as they were (TensorFlow keeps a half's 16 bits per entry)."""
    values = np.array([0.5, -2.0, 65504.0], np.float16)
    with SummaryWriter(str(tmp_path)) as w:
        w.add_tensor("half", ember.tensor(values), 0)
    (event,) = [e for e in _events(str(tmp_path))["."]]
    np.testing.assert_array_equal(tensor_util.make_ndarray(event.summary.value[0].tensor), values)


def test_hparams(tmp_path):
    def log(lib, w):
        w.add_hparams({"lr": 0.1, "batch": 32, "opt": "sgd", "nesterov": True, "none": None},
                      {"accuracy": 0.9, "loss": lib.tensor(0.25)}, hparam_domain_discrete={"opt": ["sgd", "adam"]},
                      run_name="trial", global_step=3)
    _same_events(tmp_path, log)


@pytest.mark.parametrize("call, error", [
    (lambda w: w.add_scalar("x", ember.ones(2)), ValueError),
    (lambda w: w.add_histogram("x", ember.ones(0)), ValueError),
    (lambda w: w.add_histogram_raw("x", 0, 1, 1, 1, 1, [1.0], [1, 2]), ValueError),
    (lambda w: w.add_hparams([("lr", 1)], {}), TypeError),
    (lambda w: w.add_hparams({"lr": 0.1}, {}, hparam_domain_discrete={"lr": [1]}), TypeError),
    (lambda w: w.add_hparams({"lr": [0.1]}, {}), ValueError),
    (lambda w: w.add_custom_scalars_marginchart(["a", "b"]), ValueError),
    (lambda w: w.add_image("x", ember.ones(3, 4, 4), dataformats="HWCC"), ValueError),
    (lambda w: w.add_embedding(ember.ones(3, 2), metadata=["a"]), ValueError),
    (lambda w: w.add_graph(ember.nn.Linear(2, 2), ember.ones(1, 2)), NotImplementedError),
])
def test_bad_input_raises(tmp_path, call, error):
    with SummaryWriter(str(tmp_path)) as w, pytest.raises(error):
        call(w)


def test_embedding_files_match_torch(tmp_path):
    rng = np.random.default_rng(3)
    mat, images = rng.standard_normal((4, 3)).astype(np.float32), rng.random((4, 1, 5, 5))
    for lib in (torch, ember):
        module = _module(lib)
        with module.SummaryWriter(str(tmp_path / lib.__name__)) as w:
            w.add_embedding(lib.tensor(mat), metadata=["a", "b", "c", "d"], label_img=lib.tensor(images),
                            global_step=2, tag="my/points")
            w.add_embedding(lib.tensor(mat), metadata=[[1, "x"], [2, "y"], [3, "z"], [4, "w"]],
                            metadata_header=["id", "name"], tag="table")
    files = sorted(os.path.relpath(p, tmp_path / "torch")
                   for p in glob.glob(str(tmp_path / "torch" / "**" / "*"), recursive=True) if os.path.isfile(p)
                   and "tfevents" not in p)
    assert "projector_config.pbtxt" in files and "00002/my%2fpoints/sprite.png" in files
    for name in files:
        assert (tmp_path / "ember" / name).read_bytes() == (tmp_path / "torch" / name).read_bytes(), name


def test_default_log_dir_and_reopening(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    writer = SummaryWriter(comment="_lr0.1")
    assert writer.get_logdir().startswith("runs" + os.sep) and writer.get_logdir().endswith("_lr0.1")
    writer.add_scalar("a", 1.0, 0)
    writer.close()
    writer.add_scalar("a", 2.0, 1)  # logging after close opens a new file, as torch's writer does
    writer.close()
    events = _events(writer.get_logdir())["."]
    # (the loader gives each simple value as a 0-d tensor)
    assert [float(tensor_util.make_ndarray(e.summary.value[0].tensor)) for e in events] == [1.0, 2.0]


def test_purge_step_writes_a_session_start(tmp_path):
    def log(lib, w):
        w.add_scalar("a", 1.0, 5)
    for lib in (torch, ember):
        module = _module(lib)
        with module.SummaryWriter(str(tmp_path / lib.__name__), purge_step=4) as w:
            log(lib, w)
    assert _events(str(tmp_path / "ember")) == _events(str(tmp_path / "torch"))
