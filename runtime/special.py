"""`G.special`: torch.special's functions under its names. Each is an op of native_functions.yaml
(`special_<name>` where PyTorch's aten op is named so, else the torch-level op: `special.erf` is `G.erf`);
kernels in runtime/kernels/special.py (SciPy) or generated from a pointwise spec."""

from __future__ import annotations

from typing import Any

from runtime import opcall

_ALIASES = {  # torch.special name -> opgen op (PyTorch's aliases)
    "erf": "erf", "erfc": "erfc", "erfinv": "erfinv", "expit": "sigmoid", "exp2": "exp2", "expm1": "expm1",
    "log1p": "log1p", "gammaln": "lgamma", "digamma": "digamma", "psi": "digamma", "polygamma": "polygamma",
    "multigammaln": "mvlgamma", "i0": "i0", "sinc": "sinc", "round": "round", "logit": "logit",
    "xlogy": "xlogy", "gammainc": "igamma", "gammaincc": "igammac", "logsumexp": "logsumexp",
    "softmax": "softmax", "log_softmax": "log_softmax", "modified_bessel_i0": "i0",
    "modified_bessel_i1": "special_i1",
}
_OWN = (  # ops named special_<name>
    "i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr", "erfcx", "entr", "xlog1py", "zeta", "airy_ai",
    "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
    "legendre_polynomial_p",
)

__all__ = sorted({*_ALIASES, *_OWN})


def __getattr__(name: str) -> Any:
    if name in _ALIASES:
        return getattr(opcall.api, _ALIASES[name])
    if name in _OWN:
        return getattr(opcall.api, "special_" + name)
    raise AttributeError(f"module 'special' has no attribute '{name}'")


def __dir__() -> list[str]:
    return list(__all__)
