"""``ember.backends.mha``: whether the transformer encoder may take its fast path for padded batches.

On that path (in evaluation, without gradients, with a left-aligned ``src_key_padding_mask``) torch's
``TransformerEncoder`` runs each sequence at its own length and gives 0 at the padded positions; ember computes
the same values with the mask and fills the padded positions the same way. Turning the path off keeps the
masked computation's values there.

>>> import ember
>>> ember.backends.mha.get_fastpath_enabled()
True
"""

_fastpath_enabled = True


def get_fastpath_enabled() -> bool:
    return _fastpath_enabled


def set_fastpath_enabled(value: bool) -> None:
    global _fastpath_enabled
    _fastpath_enabled = value
