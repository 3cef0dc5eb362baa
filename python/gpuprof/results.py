"""Results of gpuprof's analyses as plain Python objects."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

# The table to_pandas() returns when none is named, per kind of result.
_DEFAULT_TABLE = {"summary": "rows", "analyze": "top_kernels", "diff": "rows",
                  "advise": "suggestions", "ops": "rows"}
_DEFAULT_TABLE["compile"] = "compile_ids"  # gpuprof compile: one row per compile id


class Result(dict):
    """A dict holding a gpuprof command's JSON document (the same schema as ``--json``), with
    :meth:`tables` and :meth:`to_pandas` for its row tables."""

    def __init__(self, doc: Dict[str, Any], kind: str) -> None:
        super().__init__(doc)
        self.kind = kind

    def tables(self) -> List[str]:
        """Names of the members that are tables (lists of row dicts)."""
        names = [k for k, v in self.items()
                 if isinstance(v, list) and v and isinstance(v[0], dict)]
        if self.kind == "summary":
            names.insert(0, "rows")
        return names

    def rows(self, table: Optional[str] = None) -> List[Dict[str, Any]]:
        """The rows of a table as a list of dicts. For a summary, "rows" are every kind's rows
        (each row says its kind)."""
        table = table or _DEFAULT_TABLE.get(self.kind, "rows")
        if self.kind == "summary" and table == "rows":
            return [row for k in self.get("kinds", []) for row in k.get("rows", [])]
        value = self.get(table)
        if not isinstance(value, list):
            raise KeyError("%s has no table %r (tables: %s)"
                           % (self.kind, table, ", ".join(self.tables())))
        return value

    def to_pandas(self, table: Optional[str] = None):
        """A pandas DataFrame of a table (default: the summary's rows, analyze's top kernels,
        diff's rows). Needs pandas; raises ImportError saying so without it."""
        try:
            import pandas
        except ImportError as e:  # pragma: no cover - depends on the machine
            raise ImportError("to_pandas() needs pandas (apt-get install python3-pandas)") from e
        return pandas.DataFrame(self.rows(table))
