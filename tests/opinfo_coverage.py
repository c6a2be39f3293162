"""opgen measured against PyTorch's OpInfo database (`op_db`), PyTorch being the oracle.

Every OpInfo entry outside the sparse, nested, quantized, fft and `_refs` families is *eligible*. An entry
*exists* in opgen when its PyTorch name resolves in `generated` (`torch.X` -> `G.X`, `Tensor.X` -> `G.Tensor.X`,
`nn.functional.X`, `linalg.X`, `special.X`, ...); it *agrees* when every sample input the OpInfo yields gives
the same values, dtypes and shapes, for every dtype both sides support, in the function, method, in-place and
`out=` forms the OpInfo declares, and the same gradients (float64; second derivatives where the OpInfo
declares them).

The OpInfo's `op` is often a small lambda of common_methods_invocations (`polygamma` puts `n` first); such a
function is re-bound with `torch` meaning opgen's namespace (`_Shim`), so opgen runs exactly the call PyTorch
runs. Samples are converted tensor by tensor (NumPy in between); dtypes, nested lists and dicts are mapped.

    python3 -m tests.opinfo_coverage                 # the figures, the missing groups, what differs
    python3 -m tests.opinfo_coverage -k special -v   # one family, with every sample's failure

Nothing here imports torch at module level: `load_op_db()` does, and callers (tests/ops/test_opinfo.py) skip
without it.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import functools
import itertools
import math
import sys
import time
import types
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

EXCLUDED_PREFIXES = ("sparse.", "nested.", "fft.", "_refs.", "quantized.", "to_sparse", "_segment_reduce")

# dtypes compared by default (fast) and in the exhaustive run
FAST_DTYPES = ("float32", "float64", "int64", "bool")
ALL_DTYPES = ("float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool")

# Ops whose values are random or uninitialised: shapes and dtypes are compared, not values (and for the
# random samplers, a loose check of the distribution in tests/ops/test_opinfo.py).
NONDETERMINISTIC = frozenset({
    "bernoulli", "multinomial", "normal", "normal.number_mean", "normal.in_place", "uniform", "exponential",
    "geometric", "cauchy", "log_normal", "rand_like", "randn_like", "randint_like", "randint", "randn", "rand",
    "empty", "empty_like", "new_empty", "empty_strided", "new_empty_strided", "empty_permuted",
    "torch.empty_permuted", "nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d",
    "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout.with_train",
    "nn.functional.feature_alpha_dropout.without_train", "nn.functional.rrelu",
    "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d", "randperm",
    "nn.functional.multi_head_attention_forward", "nn.functional.scaled_dot_product_attention",
})

# Deliberate differences (documented in README's differences section): entry key -> reason. The entries
# of TIE_INDICES are compared with that relaxation; the others are reported, not failed.
EXPECTED_DIFFERENCES: dict[str, str] = {
    "sort": "among tied values opgen returns the indices a stable sort gives (PyTorch leaves them unspecified); "
            "the indices are checked by the values they select",
    "argsort": "as sort",
    "topk": "as sort",
    "kthvalue": "as sort",
    "bfloat16:forward": "bfloat16 tensors exist on CUDA only (NumPy has no such type): Tensor.bfloat16 on a CPU "
                        "tensor is refused",
    "bfloat16:method": "as bfloat16:forward",
    "bfloat16:grad": "as bfloat16:forward",
    "cdouble:forward": "complex dtypes are not in opgen (a later issue): Tensor.cdouble/cfloat/chalf refuse with "
                       "TypeError",
    "cdouble:method": "as cdouble:forward",
    "cfloat:forward": "as cdouble:forward",
    "cfloat:method": "as cdouble:forward",
    "chalf:forward": "as cdouble:forward",
    "chalf:method": "as cdouble:forward",
    "special.bessel_j0:forward": "opgen computes Bessel functions with SciPy (double precision); PyTorch's CPU "
                                 "kernel is off by up to 1e-5 relative near the zeros (SciPy's jv agrees with opgen)",
    "special.bessel_y0:forward": "as special.bessel_j0:forward",
    "special.bessel_j1:forward": "as special.bessel_j0:forward",
    "special.bessel_y1:forward": "as special.bessel_j0:forward",
    "polygamma.polygamma_n_0:forward": "near a pole PyTorch's float32 kernel loses digits; opgen computes in double "
                                       "(SciPy) and rounds once",
    "special.polygamma.special_polygamma_n_0:forward": "as polygamma.polygamma_n_0:forward",
    "special.polygamma.special_polygamma_n_0:out": "as polygamma.polygamma_n_0:forward",
    "polygamma.polygamma_n_0:method": "as polygamma.polygamma_n_0:forward",
    "polygamma.polygamma_n_0:inplace": "as polygamma.polygamma_n_0:forward",
    "polygamma.polygamma_n_0:out": "as polygamma.polygamma_n_0:forward",
    "special.bessel_j0:out": "as special.bessel_j0:forward",
    "special.bessel_y0:out": "as special.bessel_j0:forward",
    "special.bessel_j1:out": "as special.bessel_j0:forward",
    "special.bessel_y1:out": "as special.bessel_j0:forward",
}

# op -> (position among the sample's args of `dim`, its default, which outputs are indices ("all" or an
# index)): index outputs are compared by the input values they select along dim.
TIE_INDICES: dict[str, tuple[int, int, Any]] = {
    "sort": (0, -1, 1), "argsort": (0, -1, "all"), "topk": (1, -1, 1), "kthvalue": (1, -1, 1),
}

# Entries that exist in opgen but do not agree yet on every sample: key -> reason. tests/ops/test_opinfo.py
# xfails them (strictly: an entry that starts agreeing must leave this table).
KNOWN_GAPS: dict[str, str] = {
    '_chunk_cat:out': ("the generated binding of an op named with a leading underscore takes no out= "
                       "(codegen/api_python.py adds out= to public names only), and test_ops_yaml cannot "
                       "sample a hand-written .out overload"),
}



def load_op_db() -> list[Any]:
    from torch.testing._internal.common_methods_invocations import op_db
    return list(op_db)


# Note [Samples without the stack crawl]
# `OpInfo.sample_inputs` looks for the unittest.TestCase running it (torch's `extract_test_fn`, twice per call:
# `inspect.stack()` over every frame, reading each frame's source lines) to seed its RNG by the test's name and
# to record the sample on that test. Here no TestCase is ever on the stack, so the crawl always answers None
# (the samples are seeded by torch's fixed SEED); under pytest, whose stack is deep, the crawl was half of
# tests/ops/test_opinfo.py's time. `samples()` answers None without crawling: the same samples, same seeds.
# torch.testing.make_tensor draws from the CPU generator only, so `set_rng_seed` seeds that one (with
# Python's and NumPy's, as torch's does) instead of every accelerator's.
def samples(info: Any, dtype: Any, *, requires_grad: bool, limit: int | None) -> list[Any]:
    """The first `limit` (None: all) sample inputs of `info` for `dtype` on the CPU, as `info.sample_inputs`
    yields them (Note [Samples without the stack crawl])."""
    import random

    import torch
    from torch.testing._internal import common_utils
    from torch.testing._internal.opinfo import core

    def no_test_fn() -> None:
        return None

    def seed(value: int | None = None) -> None:
        value = common_utils.SEED if value is None else value
        torch.default_generator.manual_seed(value)
        random.seed(value)
        np.random.seed(value)

    saved = common_utils.extract_test_fn, core.extract_test_fn, common_utils.set_rng_seed
    common_utils.extract_test_fn = core.extract_test_fn = no_test_fn
    common_utils.set_rng_seed = seed
    try:
        return list(itertools.islice(info.sample_inputs("cpu", dtype, requires_grad=requires_grad), limit))
    finally:
        common_utils.extract_test_fn, core.extract_test_fn, common_utils.set_rng_seed = saved


def key_of(info: Any) -> str:
    return info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")


def eligible(op_db: Iterable[Any]) -> list[Any]:
    return [o for o in op_db if not o.name.startswith(EXCLUDED_PREFIXES)]


# ---- names -----------------------------------------------------------------------------------------------

def _G() -> Any:
    import generated
    return generated


def _lookup(root: Any, path: str) -> Any:
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def resolve(info: Any) -> Any:
    """opgen's callable of the entry's PyTorch name, or None when opgen lacks it."""
    G = _G()
    name = info.name
    if name.startswith("torch."):  # torch.ops.aten.<op>.<overload> is G.ops.aten.<op>.<overload>
        name = name[len("torch."):]
    found = _lookup(G, name)
    if found is None and "." not in name:
        found = getattr(G.Tensor, name, None)
    if found is None and name in NONDETERMINISTIC:  # `cauchy`, `uniform` ...: entries of Tensor.cauchy_ ...
        found = getattr(G.Tensor, name + "_", None)
    return found


class _Shim:
    """`torch` for a re-bound OpInfo lambda: names resolve in opgen (`G`), submodules included."""

    def __init__(self, target: Any) -> None:
        self._target = target

    def __getattr__(self, name: str) -> Any:
        if name == "ops" and self._target is _G():
            return _OpsShim()
        value = getattr(self._target, name, None)
        if value is None and self._target is _G():
            value = getattr(_G().Tensor, name)  # torch.zero_ and other functions opgen has as methods only
        if value is None:
            raise AttributeError(name)
        if isinstance(value, types.ModuleType):
            return _Shim(value)
        return value


class _OpsShim:
    """`torch.ops.aten.<op>.<overload>` for a re-bound OpInfo lambda: opgen's binding of `<op>` (which picks the
    overload from the arguments itself)."""

    def __init__(self, path: tuple[str, ...] = ()) -> None:
        self._path = path

    def __getattr__(self, name: str) -> Any:
        if len(self._path) == 2:  # ops.aten.<op>.<overload>
            return self._resolve()
        return _OpsShim((*self._path, name))

    def _resolve(self) -> Any:
        found = getattr(_G(), self._path[1], None)
        if found is None:
            raise AttributeError(f"torch.ops.{'.'.join(self._path)} has no opgen op")
        return found

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._resolve()(*args, **kwargs)


def _rebind(fn: Any) -> Any:
    """`fn` (a function of PyTorch's testing modules) with `torch`/`F` meaning opgen."""
    if not isinstance(fn, types.FunctionType) or not fn.__module__.startswith("torch.testing"):
        return None
    G = _G()
    glb = dict(fn.__globals__)
    glb["torch"] = _Shim(G)
    if "F" in glb:
        glb["F"] = _Shim(G.nn.functional)
    return types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, fn.__closure__)


def _torch_path(fn: Any) -> str:
    """`nn.functional.mish` for torch.nn.functional.mish (the path below `torch`)."""
    module = (getattr(fn, "__module__", None) or "torch").removeprefix("torch").lstrip(".")
    module = module.replace("_C._nn", "nn.functional").replace("_C._special", "special").replace("_C._linalg", "linalg")
    return f"{module}.{fn.__name__}" if module and module != "_C._VariableFunctions" else fn.__name__


def opgen_callable(info: Any) -> Callable[..., Any] | None:
    """What to call in opgen for the entry's `op` (the re-bound lambda, or the resolved name)."""
    if resolve(info) is None:
        return None
    return _rebind(info.op) or resolve(info)


# ---- conversion ------------------------------------------------------------------------------------------

def to_opgen(value: Any, *, grad: bool = False, leaves: list[Any] | None = None) -> Any:
    """A torch sample argument (nested) as opgen's. With `grad`, tensors that require grad in torch become
    opgen leaves that require grad (collected in `leaves`, in the order torch's are found)."""
    import torch
    G = _G()
    if isinstance(value, torch.Tensor):
        base = value._base
        if base is not None and base._base is None and not base.requires_grad and value.dtype == base.dtype:
            # a view (`base[5:15]`): the same view of the converted base, so that ops that see the storage
            # (as_strided's storage_offset) see the same one
            out = to_opgen(base).as_strided(tuple(value.shape), value.stride(), value.storage_offset())
        else:
            array = value.detach().cpu().resolve_conj().resolve_neg().numpy().copy()
            out = G.tensor(array, dtype=getattr(G, str(value.dtype).removeprefix("torch.")))
        if grad and value.requires_grad:
            out.requires_grad_(True)
            if leaves is not None:
                leaves.append(out)
        return out
    if isinstance(value, torch.dtype):
        return getattr(G, str(value).removeprefix("torch."))
    if isinstance(value, torch.Size):
        return tuple(value)
    if isinstance(value, torch.device):
        return str(value)
    if isinstance(value, torch.memory_format):
        return getattr(G, str(value).removeprefix("torch."), None)
    if isinstance(value, torch.Generator):
        return None
    if isinstance(value, torch.nn.Module):  # a module passed as a function (distance_function=PairwiseDistance())
        return _module_to_opgen(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and type(value).__module__.startswith("torch."):
        # an options record of torch.nn (LinearCrossEntropyOptions): opgen's record of the same name and fields
        ours = getattr(G.nn, type(value).__name__)
        return ours(**{f.name: to_opgen(getattr(value, f.name), grad=grad, leaves=leaves)
                       for f in dataclasses.fields(value)})
    if isinstance(value, list):
        return [to_opgen(v, grad=grad, leaves=leaves) for v in value]
    if isinstance(value, tuple):
        return tuple(to_opgen(v, grad=grad, leaves=leaves) for v in value)
    if isinstance(value, dict):
        return {k: to_opgen(v, grad=grad, leaves=leaves) for k, v in value.items()}
    return value


def _module_to_opgen(module: Any) -> Any:
    """opgen's module of the same class for a torch module without parameters, its constants (PyTorch's
    `__constants__`: PairwiseDistance's norm, eps, keepdim) copied over."""
    cls = getattr(_G().nn, type(module).__name__, None)
    if cls is None or list(module.parameters()) or list(module.buffers()):
        raise Mismatch(f"the torch module {type(module).__name__} has no parameterless opgen counterpart")
    twin = cls()
    for name in getattr(module, "__constants__", ()):
        setattr(twin, name, getattr(module, name))
    return twin


def torch_leaves(value: Any, out: list[Any]) -> list[Any]:
    import torch
    if isinstance(value, torch.Tensor):
        if value.requires_grad:
            out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            torch_leaves(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            torch_leaves(v, out)
    return out


# ---- comparison ------------------------------------------------------------------------------------------

class Mismatch(AssertionError):
    pass


@dataclass(frozen=True)
class Tol:
    atol: float
    rtol: float


DEFAULT_TOL = {"float16": Tol(1e-3, 1e-3), "float32": Tol(1e-5, 1.3e-5), "float64": Tol(1e-7, 1e-7)}


def tolerance(info: Any, dtype_name: str) -> Tol:
    """The default tolerance of `dtype_name`, loosened by the entry's toleranceOverride decorators that
    apply on the CPU (or everywhere)."""
    import torch
    base = DEFAULT_TOL.get(dtype_name, Tol(0.0, 0.0))
    atol, rtol = base.atol, base.rtol
    tdtype = getattr(torch, dtype_name)
    for deco in getattr(info, "decorators", ()) or ():
        if getattr(deco, "device_type", None) not in (None, "cpu"):
            continue
        for d in getattr(deco, "decorators", ()) or ():
            over = getattr(d, "d", None)
            if isinstance(over, dict) and tdtype in over:
                atol, rtol = max(atol, over[tdtype].atol), max(rtol, over[tdtype].rtol)
    return Tol(atol, rtol)


def _np_of(t: Any) -> np.ndarray:
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t.numpy())


def compare(expected: Any, actual: Any, tol: Tol, *, values: bool = True, where: str = "result") -> None:
    """Raise Mismatch unless opgen's `actual` matches torch's `expected` (structure, dtypes, shapes, values)."""
    import torch
    G = _G()
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, G.Tensor):
            raise Mismatch(f"{where}: expected a tensor, got {type(actual).__name__}")
        e_dt = str(expected.dtype).removeprefix("torch.")
        a_dt = str(actual.dtype).removeprefix("opgen.")
        if e_dt != a_dt:
            raise Mismatch(f"{where}: dtype {a_dt}, torch gives {e_dt}")
        if tuple(expected.shape) != tuple(actual.shape):
            raise Mismatch(f"{where}: shape {tuple(actual.shape)}, torch gives {tuple(expected.shape)}")
        if not values:
            return
        base = DEFAULT_TOL.get(e_dt)
        if base is not None:  # an integer input with a floating result: the result's tolerance
            tol = Tol(max(tol.atol, base.atol), max(tol.rtol, base.rtol))
        e = expected.detach().numpy(force=True)
        a = _np_of(actual)
        if e.dtype.kind in "biu":
            if not np.array_equal(e, a):
                raise Mismatch(f"{where}: values differ at {int((e != a).sum())} of {e.size} places")
            return
        scale = tol.atol, tol.rtol
        with np.errstate(invalid="ignore", over="ignore"):
            ok = np.isclose(a.astype(np.float64), e.astype(np.float64), atol=scale[0], rtol=scale[1], equal_nan=True)
        if not ok.all():
            bad = np.argwhere(~ok.reshape(e.shape) if e.ndim else ~ok.reshape(()))[:1]
            idx = tuple(bad[0]) if bad.size else ()
            raise Mismatch(f"{where}: values differ at {int((~ok).sum())} of {e.size} places "
                           f"(first at {idx}: {a[idx] if a.ndim else a} vs torch {e[idx] if e.ndim else e})")
        return
    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            raise Mismatch(f"{where}: expected a sequence of {len(expected)}, got {type(actual).__name__}")
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            compare(e, a, tol, values=values, where=f"{where}[{i}]")
        return
    if isinstance(actual, G.Tensor) and actual.ndim == 0:
        actual = actual.item()
    if isinstance(expected, float) and isinstance(actual, (int, float)):
        if values and not (math.isclose(expected, actual, rel_tol=max(tol.rtol, 1e-7), abs_tol=tol.atol)
                           or (math.isnan(expected) and math.isnan(actual))):
            raise Mismatch(f"{where}: {actual!r} vs torch {expected!r}")
        return
    if values and expected != actual:
        raise Mismatch(f"{where}: {actual!r} vs torch {expected!r}")


# ---- running one entry -----------------------------------------------------------------------------------

@dataclass
class Result:
    key: str
    status: str                     # "missing", "agree", "differ"
    failed: dict[str, str] = field(default_factory=dict)  # category -> its first failure
    checked: int = 0                # samples run


def _float_outputs(out: Any, acc: list[Any], is_tensor: Callable[[Any], bool]) -> list[Any]:
    if is_tensor(out):
        if out.dtype.is_floating_point if hasattr(out.dtype, "is_floating_point") else False:
            acc.append(out)
    elif isinstance(out, (tuple, list)):
        for o in out:
            _float_outputs(o, acc, is_tensor)
    return acc


def _cotangent(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def _sample_call(sample: Any, convert: Callable[[Any], Any]) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    kwargs = {k: convert(v) for k, v in sample.kwargs.items()}
    return convert(sample.input), tuple(convert(a) for a in sample.args), kwargs


def _run_forward(info: Any, fn: Callable[..., Any], sample: Any, dtype_name: str, values: bool) -> None:
    tol = tolerance(info, dtype_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = info.op(sample.input, *sample.args, **sample.kwargs)
        except Exception:
            return  # torch refuses this sample on the CPU
        x, args, kwargs = _sample_call(sample, to_opgen)
        try:
            actual = fn(x, *args, **kwargs)
        except Exception as e:
            raise Mismatch(f"raised {type(e).__name__}: {str(e)[:160]}") from None
        if info.name in TIE_INDICES:
            expected, actual = _tie_indices(info.name, sample, expected, actual)
        compare(expected, actual, tol, values=values)


def _tie_indices(name: str, sample: Any, expected: Any, actual: Any) -> tuple[Any, Any]:
    """The index outputs of a sort-like op replaced by the input values they select (ties may differ)."""
    import torch
    pos, default, which = TIE_INDICES[name]
    dim = sample.kwargs.get("dim", sample.args[pos] if len(sample.args) > pos else default)
    x = sample.input.detach()

    def select(idx: Any) -> Any:
        i = torch.from_numpy(np.asarray(_np_of(idx))) if not isinstance(idx, torch.Tensor) else idx
        if x.ndim == 0:
            return x.clone() if i.ndim == 0 else x.reshape(1)[i]
        if i.ndim < x.ndim:
            return torch.gather(x, dim, i.unsqueeze(dim)).squeeze(dim)
        return torch.gather(x, dim, i)

    def swap(out: Any, is_torch: bool) -> Any:
        if which == "all":
            return select(out)
        if not isinstance(out, (tuple, list)) or len(out) <= which:
            return out
        parts = list(out)
        parts[which] = select(parts[which])
        return tuple(parts)
    try:
        converted = swap(actual, False)
    except Exception:
        return expected, actual  # shapes differ: compare() says how
    return swap(expected, True), _to_opgen_tree(converted)


def _to_opgen_tree(value: Any) -> Any:
    import torch
    if isinstance(value, torch.Tensor):
        return to_opgen(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_to_opgen_tree(v) for v in value) if isinstance(value, list) else \
            tuple(_to_opgen_tree(v) for v in value)
    return value


def _run_variant(info: Any, kind: str, variant: Any, sample: Any, dtype_name: str, values: bool) -> None:
    """The method or in-place variant of one sample (`kind` "method" or "inplace")."""
    import torch
    G = _G()
    if not isinstance(sample.input, torch.Tensor):
        return
    tol = tolerance(info, dtype_name)
    rebound = _rebind(variant)
    if isinstance(variant, functools.partial):  # partial(F.mish, inplace=True)
        inner = _rebind(variant.func) or _lookup(_G(), _torch_path(variant.func))
        rebound = functools.partial(inner, *variant.args, **variant.keywords) if inner is not None else None
    name = getattr(variant, "__name__", None) or getattr(getattr(variant, "func", None), "__name__", "?")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tx = sample.input.detach().clone()
        try:
            expected = variant(tx, *sample.args, **sample.kwargs)
        except Exception:
            return
        x, args, kwargs = _sample_call(sample, to_opgen)
        x = x.detach().clone()  # as torch's `tx` (a clone: its own storage)
        method = rebound or getattr(G.Tensor, name, None)
        if method is None:
            raise Mismatch(f"Tensor.{name} is missing")
        try:
            actual = method(x, *args, **kwargs)
        except Exception as e:
            raise Mismatch(f"Tensor.{name} raised {type(e).__name__}: {str(e)[:160]}") from None
        if info.name in TIE_INDICES:
            expected, actual = _tie_indices(info.name, sample, expected, actual)
        compare(expected, actual, tol, values=values, where=f"Tensor.{name}")
        if kind == "inplace":
            compare(tx, x, tol, values=values, where=f"Tensor.{name} (self after)")
            if expected is tx and actual is not x:
                raise Mismatch(f"Tensor.{name} does not return self")

def _run_out(info: Any, fn: Callable[..., Any], sample: Any, dtype_name: str, values: bool) -> None:
    import torch
    G = _G()
    tol = tolerance(info, dtype_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = info.op(sample.input, *sample.args, **sample.kwargs)
        except Exception:
            return
        if not isinstance(expected, torch.Tensor):
            return
        try:
            t_out = torch.empty_like(expected)
            info.op(sample.input, *sample.args, **sample.kwargs, out=t_out)
        except Exception:
            return
        x, args, kwargs = _sample_call(sample, to_opgen)
        name = str(expected.dtype).removeprefix("torch.")
        if not hasattr(G, name):  # a dtype opgen does not have (complex): the out= form cannot be asked for
            raise Mismatch(f"out=: torch's result is {name}, a dtype opgen does not have")
        out = G.empty(tuple(expected.shape), dtype=getattr(G, name))
        try:
            r = fn(x, *args, **kwargs, out=out)
        except Exception as e:
            raise Mismatch(f"out= raised {type(e).__name__}: {str(e)[:160]}") from None
        compare(t_out, out, tol, values=values, where="out=")
        if r is not out:
            raise Mismatch("out=: the call does not return `out`")


def _run_grad(info: Any, fn: Callable[..., Any], sample: Any, gradgrad: bool) -> None:
    import torch
    G = _G()
    tol = Tol(1e-6, 1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_leaves = torch_leaves((sample.input, sample.args, sample.kwargs), [])
        if not t_leaves:
            return
        try:
            t_out = sample.output_process_fn_grad(info.op(sample.input, *sample.args, **sample.kwargs))
            t_all = _float_outputs(t_out, [], lambda o: isinstance(o, torch.Tensor))
            t_outs = [o for o in t_all if o.requires_grad]
            if not t_outs:
                return
            cot = [_cotangent(tuple(o.shape), 7 + i) for i, o in enumerate(t_outs)]
            t_grads = torch.autograd.grad(t_outs, t_leaves, [torch.from_numpy(c) for c in cot],
                                          allow_unused=True, create_graph=gradgrad)
        except Exception:
            return  # torch cannot differentiate this sample
        g_leaves: list[Any] = []
        x = to_opgen(sample.input, grad=True, leaves=g_leaves)
        args = tuple(to_opgen(a, grad=True, leaves=g_leaves) for a in sample.args)
        kwargs = {k: to_opgen(v, grad=True, leaves=g_leaves) for k, v in sample.kwargs.items()}
        process = _rebind(sample.output_process_fn_grad) or sample.output_process_fn_grad
        try:
            g_out = process(fn(x, *args, **kwargs))
            g_all = _float_outputs(g_out, [], lambda o: isinstance(o, G.Tensor))
            if len(g_all) != len(t_all):
                raise Mismatch(f"gradient: {len(g_all)} floating outputs, torch {len(t_all)}")
            # the outputs torch differentiates (aten's saved statistics, such as native_batch_norm's mean,
            # are floating outputs that do not require grad)
            g_outs = [g for g, t in zip(g_all, t_all, strict=True) if t.requires_grad]
            if any(not o.requires_grad for o in g_outs):
                raise Mismatch("gradient: an output does not require grad")
            g_grads = G.autograd.grad(g_outs, g_leaves, [G.tensor(c) for c in cot], allow_unused=True,
                                      create_graph=gradgrad)
        except Mismatch:
            raise
        except Exception as e:
            raise Mismatch(f"gradient raised {type(e).__name__}: {str(e)[:160]}") from None
        for i, (tg, gg) in enumerate(zip(t_grads, g_grads, strict=True)):
            if tg is None:
                continue
            if gg is None:
                if torch.count_nonzero(tg):
                    raise Mismatch(f"gradient of input {i}: None, torch has one")
                continue
            compare(tg, gg, tol, where=f"gradient of input {i}")
        if not gradgrad:
            return
        pairs = [(tg, gg) for tg, gg in zip(t_grads, g_grads, strict=True)
                 if tg is not None and gg is not None and tg.requires_grad]
        if not pairs:
            return
        vs = [_cotangent(tuple(tg.shape), 99 + i) for i, (tg, _) in enumerate(pairs)]
        t_s = sum((tg * torch.from_numpy(v)).sum() for (tg, _), v in zip(pairs, vs, strict=True))
        try:
            t_gg = torch.autograd.grad(t_s, t_leaves, allow_unused=True)
        except Exception:
            return
        try:
            terms = [(gg * G.tensor(v)).sum() for (_, gg), v in zip(pairs, vs, strict=True)]
            g_s = terms[0]
            for t in terms[1:]:
                g_s = g_s + t
            if not g_s.requires_grad:
                if any(t is not None and torch.count_nonzero(t) for t in t_gg):
                    raise Mismatch("second derivative: the gradient does not require grad")
                return
            g_gg = G.autograd.grad(g_s, g_leaves, allow_unused=True)
        except Mismatch:
            raise
        except Exception as e:
            raise Mismatch(f"second derivative raised {type(e).__name__}: {str(e)[:160]}") from None
        for i, (tg, gg) in enumerate(zip(t_gg, g_gg, strict=True)):
            if tg is None:
                continue
            if gg is None:
                if torch.count_nonzero(tg):
                    raise Mismatch(f"second derivative of input {i}: None, torch has one")
                continue
            compare(tg, gg, tol, where=f"second derivative of input {i}")


CATEGORIES = ("forward", "method", "inplace", "out", "grad", "gradgrad")


def check_entry(info: Any, *, dtypes: Iterable[str] = FAST_DTYPES, max_samples: int | None = 3,
                grad_samples: int | None = 2, variants: bool = True) -> Result:
    """Run the entry's samples through torch and opgen; record the first failure of each category
    (`CATEGORIES`: the function form, the method and in-place variants, `out=`, gradients, second
    derivatives). A category that failed once is not run again."""
    import torch
    key = key_of(info)
    fn = opgen_callable(info)
    if fn is None:
        return Result(key, "missing")
    result = Result(key, "agree")
    values = key not in NONDETERMINISTIC and info.name not in NONDETERMINISTIC
    supported = {str(d).removeprefix("torch.") for d in info.supported_dtypes("cpu")}

    def attempt(category: str, where: str, run: Callable[[], None]) -> None:
        if category in result.failed:
            return
        try:
            run()
        except Mismatch as e:
            result.status = "differ"
            result.failed[category] = f"{where}: {e}"

    inplace = info.inplace_variant if variants and info.inplace_variant is not info.op else None
    method = info.method_variant if variants else None
    for dtype_name in dtypes:
        if dtype_name not in supported:
            continue
        tdtype = getattr(torch, dtype_name)
        try:
            found = samples(info, tdtype, requires_grad=False, limit=max_samples)
        except Exception:
            continue
        for i, sample in enumerate(found):
            result.checked += 1
            where = f"{dtype_name} sample {i} ({_describe(sample)})"
            attempt("forward", where, lambda s=sample, d=dtype_name: _run_forward(info, fn, s, d, values))
            if method is not None:
                attempt("method", where, lambda s=sample, d=dtype_name: _run_variant(info, "method", method, s, d,
                                                                                     values))
            if inplace is not None:
                attempt("inplace", where, lambda s=sample, d=dtype_name: _run_variant(info, "inplace", inplace, s,
                                                                                      d, values))
            if variants and info.supports_out and i == 0:
                attempt("out", where, lambda s=sample, d=dtype_name: _run_out(info, fn, s, d, values))
    if values and info.supports_autograd and "float64" in supported and grad_samples != 0:
        try:
            found = samples(info, torch.float64, requires_grad=True, limit=grad_samples)
        except Exception:
            found = []
        for i, sample in enumerate(found):
            where = f"float64 sample {i} ({_describe(sample)})"
            attempt("grad", where, lambda s=sample: _run_grad(info, fn, s, gradgrad=False))
            if i == 0 and info.supports_gradgrad and "grad" not in result.failed:
                attempt("gradgrad", where, lambda s=sample: _run_grad(info, fn, s, gradgrad=True))
    return result


def _describe(sample: Any) -> str:
    import torch

    def d(v: Any) -> str:
        if isinstance(v, torch.Tensor):
            return f"T{list(v.shape)}"
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(d(x) for x in v[:4]) + (", ..." if len(v) > 4 else "") + "]"
        return repr(v)[:30]
    parts = [d(sample.input)] + [d(a) for a in sample.args] + [f"{k}={d(v)}" for k, v in sample.kwargs.items()]
    return ", ".join(parts)


# ---- the figures -----------------------------------------------------------------------------------------

def family(info: Any) -> str:
    return info.name.rsplit(".", 1)[0] if "." in info.name else "torch"


EXPECTED_DIFFERENCES.update({
    'linalg.eig': ('complex eigenvalues and eigenvectors: complex dtypes are a later issue, so opgen refuses '
                   '(NotImplementedError)'),
    'linalg.eigvals': 'complex eigenvalues: complex dtypes are a later issue, so opgen refuses (NotImplementedError)',
    'linalg.eigh:forward': 'eigenvectors are unique up to the sign of each column; torch and LAPACK may pick either',
    'as_strided_scatter:grad': ("PyTorch 2.13's gradient for `self` is the complement of the right one: it passes the "
                                "gradient of the places `src` overwrote and zeroes the others (as_strided_scatter("
                                "x, src, [1], [1]) on x of 2 elements gives [g0, 0]); opgen gives [0, g1]"),
})

_SIGNS = ("singular vectors are unique up to the sign of each pair of columns; LAPACK builds (PyTorch's, NumPy's) "
          "may pick either")
EXPECTED_DIFFERENCES.update({
    'matrix_exp:forward': ("float32: opgen computes in float64 (Pade 13, scaling and squaring) and rounds once; "
                           "PyTorch's float32 Taylor kernel loses digits on the small entries of a large result"),
    'matrix_exp:method': "as matrix_exp:forward",
    'svd:forward': _SIGNS,
    'svd:method': _SIGNS,
    'svd_lowrank:forward': ("the basis comes from a random sketch (opgen's generator, not PyTorch's): U and V agree "
                            "up to the signs of their columns; U diag(S) V^T and the gradients agree"),
    'pca_lowrank:forward': "as svd_lowrank:forward",
    'svd_lowrank:grad': ("the samples with M make A - M of rank above q: the result is then a random rank-q "
                         "approximation, its value and gradient those of the sketch drawn"),
})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tests.opinfo_coverage", description=__doc__.split("\n")[0])
    parser.add_argument("-k", default="", help="only entries whose key contains this")
    parser.add_argument("--samples", type=int, default=3, help="samples per entry and dtype (0: all)")
    parser.add_argument("--all-dtypes", action="store_true", help=f"compare {', '.join(ALL_DTYPES)}")
    parser.add_argument("-v", action="store_true", help="print failures whole")
    parser.add_argument("--missing", action="store_true", help="list every missing entry")
    ns = parser.parse_args(argv)
    start = time.perf_counter()
    entries = [o for o in eligible(load_op_db()) if ns.k in key_of(o)]
    results = []
    for info in entries:
        results.append(check_entry(info, dtypes=ALL_DTYPES if ns.all_dtypes else FAST_DTYPES,
                                   max_samples=ns.samples or None, grad_samples=ns.samples or None))
    by = collections.Counter(r.status for r in results)
    exist = by["agree"] + by["differ"]
    n = len(results)
    core = sum(1 for r in results if r.status != "missing" and not set(r.failed) & {"forward", "grad", "gradgrad"})
    print(f"eligible OpInfo entries: {n}; exist in opgen: {exist} ({100 * exist / max(n, 1):.1f}%); "
          f"agree on every sample and variant: {by['agree']} ({100 * by['agree'] / max(n, 1):.1f}%); "
          f"agree in the function form and gradients: {core} ({100 * core / max(n, 1):.1f}%); "
          f"differ: {by['differ']} ({time.perf_counter() - start:.0f} s)")
    missing = collections.defaultdict(list)
    for info, r in zip(entries, results, strict=True):
        if r.status == "missing":
            missing[family(info)].append(r.key)
    print("missing, by family:")
    for fam, keys in sorted(missing.items(), key=lambda kv: -len(kv[1])):
        shown = keys if ns.missing else keys[:12]
        print(f"  {fam} ({len(keys)}): {', '.join(shown)}{' ...' if len(keys) > len(shown) else ''}")
    print("differ:")
    for r in results:
        for category, failure in r.failed.items():
            gap = KNOWN_GAPS.get(f"{r.key}:{category}")
            tag = f" [KNOWN_GAPS: {gap}]" if gap else ""
            print(f"  {r.key}:{category}{tag}: {failure[:240] if not ns.v else failure}")
    stale = [g for g in KNOWN_GAPS if g.rsplit(":", 1)[0] in {r.key for r in results}
             and g.rsplit(":", 1)[1] not in next(r for r in results if r.key == g.rsplit(":", 1)[0]).failed]
    if stale:
        print("KNOWN_GAPS entries that agree now (remove them):", ", ".join(stale))
    return 0


if __name__ == "__main__":
    sys.exit(main())
