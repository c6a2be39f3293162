"""Derive the polynomial coefficients of runtime/compile/cpu_math.h (Note [Vector math of the CPU kernels]).

    python3 tools/fit_cpu_math.py          # print the coefficients and their float32 errors
    python3 tools/fit_cpu_math.py --check  # exit 1 unless cpu_math.h holds exactly these coefficients

Each fit is a weighted least-squares fit in float64 on Chebyshev nodes of the interval, the weights
refined by Lawson's iteration (each round multiplies a node's weight by its current error), which moves the
fit towards the minimax one (equal-ripple relative error). The coefficients are then rounded to float32
one at a time, lowest degree first, each remaining higher one re-fitted to absorb the rounding of the ones
before (so the float32 polynomial is the best one that holds the fixed ones).

- exp: e^r = 1 + r + r^2 * q(r) for |r| <= ln2/2 (the reduced argument of exp's range reduction, plus a
  margin for its rounding); q of degree EXP_DEGREE, relative error of e^r minimised.
- tanh: tanh(x) = x + x^3 * p(x^2) for |x| <= TANH_SMALL (below the switch to 1 - 2/(e^{2|x|} + 1)); p of
  degree TANH_DEGREE in x^2, relative error of tanh minimised.
Only NumPy is used; the targets are NumPy's float64 exp, expm1 and tanh.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

HEADER = Path(__file__).resolve().parents[1] / "runtime" / "compile" / "cpu_math.h"
EXP_DEGREE = 4  # q's degree: exp's polynomial has degree 6
EXP_HALF_WIDTH = 0.5 * np.log(2.0) * (1 + 2.0**-12)
TANH_SMALL = 0.625  # must equal OPGEN_CPU_TANH_SMALL in cpu_math.h
TANH_DEGREE = 5  # p's degree in x^2: the odd polynomial has degree 13


def _nodes(lo: float, hi: float, n: int = 4000) -> np.ndarray:
    k = np.arange(n)
    return 0.5 * (lo + hi) + 0.5 * (hi - lo) * np.cos(np.pi * (k + 0.5) / n)


def _lawson(basis: np.ndarray, target: np.ndarray, rounds: int = 60) -> np.ndarray:
    """Coefficients c minimising max |basis @ c - target| (approximately: Lawson's reweighted fit)."""
    w = np.full(len(target), 1.0 / len(target))
    c = np.zeros(basis.shape[1])
    for _ in range(rounds):
        sw = np.sqrt(w)
        c = np.linalg.lstsq(basis * sw[:, None], target * sw, rcond=None)[0]
        err = np.abs(basis @ c - target)
        w = w * (err + 1e-300)
        w /= w.sum()
    return c


def _fit_float32(basis: np.ndarray, target: np.ndarray) -> list[np.float32]:
    """The fit with coefficients rounded to float32 one at a time, the later ones re-fitted each time."""
    fixed: list[np.float32] = []
    for k in range(basis.shape[1]):
        rest = target - basis[:, :k] @ np.array(fixed, dtype=np.float64) if fixed else target
        c = _lawson(basis[:, k:], rest)
        fixed.append(np.float32(c[0]))
    return fixed


def fit_exp() -> list[np.float32]:
    r = _nodes(-EXP_HALF_WIDTH, EXP_HALF_WIDTH)
    e = np.exp(r)
    # relative error of 1 + r + r^2 q(r): r^2 (q(r) - (e^r - 1 - r) / r^2) / e^r
    basis = np.stack([r**2 * r**k / e for k in range(EXP_DEGREE + 1)], axis=1)
    target = (np.expm1(r) - r) / e
    return _fit_float32(basis, target)


def fit_tanh() -> list[np.float32]:
    x = _nodes(2.0**-12, TANH_SMALL)
    t = np.tanh(x)
    x2 = x * x
    basis = np.stack([x**3 * x2**k / t for k in range(TANH_DEGREE + 1)], axis=1)
    target = (t - x) / t
    return _fit_float32(basis, target)


def _exp_f32(r: np.ndarray, q: list[np.float32]) -> np.ndarray:
    p = np.full_like(r, q[-1])
    for c in reversed(q[:-1]):
        p = p * r + c
    return np.float32(1) + (r + (r * r) * p)


def _tanh_f32(x: np.ndarray, p: list[np.float32]) -> np.ndarray:
    x2 = x * x
    s = np.full_like(x, p[-1])
    for c in reversed(p[:-1]):
        s = s * x2 + c
    return x + (x * x2) * s


def _hex(c: np.float32) -> str:
    mantissa, exponent = float(c).hex().split("p")
    return f"{mantissa.rstrip('0').rstrip('.')}p{exponent}f"


def reduction_constants() -> dict[str, np.float32]:
    """log2(e) and ln(2) split in two: LN2_HI keeps 12 significant bits, so n * LN2_HI is exact in float32
    for |n| < 2^12 (the reduction's n stays within [-150, 129]); LN2_LO is the float32 of the rest."""
    ln2 = np.log(2.0)
    exponent = np.floor(np.log2(ln2))
    hi = np.round(ln2 * 2.0 ** (11 - exponent)) * 2.0 ** (exponent - 11)
    return {"LOG2E": np.float32(1.0 / ln2), "LN2_HI": np.float32(hi), "LN2_LO": np.float32(ln2 - hi)}


def block() -> str:
    """The constant lines of cpu_math.h, as this script derives them."""
    q, p = fit_exp(), fit_tanh()
    lines = [f"#define OPGEN_CPU_{name} {_hex(c)}" for name, c in reduction_constants().items()]
    lines += [f"#define OPGEN_CPU_EXP_Q{k} {_hex(c)}" for k, c in enumerate(q)]
    lines += [f"#define OPGEN_CPU_TANH_P{k} {_hex(c)}" for k, c in enumerate(p)]
    return "\n".join(lines)


def report() -> str:
    q, p = fit_exp(), fit_tanh()
    r = np.linspace(-EXP_HALF_WIDTH, EXP_HALF_WIDTH, 200001).astype(np.float32)
    ex = _exp_f32(r, q).astype(np.float64)
    exp_err = np.max(np.abs(ex - np.exp(r.astype(np.float64))) / np.exp(r.astype(np.float64))) / 2.0**-23
    x = np.linspace(2.0**-12, TANH_SMALL, 200001).astype(np.float32)
    tx = _tanh_f32(x, p).astype(np.float64)
    tanh_err = np.max(np.abs(tx - np.tanh(x.astype(np.float64))) / np.tanh(x.astype(np.float64))) / 2.0**-23
    return (f"{block()}\n// float32 evaluation on a fine grid (max relative error in units of 2^-23, no range "
            f"reduction): exp {exp_err:.3f}, tanh below {TANH_SMALL} {tanh_err:.3f}")


def main(argv: list[str]) -> int:
    if argv[1:] == ["--check"]:
        text = HEADER.read_text()
        found = "\n".join(re.findall(r"^#define OPGEN_CPU_(?:LOG2E|LN2_HI|LN2_LO|EXP_Q\d+|TANH_P\d+) .*$", text, re.M))
        if found != block():
            print(f"{HEADER}: coefficients differ from tools/fit_cpu_math.py's:\n{block()}")
            return 1
        return 0
    print(report())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
