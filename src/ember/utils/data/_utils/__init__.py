"""torch's private package of data-loading parts, kept for the one path its documentation shows users:
``_utils.collate``, to extend ``default_collate``."""
