"""Lazy modules: parameters whose shape is inferred from the first input (torch.nn's LazyLinear and the
machinery under it).

An `UninitializedParameter` (or `UninitializedBuffer`, runtime/nn/parameter.py) holds no data until
`materialize(shape)`, which fills it in place and turns it into an ordinary Parameter (Tensor): the object
stays the same, so an optimizer or a hook holding it keeps working. A module using `LazyModuleMixin`
registers a forward pre-hook that, on the first call, runs `initialize_parameters(*inputs)` (which
materialises and re-initialises) and then becomes `cls_to_become` (LazyLinear becomes Linear). Loading a
state_dict into a lazy module materialises each uninitialised tensor with the shape of its entry, as
PyTorch does.
"""

from __future__ import annotations

from typing import Any

from runtime import opcall
from runtime.autograd.grad_mode import no_grad
from runtime.nn.conv import Conv1d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from runtime.nn.layers import Conv2d, Linear
from runtime.nn.norm_layers import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from runtime.nn.normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d
from runtime.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from runtime.tensor import Tensor


class LazyModuleMixin:
    """Infers parameter shapes on the first forward (see the module docstring)."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._initialize_hook = self.register_forward_pre_hook(  # type: ignore[attr-defined]
            LazyModuleMixin._infer_parameters)
        self._load_hook = self._register_load_state_dict_pre_hook(  # type: ignore[attr-defined]
            self._lazy_load_hook)

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer is still uninitialised."""
        tables = (self._parameters.values(), self._buffers.values())  # type: ignore[attr-defined]
        return any(is_lazy(t) for table in tables for t in table)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialise the parameters from the first input (each lazy module defines it; this base raises)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    @staticmethod
    def _infer_parameters(module: Any, args: tuple[Any, ...]) -> None:
        module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook
        del module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _lazy_load_hook(self, state_dict: dict[str, Any], prefix: str, local_metadata: Any, strict: bool,
                        missing_keys: list[str], unexpected_keys: list[str], error_msgs: list[str]) -> None:
        for table in (self._parameters, self._buffers):  # type: ignore[attr-defined]
            for name, t in table.items():
                key = prefix + name
                if key in state_dict and t is not None and is_lazy(t):
                    value = state_dict[key]
                    if not is_lazy(value):
                        with no_grad():
                            t.materialize(tuple(value.shape))


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose in_features is the last dim of the first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, False)
        self.out_features = out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:
        """Take in_features from the input's last dim, materialise weight and bias and initialise them."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class LazyConv2d(LazyModuleMixin, Conv2d):
    """A Conv2d whose in_channels is dim 1 of the first input."""

    cls_to_become = Conv2d

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise NotImplementedError(f"LazyConv2d(padding_mode={padding_mode!r}) is not supported by opgen")
        super().__init__(0, out_channels, kernel_size, stride, padding, dilation, groups, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """Conv2d's initialisation, once in_channels is known (no-op before)."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:
        """Take in_channels from the input (dim 1 of a 4-D, dim 0 of a 3-D one), materialise weight and bias and
        initialise them."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_channels = input.shape[1] if input.dim() == 4 else input.shape[0]
                if self.in_channels % self.groups != 0:
                    raise ValueError("in_channels must be divisible by groups")
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


class _LazyNormBase(LazyModuleMixin):
    """A BatchNorm whose num_features is dim 1 of the first input (weight, bias and running statistics
    uninitialised until then)."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, eps, momentum, False, False)  # type: ignore[call-arg]
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            G = opcall.api
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = G.tensor(0, dtype=G.int64, device=device)

    def reset_parameters(self) -> None:
        """BatchNorm's reset, once num_features is known (no-op before)."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:
        """Take num_features from the input's dim 1, materialise weight, bias and running statistics and reset them."""
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with no_grad():
                for t in (self._parameters.get("weight"), self._parameters.get("bias"),
                          self._buffers.get("running_mean"), self._buffers.get("running_var")):
                    if t is not None and is_lazy(t):
                        t.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """A BatchNorm1d whose num_features is dim 1 of the first input; it becomes a BatchNorm1d then."""
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """A BatchNorm2d whose num_features is dim 1 of the first input; it becomes a BatchNorm2d then."""
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """A BatchNorm3d whose num_features is dim 1 of the first input; it becomes a BatchNorm3d then."""
    cls_to_become = BatchNorm3d


class _LazyInstanceNorm(_LazyNormBase):
    """An InstanceNorm whose num_features is dim 1 of the first input; PyTorch's lazy instance norms default to
    affine parameters and running statistics (unlike InstanceNorm's), and so does this one."""


class LazyInstanceNorm1d(_LazyInstanceNorm, InstanceNorm1d):
    """An InstanceNorm1d whose num_features is dim 1 of the first input; it becomes an InstanceNorm1d then."""
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNorm, InstanceNorm2d):
    """An InstanceNorm2d whose num_features is dim 1 of the first input; it becomes an InstanceNorm2d then."""
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyInstanceNorm, InstanceNorm3d):
    """An InstanceNorm3d whose num_features is dim 1 of the first input; it becomes an InstanceNorm3d then."""
    cls_to_become = InstanceNorm3d


class _LazyConvXd(LazyModuleMixin):
    """A convolution (conv.py) whose in_channels is the channel dim of the first input: dim 1 of a batched
    input (nd + 2 dims), dim 0 of an unbatched one (nd + 1)."""

    nd: int
    transposed: bool

    def _lazy_init(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        self.out_channels = out_channels
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """The convolution's initialisation, once in_channels is known (no-op before)."""
        if not self.has_uninitialized_params() and self.in_channels != 0:  # type: ignore[attr-defined]
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:
        """Take in_channels from the input, materialise weight and bias and initialise them."""
        if not self.has_uninitialized_params():
            return
        n = self.nd
        if input.dim() not in (n + 1, n + 2):
            raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                               f"{type(self).__name__}, but got input of size: {list(input.shape)}")
        in_channels = input.shape[1] if input.dim() == n + 2 else input.shape[0]
        groups, out_channels = self.groups, self.out_channels  # type: ignore[attr-defined]
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        self.in_channels = in_channels
        with no_grad():
            k = self.kernel_size  # type: ignore[attr-defined]
            shape = (in_channels, out_channels // groups, *k) if self.transposed else \
                (out_channels, in_channels // groups, *k)
            self.weight.materialize(shape)
            if self.bias is not None:  # type: ignore[has-type]
                self.bias.materialize((out_channels,))  # type: ignore[has-type]
            self.reset_parameters()


class _LazyConv(_LazyConvXd):
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,  # type: ignore[call-arg]
                         padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvXd):
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups,  # type: ignore[call-arg]
                         False, dilation, padding_mode)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A Conv1d whose in_channels is inferred from the first input; it becomes a Conv1d then."""
    cls_to_become = Conv1d


class LazyConv3d(_LazyConv, Conv3d):
    """A Conv3d whose in_channels is inferred from the first input; it becomes a Conv3d then."""
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ConvTranspose1d whose in_channels is inferred from the first input; it becomes a ConvTranspose1d then."""
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ConvTranspose2d whose in_channels is inferred from the first input; it becomes a ConvTranspose2d then."""
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ConvTranspose3d whose in_channels is inferred from the first input; it becomes a ConvTranspose3d then."""
    cls_to_become = ConvTranspose3d
