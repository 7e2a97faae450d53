"""``SummaryWriter``: summaries into TensorBoard's event files, one directory per run.

>>> import os, tempfile, ember
>>> from ember.utils.tensorboard import SummaryWriter
>>> logdir = tempfile.mkdtemp()
>>> writer = SummaryWriter(logdir)
>>> writer.add_scalars("loss", {"train": 0.5, "test": 0.7}, global_step=1)
>>> writer.add_histogram("weights", ember.randn(100), global_step=1)
>>> writer.close()
>>> sorted(os.listdir(logdir))[-2:]
['loss_test', 'loss_train']
"""
from __future__ import annotations

import os
import socket
import time
from datetime import datetime

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from ember.utils.tensorboard import _embedding, summary
from ember.utils.tensorboard._convert import figure_to_chw, to_numpy

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Events into one event file of ``log_dir``, written by a background thread every ``flush_secs`` or when
    ``max_queue`` events wait."""

    def __init__(self, log_dir, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step=None, walltime=None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary_proto, global_step=None, walltime=None) -> None:
        self.add_event(Event(summary=summary_proto), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None) -> None:
        graph, stepstats = graph_profile
        self.add_event(Event(graph_def=graph.SerializeToString()), None, walltime)
        from tensorboard.compat.proto.event_pb2 import TaggedRunMetadata

        tagged = TaggedRunMetadata(tag="step1", run_metadata=stepstats.SerializeToString())
        self.add_event(Event(tagged_run_metadata=tagged), None, walltime)

    def add_onnx_graph(self, graph, walltime=None) -> None:
        self.add_event(Event(graph_def=graph.SerializeToString()), None, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()


def _default_log_dir(comment: str) -> str:
    """``runs/<month day_hour-minute-second>_<host><comment>``, one per run."""
    return os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname() + comment)


def _tensorflow_bins() -> list:
    """TensorFlow's histogram buckets: limits growing by a tenth from 1e-12 to 1e20, mirrored, and 0."""
    limits, v = [], 1e-12
    while v < 1e20:
        limits.append(v)
        v *= 1.1
    return [-v for v in reversed(limits)] + [0] + limits


class SummaryWriter:
    """Writes summaries of a run into ``log_dir`` (by default ``runs/<time>_<host><comment>``), where TensorBoard
    (``tensorboard --logdir runs``) reads them. ``purge_step`` hides, on TensorBoard, what an earlier run of the
    same directory logged from that step on (after a crash and restart)."""

    def __init__(self, log_dir=None, comment: str = "", purge_step: int | None = None, max_queue: int = 10,
                 flush_secs: int = 120, filename_suffix: str = "") -> None:
        self.log_dir = log_dir or _default_log_dir(comment)
        self.purge_step = purge_step
        self.max_queue, self.flush_secs, self.filename_suffix = max_queue, flush_secs, filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _tensorflow_bins()

    def _get_file_writer(self) -> FileWriter:
        """The run's writer, made again after ``close`` (so a closed writer can go on logging)."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        return self.log_dir

    def _add(self, summary_proto, global_step=None, walltime=None) -> None:
        self._get_file_writer().add_summary(summary_proto, global_step, walltime)

    def add_scalar(self, tag: str, scalar_value, global_step=None, walltime=None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """One value of the series ``tag`` (a number or a one-element tensor) at ``global_step``."""
        self._add(summary.scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision),
                  global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step=None, walltime=None) -> None:
        """Several series in one chart: each into its own run directory ``<log_dir>/<main_tag>_<tag>``."""
        walltime = time.time() if walltime is None else walltime
        run_dir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            path = run_dir + "/" + main_tag.replace("/", "_") + "_" + tag
            writer = self.all_writers.get(path)
            if writer is None:
                writer = self.all_writers[path] = FileWriter(path, self.max_queue, self.flush_secs,
                                                             self.filename_suffix)
            writer.add_summary(summary.scalar(main_tag, value), global_step, walltime)

    def add_tensor(self, tag: str, tensor, global_step=None, walltime=None) -> None:
        """A whole tensor's values."""
        self._add(summary.tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag: str, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins: int | None = None) -> None:
        """A histogram of ``values``; ``bins`` is NumPy's (a count, edges, 'auto' ...), or TensorFlow's buckets."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._add(summary.histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag: str, min, max, num, sum, sum_squares, bucket_limits, bucket_counts,
                          global_step=None, walltime=None) -> None:
        """A histogram already counted."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError(f"add_histogram_raw: {len(bucket_limits)} bucket_limits but {len(bucket_counts)} "
                             "bucket_counts; give one limit per bucket")
        self._add(summary.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts),
                  global_step, walltime)

    def add_image(self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "CHW") -> None:
        """An image: floats in [0, 1] or uint8 in [0, 255], laid out as ``dataformats``."""
        self._add(summary.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "NCHW") -> None:
        """A batch of images, shown tiled as one."""
        self._add(summary.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_image_with_boxes(self, tag: str, img_tensor, box_tensor, global_step=None, walltime=None,
                             rescale: float = 1, dataformats: str = "CHW", labels=None) -> None:
        """An image with boxes drawn on it (``[K, 4]``: xmin, ymin, xmax, ymax), labelled if one label per box
        is given."""
        if labels is not None:
            labels = [labels] if isinstance(labels, str) else labels
            if len(labels) != box_tensor.shape[0]:
                labels = None
        self._add(summary.image_boxes(tag, img_tensor, box_tensor, rescale=rescale, dataformats=dataformats,
                                      labels=labels), global_step, walltime)

    def add_figure(self, tag: str, figure, global_step=None, close: bool = True, walltime=None) -> None:
        """A matplotlib figure (or a list of them, tiled), rendered; closed afterwards if ``close``."""
        if isinstance(figure, list):
            images = [figure_to_chw(f, close) for f in figure]
            import numpy as np

            self.add_image(tag, np.stack(images), global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, figure_to_chw(figure, close), global_step, walltime, dataformats="CHW")

    def add_video(self, tag: str, vid_tensor, global_step=None, fps: int = 4, walltime=None) -> None:
        """Videos ``[N, T, C, H, W]`` as an animated GIF (needs moviepy)."""
        self._add(summary.video(tag, vid_tensor, fps), global_step, walltime)

    def add_audio(self, tag: str, snd_tensor, global_step=None, sample_rate: int = 44100, walltime=None) -> None:
        """One channel of sound, samples in [-1, 1]."""
        self._add(summary.audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step=None, walltime=None) -> None:
        """Markdown text."""
        self._add(summary.text(tag, text_string), global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose: bool = False, use_strict_trace: bool = True) -> None:
        raise NotImplementedError(
            "SummaryWriter.add_graph: ember has no TorchScript tracer to record a model's graph for TensorBoard; "
            "ember.autograd.graph.render(loss) draws a result's autograd graph instead"
        )

    def add_onnx_graph(self, prototxt) -> None:
        raise NotImplementedError("SummaryWriter.add_onnx_graph: ember does not read ONNX models")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag: str = "default",
                      metadata_header=None) -> None:
        """Points ``[N, D]`` for the projector, with a label per point (``metadata``, or rows of columns under
        ``metadata_header``) and an image per point (``label_img`` ``[N, C, H, W]``)."""
        config = getattr(self, "_projector_config", None)
        self._projector_config = _embedding.add(self._get_file_writer().get_logdir(), to_numpy(mat), metadata,
                                                label_img, 0 if global_step is None else global_step, tag,
                                                metadata_header, config)

    def add_pr_curve(self, tag: str, labels, predictions, global_step=None, num_thresholds: int = 127, weights=None,
                     walltime=None) -> None:
        """The precision-recall curve of ``predictions`` (probabilities) against ``labels`` (0 or 1)."""
        self._add(summary.pr_curve(tag, to_numpy(labels), to_numpy(predictions), num_thresholds, weights),
                  global_step, walltime)

    def add_pr_curve_raw(self, tag: str, true_positive_counts, false_positive_counts, true_negative_counts,
                         false_negative_counts, precision, recall, global_step=None, num_thresholds: int = 127,
                         weights=None, walltime=None) -> None:
        """A precision-recall curve already counted, per threshold."""
        self._add(summary.pr_curve_raw(tag, true_positive_counts, false_positive_counts, true_negative_counts,
                                       false_negative_counts, precision, recall, num_thresholds, weights),
                  global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags: list, category: str = "default", title: str = "untitled"):
        """One chart of several scalar series, for the custom-scalars plugin."""
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(self, tags: list, category: str = "default", title: str = "untitled"):
        """One chart of a series between two others (``tags``: value, lower, upper)."""
        if len(tags) != 3:
            raise ValueError(f"add_custom_scalars_marginchart: expected three tags (value, lower, upper), got "
                             f"{len(tags)}")
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    def add_custom_scalars(self, layout: dict) -> None:
        """The custom-scalars plugin's layout: ``{category: {title: ['Multiline' or 'Margin', tags]}}``."""
        self._add(summary.custom_scalars(layout))

    def add_mesh(self, tag: str, vertices, colors=None, faces=None, config_dict=None, global_step=None,
                 walltime=None) -> None:
        """A mesh or point cloud: vertices ``[B, N, 3]``, and faces and colors if given."""
        self._add(summary.mesh(tag, vertices, colors, faces, config_dict), global_step, walltime)

    def add_hparams(self, hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: dict | None = None,
                    run_name: str | None = None, global_step=None) -> None:
        """A run's hyperparameters and its metrics, for the hparams plugin: into ``<log_dir>/<run_name>``
        (by default the time)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        experiment, start, end = summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run_dir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=run_dir) as run:
            for proto in (experiment, start, end):
                run.file_writer.add_summary(proto, global_step)
            for name, value in metric_dict.items():
                run.add_scalar(name, value, global_step)

    def flush(self) -> None:
        """Write what waits to the files now."""
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self) -> None:
        """Flush and close every file; logging again opens new ones."""
        for writer in (self.all_writers or {}).values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        self.close()
