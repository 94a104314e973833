"""YAML front matter (``---`` … ``---`` at the very start of Markdown or plain text) → metadata.

Front matter is user input: aliases (``&a`` / ``*a``) are refused, because a recursive alias
never ends and nested ones expand exponentially ("billion laughs"); nesting is capped; every
value that is not JSON (dates, bytes, sets, ...) becomes a string.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from pathlib import Path
from typing import Any

from core.errors import InputError

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.S)
MAX_DEPTH = 50  # metadata is a flat record; deeper nesting is an attack or an accident


def split_front_matter(text: str, path: Path | str = "<text>") -> tuple[dict[str, Any], str]:
    """YAML front matter (``---`` … ``---`` at the very start) → (metadata, rest of the text)."""
    m = _FRONT_MATTER.match(text)
    if not m:
        return {}, text
    data = _load_yaml(m[1], path)
    if not isinstance(data, dict):
        return {}, text  # a leading rule, not front matter
    return {str(k): _jsonable(v) for k, v in data.items()}, text[m.end() :]


def _load_yaml(block: str, path: Path | str) -> Any:
    import yaml  # local: only Markdown/text inputs need it

    def bad(reason: str) -> InputError:
        return InputError(f"{path}: invalid YAML front matter{reason}")

    try:
        depth = 0
        for event in yaml.parse(block, Loader=yaml.SafeLoader):  # events first: cheap, no recursion
            if isinstance(event, yaml.AliasEvent):
                raise bad(f" at line {event.start_mark.line + 2}: aliases (*name) are not allowed")
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise bad(f" at line {event.start_mark.line + 2}: nested deeper than {MAX_DEPTH} levels")
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        return yaml.safe_load(block)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # +2: the mark counts from 0 inside the YAML block, which starts below the opening "---".
        where = f" at line {mark.line + 2}" if mark is not None else ""
        if isinstance(exc, yaml.reader.ReaderError):  # a control character: its own message spans lines
            where, problem = f" at offset {exc.position}", f"unacceptable character #x{exc.character:04x}"
        else:
            problem = getattr(exc, "problem", None) or exc
        raise bad(f"{where}: {' '.join(str(problem).split())}") from None
    except ValueError as exc:  # a timestamp-shaped value that is no date: "2021-02-30"
        raise bad(f": {exc}") from None


def _jsonable(value: Any) -> Any:
    # Metadata must stay JSON-serializable: YAML also yields dates, bytes (!!binary) and sets.
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # NaN and infinities are not JSON
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)
