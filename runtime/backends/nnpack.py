"""`G.backends.nnpack`: opgen never calls NNPACK."""


def is_available() -> bool:
    return False


__all__ = ["is_available"]
