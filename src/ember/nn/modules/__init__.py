"""The layers: every one is a ``Module`` subclass written with public ember ops."""
from ember.nn.modules.activation import ReLU, Sigmoid, Tanh
from ember.nn.modules.container import ModuleDict, ModuleList, Sequential
from ember.nn.modules.linear import Linear
from ember.nn.modules.loss import MSELoss
from ember.nn.modules.module import Module

__all__ = ["Linear", "MSELoss", "Module", "ModuleDict", "ModuleList", "ReLU", "Sequential", "Sigmoid", "Tanh"]

# ---- convolution, folding and pooling
from ember.nn.modules.conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # noqa: E402
from ember.nn.modules.pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool2d, AvgPool1d, AvgPool2d, AvgPool3d, LPPool2d, MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool2d  # noqa: E402
from ember.nn.modules.fold import Fold, Unfold  # noqa: E402
from ember.nn.modules.flatten import Flatten, Identity, Unflatten  # noqa: E402
from ember.nn.modules.bilinear import Bilinear, LazyLinear  # noqa: E402

__all__ += [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool2d", "AvgPool1d", "AvgPool2d",
    "AvgPool3d", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "Flatten", "Fold", "Identity", "LPPool2d", "LazyLinear", "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool2d",
    "Unflatten", "Unfold",
]

# ---- activations, normalization, dropout and embeddings
from ember.nn.modules.activation import (  # noqa: E402
    CELU, ELU, GELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish,
    PReLU, RReLU, ReLU6, SELU, SiLU, Softmax, Softmax2d, Softmin, Softplus, Softshrink, Softsign, Tanhshrink,
    Threshold,
)
from ember.nn.modules.batchnorm import (  # noqa: E402
    BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
)
from ember.nn.modules.normalization import (  # noqa: E402
    CrossMapLRN2d, GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm,
)
from ember.nn.modules.dropout import (  # noqa: E402
    AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout,
)
from ember.nn.modules.sparse import (  # noqa: E402
    Embedding, EmbeddingBag,
)

from ember.nn.modules import (  # noqa: E402
    activation as _activation, batchnorm as _batchnorm, dropout as _dropout, normalization as _normalization,
    sparse as _sparse,
)

__all__ += [name for family in (_activation, _batchnorm, _dropout, _normalization, _sparse)
            for name in family.__all__ if name not in __all__]

# ---- losses
from ember.nn.modules.distance import CosineSimilarity, PairwiseDistance
from ember.nn.modules.loss import (
    BCELoss, BCEWithLogitsLoss, CTCLoss, CosineEmbeddingLoss, CrossEntropyLoss, GaussianNLLLoss,
    HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss,
    TripletMarginLoss, TripletMarginWithDistanceLoss,
)
__all__ += [
    "BCELoss", "BCEWithLogitsLoss", "CTCLoss", "CosineEmbeddingLoss", "CrossEntropyLoss", "GaussianNLLLoss",
    "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss", "MarginRankingLoss", "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss", "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss",
    "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CosineSimilarity", "PairwiseDistance",
]

# ---- recurrent layers, attention and transformers
from ember.nn.modules.rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase  # noqa: E402

__all__ += ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]
from ember.nn.modules.attention import MultiheadAttention  # noqa: E402
from ember.nn.modules.transformer import (  # noqa: E402
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
)

__all__ += ["MultiheadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer"]

# ---- init, utils, parameter containers

from ember.nn.modules.container import ParameterDict, ParameterList

__all__ += ["ParameterDict", "ParameterList"]

# ---- resizing
from ember.nn.modules.upsampling import (  # noqa: E402
    PixelShuffle, PixelUnshuffle, Upsample, UpsamplingBilinear2d, UpsamplingNearest2d,
)

__all__ += ["PixelShuffle", "PixelUnshuffle", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]

# ---- padding, pooling in every dimension, channel shuffling, lazy layers, batch norm across ranks, adaptive
# softmax, and the deprecated layers torch keeps for old programs (ember.nn takes these names from here)
from ember.nn.modules import lazy as _lazy, padding as _padding  # noqa: E402
from ember.nn.modules.adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402
from ember.nn.modules.deprecated import Container, NLLLoss2d  # noqa: E402
from ember.nn.modules.lazy import *  # noqa: E402,F403 (the names in its __all__)
from ember.nn.modules.padding import *  # noqa: E402,F403 (the names in its __all__)
from ember.nn.modules.pooling import (  # noqa: E402
    AdaptiveMaxPool1d, AdaptiveMaxPool3d, ChannelShuffle, FractionalMaxPool2d, FractionalMaxPool3d, LPPool1d,
    LPPool3d, MaxUnpool1d, MaxUnpool3d,
)
from ember.nn.modules.sync_batchnorm import SyncBatchNorm  # noqa: E402

MORE_LAYERS = [
    *_padding.__all__, *_lazy.__all__, "AdaptiveLogSoftmaxWithLoss", "AdaptiveMaxPool1d", "AdaptiveMaxPool3d",
    "ChannelShuffle", "Container", "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool3d",
    "MaxUnpool1d", "MaxUnpool3d", "NLLLoss2d", "SyncBatchNorm",
]
__all__ += MORE_LAYERS
