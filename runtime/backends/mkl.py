"""`G.backends.mkl`: whether NumPy's BLAS, which opgen's CPU matmul calls, is Intel MKL."""


def is_available() -> bool:
    from threadpoolctl import threadpool_info
    return any(info.get("internal_api") == "mkl" for info in threadpool_info())


__all__ = ["is_available"]
