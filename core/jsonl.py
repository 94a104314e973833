"""JSON Lines of objects: one reader, and what happens to a bad line is the caller's choice.

Lines are split at ``\\n`` only (``str.splitlines`` would also split at U+2028, which a JSON
string may hold unescaped); line numbers are 1-based; blank lines are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import InputError


@dataclass(frozen=True)
class JsonlLine:
    """One non-blank line: ``record`` is its JSON object, or None with ``error`` saying why not."""

    number: int
    record: dict[str, Any] | None
    error: str = ""


def parse_lines(text: str) -> Iterator[JsonlLine]:
    """Every non-blank line of ``text``, parsed.

    >>> [(x.number, x.record, x.error) for x in parse_lines('{"a": 1}\\n\\n[1]\\nnope')]
    [(1, {'a': 1}, ''), (3, None, 'not a JSON object (got list)'), (4, None, 'not JSON (Expecting value at column 1)')]
    """
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            yield JsonlLine(number, None, f"not JSON ({exc.msg} at column {exc.colno})")
            continue
        if isinstance(value, dict):
            yield JsonlLine(number, value)
        else:
            yield JsonlLine(number, None, f"not a JSON object (got {type(value).__name__})")


def read_jsonl(
    source: Path | str, text: str | None = None, *, on_error: Callable[[int, str], None] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each good line of ``text``, or of the UTF-8 file ``source``
    when ``text`` is None (``source`` names the input in errors either way).

    A bad line raises InputError naming the file and line (``"<source>:<line>: <reason>"``), or,
    with ``on_error``, is handed to it as ``(line number, reason)`` and skipped (unless it raises
    an error of its own): ingest logs and reports such lines instead of failing on one bad record.

    >>> list(read_jsonl("rows.jsonl", '{"q": "Who?"}\\n'))
    [(1, {'q': 'Who?'})]
    >>> list(read_jsonl("rows.jsonl", '{"q": "Who?"}\\n[1]\\n'))
    Traceback (most recent call last):
    core.errors.InputError: rows.jsonl:2: not a JSON object (got list)
    >>> list(read_jsonl("rows.jsonl", 'nope\\n{}', on_error=lambda n, why: print(n, why)))
    1 not JSON (Expecting value at column 1)
    [(2, {})]
    """
    if text is None:
        text = _read_text(Path(source))
    for line in parse_lines(text):
        if line.record is not None:
            yield line.number, line.record
        elif on_error is None:
            raise InputError(f"{source}:{line.number}: {line.error}")
        else:
            on_error(line.number, line.error)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"file not found: {path}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
