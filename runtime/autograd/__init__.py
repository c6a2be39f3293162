"""Autograd: the backward graph, the engine, grad mode and gradcheck (the G.autograd namespace).

Modules: custom_function.py (autograd.Function), anomaly_mode.py, graph.py (saved-tensor hooks),
node.py (Node, Edge, recording history, leaf-gradient accumulation), saved.py (SavedVariable),
engine.py (run_backward), function.py (backward, grad, Tensor.backward), hooks.py (tensor hooks,
retain_grad), grad_mode.py, gradcheck.py, formulas.py (helpers callable from derivatives.yaml), kernels.py
(the autograd kernel of ops with no derivative), copy_slices.py (in-place ops on views, rebase_history).
"""

from runtime.autograd import functional, graph
from runtime.autograd.anomaly_mode import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from runtime.autograd.custom_function import (
    Function,
    FunctionCtx,
    InplaceFunction,
    NestedIOFunction,
    once_differentiable,
)
from runtime.autograd.function import backward, grad
from runtime.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from runtime.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from runtime.autograd.node import AccumulateGrad, Edge, Node, NotImplementedNode, RemovableHandle
from runtime.autograd.saved import SavedVariable
from runtime.autograd.variable import Variable

__all__ = ["Function", "FunctionCtx", "InplaceFunction", "NestedIOFunction", "detect_anomaly", "graph",
           "is_anomaly_check_nan_enabled",
           "is_anomaly_enabled", "once_differentiable", "set_detect_anomaly", "set_multithreading_enabled"]
__all__ += ["AccumulateGrad", "Edge", "GradcheckError", "Node", "NotImplementedNode", "RemovableHandle",
           "SavedVariable", "Variable", "backward", "enable_grad", "functional", "gradcheck", "gradgradcheck", "grad",
           "inference_mode", "is_grad_enabled", "no_grad", "set_grad_enabled"]
