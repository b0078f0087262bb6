"""CSV that a spreadsheet reads as data: a text cell never becomes a formula.

Agent names, env ids, errors and messages in agentgym's tables come from whoever made the run;
a spreadsheet that opens a CSV runs a cell beginning with ``=``, ``+``, ``-`` or ``@`` as a
formula (``=HYPERLINK(...)``, ``=cmd|...``), and some also after a tab or a carriage return. Every
CSV agentgym writes goes through `write_csv`, which writes such a text cell with a leading ``'``
(the mark spreadsheets read as "this is text"); numbers are written as numbers.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["FORMULA_STARTS", "text_cell", "write_csv"]

#: What a cell may not begin with and still be read as text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def text_cell(value: Any) -> Any:
    """`value`, with a leading ``'`` if it is text that a spreadsheet would read as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def write_csv(frame: Any, path: str | os.PathLike[str]) -> None:
    """Write a pandas DataFrame as CSV (no index), its text cells made safe by `text_cell`."""
    from pandas.api.types import is_object_dtype, is_string_dtype

    safe = frame.copy()
    for name in safe.columns:
        if is_object_dtype(safe[name]) or is_string_dtype(safe[name]):
            safe[name] = safe[name].map(text_cell, na_action="ignore")
    safe.columns = [text_cell(str(c)) for c in safe.columns]
    safe.to_csv(path, index=False)
