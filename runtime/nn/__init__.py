"""`G.nn`: Module, Parameter, the layers, `functional` (F) and `init` — a thin layer over the ops.

Modules: parameter.py (Parameter), module.py (Module, state_dict), layers.py (Linear, Conv2d, ...),
functional.py (the ops under torch.nn.functional's names), init.py (initialisers),
serialization.py (G.save / G.load as .npz).
"""

from runtime.nn import functional, init, utils
from runtime.nn.layers import (
    GELU,
    AvgPool2d,
    Conv2d,
    CrossEntropyLoss,
    Dropout,
    Flatten,
    Identity,
    Linear,
    LogSoftmax,
    MaxPool2d,
    ModuleList,
    MSELoss,
    ReLU,
    Sequential,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from runtime.nn.module import IncompatibleKeys, Module
from runtime.nn.parameter import Parameter

__all__ = [
    "AvgPool2d", "Conv2d", "CrossEntropyLoss", "Dropout", "Flatten", "GELU", "Identity", "IncompatibleKeys",
    "Linear", "LogSoftmax", "MSELoss", "MaxPool2d", "Module", "ModuleList", "Parameter", "ReLU", "SiLU",
    "Sequential", "Sigmoid", "Softmax", "Tanh", "functional", "init", "utils",
]
