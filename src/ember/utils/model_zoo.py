"""``ember.utils.model_zoo``: torch's older name for loading a checkpoint from a URL.

``load_url`` is :func:`ember.hub.load_state_dict_from_url`.

>>> import ember
>>> ember.utils.model_zoo.load_url is ember.hub.load_state_dict_from_url
True
"""
from ember.hub import load_state_dict_from_url as load_url

__all__ = ["load_url"]
