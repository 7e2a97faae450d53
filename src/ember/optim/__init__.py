"""Optimizers: update parameters from their gradients.

>>> import ember
>>> model = ember.nn.Linear(2, 1)
>>> opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
>>> loss = model(ember.ones(4, 2)).pow(2).mean()
>>> opt.zero_grad(); loss.backward(); opt.step()
"""
from ember.optim.optimizer import Optimizer
from ember.optim.sgd import SGD

__all__ = ["Optimizer", "SGD"]
