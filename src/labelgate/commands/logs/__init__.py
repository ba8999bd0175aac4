"""A training log read: ``triage`` (the entry: its first failure, classified by family), with
``logpatterns`` (the errors' shapes), ``families`` and ``verdicts`` (what each family means and
whether the data can explain it), ``loglines`` (a log's bytes as bounded lines), ``logstep``
(the failing step) and ``logbatch`` (the batch size the log shows)."""
