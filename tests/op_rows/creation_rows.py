"""Op-table rows: creation_rows."""
from op_spec import A, C, D, Err, OpSpec, S, T, s  # noqa: F401

OPS = ()
