"""YAML front matter (``---`` … ``---`` at the very start of Markdown or plain text) → metadata."""

from __future__ import annotations

import datetime as _dt
import re
from pathlib import Path
from typing import Any

from core.errors import InputError

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.S)


def split_front_matter(text: str, path: Path | str = "<text>") -> tuple[dict[str, Any], str]:
    """YAML front matter (``---`` … ``---`` at the very start) → (metadata, rest of the text)."""
    import yaml  # local: only Markdown/text inputs need it

    m = _FRONT_MATTER.match(text)
    if not m:
        return {}, text
    try:
        data = yaml.safe_load(m[1])
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # +2: the mark counts from 0 inside the YAML block, which starts below the opening "---".
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise InputError(f"{path}: invalid YAML front matter{where}: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict):
        return {}, text  # a leading rule, not front matter
    return {str(k): _jsonable(v) for k, v in data.items()}, text[m.end() :]


def _jsonable(value: Any) -> Any:
    # YAML parses bare dates into date objects; metadata must stay JSON-serializable.
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value
