"""`G.backends.miopen`: opgen has no ROCm backend."""

immediate: bool = False


def is_available() -> bool:
    return False


__all__ = ["immediate", "is_available"]
