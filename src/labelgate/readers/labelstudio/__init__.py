"""Label Studio exports (JSON and JSON-MIN).

The entry is ``labelstudio.LabelStudioReader``; ``labelstudioconfig`` reads the labelling config
beside an export.
"""
