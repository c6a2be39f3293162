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


@functools.cache
def _library() -> Any:
    from runtime.compile.cpp_build import build

    lib = build("#include <cmath>\n" + _SOURCE)
    for suffix in _SUFFIX.values():
        fn = getattr(lib, f"opgen_sgd_{suffix}")
        fn.restype, fn.argtypes = None, [_P, _P, _P, _L, _D, _D, _D, _D, _I, _I]
        fn = getattr(lib, f"opgen_adam_{suffix}")
        fn.restype, fn.argtypes = None, [_P, _P, _P, _P, _P, _L, _D, _D, _D, _D, _D, _D, _D, _I, _I]
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


def _address(t: Tensor | None, like: np.ndarray) -> int | None:
    """The address of `t`'s array when it is a contiguous host array of `like`'s dtype and shape."""
    if t is None:
        return None
    a = t._data
    if a.__class__ is not np.ndarray or a.dtype != like.dtype or a.shape != like.shape or not a.flags.c_contiguous:
        return None
    return a.__array_interface__["data"][0]


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def run(opt: Any, rule: str) -> bool:
    """One update of every parameter with a gradient by the fused loop; False (nothing done) where the
    conditions of Note [Fused optimizer updates] do not hold."""
    plan = []
    for group in opt.param_groups:
        for p in group["params"]:
            g = p._grad
            if g is None:
                continue
            a = p._data
            suffix = _SUFFIX.get(a.dtype) if a.__class__ is np.ndarray and a.flags.c_contiguous else None
            ga = _address(g, a) if suffix else None
            if ga is None:
                return False
            state = opt.state.get(p)
            if rule == "sgd":
                if not all(_number(group[k]) for k in ("lr", "momentum", "dampening", "weight_decay")):
                    return False
                buf = None
                if group["momentum"] != 0:
                    buf = _address(state.get("momentum_buffer") if state else None, a)
                    if buf is None:
                        return False
                plan.append((group, p, a, ga, suffix, (buf,)))
            else:
                if not state or group.get("amsgrad") and state.get("max_exp_avg_sq") is None:
                    return False
                beta1, beta2 = group["betas"]
                if not all(_number(x) for x in (group["lr"], beta1, beta2, group["eps"], group["weight_decay"])):
                    return False
                m, v = _address(state.get("exp_avg"), a), _address(state.get("exp_avg_sq"), a)
                vmax = _address(state.get("max_exp_avg_sq"), a) if group.get("amsgrad") else 0
                step = state.get("step")
                if m is None or v is None or vmax is None or not isinstance(step, Tensor) \
                        or step._data.__class__ is not np.ndarray or step._data.ndim != 0 \
                        or step._data.dtype.kind != "f":
                    return False
                plan.append((group, p, a, ga, suffix, (m, v, vmax, state)))
    lib = _library()
    for group, p, a, ga, suffix, extra in plan:
        pa = a.__array_interface__["data"][0]
        if rule == "sgd":
            getattr(lib, f"opgen_sgd_{suffix}")(pa, ga, extra[0] or 0, a.size, group["lr"], group["momentum"],
                                                1 - group["dampening"], group["weight_decay"], int(group["nesterov"]),
                                                int(group["maximize"]))
            if extra[0]:
                opt.state[p]["momentum_buffer"]._bump_version()
        else:
            m, v, vmax, state = extra
            counter = state["step"]
            np.add(counter._data, 1, out=counter._data)
            counter._bump_version()
            step = int(counter._data)
            lr, (beta1, beta2), wd = group["lr"], group["betas"], group["weight_decay"]
            decoupled = bool(group.get("decoupled_weight_decay", getattr(opt, "decoupled_weight_decay", False)))
            getattr(lib, f"opgen_adam_{suffix}")(pa, ga, m, v, vmax, a.size, beta1, beta2, group["eps"], wd,
                                                 1 - lr * wd, math.sqrt(1 - beta2**step), -lr / (1 - beta1**step),
                                                 int(decoupled), int(group["maximize"]))
            for k in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
                if k in state:
                    state[k]._bump_version()
        p._bump_version()
    return True
