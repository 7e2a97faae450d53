"""A plain-text table, in the layout of tabulate's default ("simple") format, without needing tabulate."""
from __future__ import annotations


def plain_table(rows: list[list[str]], headers: list[str]) -> str:
    """Left-aligned columns two spaces apart, a rule of dashes under the headers.

    >>> print(plain_table([["a", "bb"]], ["x", "y"]))
    x    y
    ---  ---
    a    bb
    """
    widths = [max([len(h) + 2, *(len(row[i]) for row in rows)]) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(row) for row in rows)])
