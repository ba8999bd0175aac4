"""Readers of training shards: datasets split into many binary files, each file a source. Here:
MosaicML Streaming's MDS (``mds.py``) and LitData's optimized chunks (``litdata.py``), each an
``index.json`` naming its shards, of which only each sample's label bytes are read
(``frame.py``)."""
