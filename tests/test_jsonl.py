"""core.jsonl: the one JSONL reader and its two policies for a bad line (raise, or hand it on)."""

from __future__ import annotations

import pytest

from core.errors import InputError
from core.jsonl import JsonlLine, parse_lines, read_jsonl

MIXED = '{"id": 1}\n\n   \n[1, 2]\n{"id": 2}\nnot json\n"text"\n{"id": 3}\r\n'


def test_parse_lines_numbers_every_line_and_skips_blank_ones():
    lines = list(parse_lines(MIXED))
    assert [x.number for x in lines] == [1, 4, 5, 6, 7, 8]
    assert lines[0] == JsonlLine(1, {"id": 1})
    assert lines[1] == JsonlLine(4, None, "not a JSON object (got list)")
    assert lines[3].record is None and lines[3].error.startswith("not JSON (") and "column 1" in lines[3].error
    assert lines[4].error == "not a JSON object (got str)"
    assert lines[5].record == {"id": 3}  # a CRLF line ending is whitespace to JSON


def test_lines_split_at_newlines_only():
    # U+2028 may sit unescaped in a JSON string; str.splitlines() would cut the line there.
    text = '{"text": "one\u2028two"}\n{"text": "\u0085"}'
    assert [row["text"] for _, row in read_jsonl("x.jsonl", text)] == ["one\u2028two", "\u0085"]


def test_strict_policy_names_file_and_line():
    with pytest.raises(InputError, match=r"^rows\.jsonl:4: not a JSON object \(got list\)$"):
        list(read_jsonl("rows.jsonl", MIXED))
    good = '{"a": 1}\n\n{"a": 2}\n'
    assert list(read_jsonl("rows.jsonl", good)) == [(1, {"a": 1}), (3, {"a": 2})]


def test_skip_policy_hands_every_bad_line_on_in_order():
    bad: list[tuple[int, str]] = []
    rows = list(read_jsonl("rows.jsonl", MIXED, on_error=lambda n, why: bad.append((n, why))))
    assert rows == [(1, {"id": 1}), (5, {"id": 2}), (8, {"id": 3})]
    assert [n for n, _ in bad] == [4, 6, 7]


def test_an_error_raised_by_the_handler_propagates():
    class Corrupt(Exception):
        pass

    def corrupt(n: int, why: str) -> None:
        raise Corrupt(f"{n}: {why}")

    with pytest.raises(Corrupt, match="^4: not a JSON object"):
        list(read_jsonl("rows.jsonl", MIXED, on_error=corrupt))


def test_reading_a_file(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"q": "Wer?"}\n{"q": "Qui ?"}\n', encoding="utf-8")
    assert [row["q"] for _, row in read_jsonl(path)] == ["Wer?", "Qui ?"]
    path.write_bytes(b'{"q": "\xff"}\n')
    with pytest.raises(InputError, match="not UTF-8"):
        list(read_jsonl(path))
    with pytest.raises(InputError, match="file not found"):
        list(read_jsonl(tmp_path / "missing.jsonl"))
    with pytest.raises(InputError, match="cannot be read"):
        list(read_jsonl(tmp_path))  # a directory
    path.write_text("", encoding="utf-8")
    assert list(read_jsonl(path)) == []
