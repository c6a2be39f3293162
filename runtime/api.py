"""The hand-written half of opgen's public API; `generated/__init__.py` re-exports all of it.

Names follow PyTorch's (`G.float32`, `G.zeros`, `G.no_grad` ...). The ops themselves are generated.
"""


from runtime import autograd, cuda, linalg, nn, optim, testing, utils
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
    from_numpy,
    full,
    full_like,
    ones,
    ones_like,
    scalar_tensor,
    tensor,
    zeros,
    zeros_like,
)
from runtime.nn.serialization import load, save
from runtime.tensor import Tensor

dtype = DType

# -- tensors, factories, random, interop, indexing, dispatcher registration (runtime/*.py) ---------------
# indexing, interop, autograd.function and autograd.hooks install Tensor methods when imported
# (Note [Tensor methods from upper layers], tensor.py).
from runtime import indexing, library  # noqa: E402, F401
from runtime.autograd import function, hooks  # noqa: E402, F401

# -- PyTorch compatibility: numeric limits, printing, Size, the wrappers of runtime/functional.py ---------
from runtime.dtypes import finfo, iinfo  # noqa: E402
from runtime.factories import (  # noqa: E402
    arange,
    eye,
    linspace,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
)
from runtime.formatting import set_printoptions  # noqa: E402
from runtime.functional import broadcast_shapes, broadcast_tensors, einsum, meshgrid  # noqa: E402
from runtime.interop import as_tensor, from_dlpack  # noqa: E402
from runtime.random import Generator, initial_seed, manual_seed, seed  # noqa: E402
from runtime.storage import Storage  # noqa: E402
from runtime.tensor import Size, is_floating_point, is_nonzero, is_tensor, numel  # noqa: E402

__all__ = [
    "DType", "Device", "Tensor", "autograd", "bfloat16", "bool", "can_cast", "cuda", "device", "double", "dtype",
    "empty", "empty_like", "enable_grad", "float", "float16", "float32", "float64", "from_numpy", "full",
    "full_like", "get_default_dtype", "half", "inference_mode", "int", "int8", "int16", "int32", "int64",
    "is_grad_enabled", "load", "long", "nn", "no_grad", "optim", "ones", "ones_like", "promote_types",
    "result_type", "save", "scalar_tensor",
    "set_default_dtype", "set_grad_enabled", "short", "tensor", "uint8", "zeros", "zeros_like",
]
__all__ += [
    "Generator", "SUBMODULES", "Storage", "arange", "as_tensor", "eye", "from_dlpack", "initial_seed", "library",
    "linspace", "manual_seed", "rand", "rand_like", "randint", "randint_like", "randn", "randn_like", "seed", "utils",
]
__all__ += [
    "Size", "broadcast_shapes", "broadcast_tensors", "einsum", "finfo", "iinfo", "linalg", "meshgrid", "randperm",
    "set_printoptions", "testing",
]
__all__ += ["is_floating_point", "is_nonzero", "is_tensor", "numel"]

# Note [Submodules of the public API]
# `import generated.nn as nn`, `from generated.nn import functional as F` and
# `import generated.optim.lr_scheduler` work because generated/__init__.py registers every row of this
# table in sys.modules under "generated.<name>" (the runtime module object itself, not a copy), so the
# import system finds the submodule without a file under generated/. A new public submodule is one row
# here; a nested name needs its parent's row before it (dict order is registration order).
SUBMODULES: dict[str, str] = {
    "nn": "runtime.nn",
    "nn.functional": "runtime.nn.functional",
    "nn.init": "runtime.nn.init",
    "nn.utils": "runtime.nn.utils",
    "optim": "runtime.optim",
    "optim.lr_scheduler": "runtime.optim.lr_scheduler",
    "autograd": "runtime.autograd",
    "autograd.functional": "runtime.autograd.functional",
    "cuda": "runtime.cuda",
    "utils": "runtime.utils",
    "utils.data": "runtime.utils.data",
    "linalg": "runtime.linalg",
    "testing": "runtime.testing",
}
