"""Training shards: datasets split into many binary files, each file a source, of which only each
sample's label is read.

The entry is ``webdataset`` for tars, ``tfrecord`` for TFRecord files, ``mds`` for MosaicML
Streaming's MDS and ``litdata`` for LitData's optimized chunks: ``webdataset``
(``WebDatasetReader``: tar shards, samples grouped by key, labels from ``.cls``-like members or a
``.json`` field), ``tfrecord`` (``TfRecordReader``: records framed and CRC-checked, the label
feature decoded from the wire format), ``mds`` and ``litdata`` (an ``index.json`` naming its
shards; ``frame``: the label bytes of a whole shard gathered at once). Shared: ``listing``
(folders, globs, webdataset's brace patterns, list files), ``braces``, ``tarwalk``, ``records``,
``example``, ``rows``, and ``patterns`` (which shard reader a glob or brace pattern calls for).
"""
