"""`G.backends.mkldnn`: opgen's CPU kernels are NumPy's; oneDNN is never used."""

enabled: bool = True


def is_available() -> bool:
    return False


__all__ = ["enabled", "is_available"]
