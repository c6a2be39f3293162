"""The closed sets of opgen, defined once: dispatch keys and their order, alias keys and what they serve,
variants, dtype groups, promotion kinds, and the rule that fills a cell of an operator's dispatch table.

Note [One vocabulary for codegen and runtime]
The generator validates YAML against these sets, `opgen show` prints dispatch tables with `resolve`, and
the runtime's dispatcher builds its tables with the same `resolve`, so the three cannot drift apart. This
module is a leaf: it imports nothing from opgen, which is what lets `codegen/` import it while it imports
nothing else of `runtime/` (DESIGN.md, "Layers").
"""

from __future__ import annotations

from collections.abc import Collection
from enum import Enum, IntEnum, StrEnum


class DispatchKey(IntEnum):
    """Runtime dispatch keys; the value is the bit position, higher means higher priority."""

    Meta = 0
    CPU = 1
    CUDA = 2
    BackendSelect = 3
    Autograd = 4
    Tracer = 5
    # Above Autograd and Tracer, as PyTorch's AutocastCPU/AutocastCUDA: in the thread's include set while an
    # autocast region casts (Note [Autocast in opgen], runtime/amp/autocast_mode.py); autograd records its casts.
    Autocast = 6


# Runtime keys from the highest priority down.
KEYS_BY_PRIORITY: tuple[DispatchKey, ...] = tuple(reversed(DispatchKey))
# Keys that name a device's kernels (a tensor's key set holds exactly one of CPU/CUDA, or Meta).
BACKEND_KEYS: tuple[DispatchKey, ...] = (DispatchKey.CUDA, DispatchKey.CPU, DispatchKey.Meta)
# Keys whose default behaviour, with no kernel and no fallback, is to pass the call to the next key down.
FALLTHROUGH_BY_DEFAULT = frozenset({DispatchKey.BackendSelect, DispatchKey.Autograd, DispatchKey.Tracer,
                                    DispatchKey.Autocast})

# Alias keys: one kernel registered under an alias serves several runtime keys. As in PyTorch, neither
# serves keys like Tracer, which only their own kernels or fallbacks handle.
ALIAS_SERVES: dict[str, frozenset[DispatchKey]] = {
    "CompositeImplicitAutograd": frozenset({DispatchKey.CPU, DispatchKey.CUDA, DispatchKey.Meta,
                                            DispatchKey.Autograd}),
    "CompositeExplicitAutograd": frozenset({DispatchKey.CPU, DispatchKey.CUDA, DispatchKey.Meta}),
}
# An explicit kernel is preferred to an implicit one where both serve a key (PyTorch's order).
ALIAS_ORDER: tuple[str, ...] = ("CompositeExplicitAutograd", "CompositeImplicitAutograd")
ALIAS_KEYS: tuple[str, ...] = tuple(ALIAS_SERVES)

# The keys a `dispatch:` entry of native_functions.yaml may name, in priority order.
YAML_DISPATCH_KEYS: tuple[str, ...] = ("Autograd", "BackendSelect", *(k.name for k in BACKEND_KEYS), *ALIAS_KEYS)
# Keys whose kernel the generator writes for a `pointwise:` op (Meta: shapes and dtypes only, Note [Meta
# tensors] in runtime/meta_array.py).
POINTWISE_KEYS: tuple[str, ...] = ("CPU", "CUDA", "Meta")



class Variant(Enum):
    """`variants:` of an entry: a function of the package, a Tensor method, or both."""

    function = "function"
    method = "method"


VARIANTS: tuple[str, ...] = tuple(v.value for v in Variant)


class PromoteKind(StrEnum):
    """`promote:` of a pointwise op: how its output dtype is found from its inputs' common dtype
    (runtime.dtypes.result_type). A member equals its YAML spelling, which generated code passes on."""

    common = "common"
    float = "float"
    bool = "bool"
    int = "int"


PROMOTE_KINDS: dict[str, str] = {
    PromoteKind.common: "the common dtype of the inputs (PyTorch's promotion)",
    PromoteKind.float: "the common dtype, integer and bool inputs promoted to the default float dtype",
    PromoteKind.bool: "bool output; computed in the common dtype",
    PromoteKind.int: "the common dtype, bool inputs promoted to int64 (PyTorch's square of bool)",
}

# Note [Floating dtypes and opmath]
# Which dtypes are floating, and the dtype arithmetic happens in (PyTorch's opmath_type: half precision
# computes in float32), are one rule for the generator's CUDA instances (codegen/gen_cuda.py), the CUDA
# backend's scalar packing (runtime/cuda/pointwise.py) and the NumPy kernels (runtime/kernels/cpu_pointwise.py).
# Two copies of it drifted once: a `promote: float` kernel's scalar was packed in the input's type, so
# `uint8 x / 2` gave inf. By dtype name, so that codegen can use it.
_INTEGRAL = ("uint8", "int8", "int16", "int32", "int64")
_FLOATING = ("float16", "bfloat16", "float32", "float64")
FLOATING_DTYPES: tuple[str, ...] = _FLOATING
HALF_DTYPES: tuple[str, ...] = ("float16", "bfloat16")  # computed in float32


def is_floating(dtype: str) -> bool:
    return dtype in _FLOATING


def opmath_dtype(dtype: str) -> str:
    """The dtype arithmetic on `dtype` values happens in: float32 for half precision, else `dtype`."""
    return "float32" if dtype in HALF_DTYPES else dtype


def promoted_dtype(kind: str, common: str, default_float: str) -> str:
    """The output dtype of a pointwise op of promote `kind` whose inputs' common dtype is `common`."""
    if kind == PromoteKind.bool:
        return "bool"
    if kind == PromoteKind.float and not is_floating(common):
        return default_float
    if kind == PromoteKind.int and common == "bool":
        return "int64"
    return common


def compute_dtype(kind: str, common: str, default_float: str) -> str:
    """The dtype a pointwise op of promote `kind` computes in, for inputs of common dtype `common`: a
    `promote: float` op computes integer and bool inputs in the default float dtype."""
    if kind == PromoteKind.float and not is_floating(common):
        return opmath_dtype(default_float)
    if kind == PromoteKind.int and common == "bool":
        return "int64"
    return opmath_dtype(common)


# `dtypes:` groups of a pointwise op ("all" is the default), by dtype name.
DTYPE_GROUPS: dict[str, tuple[str, ...]] = {
    "floating": _FLOATING,
    "integral": _INTEGRAL,
    "numeric": _INTEGRAL + _FLOATING,
    "all": ("bool",) + _INTEGRAL + _FLOATING,
    "integral_and_bool": ("bool",) + _INTEGRAL,
}


def resolve(key: DispatchKey, registered: Collection[str], has_fallback: bool = False) -> tuple[str | None, str]:
    """Which registration serves runtime `key` of an operator whose kernels are registered under the key
    names `registered`: `(name, how)` with `how` one of 'kernel', an alias key, 'fallback' (name None),
    'fallthrough' (to the next key down) or 'missing' (a call raises)."""
    if key.name in registered:
        return key.name, "kernel"
    for alias in ALIAS_ORDER:
        if alias in registered and key in ALIAS_SERVES[alias]:
            return alias, alias
    if has_fallback:
        return None, "fallback"
    return None, "fallthrough" if key in FALLTHROUGH_BY_DEFAULT else "missing"


# Note [Names an op may not take]
# Generated ops are installed on the runtime's Tensor class (method variants) and re-exported by the package
# `generated` beside the runtime's own API (function variants), so an op named like one of the runtime's
# own names would silently replace it (`backward`, `numpy`, `to`; `manual_seed`, `no_grad`). The generator
# refuses such names with file:line (codegen/names.py). These are the runtime's names, listed once here
# because codegen may import nothing else of runtime/; tests/codegen/test_reserved_names.py checks that they are
# exactly what runtime.tensor.Tensor and runtime.api define, so adding a method or an API name to the
# runtime fails that test until it is added here.
TENSOR_NAMES: frozenset[str] = frozenset({
    "H", "T", "__array__", "__bool__", "__cuda_array_interface__", "__dlpack__", "__dlpack_device__", "__float__",
    "__format__", "__getitem__", "__hash__", "__index__", "__init__", "__int__", "__iter__", "__len__", "__repr__",
    "__setitem__", "__str__", "_base", "_bump_version", "_data", "_device", "_dtype", "_grad", "_grad_fn", "_keys",
    "_leaf_edge", "_output_nr", "_requires_grad", "_retains_grad", "_storage", "_storage_version", "_version", "_view",
    "_wrap", "_wrapped", "addbmm_", "addmm_", "addmv_", "addr_", "apply_", "as_subclass", "backward", "baddbmm_",
    "bfloat16", "bool", "byte", "ccol_indices", "cdouble", "cfloat", "chalf", "char", "coalesce", "col_indices",
    "conj_physical_", "const_data_ptr", "cpu", "crow_indices", "cuda", "cumprod_", "cumsum_", "data", "data_ptr",
    "dense_dim", "detach", "detach_", "device", "digamma_", "dim", "dim_order", "double", "dtype", "eig",
    "element_size", "eq_", "erfinv_", "float", "float_power_", "ge_", "get_device", "grad", "grad_dtype", "grad_fn",
    "gt_", "half", "i0_", "igamma_", "igammac_", "imag", "index_copy_", "index_reduce_", "indices", "int", "int_repr",
    "ipu", "is_coalesced", "is_complex", "is_conj", "is_contiguous", "is_cpu", "is_cuda", "is_distributed",
    "is_floating_point", "is_inference", "is_ipu", "is_leaf", "is_maia", "is_meta", "is_mkldnn", "is_mps", "is_mtia",
    "is_neg", "is_nested", "is_nonzero", "is_pinned", "is_quantized", "is_same_size", "is_set_to", "is_shared",
    "is_signed", "is_sparse", "is_sparse_csr", "is_vulkan", "is_xla", "is_xpu", "item", "itemsize", "layout", "ldexp_",
    "le_", "logical_and_", "logical_not_", "logical_or_", "logical_xor_", "logit_", "long", "lstsq", "lt_", "lu", "mH",
    "mT", "map2_", "map_", "masked_scatter_", "module_load", "mtia", "mvlgamma_", "nan_to_num_", "nbytes", "ndim",
    "ndimension", "ne_", "nelement", "new", "new_tensor", "numel", "numpy", "output_nr", "pin_memory", "polygamma",
    "polygamma_", "put_", "q_per_channel_axis", "q_per_channel_scales", "q_per_channel_zero_points", "q_scale",
    "q_zero_point", "qscheme", "real", "register_hook", "register_post_accumulate_grad_hook", "reinforce", "renorm_",
    "requires_grad", "requires_grad_", "reshape_as", "resize", "resize_as", "retain_grad", "retains_grad",
    "row_indices", "set_", "sgn_", "shape", "short", "size", "solve", "sparse_dim", "storage", "storage_offset",
    "stride", "symeig", "to", "to_dense", "tolist", "tril_", "triu_", "true_divide_", "type", "type_as",
    "untyped_storage", "values", "view_as", "volatile", "where", "xpu",
})  # fmt: skip
# runtime.api's public names (`__all__`, the lazy names, the public submodules) and the names that the
# package's own __init__.py binds (templates/init.py.j2).
API_NAMES: frozenset[str] = frozenset({
    "BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DType", "Device", "DoubleTensor", "FloatTensor",
    "Generator", "HalfTensor", "IntTensor", "LongTensor", "SUBMODULES", "ShortTensor", "Size", "Storage", "Tensor",
    "__version__", "accelerator", "amp", "arange", "are_deterministic_algorithms_enabled", "as_tensor", "as_torch",
    "autocast", "autocast_decrement_nesting", "autocast_increment_nesting", "autograd", "backends", "bartlett_window",
    "bfloat16", "blackman_window", "block_diag", "bool", "broadcast_shapes", "broadcast_tensors", "can_cast",
    "cartesian_prod", "clear_autocast_cache", "compile", "cuda", "device", "distributed", "distributions", "double",
    "dtype", "einsum", "empty", "empty_like", "empty_permuted", "enable_grad", "eye", "finfo", "float", "float16",
    "float32", "float64", "from_dlpack", "from_numpy", "full", "full_like", "get_autocast_cpu_dtype",
    "get_autocast_dtype", "get_autocast_gpu_dtype", "get_default_device", "get_default_dtype",
    "get_float32_matmul_precision", "get_num_interop_threads", "get_num_threads", "get_rng_state", "gradient", "half",
    "hamming_window", "hann_window", "histogramdd", "iinfo", "inference_mode", "initial_seed", "int", "int16", "int32",
    "int64", "int8", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled", "is_autocast_enabled", "is_deterministic_algorithms_warn_only_enabled",
    "is_floating_point", "is_grad_enabled", "is_nonzero", "is_tensor", "kaiser_window", "layout", "library", "linalg",
    "linspace", "logspace", "long", "lu", "manual_seed", "masked", "meshgrid", "no_grad", "numel", "ones", "ones_like",
    "ops", "pca_lowrank", "promote_types", "rand", "rand_like", "randint", "randint_like", "randn", "randn_like",
    "random", "randperm", "result_type", "scalar_tensor", "seed", "serialization", "set_autocast_cache_enabled",
    "set_autocast_cpu_dtype", "set_autocast_cpu_enabled", "set_autocast_dtype", "set_autocast_enabled",
    "set_autocast_gpu_dtype", "set_default_device", "set_default_dtype", "set_float32_matmul_precision",
    "set_grad_enabled", "set_num_interop_threads", "set_num_threads", "set_printoptions", "set_rng_state", "short",
    "signal", "special", "strided", "svd_lowrank", "tensor", "tensordot", "tril_indices", "triu_indices", "uint8",
    "unravel_index", "use_deterministic_algorithms", "zeros", "zeros_like",
    # memory formats (runtime/layout.py)
    "channels_last", "channels_last_3d", "contiguous_format", "memory_format", "preserve_format",
    # lazy names and public submodules (runtime/api.py LAZY, SUBMODULES)
    "load", "nn", "optim", "save", "testing", "utils", "cpu",
    # bound by generated/__init__.py itself
    "_api", "_methods", "_ops", "_opcall", "_registrations", "_sys",
})  # fmt: skip
