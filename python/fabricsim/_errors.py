"""The exception every bad input raises."""

from __future__ import annotations

from typing import Optional


class ScenarioError(ValueError):
    """Bad input: a scenario file or text that does not parse, an unknown field, a value
    out of range, a run over the memory budget, a bad ``Scenario.set`` path or value.

    ``str(e)`` is the message the command line prints (``file:line:col: field `x`:
    what is wrong and what is allowed``); its parts are attributes:

    - ``file``: the file (or the name given to ``Scenario.from_toml``),
    - ``field``: dotted path of the field (``cc.algorithm``, ``workload[0].size``),
      ``None`` when the error is not about one field (a TOML syntax error),
    - ``message``: what is wrong and what is allowed,
    - ``line``, ``column``: 1-based position in the file when known.
    """

    def __init__(
        self,
        text: str,
        file: Optional[str] = None,
        field: Optional[str] = None,
        message: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
    ):
        super().__init__(text)
        self.file = file
        self.field = field
        self.message = message if message is not None else text
        self.line = line
        self.column = column

    def __reduce__(self):
        # Picklable with its attributes (Ray sends exceptions between processes).
        return (
            type(self),
            (str(self), self.file, self.field, self.message, self.line, self.column),
        )
