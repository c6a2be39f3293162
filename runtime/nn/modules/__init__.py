"""`torch.nn.modules` import paths: `generated.nn.modules.linear.Linear`, `...module.Module`,
`...loss._Loss`, `...batchnorm._BatchNorm` and the rest name the classes of `G.nn`, wherever they live.

Note [torch.nn.modules paths]
PyTorch's classes live in files named by kind (torch/nn/modules/linear.py, conv.py, ...); opgen's are
grouped differently (runtime/nn/layers.py, transformer.py, ...), and more are added by other files over
time. So the submodules here hold no code: `PATHS` names each PyTorch submodule with the public names it
has, and each submodule is a module object (registered in sys.modules when this package is imported)
whose attributes are looked up on first use. A public name resolves to `G.nn`'s (runtime.nn's) class of
that name; a private one (`_Loss`, `_BatchNorm`, `_ConvNd` ...) to the class of that name in whichever
loaded `runtime.nn.*` module defines it. A class added to `G.nn` later is reachable under every path with
no edit here; a new path is one row of `PATHS`. `dir()` lists the names of the row that exist.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

PATHS: dict[str, tuple[str, ...]] = {
    "module": ("Module",),
    "parallel": ("DataParallel",),
    "container": ("Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"),
    "linear": ("Identity", "Linear", "Bilinear", "LazyLinear", "NonDynamicallyQuantizableLinear"),
    "conv": ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
             "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
             "LazyConvTranspose3d", "_ConvNd", "_ConvTransposeNd"),
    "activation": ("Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU",
                   "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU",
                   "LogSigmoid", "Softplus", "Softshrink", "MultiheadAttention", "PReLU", "Softsign", "Tanhshrink",
                   "Softmin", "Softmax", "Softmax2d", "LogSoftmax"),
    "loss": ("L1Loss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "MSELoss",
             "BCELoss", "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss", "SmoothL1Loss",
             "HuberLoss", "SoftMarginLoss", "CrossEntropyLoss", "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss",
             "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
             "CTCLoss", "LinearCrossEntropyLoss", "_Loss", "_WeightedLoss"),
    "batchnorm": ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
                  "LazyBatchNorm3d", "SyncBatchNorm", "_BatchNorm", "_NormBase", "_LazyNormBase"),
    "instancenorm": ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
                     "LazyInstanceNorm2d", "LazyInstanceNorm3d", "_InstanceNorm"),
    "normalization": ("LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm"),
    "dropout": ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
                "_DropoutNd"),
    "pooling": ("AvgPool1d", "AvgPool2d", "AvgPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d",
                "MaxUnpool2d", "MaxUnpool3d", "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool2d",
                "LPPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d",
                "AdaptiveAvgPool2d", "AdaptiveAvgPool3d"),
    "padding": ("CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
                "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
                "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"),
    "rnn": ("RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"),
    "transformer": ("TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
                    "TransformerDecoderLayer", "Transformer"),
    "sparse": ("Embedding", "EmbeddingBag"),
    "flatten": ("Flatten", "Unflatten"),
    "fold": ("Fold", "Unfold"),
    "pixelshuffle": ("PixelShuffle", "PixelUnshuffle"),
    "channelshuffle": ("ChannelShuffle",),
    "upsampling": ("Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"),
    "distance": ("PairwiseDistance", "CosineSimilarity"),
    "adaptive": ("AdaptiveLogSoftmaxWithLoss",),
    "lazy": ("LazyModuleMixin",),
    "utils": ("_single", "_pair", "_triple", "_quadruple", "_ntuple"),
}


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple[Any, ...]]:
    """`_pair(3) == (3, 3)`; an iterable is returned as a tuple unchanged (torch.nn.modules.utils's helpers)."""
    def parse(x: Any) -> tuple[Any, ...]:
        if isinstance(x, Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(itertools.repeat(x, n))
    parse.__name__ = name
    return parse


_HELPERS: dict[str, Any] = {"_single": _ntuple(1, "_single"), "_pair": _ntuple(2, "_pair"),
                            "_triple": _ntuple(3, "_triple"), "_quadruple": _ntuple(4, "_quadruple"),
                            "_ntuple": _ntuple}


def resolve(name: str) -> Any:
    """The class (or helper) that `name` means under torch.nn.modules (Note [torch.nn.modules paths])."""
    nn = sys.modules["runtime.nn"]  # loaded before its subpackage; not imported here (no import cycle)
    if name in _HELPERS:
        return _HELPERS[name]
    if not name.startswith("_") and hasattr(nn, name):
        return getattr(nn, name)
    for mod_name, mod in sorted(sys.modules.items()):
        if mod_name.startswith("runtime.nn.") and not mod_name.startswith(__name__) and mod is not None:
            value = mod.__dict__.get(name)
            if isinstance(value, type):
                return value
    raise AttributeError(name)


def _make_submodule(short: str, names: tuple[str, ...]) -> ModuleType:
    full = f"{__name__}.{short}"
    module = ModuleType(full, f"torch.nn.modules.{short}'s names (Note [torch.nn.modules paths]).")

    def __getattr__(attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        try:
            value = resolve(attr)
        except AttributeError:
            raise AttributeError(f"module 'torch.nn.modules.{short}' has no attribute '{attr}' in opgen") from None
        setattr(module, attr, value)
        return value

    def __dir__() -> list[str]:
        found = []
        for n in names:
            try:
                resolve(n)
            except AttributeError:
                continue
            found.append(n)
        return sorted(found)

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    module.__dir__ = __dir__  # type: ignore[method-assign]
    module.__all__ = [n for n in names if not n.startswith("_")]  # type: ignore[attr-defined]
    module.__package__ = __name__
    return module


for _short, _names in PATHS.items():
    _sub = _make_submodule(_short, _names)
    sys.modules[_sub.__name__] = _sub
    globals()[_short] = _sub


def __getattr__(name: str) -> Any:
    """`torch.nn.modules.Linear` and the like: every class of G.nn."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return resolve(name)
    except AttributeError:
        raise AttributeError(f"module 'torch.nn.modules' has no attribute '{name}' in opgen") from None
