"""`G.optim`: optimizers that update parameters in place with ops (so they run on any device), and
`lr_scheduler`."""

from runtime.optim import lr_scheduler
from runtime.optim.adam import Adam, AdamW
from runtime.optim.optimizer import Optimizer
from runtime.optim.rmsprop import Adagrad, RMSprop
from runtime.optim.sgd import SGD

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
