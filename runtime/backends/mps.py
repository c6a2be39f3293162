"""`G.backends.mps`: opgen has no Metal backend."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False


__all__ = ["is_available", "is_built"]
