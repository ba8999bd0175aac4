"""Segmentation masks: PNG, TIFF, BMP, JPEG and ``.npy`` files, one row per mask.

The entry is ``masks.MasksReader``; ``masklayout`` finds the masks and the tables beside them,
``maskdecode`` turns one mask into its histogram, ``maskpool`` decodes on every core or a Dask
cluster, ``maskrows`` builds their Arrow rows, ``colours`` holds the known colour tables.
"""
