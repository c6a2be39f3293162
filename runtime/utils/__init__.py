"""`G.utils`: helpers outside the op API; `G.utils.data` holds datasets and the DataLoader."""

from runtime.utils import data

__all__ = ["data"]
