"""The ``Summary`` protocol buffers that ``SummaryWriter`` writes: one function per kind of data.

>>> from ember.utils.tensorboard.summary import scalar
>>> scalar("loss", 0.25).value[0].simple_value
0.25
"""
from __future__ import annotations

import io
import json
import wave

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

from ember._tensor import Tensor
from ember.utils.tensorboard._convert import to_hwc, to_numpy, video_frames

__all__ = ["scalar", "tensor_proto", "histogram", "histogram_raw", "make_histogram", "image", "image_boxes",
           "make_image", "video", "audio", "text", "custom_scalars", "pr_curve", "pr_curve_raw", "compute_curve",
           "hparams", "mesh"]


def _plugin(name: str, content: bytes = b"") -> SummaryMetadata:
    return SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=name, content=content))


def _shape(shape) -> TensorShapeProto:
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(n)) for n in shape])


def scalar(name: str, value, collections=None, new_style: bool = False, double_precision: bool = False) -> Summary:
    """One number (a tensor or array of one element, or a Python number)."""
    array = to_numpy(value).squeeze()
    if array.ndim != 0:
        raise ValueError(f"scalar {name!r}: expected one value, got {array.size} values of shape {list(array.shape)}")
    number = float(array)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=number)])
    proto = TensorProto(double_val=[number], dtype="DT_DOUBLE") if double_precision else \
        TensorProto(float_val=[number], dtype="DT_FLOAT")
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=_plugin("scalars"))])


# per NumPy dtype: TensorFlow's dtype name and the TensorProto field that holds the values
_TENSOR_FIELDS = {
    "float16": ("DT_HALF", "half_val"), "float32": ("DT_FLOAT", "float_val"), "float64": ("DT_DOUBLE", "double_val"),
    "int8": ("DT_INT8", "int_val"), "uint8": ("DT_UINT8", "int_val"), "int16": ("DT_INT16", "int_val"),
    "int32": ("DT_INT32", "int_val"), "int64": ("DT_INT64", "int64_val"), "bool": ("DT_BOOL", "bool_val"),
    "complex64": ("DT_COMPLEX64", "scomplex_val"), "complex128": ("DT_COMPLEX128", "dcomplex_val"),
}


def _field_values(array: np.ndarray) -> list:
    if array.dtype == np.float16:  # TensorFlow keeps a half's 16 bits, as an int
        return array.reshape(-1).view(np.uint16).tolist()
    if array.dtype.kind == "c":
        return array.reshape(-1).view(array.real.dtype).tolist()  # real and imaginary parts, interleaved
    return array.reshape(-1).tolist()


def tensor_proto(tag: str, tensor) -> Summary:
    """A whole tensor, for the tensor plugin."""
    array = to_numpy(tensor)
    if array.nbytes >= 1 << 31:
        raise ValueError(f"{tag}: a tensor of {array.nbytes} bytes is beyond a protocol buffer's limit of 2 GB")
    if array.dtype.name not in _TENSOR_FIELDS:
        raise ValueError(f"{tag} has unsupported tensor dtype {array.dtype}")
    dtype, field = _TENSOR_FIELDS[array.dtype.name]
    proto = TensorProto(dtype=dtype, tensor_shape=_shape(array.shape), **{field: _field_values(array)})
    return Summary(value=[Summary.Value(tag=tag, metadata=_plugin("tensor"), tensor=proto)])


def histogram_raw(name: str, min, max, num, sum, sum_squares, bucket_limits, bucket_counts) -> Summary:
    """A histogram already counted: each bucket's upper limit and count."""
    histo = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                           bucket_limit=bucket_limits, bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=name, histo=histo)])


def histogram(name: str, values, bins, max_bins: int | None = None) -> Summary:
    """A histogram of ``values`` (any shape), with NumPy's ``bins`` (a count, edges or a rule's name)."""
    return Summary(value=[Summary.Value(tag=name, histo=make_histogram(to_numpy(values).astype(float), bins,
                                                                         max_bins))])


def _merged(counts: np.ndarray, limits: np.ndarray, max_bins: int) -> tuple:
    """At most about ``max_bins`` buckets: each run of neighbours summed into one."""
    run = len(counts) // max_bins
    counts = np.pad(counts, (0, -len(counts) % run)).reshape(-1, run).sum(axis=1)
    return counts, np.append(limits[:-1:run], limits[-1])


def make_histogram(values: np.ndarray, bins, max_bins: int | None = None) -> HistogramProto:
    """The histogram proto of ``values``: only the buckets from the first to the last that count anything,
    plus an empty one on their left (TensorBoard shows each bucket's right limit alone)."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        counts, limits = _merged(counts, limits, max_bins)
    used = np.flatnonzero(counts)
    first, end = (int(used[0]), int(used[-1]) + 1) if used.size else (0, 1)
    counts = counts[first - 1:end] if first > 0 else np.concatenate([[0], counts[:end]])
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits[first:end + 1].tolist(),
                          bucket=counts.tolist())


def _as_bytes_image(array: np.ndarray) -> np.ndarray:
    """An image's values as bytes: uint8 as they are, floats (taken in [0, 1]) scaled by 255, clipped."""
    scale = 1 if array.dtype == np.uint8 else 255
    return (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


def image(tag: str, tensor, rescale: float = 1, dataformats: str = "NCHW") -> Summary:
    """An image (or a batch, tiled into a grid), PNG-encoded."""
    pixels = _as_bytes_image(to_hwc(to_numpy(tensor), dataformats))
    return Summary(value=[Summary.Value(tag=tag, image=make_image(pixels, rescale=rescale))])


def image_boxes(tag: str, tensor_image, tensor_boxes, rescale: float = 1, dataformats: str = "CHW",
                labels=None) -> Summary:
    """An image with boxes ``[K, 4]`` (xmin, ymin, xmax, ymax) drawn on it, each with its label if given."""
    pixels = _as_bytes_image(to_hwc(to_numpy(tensor_image), dataformats))
    proto = make_image(pixels, rescale=rescale, boxes=to_numpy(tensor_boxes), labels=labels)
    return Summary(value=[Summary.Value(tag=tag, image=proto)])


def _draw_boxes(picture, boxes: np.ndarray, labels) -> None:
    from PIL import ImageDraw, ImageFont

    draw, font = ImageDraw.Draw(picture), ImageFont.load_default()
    for i, (left, top, right, bottom) in enumerate(boxes.tolist()):
        draw.line([(left, top), (left, bottom), (right, bottom), (right, top), (left, top)], width=2, fill="Red")
        label = None if labels is None else labels[i]
        if label:
            x0, y0, x1, y1 = font.getbbox(label)
            margin = np.ceil(0.05 * (y1 - y0))
            draw.rectangle([(left, bottom - (y1 - y0) - 2 * margin), (left + x1 - x0, bottom)], fill="Red")
            draw.text((left + margin, bottom - (y1 - y0) - margin), label, fill="black", font=font)


def make_image(pixels: np.ndarray, rescale: float = 1, boxes=None, labels=None) -> Summary.Image:
    """An ``[H, W, C]`` uint8 image as PNG, resized by ``rescale``."""
    from PIL import Image

    height, width, channels = pixels.shape
    picture = Image.fromarray(pixels)
    if boxes is not None:
        _draw_boxes(picture, boxes, labels)
    picture = picture.resize((int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS)
    with io.BytesIO() as png:
        picture.save(png, format="PNG")
        encoded = png.getvalue()
    return Summary.Image(height=height, width=width, colorspace=channels, encoded_image_string=encoded)


def video(tag: str, tensor, fps: int = 4) -> Summary:
    """Videos ``[N, T, C, H, W]`` as an animated GIF (through moviepy, which must be installed)."""
    try:
        from moviepy import ImageSequenceClip
    except ImportError as missing:
        raise ImportError("add_video needs the moviepy package: pip install moviepy") from missing
    import tempfile

    frames = _as_bytes_image(video_frames(to_numpy(tensor)))
    _, height, width, channels = frames.shape
    with tempfile.NamedTemporaryFile(suffix=".gif") as gif:
        ImageSequenceClip(list(frames), fps=fps).write_gif(gif.name, logger=None)
        encoded = gif.read()
    proto = Summary.Image(height=height, width=width, colorspace=channels, encoded_image_string=encoded)
    return Summary(value=[Summary.Value(tag=tag, image=proto)])


def audio(tag: str, tensor, sample_rate: int = 44100) -> Summary:
    """One channel of sound, samples in [-1, 1] (clipped beyond, with a warning), as 16-bit WAV."""
    samples = to_numpy(tensor).squeeze()
    if samples.size and abs(samples).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        samples = samples.clip(-1, 1)
    if samples.ndim != 1:
        raise ValueError(f"audio {tag!r}: expected one channel of samples (1-d), got shape {list(samples.shape)}")
    pcm = (samples * np.iinfo(np.int16).max).astype("<i2")
    with io.BytesIO() as buffer:
        with wave.open(buffer, "wb") as sound:
            sound.setnchannels(1)
            sound.setsampwidth(2)
            sound.setframerate(sample_rate)
            sound.writeframes(pcm.tobytes())
        encoded = buffer.getvalue()
    proto = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=pcm.shape[-1],
                          encoded_audio_string=encoded, content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=proto)])


def text(tag: str, text: str) -> Summary:
    """Markdown text, for the text plugin (its tag gains ``/text_summary``)."""
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode("utf_8")], tensor_shape=_shape([1]))
    metadata = _plugin("text", TextPluginData(version=0).SerializeToString())
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=metadata, tensor=proto)])


def custom_scalars(layout: dict) -> Summary:
    """The custom-scalars plugin's layout: ``{category: {chart: ['Multiline', tags] or ['Margin', [value, lower,
    upper]]}}``."""
    from tensorboard.plugins.custom_scalar import layout_pb2

    categories = []
    for category, charts in layout.items():
        made = []
        for title, (kind, tags) in charts.items():
            if kind == "Margin":
                if len(tags) != 3:
                    raise ValueError(f"custom_scalars: the margin chart {title!r} needs three tags (value, lower, "
                                     f"upper), got {len(tags)}")
                series = layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1], upper=tags[2])
                made.append(layout_pb2.Chart(title=title, margin=layout_pb2.MarginChartContent(series=[series])))
            else:
                made.append(layout_pb2.Chart(title=title, multiline=layout_pb2.MultilineChartContent(tag=tags)))
        categories.append(layout_pb2.Category(title=category, chart=made))
    proto = TensorProto(dtype="DT_STRING", string_val=[layout_pb2.Layout(category=categories).SerializeToString()],
                        tensor_shape=TensorShapeProto())
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=proto,
                                        metadata=_plugin("custom_scalars"))])


def _pr_summary(tag: str, data: np.ndarray, num_thresholds: int) -> Summary:
    from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData

    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(), tensor_shape=_shape(data.shape))
    return Summary(value=[Summary.Value(tag=tag, metadata=_plugin("pr_curves", content), tensor=proto)])


def pr_curve_raw(tag: str, tp, fp, tn, fn, precision, recall, num_thresholds: int = 127, weights=None) -> Summary:
    """A precision-recall curve already counted, per threshold (at most 127 thresholds)."""
    return _pr_summary(tag, np.stack((tp, fp, tn, fn, precision, recall)), min(num_thresholds, 127))


def pr_curve(tag: str, labels, predictions, num_thresholds: int = 127, weights=None) -> Summary:
    """The precision-recall curve of ``predictions`` in [0, 1] against 0/1 ``labels``."""
    num_thresholds = min(num_thresholds, 127)
    return _pr_summary(tag, compute_curve(to_numpy(labels), to_numpy(predictions), num_thresholds, weights),
                       num_thresholds)


def compute_curve(labels: np.ndarray, predictions: np.ndarray, num_thresholds: int, weights=None) -> np.ndarray:
    """Per threshold: true and false positives, true and false negatives, precision and recall (rows)."""
    weights = 1.0 if weights is None else weights
    buckets = np.int32(np.floor(predictions * (num_thresholds - 1)))
    positive = labels.astype(np.float64)
    span = (0, num_thresholds - 1)
    tp_buckets = np.histogram(buckets, bins=num_thresholds, range=span, weights=positive * weights)[0]
    fp_buckets = np.histogram(buckets, bins=num_thresholds, range=span, weights=(1.0 - positive) * weights)[0]
    tp, fp = np.cumsum(tp_buckets[::-1])[::-1], np.cumsum(fp_buckets[::-1])[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    least = 1e-7  # no division by zero where nothing is predicted positive
    return np.stack((tp, fp, tn, fn, tp / np.maximum(least, tp + fp), tp / np.maximum(least, tp + fn)))


def _hparam(name: str, value, discrete) -> tuple:
    """The session's value of one hyperparameter and its description for the experiment."""
    from tensorboard.plugins.hparams.api_pb2 import DataType, HParamInfo

    if isinstance(value, Tensor):
        value = float(to_numpy(value).reshape(-1)[0])
    if isinstance(value, (int, float)):  # a bool too, as torch's writer takes it: a number
        kind, field, dtype = "number_value", "number_value", "DATA_TYPE_FLOAT64"
    elif isinstance(value, str):
        kind, field, dtype = "string_value", "string_value", "DATA_TYPE_STRING"
    else:
        raise ValueError("value should be one of int, float, str, bool, or ember.Tensor")
    domain = None if discrete is None else struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d})
                                                                        for d in discrete])
    return kind, value, HParamInfo(name=name, type=DataType.Value(dtype), domain_discrete=domain)


def hparams(hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: dict | None = None) -> tuple:
    """The three summaries of the hparams plugin: the experiment (hyperparameters' and metrics' names), the
    session's start (the hyperparameters' values) and its end."""
    from tensorboard.plugins.hparams import metadata
    from tensorboard.plugins.hparams.api_pb2 import Experiment, MetricInfo, MetricName, Status
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData, SessionEndInfo, SessionStartInfo

    for name, given in (("hparam_dict", hparam_dict), ("metric_dict", metric_dict)):
        if not isinstance(given, dict):
            raise TypeError(f"parameter: {name} should be a dictionary, nothing logged.")
    discrete = hparam_domain_discrete or {}
    if not isinstance(discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for name, choices in discrete.items():
        if name not in hparam_dict or not isinstance(choices, list) or \
                not all(isinstance(c, type(hparam_dict[name])) for c in choices):
            raise TypeError(f"parameter: hparam_domain_discrete[{name}] should be a list of same type as "
                            f"hparam_dict[{name}].")
    start, infos = SessionStartInfo(), []
    for name, value in hparam_dict.items():
        if value is None:
            continue
        kind, value, info = _hparam(name, value, discrete.get(name))
        setattr(start.hparams[name], kind, value)
        infos.append(info)

    def summary(tag: str, **content) -> Summary:
        data = HParamsPluginData(version=metadata.PLUGIN_DATA_VERSION, **content).SerializeToString()
        return Summary(value=[Summary.Value(tag=tag, metadata=_plugin(metadata.PLUGIN_NAME, data))])

    experiment = Experiment(hparam_infos=infos, metric_infos=[MetricInfo(name=MetricName(tag=k))
                                                               for k in metric_dict])
    return (summary(metadata.EXPERIMENT_TAG, experiment=experiment),
            summary(metadata.SESSION_START_INFO_TAG, session_start_info=start),
            summary(metadata.SESSION_END_INFO_TAG,
                    session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))))


def mesh(tag: str, vertices, colors, faces, config_dict, display_name=None, description=None) -> Summary:
    """A mesh or point cloud: vertices ``[B, N, 3]``, and optionally faces (vertex indices) and colors."""
    from tensorboard.plugins.mesh import metadata
    from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData

    parts = [(part, kind) for part, kind in ((vertices, MeshPluginData.VERTEX), (faces, MeshPluginData.FACE),
                                             (colors, MeshPluginData.COLOR)) if part is not None]
    components = metadata.get_components_bitmask([kind for _, kind in parts])
    config = "{}" if config_dict is None else json.dumps(config_dict, sort_keys=True)
    values = []
    for part, kind in parts:
        array = to_numpy(part)
        info = metadata.create_summary_metadata(tag, display_name, kind, components, array.shape, description,
                                                json_config=config)
        proto = TensorProto(dtype="DT_FLOAT", float_val=array.reshape(-1).tolist(), tensor_shape=_shape(array.shape))
        values.append(Summary.Value(tag=metadata.get_instance_name(tag, kind), metadata=info, tensor=proto))
    return Summary(value=values)

