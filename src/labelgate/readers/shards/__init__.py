"""Readers of training shards: MosaicML Streaming's MDS datasets (``mds.py``) and LitData's
optimized chunks (``litdata.py``), each an ``index.json`` naming binary shards. Each shard is a
source; only the label field of each sample is read (``frame.py``)."""
