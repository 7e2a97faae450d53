"""The layers: every one is a ``Module`` subclass written with public ember ops."""
from ember.nn.modules.activation import ReLU, Sigmoid, Tanh
from ember.nn.modules.container import ModuleDict, ModuleList, Sequential
from ember.nn.modules.linear import Linear
from ember.nn.modules.loss import MSELoss
from ember.nn.modules.module import Module

__all__ = ["Linear", "MSELoss", "Module", "ModuleDict", "ModuleList", "ReLU", "Sequential", "Sigmoid", "Tanh"]

# ---- convolution, folding and pooling

# ---- activations, normalization, dropout and embeddings

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

# ---- init, utils, parameter containers

