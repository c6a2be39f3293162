"""`G.nn.utils` (torch.nn.utils): gradient clipping (clip_grad), parameters as one vector
(convert_parameters), packed sequences (rnn), parametrizations (parametrize, parametrizations, and the older
hook-based weight_norm / spectral_norm), BatchNorm fusion (fusion), and `stateless.functional_call`."""

from typing import Any

from runtime.nn.utils import fusion, parametrizations, parametrize, rnn, stateless
from runtime.nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from runtime.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from runtime.nn.utils.fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from runtime.nn.utils.memory_format import (
    convert_conv2d_weight_memory_format,
    convert_conv3d_weight_memory_format,
)
from runtime.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from runtime.nn.utils.weight_norm import remove_weight_norm, weight_norm


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Any:
    """`module_cls(*args, **kwargs)`; PyTorch skips the initialisation through the meta device, which opgen
    lacks, so the parameters hold the class's initial values (a caller of skip_init overwrites them anyway)."""
    if "device" not in module_cls.__init__.__code__.co_varnames:
        raise RuntimeError(f"Module must support a 'device' arg to skip initialization: {module_cls.__name__}")
    return module_cls(*args, **kwargs)


__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format", "fuse_conv_bn_eval",
           "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "fusion", "get_total_norm",
           "parameters_to_vector", "parametrizations", "parametrize", "remove_spectral_norm", "remove_weight_norm",
           "rnn", "skip_init", "spectral_norm", "stateless", "vector_to_parameters", "weight_norm"]
