"""Colour tables that segmentation datasets are known to paint their masks with, offered (never
assumed) when a colour mask comes without the contract's ``color_map``.

- Pascal VOC's palette: the bit-interleaved colormap of its devkit (``VOClabelcolormap.m``), the
  21 classes and the border colour (224, 224, 192) written where the target is 255.
- CamVid's 32 colours, Void first, as Datumaro's ``CamvidLabelMap``
  (openvinotoolkit/datumaro, ``datumaro/plugins/camvid_format.py``) lists them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["CAMVID", "KNOWN_TABLES", "VOC", "known_table", "voc_palette"]


def voc_palette(n: int = 256) -> list[tuple[int, int, int]]:
    """The first ``n`` colours of Pascal VOC's palette (class i's colour)."""
    colours = []
    for i in range(n):
        r = g = b = 0
        c = i
        for j in range(8):
            r |= ((c >> 0) & 1) << (7 - j)
            g |= ((c >> 1) & 1) << (7 - j)
            b |= ((c >> 2) & 1) << (7 - j)
            c >>= 3
        colours.append((r, g, b))
    return colours


VOC: Mapping[str, tuple[int, int, int]] = {
    f"class {i}": rgb for i, rgb in enumerate(voc_palette(21))
} | {"border (255)": (224, 224, 192)}

CAMVID: Mapping[str, tuple[int, int, int]] = {
    "Void": (0, 0, 0),
    "Animal": (64, 128, 64),
    "Archway": (192, 0, 128),
    "Bicyclist": (0, 128, 192),
    "Bridge": (0, 128, 64),
    "Building": (128, 0, 0),
    "Car": (64, 0, 128),
    "CartLuggagePram": (64, 0, 192),
    "Child": (192, 128, 64),
    "Column_Pole": (192, 192, 128),
    "Fence": (64, 64, 128),
    "LaneMkgsDriv": (128, 0, 192),
    "LaneMkgsNonDriv": (192, 0, 64),
    "Misc_Text": (128, 128, 64),
    "MotorcycleScooter": (192, 0, 192),
    "OtherMoving": (128, 64, 64),
    "ParkingBlock": (64, 192, 128),
    "Pedestrian": (64, 64, 0),
    "Road": (128, 64, 128),
    "RoadShoulder": (128, 128, 192),
    "Sidewalk": (0, 0, 192),
    "SignSymbol": (192, 128, 128),
    "Sky": (128, 128, 128),
    "SUVPickupTruck": (64, 128, 192),
    "TrafficCone": (0, 0, 64),
    "TrafficLight": (0, 64, 64),
    "Train": (192, 64, 128),
    "Tree": (128, 128, 0),
    "Truck_Bus": (192, 128, 192),
    "Tunnel": (64, 0, 64),
    "VegetationMisc": (192, 192, 0),
    "Wall": (64, 192, 0),
}

KNOWN_TABLES: Mapping[str, Mapping[str, tuple[int, int, int]]] = {
    "Pascal VOC's palette": VOC,
    "CamVid's 32 colours": CAMVID,
}


def _packed(rgb: tuple[int, int, int]) -> int:
    return (rgb[0] << 16) | (rgb[1] << 8) | rgb[2]


def known_table(colours: Iterable[int]) -> str | None:
    """The known tables holding every one of ``colours`` (packed 0xRRGGBB), if any does, as
    "A or B"; black alone (an empty mask) matches none."""
    seen = set(colours)
    if not seen - {0}:
        return None
    found = [
        name
        for name, table in KNOWN_TABLES.items()
        if seen <= {_packed(rgb) for rgb in table.values()}
    ]
    return " or ".join(found) or None
