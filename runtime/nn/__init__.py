"""`G.nn`: Module, Parameter, the layers, `functional` (F), `init` and `utils` — a thin layer over the ops.

Modules: parameter.py (Parameter), module.py (Module, state_dict), hooks.py (module hooks), layers.py (Linear,
Conv2d, activations, pooling, Embedding ...), containers.py (Sequential, ModuleList, ModuleDict, ParameterList),
loss.py (the losses), normalization.py (BatchNorm, LayerNorm, GroupNorm), rnn.py (RNN/LSTM/GRU and cells),
activation.py (more activations), attention.py (MultiheadAttention), functional.py (the ops under
torch.nn.functional's names), init.py (initialisers), utils.py (gradient clipping), serialization.py
(G.save / G.load in PyTorch's checkpoint format; checkpoint_archive.py and checkpoint_pickle.py).
"""

from runtime.nn import functional, init, modules, parallel, parameter, utils
from runtime.nn.activation import (
    CELU,
    ELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    Mish,
    PReLU,
    ReLU6,
    RReLU,
    Softmax2d,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from runtime.nn.attention import MultiheadAttention
from runtime.nn.bilinear import Bilinear
from runtime.nn.compiled_module import OptimizedModule as OptimizedModule  # what G.compile(module) returns
from runtime.nn.containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from runtime.nn.layers import (
    GELU,
    AdaptiveAvgPool2d,
    AvgPool2d,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    Linear,
    LogSoftmax,
    MaxPool2d,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
    Unflatten,
)
from runtime.nn.lazy import LazyBatchNorm1d, LazyBatchNorm2d, LazyConv2d, LazyLinear
from runtime.nn.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from runtime.nn.module import IncompatibleKeys, Module
from runtime.nn.normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from runtime.nn.parallel import Container, DataParallel, factory_kwargs
from runtime.nn.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from runtime.nn.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from runtime.nn.sync_batchnorm import SyncBatchNorm
from runtime.nn.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = [
    "ELU", "SELU", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid", "Mish", "ReLU6", "Softplus",
    "GELU", "GRU", "LSTM", "RNN", "AdaptiveAvgPool2d", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d",
    "BatchNorm2d", "Conv2d", "CrossEntropyLoss", "Dropout", "Embedding", "Flatten", "GRUCell", "GroupNorm",
    "HuberLoss", "Identity", "IncompatibleKeys", "KLDivLoss", "L1Loss", "LSTMCell", "LayerNorm", "Linear",
    "LogSoftmax", "MSELoss", "MaxPool2d", "Module", "ModuleDict", "ModuleList", "MultiheadAttention", "NLLLoss",
    "Parameter", "ParameterDict", "ParameterList", "RNNBase", "RNNCell", "ReLU", "Sequential", "SiLU", "Sigmoid",
    "SmoothL1Loss", "Softmax", "Tanh", "Unflatten", "functional", "init", "utils",
]
__all__ += ["GLU", "PReLU", "Softmin", "Softsign", "Tanhshrink", "Threshold"]
__all__ += ["SyncBatchNorm", "parallel"]
__all__ += ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
            "TransformerEncoderLayer"]
__all__ += ["CELU", "Hardshrink", "RReLU", "Softmax2d", "Softshrink", "Bilinear", "LazyLinear", "UninitializedBuffer",
            "UninitializedParameter", "Buffer", "RNNCellBase"]
__all__ += ["Container", "DataParallel", "factory_kwargs", "modules", "parameter"]
__all__ += ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyConv2d"]

# --- issue 21: conv, pooling, padding, norm, sampling, dropout, embedding-bag, distance and loss layers ---
from runtime.nn.conv import (  # noqa: E402
    Conv1d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from runtime.nn.distance import (  # noqa: E402
    CosineSimilarity,
    PairwiseDistance,
)
from runtime.nn.dropout import (  # noqa: E402
    AlphaDropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
)
from runtime.nn.embedding_bag import (  # noqa: E402
    EmbeddingBag,
)
from runtime.nn.loss import (  # noqa: E402
    CosineEmbeddingLoss,
    CTCLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    PoissonNLLLoss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from runtime.nn.norm_layers import (  # noqa: E402
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LocalResponseNorm,
    RMSNorm,
)
from runtime.nn.padding import (  # noqa: E402
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from runtime.nn.pooling import (  # noqa: E402
    AdaptiveAvgPool1d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool3d,
    FractionalMaxPool2d,
    FractionalMaxPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool1d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
)
from runtime.nn.sampling import (  # noqa: E402
    ChannelShuffle,
    Fold,
    PixelShuffle,
    PixelUnshuffle,
    Unfold,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)

__all__ += [
    "Conv1d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "CosineSimilarity",
    "PairwiseDistance", "AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout",
    "EmbeddingBag", "CTCLoss", "CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss",
    "MarginRankingLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "PoissonNLLLoss",
    "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d", "LocalResponseNorm", "RMSNorm", "CircularPad1d", "CircularPad2d", "CircularPad3d",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
    "AvgPool1d", "AvgPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool2d",
    "LPPool3d", "MaxPool1d", "MaxPool3d", "MaxUnpool1d",
    "MaxUnpool2d", "MaxUnpool3d", "ChannelShuffle", "Fold", "PixelShuffle", "PixelUnshuffle", "Unfold",
    "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"
]

# --- issue 22: the remaining public names of torch.nn ---
from runtime.nn import common_types, grad  # noqa: E402
from runtime.nn.adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402
from runtime.nn.functional_linear_ce import LinearCrossEntropyOptions  # noqa: E402
from runtime.nn.lazy import (  # noqa: E402
    LazyBatchNorm3d,
    LazyConv1d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
)
from runtime.nn.loss import LinearCrossEntropyLoss, NLLLoss2d  # noqa: E402
from runtime.nn.norm_layers import CrossMapLRN2d  # noqa: E402
from runtime.nn.normalization import BatchNorm3d  # noqa: E402

__all__ += ["AdaptiveLogSoftmaxWithLoss", "BatchNorm3d", "CrossMapLRN2d", "LazyBatchNorm3d", "LazyConv1d",
            "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyInstanceNorm1d",
            "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LinearCrossEntropyLoss", "LinearCrossEntropyOptions",
            "NLLLoss2d", "common_types", "grad"]
