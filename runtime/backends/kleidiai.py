"""`G.backends.kleidiai`: opgen's CPU kernels are NumPy's; KleidiAI is never used."""


def is_available() -> bool:
    return False


__all__ = ["is_available"]
