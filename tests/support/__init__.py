"""What several test modules build the same way: tiny models and runs of the training frameworks
(``frameworks``), training logs (``logs``), a Dask cluster on loopback (``cluster``)."""
