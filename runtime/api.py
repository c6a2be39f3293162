"""The hand-written half of opgen's public API; `generated/__init__.py` re-exports all of it.

Names follow PyTorch's (`G.float32`, `G.zeros`, `G.no_grad` ...). The ops themselves are generated.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from runtime import autograd, cuda, linalg
from runtime.autograd.grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from runtime.device import Device, device
from runtime.dtypes import (
    DType,
    bfloat16,
    can_cast,
    double,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    result_type,
    set_default_dtype,
    short,
    uint8,
)
from runtime.dtypes import bool_ as bool
from runtime.dtypes import float as float
from runtime.dtypes import int as int
from runtime.factories import (
    empty,
    empty_like,
    empty_permuted,
    from_numpy,
    full,
    full_like,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from runtime.tensor import Tensor

dtype = DType

# -- tensors, factories, random, interop, indexing, dispatcher registration (runtime/*.py) ---------------
# indexing, interop, autograd.function and autograd.hooks install Tensor methods when imported
# (Note [Tensor methods from upper layers], tensor.py).
from runtime import indexing, inplace_variants, library, tensor_attributes, tensor_storage  # noqa: E402, F401
from runtime.layout import (  # noqa: E402
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    memory_format,
    preserve_format,
    strided,
)

inplace_variants.install()

# -- devices, threads and seeding (runtime/device.py, threads.py, random.py) ------------------------------
from runtime import random as _random  # noqa: E402
from runtime import torch_functions  # noqa: E402
from runtime.amp import (  # noqa: E402
    autocast,
    clear_autocast_cache,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from runtime.amp.autocast_mode import (  # noqa: E402
    autocast_decrement_nesting,
    autocast_increment_nesting,
    get_autocast_cpu_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cpu_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_gpu_dtype,
)
from runtime.autograd import function, hooks  # noqa: E402, F401
from runtime.autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: E402
from runtime.device import get_default_device, set_default_device  # noqa: E402

# -- PyTorch compatibility: numeric limits, printing, Size, the wrappers of runtime/functional.py ---------
from runtime.dtypes import finfo, iinfo  # noqa: E402
from runtime.factories import (  # noqa: E402
    eye,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
)
from runtime.formatting import set_printoptions  # noqa: E402
from runtime.functional import (  # noqa: E402
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    einsum,
    meshgrid,
    scalar_tensor,
    tensordot,
    tril_indices,
    triu_indices,
)
from runtime.interop import as_tensor, from_dlpack  # noqa: E402
from runtime.ranges import arange, linspace  # noqa: E402
from runtime.torch_functions import (  # noqa: E402
    gradient,
    histogramdd,
    logspace,
    lu,
    pca_lowrank,
    svd_lowrank,
    unravel_index,
)

torch_functions.install()
from runtime.numerics_flags import (  # noqa: E402
    are_deterministic_algorithms_enabled,
    get_float32_matmul_precision,
    is_deterministic_algorithms_warn_only_enabled,
    set_float32_matmul_precision,
    use_deterministic_algorithms,
)
from runtime.random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: E402  # noqa: E402
from runtime.threads import (  # noqa: E402
    get_num_interop_threads,
    get_num_threads,
    set_num_interop_threads,
    set_num_threads,
)

# G.cuda's seeding functions live with the generators they seed (runtime/random.py, a layer runtime.cuda
# cannot import); they are installed on the G.cuda package here, as the upper layers install Tensor methods.
cuda.manual_seed = _random.cuda_manual_seed  # type: ignore[attr-defined]
cuda.manual_seed_all = _random.cuda_manual_seed_all  # type: ignore[attr-defined]
cuda.seed = _random.cuda_seed  # type: ignore[attr-defined]
cuda.seed_all = _random.cuda_seed_all  # type: ignore[attr-defined]
cuda.initial_seed = _random.cuda_initial_seed  # type: ignore[attr-defined]

# PyTorch's legacy tensor types (Note [Legacy tensor types] in runtime/legacy_types.py)
from runtime import legacy_types as _legacy  # noqa: E402

BFloat16Tensor = _legacy.CPU_TYPES["BFloat16Tensor"]
BoolTensor = _legacy.CPU_TYPES["BoolTensor"]
ByteTensor = _legacy.CPU_TYPES["ByteTensor"]
CharTensor = _legacy.CPU_TYPES["CharTensor"]
DoubleTensor = _legacy.CPU_TYPES["DoubleTensor"]
FloatTensor = _legacy.CPU_TYPES["FloatTensor"]
HalfTensor = _legacy.CPU_TYPES["HalfTensor"]
IntTensor = _legacy.CPU_TYPES["IntTensor"]
LongTensor = _legacy.CPU_TYPES["LongTensor"]
ShortTensor = _legacy.CPU_TYPES["ShortTensor"]
for _name, _type in _legacy.CUDA_TYPES.items():
    setattr(cuda, _name, _type)
from runtime.kernels import compiled_pointwise as _compiled_pointwise  # noqa: E402


def _build_eager_cpp(source: str) -> Any:
    """G.compile's C++ toolchain for the eager kernels of compound pointwise ops (Note [Compiled eager
    pointwise kernels]: runtime.kernels may not import runtime.compile, so this layer hands it over); None
    where no C++ compiler is found. Imported when the first build starts, on its background thread."""
    from runtime.compile import cpp_build

    return None if cpp_build.find_compiler() is None else cpp_build.build(source)


_compiled_pointwise.install_builder(_build_eager_cpp)
from runtime.storage import Storage  # noqa: E402
from runtime.tensor import Size, is_floating_point, is_nonzero, is_tensor, numel  # noqa: E402

__all__ = [
    "DType", "Device", "Tensor", "autograd", "bfloat16", "bool", "can_cast", "cuda", "device", "double", "dtype",
    "empty", "empty_like", "enable_grad", "float", "float16", "float32", "float64", "from_numpy", "full",
    "full_like", "get_default_dtype", "half", "inference_mode", "int", "int8", "int16", "int32", "int64",
    "is_grad_enabled", "long", "no_grad", "ones", "ones_like", "promote_types", "result_type", "scalar_tensor",
    "set_default_dtype", "set_grad_enabled", "short", "tensor", "uint8", "zeros", "zeros_like",
]
__all__ += [
    "Generator", "SUBMODULES", "Storage", "arange", "as_tensor", "eye", "from_dlpack", "initial_seed", "library",
    "linspace", "manual_seed", "rand", "rand_like", "randint", "randint_like", "randn", "randn_like", "seed",
]
__all__ += [
    "Size", "broadcast_shapes", "broadcast_tensors", "einsum", "finfo", "iinfo", "linalg", "meshgrid", "randperm",
    "set_printoptions",
]
__all__ += ["is_floating_point", "is_nonzero", "is_tensor", "numel"]
__all__ += ["clear_autocast_cache", "is_autocast_cache_enabled", "set_autocast_cache_enabled", "set_autocast_dtype"]
__all__ += ["autocast_decrement_nesting", "autocast_increment_nesting", "get_autocast_cpu_dtype",
            "get_autocast_gpu_dtype", "is_autocast_cpu_enabled", "set_autocast_cpu_dtype", "set_autocast_cpu_enabled",
            "set_autocast_gpu_dtype"]
__all__ += ["autocast", "get_autocast_dtype", "get_default_device", "get_num_interop_threads", "get_num_threads",
            "get_rng_state", "is_autocast_enabled", "set_autocast_enabled", "set_default_device",
            "set_num_interop_threads", "set_num_threads", "set_rng_state"]
__all__ += ["are_deterministic_algorithms_enabled", "get_float32_matmul_precision",
            "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_deterministic_algorithms_warn_only_enabled",
            "set_float32_matmul_precision", "use_deterministic_algorithms"]
__all__ += ["block_diag", "cartesian_prod", "tensordot", "tril_indices", "triu_indices"]
__all__ += sorted(_legacy.CPU_TYPES)
__all__ += ["layout", "strided"]
__all__ += ["channels_last", "channels_last_3d", "contiguous_format", "memory_format", "preserve_format"]
__all__ += ["gradient", "histogramdd", "logspace", "lu", "pca_lowrank", "svd_lowrank", "unravel_index"]
__all__ += ["empty_permuted"]

# Note [Submodules of the public API]
# `import generated.nn as nn`, `from generated.nn import functional as F` and
# `import generated.optim.lr_scheduler` work because generated/__init__.py installs `SubmoduleFinder`,
# which answers the import system for "generated.<name>" of every row of this table with the runtime
# module object itself (not a copy), so the import system finds the submodule without a file under
# generated/; it registers it in sys.modules and sets it as an attribute of its parent as for any
# submodule. A new public submodule is one row here.
SUBMODULES: dict[str, str] = {
    "nn": "runtime.nn",
    "nn.functional": "runtime.nn.functional",
    "nn.init": "runtime.nn.init",
    "nn.utils": "runtime.nn.utils",
    "nn.utils.rnn": "runtime.nn.utils.rnn",
    "nn.utils.parametrize": "runtime.nn.utils.parametrize",
    "nn.utils.parametrizations": "runtime.nn.utils.parametrizations",
    "nn.utils.fusion": "runtime.nn.utils.fusion",
    "nn.utils.stateless": "runtime.nn.utils.stateless",
    "nn.utils.clip_grad": "runtime.nn.utils.clip_grad",
    "nn.utils.convert_parameters": "runtime.nn.utils.convert_parameters",
    "nn.parameter": "runtime.nn.parameter",
    "nn.modules": "runtime.nn.modules",
    "nn.modules.module": "runtime.nn.modules.module",
    "nn.modules.container": "runtime.nn.modules.container",
    "nn.modules.linear": "runtime.nn.modules.linear",
    "nn.modules.conv": "runtime.nn.modules.conv",
    "nn.modules.activation": "runtime.nn.modules.activation",
    "nn.modules.loss": "runtime.nn.modules.loss",
    "nn.modules.batchnorm": "runtime.nn.modules.batchnorm",
    "nn.modules.instancenorm": "runtime.nn.modules.instancenorm",
    "nn.modules.normalization": "runtime.nn.modules.normalization",
    "nn.modules.dropout": "runtime.nn.modules.dropout",
    "nn.modules.pooling": "runtime.nn.modules.pooling",
    "nn.modules.padding": "runtime.nn.modules.padding",
    "nn.modules.rnn": "runtime.nn.modules.rnn",
    "nn.modules.transformer": "runtime.nn.modules.transformer",
    "nn.modules.sparse": "runtime.nn.modules.sparse",
    "nn.modules.flatten": "runtime.nn.modules.flatten",
    "nn.modules.fold": "runtime.nn.modules.fold",
    "nn.modules.pixelshuffle": "runtime.nn.modules.pixelshuffle",
    "nn.modules.channelshuffle": "runtime.nn.modules.channelshuffle",
    "nn.modules.upsampling": "runtime.nn.modules.upsampling",
    "nn.modules.distance": "runtime.nn.modules.distance",
    "nn.modules.adaptive": "runtime.nn.modules.adaptive",
    "nn.modules.lazy": "runtime.nn.modules.lazy",
    "nn.modules.utils": "runtime.nn.modules.utils",
    "optim.optimizer": "runtime.optim.optimizer",
    "optim": "runtime.optim",
    "optim.lr_scheduler": "runtime.optim.lr_scheduler",
    "optim.swa_utils": "runtime.optim.swa_utils",
    "autograd": "runtime.autograd",
    "autograd.functional": "runtime.autograd.functional",
    "cuda": "runtime.cuda",
    "utils": "runtime.utils",
    "utils.data": "runtime.utils.data",
    "utils.checkpoint": "runtime.utils.checkpoint",
    "linalg": "runtime.linalg",
    "special": "runtime.special",
    "masked": "runtime.masked",
    "ops": "runtime.op_namespaces",
    "signal": "runtime.signal",
    "signal.windows": "runtime.signal.windows",
    "testing": "runtime.testing",
    "distributed": "runtime.distributed",
    "distributed.run": "runtime.distributed.run",
    "nn.parallel": "runtime.nn.parallel",
    # torch.distributions, torch.utils.data's modules, torch.amp, torch.backends, torch.accelerator,
    # torch.autograd.graph, torch.random (issue 22)
    "distributions": "runtime.distributions",
    "distributions.constraints": "runtime.distributions.constraints",
    "distributions.transforms": "runtime.distributions.transforms",
    "distributions.kl": "runtime.distributions.kl",
    "distributions.constraint_registry": "runtime.distributions.constraint_registry",
    "distributions.distribution": "runtime.distributions.distribution",
    "distributions.normal": "runtime.distributions.normal",
    "distributions.categorical": "runtime.distributions.categorical",
    "distributions.utils": "runtime.distributions.utils",
    "utils.data.dataset": "runtime.utils.data.dataset",
    "utils.data.dataloader": "runtime.utils.data.dataloader",
    "utils.data.sampler": "runtime.utils.data.sampler",
    "utils.data.distributed": "runtime.distributed.sampler",
    "utils.data._utils": "runtime.utils.data._utils",
    "utils.data._utils.collate": "runtime.utils.data._utils.collate",
    "amp": "runtime.amp",
    "amp.autocast_mode": "runtime.amp.autocast_mode",
    "amp.grad_scaler": "runtime.amp.grad_scaler",
    "cuda.amp": "runtime.cuda.amp",
    "cpu": "runtime.cpu",
    "cpu.amp": "runtime.cpu.amp",
    "backends": "runtime.backends",
    "backends.cudnn": "runtime.backends.cudnn",
    "backends.cuda": "runtime.backends.cuda",
    "backends.mps": "runtime.backends.mps",
    "backends.mkldnn": "runtime.backends.mkldnn",
    "backends.mkl": "runtime.backends.mkl",
    "backends.openmp": "runtime.backends.openmp",
    "backends.cpu": "runtime.backends.cpu",
    "backends.opt_einsum": "runtime.backends.opt_einsum",
    "backends.nnpack": "runtime.backends.nnpack",
    "backends.mha": "runtime.backends.mha",
    "backends.cusparselt": "runtime.backends.cusparselt",
    "backends.kleidiai": "runtime.backends.kleidiai",
    "backends.quantized": "runtime.backends.quantized",
    "backends.miopen": "runtime.backends.miopen",
    "accelerator": "runtime.accelerator",
    "autograd.graph": "runtime.autograd.graph",
    "autograd.function": "runtime.autograd.function",
    "autograd.anomaly_mode": "runtime.autograd.anomaly_mode",
    "autograd.grad_mode": "runtime.autograd.grad_mode",
    "random": "runtime.random",
    "serialization": "runtime.nn.serialization",
    "as_torch": "runtime.as_torch",
}


class SubmoduleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports "<package>.<name>" for every row `name` of SUBMODULES as the runtime module of that row
    (Note [Submodules of the public API]). It sits first on sys.meta_path: a nested name such as
    "generated.nn.functional" would otherwise be found again as a file under runtime/nn/ (the parent's
    `__path__`) and executed a second time under the new name. It answers "<alias>.<name>" too where
    sys.modules holds the package under another name (Note [Running PyTorch programs as they are])."""

    def __init__(self, package: str) -> None:
        self.package = package
        self._prefix = package + "."
        self._own_specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def _row(self, fullname: str) -> str | None:
        """The SUBMODULES row that `fullname` names: "<package>.<row>", or "<alias>.<row>" where
        sys.modules holds this package under the name <alias> (as `torch`)."""
        head, _, row = fullname.partition(".")
        if row not in SUBMODULES:
            return None
        if head == self.package:
            return row
        package = sys.modules.get(self.package)
        return row if package is not None and sys.modules.get(head) is package else None

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.machinery.ModuleSpec(fullname, self) if self._row(fullname) is not None else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        row = self._row(spec.name)
        assert row is not None
        module = importlib.import_module(SUBMODULES[row])
        self._own_specs[spec.name] = module.__spec__
        return module

    def get_code(self, fullname: str) -> Any:
        """The code of the runtime module behind an alias, so that `python -m generated.distributed.run`
        runs it (runpy asks the loader for code)."""
        row = self._row(fullname)
        if row is None:
            raise ImportError(f"no module named {fullname!r}")
        target = SUBMODULES[row]
        spec = importlib.util.find_spec(target)
        if spec is None or spec.loader is None:
            raise ImportError(f"no module named {target!r}")
        return spec.loader.get_code(target)  # type: ignore[attr-defined]

    def exec_module(self, module: ModuleType) -> None:
        # the import system has set `module.__spec__` to the alias's spec: the module keeps its own
        assert module.__spec__ is not None
        module.__spec__ = self._own_specs.pop(module.__spec__.name)


def install_submodules(package: str) -> None:
    """Make `import <package>.<name>` work for every row of SUBMODULES (once per package)."""
    if not any(isinstance(f, SubmoduleFinder) and f.package == package for f in sys.meta_path):
        sys.meta_path.insert(0, SubmoduleFinder(package))


# Note [Lazy public names]
# `import generated` loads what an op call needs (numpy, the tensor, the dispatcher, every kernel and
# autograd); the parts of the API that no op needs load on first use: `G.nn`, `G.optim`, `G.utils`,
# `G.testing` (submodules, through SubmoduleFinder) and `G.save`/`G.load` (json). generated/__init__.py
# answers its module `__getattr__` (PEP 562) with `lazy_attribute` and lists them in `dir(G)` with
# `public_names`. Here they stay out of the runtime `__all__` (a star import would load them), and type
# checkers see them through the block below. Nothing loaded lazily reads the environment at import.
LAZY: dict[str, tuple[str, str | None]] = {  # name -> (module, attribute of it; None: the module itself)
    "nn": ("runtime.nn", None),
    "optim": ("runtime.optim", None),
    "utils": ("runtime.utils", None),
    "testing": ("runtime.testing", None),
    "__version__": ("runtime.version", "__version__"),
    "distributed": ("runtime.distributed", None),
    "compile": ("runtime.compile", "compile"),
    "distributions": ("runtime.distributions", None),
    "amp": ("runtime.amp", None),
    "cpu": ("runtime.cpu", None),
    "backends": ("runtime.backends", None),
    "accelerator": ("runtime.accelerator", None),
    "random": ("runtime.random", None),
    "serialization": ("runtime.nn.serialization", None),
    "special": ("runtime.special", None),
    "masked": ("runtime.masked", None),
    "ops": ("runtime.op_namespaces", None),
    "signal": ("runtime.signal", None),
    "bartlett_window": ("runtime.signal.windows", "bartlett_window"),
    "blackman_window": ("runtime.signal.windows", "blackman_window"),
    "hamming_window": ("runtime.signal.windows", "hamming_window"),
    "hann_window": ("runtime.signal.windows", "hann_window"),
    "kaiser_window": ("runtime.signal.windows", "kaiser_window"),
    "load": ("runtime.nn.serialization", "load"),
    "save": ("runtime.nn.serialization", "save"),
}

if TYPE_CHECKING:
    from runtime import (
        accelerator,
        amp,
        backends,
        cpu,
        distributions,
        masked,
        nn,
        optim,
        signal,
        special,
        testing,
        utils,
    )
    from runtime import op_namespaces as ops
    from runtime.nn import serialization
    from runtime.nn.serialization import load, save
    from runtime.signal.windows import bartlett_window, blackman_window, hamming_window, hann_window, kaiser_window

    __all__ += ["accelerator", "amp", "backends", "cpu", "distributions", "load", "nn", "optim", "save",
                "serialization", "special", "testing", "utils", "masked", "ops", "signal", "bartlett_window",
                "blackman_window", "hamming_window", "hann_window", "kaiser_window"]


def lazy_attribute(package: ModuleType, name: str) -> Any:
    """The value of a lazy public name of `package` (Note [Lazy public names]), loaded now and kept as
    the package's attribute; AttributeError for any other name."""
    entry = LAZY.get(name)
    if entry is None:
        raise AttributeError(f"module '{package.__name__}' has no attribute '{name}'")
    module, attribute = entry
    if attribute is None and any(isinstance(f, SubmoduleFinder) and f.package == package.__name__
                                 for f in sys.meta_path):
        # imported as "<package>.<name>" (sys.modules holds the alias; the import sets the attribute)
        return importlib.import_module(f"{package.__name__}.{name}")
    value: Any = importlib.import_module(module)
    if attribute is not None:
        value = getattr(value, attribute)
    setattr(package, name, value)
    return value


def public_names(namespace: dict[str, Any]) -> list[str]:
    """`dir()` of a package whose lazy names may not be loaded yet."""
    return sorted({*namespace, *LAZY})


def __getattr__(name: str) -> Any:
    """runtime.api's own lazy names (`runtime.api.nn`), as generated/ gives them."""
    return lazy_attribute(sys.modules[__name__], name)
