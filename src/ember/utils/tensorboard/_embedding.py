"""The projector's files for ``SummaryWriter.add_embedding``: the points, their labels, their sprite image and
the projector's configuration."""
from __future__ import annotations

import math
import os

import numpy as np

from ember.utils.tensorboard._convert import grid, to_numpy


def _escaped(tag: str) -> str:
    """``tag`` safe as one directory name: '%', '/' and '\\' as %xx."""
    return tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


def _write(path: str, text: str) -> None:
    with open(path, "wb") as file:
        file.write(text.encode("utf-8"))


def _labels(metadata, header) -> str:
    if not header:
        return "\n".join(str(label) for label in metadata) + "\n"
    if len(header) != len(metadata[0]):
        raise ValueError(f"add_embedding: metadata_header has {len(header)} columns, the metadata's rows "
                         f"{len(metadata[0])}")
    return "\n".join("\t".join(str(e) for e in row) for row in [header] + list(metadata)) + "\n"


def _sprite(images: np.ndarray, path: str) -> None:
    """The points' images tiled into one square PNG."""
    from PIL import Image

    side = math.ceil(images.shape[0] ** 0.5)
    tiled = grid(images, columns=side).transpose(1, 2, 0)
    square = np.zeros((tiled.shape[1], tiled.shape[1], 3))
    square[:tiled.shape[0]] = tiled
    Image.fromarray(np.uint8((square * 255).clip(0, 255))).save(os.path.join(path, "sprite.png"), format="PNG")


def add(log_dir: str, mat: np.ndarray, metadata, label_img, step: int, tag: str, header, config):
    """Write one embedding's files under ``log_dir/<step>/<tag>`` and return the projector's configuration
    (``config``, made if None) with it added; the configuration file is rewritten."""
    from google.protobuf import text_format
    from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo, ProjectorConfig

    subdir = f"{str(step).zfill(5)}/{_escaped(tag)}"
    path = os.path.join(log_dir, subdir)
    if os.path.isdir(path):
        print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
    elif os.path.exists(path):
        raise NotADirectoryError(f"Path: `{path}` exists, but is a file. Cannot proceed.")
    os.makedirs(path, exist_ok=True)
    info = EmbeddingInfo(tensor_name=f"{tag}:{str(step).zfill(5)}", tensor_path=subdir + "/tensors.tsv")
    if metadata is not None:
        if mat.shape[0] != len(metadata):
            raise ValueError(f"add_embedding: {mat.shape[0]} points but {len(metadata)} labels")
        _write(os.path.join(path, "metadata.tsv"), _labels(metadata, header))
        info.metadata_path = subdir + "/metadata.tsv"
    if label_img is not None:
        images = to_numpy(label_img)
        if mat.shape[0] != images.shape[0]:
            raise ValueError(f"add_embedding: {mat.shape[0]} points but {images.shape[0]} images")
        _sprite(images, path)
        info.sprite.image_path = subdir + "/sprite.png"
        info.sprite.single_image_dim.extend([images.shape[3], images.shape[2]])
    if mat.ndim != 2:
        raise ValueError(f"add_embedding: mat should be 2-d (points by dimensions), got shape {list(mat.shape)}")
    _write(os.path.join(path, "tensors.tsv"), "".join("\t".join(str(v) for v in row.tolist()) + "\n" for row in mat))
    config = config if config is not None else ProjectorConfig()
    config.embeddings.extend([info])
    _write(os.path.join(log_dir, "projector_config.pbtxt"), text_format.MessageToString(config))
    return config
