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
import functools
import sys
import time
import types
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from runtime.dispatcher import DispatchError
from tests.opinfo_values import (  # noqa: F401  (re-exported: the harness' callers use C.compare, C.Tol ...)
    DEFAULT_TOL,
    Inexpressible,
    Mismatch,
    Tol,
    compare,
    np_of,
    to_opgen,
    tolerance,
    torch_leaves,
)

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


# ---- running one entry -----------------------------------------------------------------------------------

@dataclass
class Result:
    key: str
    status: str                     # "missing", "agree", "differ"
    failed: dict[str, str] = field(default_factory=dict)  # category -> its first failure
    checked: int = 0                # samples run
    # category -> the operator that has no kernel for the device's dispatch key (the failure was opgen's
    # DispatchError for that key: the op is refused on the device, not wrong there)
    refused: dict[str, str] = field(default_factory=dict)


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


def _sample_call(sample: Any, device: str, *, grad: bool = False, leaves: list[Any] | None = None,
                 ) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    """The sample's input, args and kwargs as opgen's, on `device` (a device the sample names, `"cpu"` as an
    argument or a `device=` kwarg, names it too: PyTorch made the sample for its CPU)."""
    def convert(v: Any) -> Any:
        return device if isinstance(v, str) and v == "cpu" else to_opgen(v, grad=grad, leaves=leaves, device=device)
    x = convert(sample.input)
    args = tuple(convert(a) for a in sample.args)
    kwargs = {k: device if k == "device" and str(v) == "cpu" else convert(v) for k, v in sample.kwargs.items()}
    return x, args, kwargs


def _result_device(sample: Any, device: str) -> str:
    """Where the results of `sample` belong: on `device` when the sample holds a tensor or names a device;
    a factory called with neither makes them on the CPU (PyTorch's default device)."""
    import torch

    def places(v: Any) -> bool:
        if isinstance(v, (torch.Tensor, torch.device)) or (isinstance(v, str) and v == "cpu"):
            return True
        if isinstance(v, (list, tuple)):
            return any(places(x) for x in v)
        if isinstance(v, dict):
            return any(places(x) for x in v.values())
        return False
    return device if places((sample.input, sample.args, sample.kwargs)) else "cpu"


def _run_forward(info: Any, fn: Callable[..., Any], sample: Any, dtype_name: str, values: bool,
                 device: str) -> None:
    tol = tolerance(info, dtype_name, device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = info.op(sample.input, *sample.args, **sample.kwargs)
        except Exception:
            return  # torch refuses this sample on the CPU
        x, args, kwargs = _sample_call(sample, device)
        try:
            actual = fn(x, *args, **kwargs)
        except Exception as e:
            raise Mismatch(f"raised {type(e).__name__}: {str(e)[:160]}") from None
        if info.name in TIE_INDICES:
            expected, actual = _tie_indices(info.name, sample, expected, actual, device)
        compare(expected, actual, tol, values=values, device=_result_device(sample, device))


def _tie_indices(name: str, sample: Any, expected: Any, actual: Any, device: str) -> tuple[Any, Any]:
    """The index outputs of a sort-like op replaced by the input values they select (ties may differ)."""
    import torch
    pos, default, which = TIE_INDICES[name]
    dim = sample.kwargs.get("dim", sample.args[pos] if len(sample.args) > pos else default)
    x = sample.input.detach()

    def select(idx: Any) -> Any:
        i = torch.from_numpy(np.asarray(np_of(idx))) if not isinstance(idx, torch.Tensor) else idx
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
    return swap(expected, True), _to_opgen_tree(converted, device)


def _to_opgen_tree(value: Any, device: str) -> Any:
    import torch
    if isinstance(value, torch.Tensor):
        return to_opgen(value, device=device)
    if isinstance(value, (tuple, list)):
        return type(value)(_to_opgen_tree(v, device) for v in value) if isinstance(value, list) else \
            tuple(_to_opgen_tree(v, device) for v in value)
    return value


def _run_variant(info: Any, kind: str, variant: Any, sample: Any, dtype_name: str, values: bool,
                 device: str) -> None:
    """The method or in-place variant of one sample (`kind` "method" or "inplace")."""
    import torch
    G = _G()
    if not isinstance(sample.input, torch.Tensor):
        return
    tol = tolerance(info, dtype_name, device)
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
        x, args, kwargs = _sample_call(sample, device)
        x = x.detach().clone()  # as torch's `tx` (a clone: its own storage)
        method = rebound or getattr(G.Tensor, name, None)
        if method is None:
            raise Mismatch(f"Tensor.{name} is missing")
        try:
            actual = method(x, *args, **kwargs)
        except Exception as e:
            raise Mismatch(f"Tensor.{name} raised {type(e).__name__}: {str(e)[:160]}") from None
        if info.name in TIE_INDICES:
            expected, actual = _tie_indices(info.name, sample, expected, actual, device)
        compare(expected, actual, tol, values=values, where=f"Tensor.{name}", device=device)
        if kind == "inplace":
            compare(tx, x, tol, values=values, where=f"Tensor.{name} (self after)", device=device)
            if expected is tx and actual is not x:
                raise Mismatch(f"Tensor.{name} does not return self")

def _run_out(info: Any, fn: Callable[..., Any], sample: Any, dtype_name: str, values: bool, device: str) -> None:
    import torch
    G = _G()
    tol = tolerance(info, dtype_name, device)
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
        x, args, kwargs = _sample_call(sample, device)
        name = str(expected.dtype).removeprefix("torch.")
        if not hasattr(G, name):  # a dtype opgen does not have (complex): the out= form cannot be asked for
            raise Mismatch(f"out=: torch's result is {name}, a dtype opgen does not have")
        out = G.empty(tuple(expected.shape), dtype=getattr(G, name), device=device)
        try:
            r = fn(x, *args, **kwargs, out=out)
        except Exception as e:
            raise Mismatch(f"out= raised {type(e).__name__}: {str(e)[:160]}") from None
        compare(t_out, out, tol, values=values, where="out=", device=device)
        if r is not out:
            raise Mismatch("out=: the call does not return `out`")


def _run_grad(info: Any, fn: Callable[..., Any], sample: Any, gradgrad: bool, device: str) -> None:
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
            t_grads = torch.autograd.grad(t_outs, t_leaves, [torch.from_numpy(c).to(o.dtype)
                                                             for c, o in zip(cot, t_outs, strict=True)],
                                          allow_unused=True, create_graph=gradgrad)
        except Exception:
            return  # torch cannot differentiate this sample
        g_leaves: list[Any] = []
        x, args, kwargs = _sample_call(sample, device, grad=True, leaves=g_leaves)
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
            g_grads = G.autograd.grad(g_outs, g_leaves, [G.tensor(c, dtype=o.dtype, device=device)
                                                         for c, o in zip(cot, g_outs, strict=True)],
                                      allow_unused=True, create_graph=gradgrad)
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
            compare(tg, gg, tol, where=f"gradient of input {i}", device=device)
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
            terms = [(gg * G.tensor(v, dtype=gg.dtype, device=device)).sum() for (_, gg), v in zip(pairs, vs,
                                                                                                 strict=True)]
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
            compare(tg, gg, tol, where=f"second derivative of input {i}", device=device)


CATEGORIES = ("forward", "method", "inplace", "out", "grad", "gradgrad", "errors")


def samples_of(info: Any, dtype: Any, *, requires_grad: bool, limit: int | None,
               reference: bool = False) -> list[Any]:
    """The first `limit` (None: all) CPU sample inputs of the entry: what `info.sample_inputs` yields, each
    made after seeding PyTorch's, Python's and NumPy's generators with PyTorch's test SEED as it does, without
    its tracking of the running unittest test (which walks the call stack with `inspect.stack()` on every
    call: about half a second under pytest, more than the whole comparison). `reference`: the entry's
    `reference_inputs` instead (its samples and the harder ones it adds; the samples where it has none)."""
    from torch.testing._internal.common_utils import SEED, set_rng_seed
    make = info.reference_inputs_func if reference and info.reference_inputs_func is not None \
        else info.sample_inputs_func
    it = iter(make(info, "cpu", dtype, requires_grad))
    out: list[Any] = []
    while limit is None or len(out) < limit:
        set_rng_seed(SEED)
        try:
            out.append(next(it))
        except StopIteration:
            break
    return out


def check_entry(info: Any, *, dtypes: Iterable[str] = FAST_DTYPES, max_samples: int | None = 3,
                grad_samples: int | None = 2, variants: bool = True, device: str = "cpu",
                exhaustive: bool = False) -> Result:
    """Run the entry's samples through torch and opgen; record the first failure of each category
    (`CATEGORIES`: the function form, the method and in-place variants, `out=`, gradients, second
    derivatives, error inputs). A category that failed once is not run again.

    `exhaustive` (the held-out run): the OpInfo's `reference_inputs` (its samples and the harder ones it adds)
    instead of `sample_inputs`, `out=` and second derivatives on every sample, and its `error_inputs`, each of
    which opgen must refuse as PyTorch does (any exception)."""
    import torch
    key = key_of(info)
    fn = opgen_callable(info)
    if fn is None:
        return Result(key, "missing")
    result = Result(key, "agree")
    values = key not in NONDETERMINISTIC and info.name not in NONDETERMINISTIC
    # the samples are PyTorch's CPU tensors (the oracle); on a device, the dtypes PyTorch has on both
    supported = {str(d).removeprefix("torch.") for d in info.supported_dtypes("cpu")}
    if device != "cpu":
        supported &= {str(d).removeprefix("torch.") for d in info.supported_dtypes(device)}

    def attempt(category: str, where: str, run: Callable[[], None]) -> None:
        if category in result.failed:
            return
        try:
            run()
        except Inexpressible:
            pass
        except Mismatch as e:
            result.status = "differ"
            result.failed[category] = f"{where}: {e}"
            cause = e.__context__  # the exception opgen raised (reported `from None`)
            if isinstance(cause, DispatchError) and cause.key == device.upper() and cause.operator:
                result.refused[category] = cause.operator

    inplace = info.inplace_variant if variants and info.inplace_variant is not info.op else None
    method = info.method_variant if variants else None
    for dtype_name in dtypes:
        if dtype_name not in supported:
            continue
        tdtype = getattr(torch, dtype_name)
        try:
            found = samples_of(info, tdtype, requires_grad=False, limit=max_samples, reference=exhaustive)
        except Exception:
            continue
        for i, sample in enumerate(found):
            result.checked += 1
            where = f"{dtype_name} sample {i} ({_describe(sample)})"
            attempt("forward", where, lambda s=sample, d=dtype_name: _run_forward(info, fn, s, d, values,
                                                                                               device))
            if method is not None:
                attempt("method", where, lambda s=sample, d=dtype_name: _run_variant(info, "method", method, s, d,
                                                                                     values, device))
            if inplace is not None:
                attempt("inplace", where, lambda s=sample, d=dtype_name: _run_variant(info, "inplace", inplace, s,
                                                                                      d, values, device))
            if variants and info.supports_out and (i == 0 or exhaustive):
                attempt("out", where, lambda s=sample, d=dtype_name: _run_out(info, fn, s, d, values, device))
    if values and info.supports_autograd and "float64" in supported and grad_samples != 0:
        try:
            found = samples_of(info, torch.float64, requires_grad=True, limit=grad_samples, reference=exhaustive)
        except Exception:
            found = []
        for i, sample in enumerate(found):
            where = f"float64 sample {i} ({_describe(sample)})"
            attempt("grad", where, lambda s=sample: _run_grad(info, fn, s, gradgrad=False, device=device))
            if (i == 0 or exhaustive) and info.supports_gradgrad and "grad" not in result.failed:
                attempt("gradgrad", where, lambda s=sample: _run_grad(info, fn, s, gradgrad=True, device=device))
    if exhaustive:
        try:
            errors = list(info.error_inputs("cpu"))
        except Exception:
            errors = []
        for i, err in enumerate(errors):
            attempt("errors", f"error input {i} ({_describe(err.sample_input)})",
                    lambda e=err: _run_error(info, fn, e, device))
    return result


def _run_error(info: Any, fn: Callable[..., Any], err: Any, device: str) -> None:
    """One of the OpInfo's error inputs: where PyTorch raises, opgen must raise too (any exception)."""
    s = err.sample_input
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            info.op(s.input, *s.args, **s.kwargs)
        except Exception:
            pass
        else:
            return  # an error input of another device or build: PyTorch's CPU accepts it
        try:
            x, args, kwargs = _sample_call(s, device)
        except Exception:
            return  # not expressible in opgen (a complex tensor): refused before the call
        try:
            fn(x, *args, **kwargs)
        except Exception:
            return
    raise Mismatch(f"accepted what PyTorch refuses with {err.error_type.__name__} ({err.error_regex[:80]!r})")


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
    'linalg.svd:forward': _SIGNS + " (the reference inputs' full_matrices=True samples show it)",
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
    parser.add_argument("--device", default="cpu", help="where opgen's tensors live: cpu, or cuda (with "
                        "OPGEN_EMULATE_CUDA=1 without a GPU); PyTorch's CPU stays the oracle")
    parser.add_argument("--exhaustive", action="store_true",
                        help="the held-out run: every reference input of every dtype, out= and second derivatives "
                             "on every sample, the error inputs")
    ns = parser.parse_args(argv)
    start = time.perf_counter()
    entries = [o for o in eligible(load_op_db()) if ns.k in key_of(o)]
    results = []
    for info in entries:
        if ns.exhaustive:
            results.append(check_entry(info, dtypes=ALL_DTYPES, max_samples=None, grad_samples=None,
                                       device=ns.device, exhaustive=True))
            continue
        results.append(check_entry(info, dtypes=ALL_DTYPES if ns.all_dtypes else FAST_DTYPES,
                                   max_samples=ns.samples or None, grad_samples=ns.samples or None,
                                   device=ns.device))
    by = collections.Counter(r.status for r in results)
    exist = by["agree"] + by["differ"]
    n = len(results)
    core = sum(1 for r in results if r.status != "missing" and not set(r.failed) & {"forward", "grad", "gradgrad"})
    print(f"on {ns.device}: eligible OpInfo entries: {n}; exist in opgen: {exist} ({100 * exist / max(n, 1):.1f}%); "
          f"agree on every sample and variant: {by['agree']} ({100 * by['agree'] / max(n, 1):.1f}%); "
          f"agree in the function form and gradients: {core} ({100 * core / max(n, 1):.1f}%); "
          f"differ: {by['differ']} ({time.perf_counter() - start:.0f} s)")
    missing = collections.defaultdict(list)
    for info, r in zip(entries, results, strict=True):
        if r.status == "missing":
            missing[family(info)].append(r.key)
    grads = [r for info, r in zip(entries, results, strict=True) if r.status != "missing" and info.supports_autograd]
    grads_ok = sum(1 for r in grads if not set(r.failed) & {"grad", "gradgrad"})
    errors_bad = sum(1 for r in results if "errors" in r.failed)
    print(f"gradients agree: {grads_ok} of {len(grads)} entries that exist and support autograd; "
          f"accept an error input PyTorch refuses: {errors_bad}")
    print("missing, by family:")
    for fam, keys in sorted(missing.items(), key=lambda kv: -len(kv[1])):
        shown = keys if ns.missing else keys[:12]
        print(f"  {fam} ({len(keys)}): {', '.join(shown)}{' ...' if len(keys) > len(shown) else ''}")
    if ns.device != "cpu":
        _print_refusals(results)
    print("differ:")
    for r in results:
        for category, failure in r.failed.items():
            if category in r.refused:
                continue
            gap = KNOWN_GAPS.get(f"{r.key}:{category}")
            tag = f" [KNOWN_GAPS: {gap}]" if gap else ""
            print(f"  {r.key}:{category}{tag}: {failure[:240] if not ns.v else failure}")
    stale = [g for g in KNOWN_GAPS if g.rsplit(":", 1)[0] in {r.key for r in results}
             and g.rsplit(":", 1)[1] not in next(r for r in results if r.key == g.rsplit(":", 1)[0]).failed]
    if stale:
        print("KNOWN_GAPS entries that agree now (remove them):", ", ".join(stale))
    return 0


def _print_refusals(results: list[Result]) -> None:
    """The entries the device refuses (an operator they reach has no kernel for its key), by operator."""
    by_op: dict[str, list[str]] = collections.defaultdict(list)
    for r in results:
        for op in sorted(set(r.refused.values())):
            by_op[op].append(r.key)
    refused = {r.key for r in results if r.refused}
    print(f"refused on the device (no kernel for its key): {len(refused)} entries, {len(by_op)} operators")
    for op, keys in sorted(by_op.items()):
        print(f"  {op}: {', '.join(keys)}")


if __name__ == "__main__":
    sys.exit(main())
