"""`G.backends.quantized`: opgen has no quantized tensors; the engine is reported as "none"."""

engine: str = "none"
supported_engines: list[str] = ["none"]

__all__ = ["engine", "supported_engines"]
