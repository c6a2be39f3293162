"""Derive the constants of runtime/compile/cpu_math.h (Note [Vector math of the CPU kernels] in
runtime/compile/cpp_build.py).

    python3 tools/fit_cpu_math.py          # print the constants and their float32 errors
    python3 tools/fit_cpu_math.py --check  # exit 1 unless cpu_math.h holds exactly these constants

Only NumPy is used, in float64, against NumPy's exp, expm1 and tanh; every fit runs on Chebyshev nodes of
its interval and is driven towards the minimax one (equal-ripple relative error) by Lawson's iteration: a
weighted least-squares fit whose node weights are multiplied by the node's current error each round.

- exp's reduced argument: e^r = 1 + r + r^2 q(r) for |r| <= ln2/2 (plus a margin for the reduction's
  rounding), q of degree EXP_DEGREE. The polynomial part is linear in q's coefficients; after the fit they are
  rounded to float32 one at a time, lowest first, the higher ones re-fitted to absorb each rounding.
- tanh below TANH_SMALL: tanh(x) = x + x^3 n(x^2)/d(x^2), n of degree 1, d of degree 2 with d(0) = 1. A
  rational fit is not linear: each round solves the linearised problem n(y) - c(y) d(y) ~ 0 (c the
  target (tanh x - x)/x^3) weighted by 1/d_previous(y) (Loeb's method), inside Lawson's reweighting.
- log2(e), ln2 as the float32 nearest (used with a fused multiply-add, whose product is exact), and ln2
  split in two for machines without one: LN2_HI keeps 12 significant bits, so n * LN2_HI is exact in float32
  for |n| < 2^12, LN2_LO is the float32 of the rest.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

HEADER = Path(__file__).resolve().parents[1] / "runtime" / "compile" / "cpu_math.h"
EXP_DEGREE = 3  # q's degree: e^r's polynomial has degree 5
EXP_HALF_WIDTH = 0.5 * np.log(2.0) * (1 + 2.0**-12)
TANH_SMALL = 1.0  # the switch between tanh's two formulas


def _nodes(lo: float, hi: float, n: int = 6000) -> np.ndarray:
    k = np.arange(n)
    return 0.5 * (lo + hi) + 0.5 * (hi - lo) * np.cos(np.pi * (k + 0.5) / n)


def _lawson(basis: np.ndarray, target: np.ndarray, rounds: int = 60) -> np.ndarray:
    """Coefficients c with max |basis @ c - target| near its minimum (Lawson's reweighted least squares)."""
    w = np.full(len(target), 1.0 / len(target))
    c = np.zeros(basis.shape[1])
    for _ in range(rounds):
        sw = np.sqrt(w)
        c = np.linalg.lstsq(basis * sw[:, None], target * sw, rcond=None)[0]
        err = np.abs(basis @ c - target)
        w = w * (err + 1e-300)
        w /= w.sum()
    return c


def fit_exp() -> list[np.float32]:
    r = _nodes(-EXP_HALF_WIDTH, EXP_HALF_WIDTH)
    e = np.exp(r)
    # relative error of 1 + r + r^2 q(r): (r^2 q(r) - (e^r - 1 - r)) / e^r
    basis = np.stack([r**2 * r**k / e for k in range(EXP_DEGREE + 1)], axis=1)
    target = (np.expm1(r) - r) / e
    fixed: list[np.float32] = []
    for k in range(EXP_DEGREE + 1):
        rest = target - basis[:, :k] @ np.array(fixed, dtype=np.float64) if fixed else target
        fixed.append(np.float32(_lawson(basis[:, k:], rest)[0]))
    return fixed


def fit_tanh() -> tuple[list[np.float32], list[np.float32]]:
    """n's two coefficients and d's two (d's constant is 1), float32."""
    x = _nodes(2.0**-12, TANH_SMALL)
    t = np.tanh(x)
    y = x * x
    c = (t - x) / x**3
    scale = t / x**3  # an error in c, times x^3 / tanh(x): the relative error of tanh
    d_prev = np.ones_like(y)
    w = np.full(len(y), 1.0 / len(y))
    basis = np.stack([np.ones_like(y), y, -c * y, -c * y * y], axis=1)
    sol = np.zeros(4)
    for _ in range(100):
        s = np.sqrt(w) / (scale * np.abs(d_prev))
        sol = np.linalg.lstsq(basis * s[:, None], c * s, rcond=None)[0]
        n = sol[0] + sol[1] * y
        d_prev = 1 + sol[2] * y + sol[3] * y * y
        err = np.abs(n / d_prev - c) / scale
        w = w * (err + 1e-300)
        w /= w.sum()
    return [np.float32(sol[0]), np.float32(sol[1])], [np.float32(sol[2]), np.float32(sol[3])]


def reduction_constants() -> dict[str, np.float32]:
    ln2 = np.log(2.0)
    exponent = np.floor(np.log2(ln2))
    hi = np.round(ln2 * 2.0 ** (11 - exponent)) * 2.0 ** (exponent - 11)
    return {"LOG2E": np.float32(1.0 / ln2), "LN2": np.float32(ln2), "LN2_HI": np.float32(hi),
            "LN2_LO": np.float32(ln2 - hi)}


def _hex(c: np.float32) -> str:
    mantissa, exponent = float(c).hex().split("p")
    return f"{mantissa.rstrip('0').rstrip('.')}p{exponent}f"


def block() -> str:
    """The constant lines of cpu_math.h, as this script derives them."""
    q = fit_exp()
    n, d = fit_tanh()
    lines = [f"#define OPGEN_CPU_{name} {_hex(c)}" for name, c in reduction_constants().items()]
    lines += [f"#define OPGEN_CPU_EXP_Q{k} {_hex(c)}" for k, c in enumerate(q)]
    lines += [f"#define OPGEN_CPU_TANH_N{k} {_hex(c)}" for k, c in enumerate(n)]
    lines += [f"#define OPGEN_CPU_TANH_D{k + 1} {_hex(c)}" for k, c in enumerate(d)]
    lines.append(f"#define OPGEN_CPU_TANH_SMALL {_hex(np.float32(TANH_SMALL))}")
    return "\n".join(lines)


def report() -> str:
    """The constants, and the float32 evaluation's error of each fitted part alone (no range reduction)."""
    q = fit_exp()
    n, d = fit_tanh()
    r = np.linspace(-EXP_HALF_WIDTH, EXP_HALF_WIDTH, 200001).astype(np.float32)
    p = np.full_like(r, q[-1])
    for c in reversed(q[:-1]):
        p = p * r + c
    er = (np.float32(1) + (r + (r * r) * p)).astype(np.float64)
    exact = np.exp(r.astype(np.float64))
    exp_err = np.max(np.abs(er - exact) / exact) / 2.0**-23
    x = np.linspace(2.0**-12, TANH_SMALL, 200001).astype(np.float32)
    y = x * x
    tx = (x + (x * y) * ((n[0] + n[1] * y) / (np.float32(1) + y * (d[0] + d[1] * y)))).astype(np.float64)
    exact = np.tanh(x.astype(np.float64))
    tanh_err = np.max(np.abs(tx - exact) / exact) / 2.0**-23
    return (f"{block()}\n// float32 evaluation, max relative error in units of 2^-23: e^r {exp_err:.3f}, "
            f"tanh below {TANH_SMALL} {tanh_err:.3f}")


_DEFINED = re.compile(r"^#define OPGEN_CPU_(?:LOG2E|LN2|LN2_HI|LN2_LO|EXP_Q\d+|TANH_N\d+|TANH_D\d+|TANH_SMALL) .*$",
                      re.M)


def main(argv: list[str]) -> int:
    if argv[1:] == ["--check"]:
        found = "\n".join(_DEFINED.findall(HEADER.read_text()))
        if found != block():
            print(f"{HEADER}: the constants differ from tools/fit_cpu_math.py's:\n{block()}")
            return 1
        return 0
    print(report())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
