"""`G.backends.openmp`: opgen's own kernels run no OpenMP regions."""


def is_available() -> bool:
    return False


__all__ = ["is_available"]
