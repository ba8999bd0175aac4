"""One validation run: open, scan, check, report; the report's tables; Dask."""
