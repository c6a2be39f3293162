"""`G.backends.opt_einsum`: opgen's einsum contracts with NumPy's own path search, not opt_einsum."""

enabled: bool = True
strategy: str | None = None


def is_available() -> bool:
    return False


def get_opt_einsum() -> None:
    return None


__all__ = ["enabled", "get_opt_einsum", "is_available", "strategy"]
