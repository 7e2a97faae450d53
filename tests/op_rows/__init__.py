"""The op table's rows, one file per family of ops (joined in ``op_table.OPS``)."""
