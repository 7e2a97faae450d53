"""The layers: every one is a ``Module`` subclass written with public ember ops."""
from ember.nn.modules.activation import ReLU, Sigmoid, Tanh
from ember.nn.modules.container import ModuleDict, ModuleList, Sequential
from ember.nn.modules.linear import Linear
from ember.nn.modules.loss import MSELoss
from ember.nn.modules.module import Module

__all__ = ["Linear", "MSELoss", "Module", "ModuleDict", "ModuleList", "ReLU", "Sequential", "Sigmoid", "Tanh"]

# ---- convolution, folding and pooling

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
    GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm,
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

# ---- recurrent layers, attention and transformers

# ---- init, utils, parameter containers

