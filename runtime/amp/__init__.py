"""`G.amp`: autocast regions (runtime/amp/autocast_mode.py, Note [Autocast in opgen]) and GradScaler
(runtime/amp/grad_scaler.py, Note [GradScaler in opgen]), as torch.amp."""

from __future__ import annotations

from runtime.amp import autocast_mode, grad_scaler
from runtime.amp.autocast_mode import (
    autocast,
    autocast_function,
    clear_autocast_cache,
    custom_bwd,
    custom_fwd,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from runtime.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "autocast_function", "autocast_mode", "clear_autocast_cache", "custom_bwd",
           "custom_fwd", "get_autocast_dtype", "grad_scaler", "is_autocast_available", "is_autocast_cache_enabled",
           "is_autocast_enabled", "set_autocast_cache_enabled", "set_autocast_dtype", "set_autocast_enabled"]
