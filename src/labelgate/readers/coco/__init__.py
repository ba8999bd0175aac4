"""COCO JSON (instances, keypoints, panoptic; files, or dataset roots holding them).

The entry is ``cocofiles.CocoReader``; ``coco`` streams one file, ``cocoannotation`` judges one
annotation for both reads, ``cocolayout``, ``cocoblocks``, ``cocoarrow``, ``cocofast`` and
``cocojudge`` read a large file in blocks on every core or a Dask cluster, ``cocoshapes`` judges
its masks and keypoints.
"""
