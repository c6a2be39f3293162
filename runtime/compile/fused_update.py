"""Fused optimizer updates: the update rules of SGD and Adam/AdamW as one C++ loop per parameter, which the
`optimizer_step` node of a compiled training step runs instead of the optimizer's own update when it can
(Note [Fused optimizer updates]).

Note [Fused optimizer updates]
An optimizer class registers its rule (`register_fused_update(cls, "sgd" | "adam")`, from runtime.optim,
which sits above this package); a subclass that overrides `_update` is not covered. At every run the
node reads the hyper-parameters from `param_groups` and the state from `state`, as the eager update does,
and computes in Python what is a number per group or per parameter (`1 - dampening`, Adam's step count
and bias corrections), then calls the loop with these numbers and the arrays' addresses. The loop does the
eager rule's operations in its order, each rounded to the parameter's dtype (contraction off), so the
result is the eager update's. It is used when every parameter with a gradient, its gradient and its state
tensors are contiguous host arrays of one float dtype, the hyper-parameters are Python numbers and the
state is complete (the first step, which creates the state, runs the eager update); otherwise the
node runs the optimizer's own update.
"""

from __future__ import annotations

import ctypes
import functools
import math
from typing import Any

import numpy as np

from runtime.tensor import Tensor

_RULES: dict[type, str] = {}


def register_fused_update(cls: type, rule: str) -> None:
    """`cls`'s update is `rule` ("sgd" or "adam") for compiled training steps."""
    if rule not in ("sgd", "adam"):
        raise ValueError(f"unknown fused update rule {rule!r}")
    _RULES[cls] = rule


def rule_of(opt: Any) -> str | None:
    cls = type(opt)
    for base in cls.__mro__:
        rule = _RULES.get(base)
        if rule is not None:
            return rule if getattr(cls, "_update", None) is getattr(base, "_update", None) else None
    return None


_SOURCE = """
template <typename T>
static void sgd(T* __restrict p, const T* __restrict g, T* __restrict buf, long long n, double lr, double momentum,
                double dampening1, double wd, int nesterov, int maximize) {
  const T neg_lr = static_cast<T>(-lr), mom = static_cast<T>(momentum), damp1 = static_cast<T>(dampening1),
          decay = static_cast<T>(wd);
  for (long long i = 0; i < n; ++i) {
    T d = maximize ? -g[i] : g[i];
    if (wd != 0.0) d = d + decay * p[i];
    if (momentum != 0.0) {
      T b = buf[i] * mom;
      b = dampening1 == 1.0 ? b + d : b + damp1 * d;
      buf[i] = b;
      d = nesterov ? d + mom * b : b;
    }
    p[i] = p[i] + neg_lr * d;
  }
}

template <typename T>
static void adam(T* __restrict p, const T* __restrict g, T* __restrict m, T* __restrict v, T* __restrict vmax,
                 long long n, double beta1, double beta2, double eps, double wd, double decay_factor,
                 double bias2_sqrt, double step_size, int decoupled, int maximize) {
  const T b1 = static_cast<T>(beta1), b2 = static_cast<T>(beta2), omb1 = static_cast<T>(1.0 - beta1),
          omb2 = static_cast<T>(1.0 - beta2), e = static_cast<T>(eps), decay = static_cast<T>(wd),
          factor = static_cast<T>(decay_factor), bc2 = static_cast<T>(bias2_sqrt), ss = static_cast<T>(step_size);
  for (long long i = 0; i < n; ++i) {
    T d = maximize ? -g[i] : g[i];
    T pv = p[i];
    if (wd != 0.0) {
      if (decoupled) pv = pv * factor; else d = d + decay * pv;
    }
    T mm = m[i] * b1;
    mm = mm + omb1 * d;
    m[i] = mm;
    T vv = v[i] * b2;
    vv = vv + omb2 * (d * d);
    v[i] = vv;
    T s = vv;
    if (vmax) {
      const T old = vmax[i];
      s = (old != old || old > vv) ? old : vv;
      vmax[i] = s;
    }
    const T den = std::sqrt(s) / bc2 + e;
    p[i] = pv + ss * (mm / den);
  }
}

#define OPGEN_UPDATES(T, SUFFIX) \\
extern "C" void opgen_sgd_##SUFFIX(T* p, const T* g, T* buf, long long n, double lr, double momentum, \\
                                   double dampening1, double wd, int nesterov, int maximize) { \\
  sgd<T>(p, g, buf, n, lr, momentum, dampening1, wd, nesterov, maximize); } \\
extern "C" void opgen_adam_##SUFFIX(T* p, const T* g, T* m, T* v, T* vmax, long long n, double beta1, double beta2, \\
                                    double eps, double wd, double decay_factor, double bias2_sqrt, double step_size, \\
                                    int decoupled, int maximize) { \\
  adam<T>(p, g, m, v, vmax, n, beta1, beta2, eps, wd, decay_factor, bias2_sqrt, step_size, decoupled, maximize); }
OPGEN_UPDATES(float, f32)
OPGEN_UPDATES(double, f64)
"""

_SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}
_P = ctypes.c_void_p
_D = ctypes.c_double
_I = ctypes.c_int
_L = ctypes.c_longlong


_FUNCTIONS: dict[np.dtype, tuple[Any, Any]] = {}  # dtype -> (its sgd loop, its adam loop)


@functools.cache
def _library() -> Any:
    from runtime.compile.cpp_build import build

    lib = build("#include <cmath>\n" + _SOURCE)
    for dtype, suffix in _SUFFIX.items():
        sgd = getattr(lib, f"opgen_sgd_{suffix}")
        sgd.restype, sgd.argtypes = None, [_P, _P, _P, _L, _D, _D, _D, _D, _I, _I]
        adam = getattr(lib, f"opgen_adam_{suffix}")
        adam.restype, adam.argtypes = None, [_P, _P, _P, _P, _P, _L, _D, _D, _D, _D, _D, _D, _D, _I, _I]
        _FUNCTIONS[dtype] = (sgd, adam)
    return lib


def available() -> bool:
    from runtime.compile.cpp_build import find_compiler

    if find_compiler() is None:
        return False
    try:
        _library()
    except (RuntimeError, OSError):
        return False
    return True


_char_at = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def address(a: np.ndarray) -> int:
    """The address of an array's first element (a third of the time `__array_interface__` takes)."""
    try:
        return _addressof(_char_at(a))
    except (TypeError, ValueError):  # read-only or not C-contiguous
        return a.__array_interface__["data"][0]


def _fits(x: Any, a: np.ndarray) -> bool:
    """`x` (an array) is a contiguous host array of `a`'s dtype and shape."""
    return x.__class__ is np.ndarray and x.dtype is a.dtype and x.shape == a.shape and x.flags.c_contiguous


def _numbers(*xs: Any) -> bool:
    return all(x.__class__ is float or x.__class__ is int for x in xs)


def run(opt: Any, rule: str) -> bool:
    """One update of every parameter with a gradient by the fused loop; False (nothing done) where the
    conditions of Note [Fused optimizer updates] do not hold."""
    _library()
    work: list[Any] = []
    sgd = rule == "sgd"
    for group in opt.param_groups:
        if sgd:
            lr, momentum, dampening, wd = group["lr"], group["momentum"], group["dampening"], group["weight_decay"]
            if not _numbers(lr, momentum, dampening, wd):
                return False
            flags = (int(group["nesterov"]), int(group["maximize"]))
        else:
            lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            amsgrad = group.get("amsgrad")
            if not _numbers(lr, beta1, beta2, eps, wd):
                return False
            decoupled = bool(group.get("decoupled_weight_decay", getattr(opt, "decoupled_weight_decay", False)))
            flags = (int(decoupled), int(group["maximize"]))
        for p in group["params"]:
            g = p._grad
            if g is None:
                continue
            a, ga = p._data, g._data
            fn = _FUNCTIONS.get(a.dtype) if a.__class__ is np.ndarray and a.flags.c_contiguous else None
            if fn is None or not _fits(ga, a):
                return False
            state = opt.state.get(p)
            if sgd:
                buf = None
                if momentum != 0:
                    buf = state.get("momentum_buffer") if state else None
                    if buf is None or not _fits(buf._data, a):
                        return False
                work.append((fn[0], p, a, ga, (buf,), (lr, momentum, 1 - dampening, wd, *flags), None))
                continue
            if not state:
                return False
            m, v, step = state.get("exp_avg"), state.get("exp_avg_sq"), state.get("step")
            vmax = state.get("max_exp_avg_sq") if amsgrad else None
            if m is None or v is None or (amsgrad and vmax is None) or not _fits(m._data, a) \
                    or not _fits(v._data, a) or (vmax is not None and not _fits(vmax._data, a)) \
                    or not isinstance(step, Tensor) or step._data.__class__ is not np.ndarray \
                    or step._data.ndim != 0 or step._data.dtype.kind != "f":
                return False
            work.append((fn[1], p, a, ga, (m, v, vmax), (beta1, beta2, eps, wd, 1 - lr * wd, lr, *flags), step))
    for fn, p, a, ga, tensors, numbers, counter in work:
        addresses = [address(t._data) if t is not None else 0 for t in tensors]
        if counter is None:
            fn(address(a), address(ga), *addresses, a.size, *numbers)
        else:
            data = counter._data
            np.add(data, 1, out=data)
            counter._bump_version()
            step = int(data)
            beta1, beta2, eps, wd, factor, lr, decoupled, maximize = numbers
            fn(address(a), address(ga), *addresses, a.size, beta1, beta2,
               eps, wd, factor, math.sqrt(1 - beta2**step), -lr / (1 - beta1**step), decoupled, maximize)
        for t in tensors:
            if t is not None:
                t._bump_version()
        p._bump_version()
    return True
