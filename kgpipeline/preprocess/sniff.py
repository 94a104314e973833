"""Format detection and text decoding: content signatures first, then the file extension.

:func:`detect_format` sniffs content first (``%PDF-``, a zip holding ``word/document.xml``, other
binary signatures, NUL bytes) and falls back to the extension; :func:`decode_text` turns the bytes
of a text format into ``str`` (UTF-16 by BOM, else UTF-8 with or without BOM).
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
    # UTF-16 text is full of NUL bytes, so a BOM exempts it from the binary check.
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(f"{path}: binary content (NUL bytes), not a text document")
    if ext in EXTENSIONS:
        return EXTENSIONS[ext]
    if re.match(rb"\s*<(!doctype html|html)", head, re.I):
        return "html"
    raise InputError(
        f"{path}: unsupported file extension {ext or '(none)'!r} (supported: {', '.join(sorted(EXTENSIONS))})"
    )


def decode_text(path: Path, raw: bytes) -> str:
    """The text of a text-format file; InputError naming the first byte that is not UTF-8."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        ) from None
