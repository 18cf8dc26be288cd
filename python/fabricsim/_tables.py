"""Arrow tables from the native module into pandas."""

from __future__ import annotations


def to_arrow(table):
    """A native table as a ``pyarrow.Table``, through the Arrow C stream interface
    (``__arrow_c_stream__``): the arrays the simulator built, not a copy of text."""
    import pyarrow as pa

    return pa.RecordBatchReader.from_stream(table).read_all()


def to_pandas(table):
    """A native table as a pandas DataFrame (via :func:`to_arrow`)."""
    return to_arrow(table).to_pandas()
