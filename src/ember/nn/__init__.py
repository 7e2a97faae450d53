"""Neural-network building blocks: ``Module``, ``Parameter``, layers, ``init`` and ``functional``.

How it is put together (the same way a user would write it):

- ``functional`` holds the stateless functions. Each is composed of public ember
  ops, so it needs no backward of its own, and dispatches through ``__torch_function__``.
- Every layer in ``modules/`` is a ``Module`` subclass whose ``forward`` calls ``functional``;
  its weights are ``Parameter``s, registered by plain attribute assignment.
- ``init`` fills tensors in place under ``no_grad``; layers use it in ``reset_parameters``.

>>> import ember
>>> from ember import nn
>>> model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
>>> sum(p.numel() for p in model.parameters())
13
"""
from ember.nn.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from ember.nn import functional, init
from ember.nn.modules import Linear, Module, ModuleDict, ModuleList, MSELoss, ReLU, Sequential, Sigmoid, Tanh

__all__ = [
    "Buffer", "Linear", "MSELoss", "Module", "ModuleDict", "ModuleList", "Parameter", "ReLU", "Sequential", "Sigmoid", "Tanh",
    "UninitializedBuffer", "UninitializedParameter",
    "functional", "init",
]

# ---- convolution, folding and pooling
from ember.nn.modules import (  # noqa: E402
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool2d, AvgPool1d, AvgPool2d, AvgPool3d,
    Bilinear, Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, Flatten, Fold, Identity,
    LPPool2d, LazyLinear, MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool2d, Unflatten, Unfold,
)

__all__ += [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool2d", "AvgPool1d", "AvgPool2d",
    "AvgPool3d", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "Flatten", "Fold", "Identity", "LPPool2d", "LazyLinear", "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool2d",
    "Unflatten", "Unfold",
]

# ---- activations, normalization, dropout and embeddings
from ember.nn.modules import (  # noqa: E402
    AlphaDropout, BatchNorm1d, BatchNorm2d, BatchNorm3d, CELU, Dropout, Dropout1d, Dropout2d, Dropout3d, ELU,
    Embedding, EmbeddingBag, FeatureAlphaDropout, GELU, GLU, GroupNorm, Hardshrink, Hardsigmoid, Hardswish, Hardtanh,
    InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LayerNorm, LeakyReLU, LocalResponseNorm, LogSigmoid, LogSoftmax,
    Mish, PReLU, RMSNorm, RReLU, ReLU6, SELU, SiLU, Softmax, Softmax2d, Softmin, Softplus, Softshrink, Softsign,
    Tanhshrink, Threshold,
)
from ember.nn.modules import CrossMapLRN2d  # noqa: E402

from ember.nn.modules import (  # noqa: E402
    activation as _activation, batchnorm as _batchnorm, dropout as _dropout, normalization as _normalization,
    sparse as _sparse,
)

__all__ += [name for family in (_activation, _batchnorm, _dropout, _normalization, _sparse)
            for name in family.__all__ if name not in __all__]

# ---- losses
from ember.nn.modules import distance as _distance, loss as _loss
from ember.nn.modules.distance import *  # noqa: F403 (the names in its __all__)
from ember.nn.modules.loss import *  # noqa: F403 (the names in its __all__)
__all__ += _distance.__all__ + [name for name in _loss.__all__ if name != "MSELoss"]

# ---- recurrent layers, attention and transformers
from ember.nn.modules.rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase  # noqa: E402

__all__ += ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]
from ember.nn.modules.attention import MultiheadAttention  # noqa: E402
from ember.nn.modules.transformer import (  # noqa: E402
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
)

__all__ += ["MultiheadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer"]

# ---- init, utils, parameter containers

from ember.nn import grad, utils
from ember.nn.modules import ParameterDict, ParameterList

__all__ += ["ParameterDict", "ParameterList", "grad", "utils"]

# ---- data-parallel training
from ember.nn import parallel  # noqa: E402,F401

# ---- resizing
from ember.nn.modules.upsampling import (  # noqa: E402
    PixelShuffle, PixelUnshuffle, Upsample, UpsamplingBilinear2d, UpsamplingNearest2d,
)

__all__ += ["PixelShuffle", "PixelUnshuffle", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]

# ---- padding, pooling in every dimension, lazy layers, SyncBatchNorm, adaptive softmax, deprecated layers (the
# list is ember/nn/modules/__init__.py's), and DataParallel (the module as it is, on the CPU)
from ember.nn.modules import MORE_LAYERS as _MORE_LAYERS  # noqa: E402
from ember.nn.modules import *  # noqa: E402,F403 (the names in its __all__, these among them)
from ember.nn.parallel import DataParallel  # noqa: E402

__all__ += [*_MORE_LAYERS, "DataParallel"]

# ---- a linear layer fused with cross-entropy, and the options that chunk it
from ember.nn.modules.linear_cross_entropy import LinearCrossEntropyLoss, LinearCrossEntropyOptions  # noqa: E402

__all__ += ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]
