"""Readers that find the input files and stream them as Arrow record batches of the needed columns."""

from labelgate.io.sources import InputFile, resolve_inputs
from labelgate.io.stream import read_schema, stream_columns

__all__ = ["InputFile", "read_schema", "resolve_inputs", "stream_columns"]
