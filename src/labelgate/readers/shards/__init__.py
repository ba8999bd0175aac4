"""Training shards: WebDataset tars and TFRecord files of ``tf.train.Example``, each shard a
source, only the label members or features read.

The entry is ``webdataset`` for tars and ``tfrecord`` for TFRecord files: ``webdataset``
(``WebDatasetReader``: tar shards, samples grouped by key, labels
from ``.cls``-like members or a ``.json`` field) and ``tfrecord`` (``TfRecordReader``: records
framed and CRC-checked, the label feature decoded from the wire format). Shared: ``listing``
(folders, globs, webdataset's brace patterns, list files), ``braces``, ``tarwalk``, ``records``,
``example``, ``rows``, and ``patterns`` (which shard reader a glob or brace pattern calls
for).
"""
