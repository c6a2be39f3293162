"""`G.optim`: optimizers that update parameters in place with ops (so they run on any device), `lr_scheduler`
and `swa_utils`."""

from runtime.optim import lr_scheduler, swa_utils
from runtime.optim.adadelta import Adadelta
from runtime.optim.adafactor import Adafactor
from runtime.optim.adam import Adam, AdamW
from runtime.optim.adam_variants import Adamax, NAdam, RAdam
from runtime.optim.asgd import ASGD
from runtime.optim.lbfgs import LBFGS
from runtime.optim.muon import Muon
from runtime.optim.optimizer import Optimizer
from runtime.optim.rmsprop import Adagrad, RMSprop
from runtime.optim.rprop import Rprop
from runtime.optim.sgd import SGD
from runtime.optim.sparse_adam import SparseAdam

__all__ = ["Muon", "ASGD", "LBFGS", "SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "NAdam",
           "Optimizer", "RAdam", "RMSprop", "Rprop", "SparseAdam", "lr_scheduler", "swa_utils"]
