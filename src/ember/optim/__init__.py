"""Optimizers: update parameters from their gradients; learning-rate schedules; weight averaging.

>>> import ember
>>> model = ember.nn.Linear(2, 1)
>>> opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
>>> loss = model(ember.ones(4, 2)).pow(2).mean()
>>> opt.zero_grad(); loss.backward(); opt.step()
"""
from ember.optim import lr_scheduler, swa_utils
from ember.optim.adadelta import Adadelta
from ember.optim.adafactor import Adafactor
from ember.optim.adagrad import Adagrad
from ember.optim.adam import Adam
from ember.optim.adamax import Adamax
from ember.optim.adamw import AdamW
from ember.optim.asgd import ASGD
from ember.optim.lbfgs import LBFGS
from ember.optim.muon import Muon
from ember.optim.nadam import NAdam
from ember.optim.optimizer import Optimizer
from ember.optim.radam import RAdam
from ember.optim.rmsprop import RMSprop
from ember.optim.rprop import Rprop
from ember.optim.sgd import SGD
from ember.optim.sparse_adam import SparseAdam
from ember.optim._swap_in import swap_in_optimizer_params_and_state

__all__ = ["ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "Muon", "NAdam",
           "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam", "lr_scheduler", "swa_utils",
           "swap_in_optimizer_params_and_state"]
