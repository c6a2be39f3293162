"""`G.optim`: optimizers that update parameters in place with ops (so they run on any device)."""

from runtime.optim.adam import Adam, AdamW
from runtime.optim.optimizer import Optimizer
from runtime.optim.sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Optimizer"]
