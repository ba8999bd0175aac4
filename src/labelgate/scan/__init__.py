"""The scan: one pass over the labels, by one of three producers, into one frozen result.

::

    sequential.Scan ──────────────┐   text inputs, tokens, soft labels, shuffling, weights
    plan → kernel → partial.merge ├─> result.ScanResult ─> the checks
       (runner: threads; labelgate.run.distributed: Dask)

``plan`` lays out the Parquet row groups as pieces, ``kernel`` scans one into a ``Partial``,
``partial`` merges partials in row order, ``runner`` runs them on threads and builds the result.
"""

from labelgate.scan.result import NO_SOURCE, CodeTally, ScanResult

__all__ = ["NO_SOURCE", "CodeTally", "ScanResult"]
