"""`G.backends.cpu`: the CPU's vector capability as NumPy reports it."""


def get_cpu_capability() -> str:
    """"AVX512", "AVX2" or "DEFAULT": the widest x86 vector extension NumPy found on this CPU."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # NumPy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as features  # type: ignore[no-redef]
    if features.get("AVX512F"):
        return "AVX512"
    if features.get("AVX2"):
        return "AVX2"
    return "DEFAULT"


__all__ = ["get_cpu_capability"]
