"""Format detection and text decoding: content signatures first, then the file extension.

:func:`detect_format` sniffs content first (``%PDF-``, a zip holding ``word/document.xml``, other
binary signatures, NUL bytes) and falls back to the extension; :func:`decode_text` turns the bytes
of a text format into ``str`` (UTF-32 or UTF-16 by BOM, else UTF-8 with or without BOM).
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from core.errors import InputError

EXTENSIONS = {
    ".pdf": "pdf", ".docx": "docx", ".html": "html", ".htm": "html", ".xhtml": "html",
    ".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text",
    ".jsonl": "jsonl", ".ndjson": "jsonl",
}
_WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")  # UTF-16 LE/BE (and UTF-32 LE), UTF-32 BE
_BINARY_MAGIC = {
    b"\x89PNG": "PNG image", b"\xff\xd8\xff": "JPEG image", b"GIF8": "GIF image",
    b"\x1f\x8b": "gzip archive", b"\x7fELF": "ELF executable", b"\xd0\xcf\x11\xe0": "legacy Office (OLE) file",
    b"Rar!": "RAR archive", b"7z\xbc\xaf": "7-Zip archive", b"%!PS": "PostScript file",
}


def detect_format(path: Path, head: bytes | None = None) -> str:
    """One of ``records.FORMATS``; InputError for binary, unknown or mismatching files."""
    if head is None:
        with open(path, "rb") as fh:
            head = fh.read(8192)
    ext = path.suffix.lower()
    if head.startswith(b"%PDF-"):
        return "pdf"
    if head.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(path) as zf:
                if "word/document.xml" in zf.namelist():
                    return "docx"
        except zipfile.BadZipFile:
            raise InputError(f"{path}: corrupt zip container (DOCX expected)") from None
        raise InputError(f"{path}: zip archive that is not a DOCX document")
    for magic, what in _BINARY_MAGIC.items():
        if head.startswith(magic):
            raise InputError(f"{path}: binary file ({what}), not a document")
    if ext in (".pdf", ".docx"):
        raise InputError(f"{path}: not a valid {ext[1:].upper()} file (signature missing)")
    # UTF-16/32 text is full of NUL bytes, so a BOM exempts it from the binary check.
    if b"\x00" in head and not head.startswith(_WIDE_BOMS):
        raise InputError(f"{path}: binary content (NUL bytes), not a text document")
    if ext in EXTENSIONS:
        return EXTENSIONS[ext]
    if re.match(rb"\s*<(!doctype html|html)", head, re.I):
        return "html"
    raise InputError(
        f"{path}: unsupported file extension {ext or '(none)'!r} (supported: {', '.join(sorted(EXTENSIONS))})"
    )


def decode_text(path: Path, raw: bytes) -> str:
    """The text of a text-format file; InputError naming the first byte that does not decode."""
    # UTF-32 first: its little-endian BOM begins with the UTF-16 one.
    for bom, codec in ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
                       (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if raw.startswith(bom):
            return _decode(path, raw, codec, len(bom))
    return _decode(path, raw, "utf-8", 3 if raw.startswith(b"\xef\xbb\xbf") else 0)


def _decode(path: Path, raw: bytes, codec: str, skip: int) -> str:
    try:
        return raw[skip:].decode(codec)
    except UnicodeDecodeError as exc:
        at = skip + exc.start
        what = f"byte 0x{raw[at]:02x}" if codec == "utf-8" else exc.reason  # e.g. "truncated data"
        name = codec.upper().replace("-LE", "LE").replace("-BE", "BE")
        raise InputError(f"{path}: not valid {name} ({what} at offset {at})") from None
