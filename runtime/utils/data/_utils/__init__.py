"""DataLoader internals (torch.utils.data._utils): collation and the worker processes."""

from runtime.utils.data._utils import collate, worker

__all__ = ["collate", "worker"]
