"""The images of a detection input checked against its annotations (LG041-LG043).

The entry is ``imagecheck`` (called by the run, not a reader of its own); ``imagedecode`` opens
the images, bounded, on every core or a Dask cluster.
"""
