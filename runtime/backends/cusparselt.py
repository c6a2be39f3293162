"""`G.backends.cusparselt`: opgen has no sparse kernels."""


def is_available() -> bool:
    return False


def version() -> None:
    return None


__all__ = ["is_available", "version"]
