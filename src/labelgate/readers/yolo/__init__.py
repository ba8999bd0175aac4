"""YOLO label folders, and an ultralytics dataset YAML given as the path.

The entry is ``yolo.YoloReader``; ``yolodata`` resolves a ``data.yaml``'s splits,
``yoloshapes`` judges segment and pose rows.
"""
