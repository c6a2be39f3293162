"""`G.signal`: torch.signal's namespace; its one submodule is `windows` (runtime/signal/windows.py)."""

from runtime.signal import windows

__all__ = ["windows"]
