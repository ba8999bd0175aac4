"""Pictures of what is wrong: the first flagged annotations of each check drawn over their image
(cropped around the annotation, small), or on a blank canvas of the image's size where the image
is not at hand, embedded in the HTML report as PNG data URIs.

Pillow draws them, imported only here and only when a report has something to draw; without it
the report says so in one line. Bounded: ``PER_CHECK`` pictures a check, ``TOTAL_BYTES`` of PNG
in all, each image opened only below ``MAX_PIXELS`` (a decompression bomb is refused, not
decoded), and only inside the images folder the run resolved (``imagecheck.resolve``: no ``..``,
no absolute name, no link leaving it).
"""

from __future__ import annotations

import base64
import io
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelgate.core.drawing import Drawing
from labelgate.core.report import Example, Report

if TYPE_CHECKING:
    from PIL import Image as PILImage

__all__ = ["MAX_PIXELS", "PER_CHECK", "THUMB", "TOTAL_BYTES", "pictures_html"]

PER_CHECK = 4  # pictures drawn for each finding
TOTAL_BYTES = 400 * 1024  # PNG bytes embedded in one report, all pictures together
THUMB = 160  # the longer side of a picture, in pixels
MAX_PIXELS = 40_000_000  # images (and masks) larger are not opened: a note says so
BLANK = 640  # the side of the canvas of a relative frame (YOLO, Label Studio) without its image
NEEDS_PILLOW = "Pictures of the flagged annotations need Pillow (a dependency of labelgate): pip install pillow"
_RED = (224, 49, 49)
_OUTSIDE = (206, 212, 218)  # the canvas past the image's edges


@dataclass(frozen=True, slots=True)
class Picture:
    """One drawn example: its PNG and what the caption says beside its name."""

    png: bytes
    note: str


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _drawable(report: Report) -> Iterator[tuple[int, list[Example]]]:
    """Each finding's examples to draw (by the finding's position): the first ``PER_CHECK``
    with a drawing, each drawing once."""
    for at, f in enumerate(report.findings):
        drawn: list[Example] = []
        seen: set[Drawing] = set()
        for e in f.examples:  # one picture of a mask that several values of one check name
            if e.drawing is not None and e.drawing not in seen and len(drawn) < PER_CHECK:
                seen.add(e.drawing)
                drawn.append(e)
        if drawn:
            yield at, drawn


def pictures_html(report: Report) -> tuple[dict[int, str], str]:
    """Each finding's pictures (by its position in ``report.findings``) as HTML, and a note
    for the end of the report: that the pictures need Pillow, or how many the byte bound left
    out (empty when none). Nothing when no example carries a drawing."""
    found = list(_drawable(report))
    if not found:
        return {}, ""
    try:
        from PIL import Image  # noqa: F401 - the pictures need it; nothing else here does
    except ImportError:
        return {}, f'<p class="note">{_e(NEEDS_PILLOW)}</p>'
    k = report.contract.get("num_classes")
    spent, left = 0, 0
    out: dict[int, str] = {}
    for at, examples in found:
        code = report.findings[at].code
        cards = []
        for e in examples:
            assert e.drawing is not None
            if spent >= TOTAL_BYTES:
                left += 1
                continue
            pic = draw(e.drawing, code, e.value, k if isinstance(k, int) else None)
            if spent + len(pic.png) > TOTAL_BYTES:
                left += 1
                continue
            spent += len(pic.png)
            cards.append(_card(e, pic))
        if cards:
            out[at] = f'<div class="pictures">{"".join(cards)}</div>'
    note = (
        f'<p class="note">{left} more pictures left out: a report embeds at most '
        f"{TOTAL_BYTES // 1024} KiB of them</p>"
        if left
        else ""
    )
    return out, note


def _card(e: Example, pic: Picture) -> str:
    d = e.drawing
    assert d is not None
    uri = "data:image/png;base64," + base64.b64encode(pic.png).decode("ascii")
    name = "" if e.id is None else f"<b>{_e(e.id)}</b><br>"
    image = "" if d.image is None or d.image == e.id else f"{_e(d.image)}<br>"
    return (
        f'<figure class="picture"><img src="{uri}" alt="{_e(d.kind)} of {_e(e.id)}">'
        f"<figcaption>{name}{image}{_e(pic.note)}</figcaption></figure>"
    )


def open_image(d: Drawing) -> tuple[PILImage.Image | None, tuple[int, int], str]:
    """The image ``d`` lies on, decoded (JPEG at a reduced scale) and turned by its EXIF
    orientation, with its full size as loaded; or ``None`` and why not (no images folder,
    missing, leaving the folder, too large, undecodable)."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    from labelgate.readers.common.imageindex import ImageRecord
    from labelgate.readers.images.imagecheck import resolve

    if d.image is None or d.root is None:
        return None, (0, 0), "no image at hand: drawn on a blank canvas"
    record = ImageRecord(key=None, name=d.image, file=d.image, stem=d.stem)
    path, why = resolve(Path(d.root), record)
    if path is None:
        return None, (0, 0), f"image not opened ({why}): drawn on a blank canvas"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as im:
                if im.width * im.height > MAX_PIXELS:
                    return (
                        None,
                        (0, 0),
                        (
                            f"image of {im.width} x {im.height} pixels not opened (over "
                            f"{MAX_PIXELS:,}): drawn on a blank canvas"
                        ),
                    )
                full = im.size
                turns = im.getexif().get(0x0112, 1) in (5, 6, 7, 8)  # EXIF orientation
                if d.kind != "mask":
                    im.draft("RGB", (THUMB * 4, THUMB * 4))  # JPEG: decode at a reduced scale
                turned = ImageOps.exif_transpose(im)
                turned.load()
                return turned, (full[::-1] if turns else full), ""
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        return None, (0, 0), "image refused (a decompression bomb): drawn on a blank canvas"
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError):
        return None, (0, 0), "image does not decode: drawn on a blank canvas"


def draw(d: Drawing, code: str = "", value: Any = None, k: int | None = None) -> Picture:
    """The picture of one drawing of finding ``code``, as PNG bytes (see the module)."""
    image, full, note = open_image(d)
    if d.kind == "mask":
        return _mask(image, note, code, value, k)
    return _shape(d, image, full, note)


def _frame(d: Drawing, full: tuple[int, int] | None) -> tuple[float, float, float, float]:
    """(canvas width, height, x scale, y scale): the frame the shape is drawn in, in pixels:
    the image's as loaded, else the recorded size, else the shape's own extent from 0."""
    if full is not None:
        w, h = float(full[0]), float(full[1])
    elif d.size is not None and d.relative:
        w, h = BLANK, BLANK * d.size[1] / d.size[0]
    elif d.size is not None:
        w, h = d.size
    else:
        w = max([x for x, _ in d.points] + [1.0])
        h = max([y for _, y in d.points] + [1.0])
    sx = sy = 1.0
    if d.relative and d.size is not None:  # normalised, percent: scaled to the image
        sx, sy = w / d.size[0], h / d.size[1]
    return max(w, 1.0), max(h, 1.0), sx, sy


def _shape(d: Drawing, image: PILImage.Image | None, full: tuple[int, int], note: str) -> Picture:
    from PIL import Image, ImageDraw

    w, h, sx, sy = _frame(d, None if image is None else full)
    # coordinates far outside the image are drawn at its side, not on a canvas of that size
    pts = [(min(max(x * sx, -w), 2 * w), min(max(y * sy, -h), 2 * h)) for x, y in d.points]
    if not pts:
        pts = [(0.0, 0.0), (w, h)]
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    m = max(0.2 * max(x1 - x0, y1 - y0), 0.05 * max(w, h), 4.0)
    rx0 = x0 - m if x0 < 0 else max(0.0, x0 - m)
    ry0 = y0 - m if y0 < 0 else max(0.0, y0 - m)
    rx1 = x1 + m if x1 > w else min(w, x1 + m)
    ry1 = y1 + m if y1 > h else min(h, y1 + m)
    scale = THUMB / max(rx1 - rx0, ry1 - ry0, 1e-9)
    size = (max(1, round((rx1 - rx0) * scale)), max(1, round((ry1 - ry0) * scale)))
    canvas = Image.new("RGB", size, _OUTSIDE)

    def at(x: float, y: float) -> tuple[float, float]:
        return (x - rx0) * scale, (y - ry0) * scale

    inside = (at(0, 0), at(w, h))
    if image is not None:
        box = (max(rx0, 0), max(ry0, 0), min(rx1, w), min(ry1, h))
        f = image.width / w  # a JPEG decoded at a reduced scale
        crop = image.convert("RGB").crop((box[0] * f, box[1] * f, box[2] * f, box[3] * f))
        (px, py), (qx, qy) = at(box[0], box[1]), at(box[2], box[3])
        target = (max(1, round(qx - px)), max(1, round(qy - py)))
        canvas.paste(crop.resize(target), (round(px), round(py)))
    else:
        ImageDraw.Draw(canvas).rectangle(
            [inside[0], inside[1]], fill=(255, 255, 255), outline=(134, 142, 150)
        )
    pen = ImageDraw.Draw(canvas)
    xy = [at(x, y) for x, y in pts]
    if d.kind == "box":
        (ax, ay), (bx, by) = xy[0], xy[-1]
        pen.rectangle([min(ax, bx), min(ay, by), max(ax, bx), max(ay, by)], outline=_RED, width=2)
    elif d.kind == "polygon" and len(xy) > 1:
        pen.line([*xy, xy[0]], fill=_RED, width=2)
    for x, y in xy if d.kind != "box" else ():
        pen.ellipse([x - 3, y - 3, x + 3, y + 3], outline=_RED, width=2)
    return Picture(_png(canvas), note)


def _mask(image: PILImage.Image | None, note: str, code: str, value: Any, k: int | None) -> Picture:
    """A mask drawn in greys (its values by rank, darkest first), the pixels the check names in
    red: LG037 the rare values (under 1% of the pixels: a lossy file's strays), LG004 those
    >= K, the others the values the example names. A colour mask is drawn as its colours."""
    import numpy as np
    from PIL import Image

    if image is None:
        blank = Image.new("RGB", (THUMB, THUMB // 2), _OUTSIDE)
        return Picture(_png(blank), note.replace("drawn on a blank canvas", "mask not drawn"))
    if image.mode in ("RGB", "RGBA"):
        shown = image.convert("RGB")
    else:
        values = np.asarray(image if image.mode in ("L", "P", "I", "I;16") else image.convert("L"))
        found, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
        if code == "LG037":
            flagged = counts < 0.01 * values.size
        elif code == "LG004" and k is not None:
            flagged = found >= k
        else:
            named = value if isinstance(value, list) else [value]
            flagged = np.isin(found, [v for v in named if isinstance(v, int)])
        rank = np.cumsum(~flagged) - 1
        levels = 40 + (190 * rank / max(int((~flagged).sum()) - 1, 1)).astype(np.int64)
        palette = np.zeros((found.size, 3), dtype=np.uint8)
        palette[:] = levels.clip(0, 230)[:, None]
        palette[flagged] = _RED
        shown = Image.fromarray(palette[inverse.reshape(values.shape)], "RGB")
    scale = THUMB / max(shown.width, shown.height)
    target = (max(1, round(shown.width * scale)), max(1, round(shown.height * scale)))
    return Picture(_png(shown.resize(target, Image.Resampling.NEAREST)), note)


def _png(canvas: PILImage.Image) -> bytes:
    out = io.BytesIO()
    canvas.save(out, format="PNG", optimize=True)
    return out.getvalue()
