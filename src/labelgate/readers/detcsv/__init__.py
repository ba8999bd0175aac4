"""Detection CSVs whose class column holds names (TF Object Detection, OpenImages,
keras-retinanet).

The entry is ``detcsv.DetectionCsvReader``; ``detcsvlayout`` recognises the layout from a file's
first rows.
"""
