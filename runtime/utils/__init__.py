"""`G.utils`: helpers outside the op API; `G.utils.data` holds datasets and the DataLoader,
`G.utils.checkpoint` activation checkpointing."""

from runtime.utils import checkpoint, data

__all__ = ["checkpoint", "data"]
