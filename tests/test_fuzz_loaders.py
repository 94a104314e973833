"""Fuzzing the document loaders: any bytes in, documents or one precise InputError out.

The contract of :func:`kgpipeline.preprocess.load_documents` (and so of every reader behind it):
it returns documents, or raises :class:`core.errors.InputError` whose message is one line naming
the file. Any other exception is a bug. Hypothesis runs derandomized (tests/conftest.py), so the
inputs tried are the same on every run; ``EXAMPLES`` is how many each target tries.
"""

from __future__ import annotations

import io
import json
import logging
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import InputError
from kgpipeline.preprocess import load_documents, split_front_matter
from kgpipeline.preprocess.sniff import decode_text

EXAMPLES = {
    "random_bytes": 200, "bom_truncated": 100, "mixed_encodings": 80, "nul_bytes": 60, "huge_lines": 12,
    "nested_html": 25, "malformed_pdf": 80, "malformed_docx": 40, "jsonl": 120, "front_matter": 200,
}
EXTENSIONS = [".txt", ".md", ".html", ".jsonl", ".pdf", ".docx", ".bin", ""]
BOMS = [b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"]


def _load(tmp_path: Path, name: str, data: bytes) -> None:
    """Assert the loader contract on one input."""
    path = tmp_path / name
    path.write_bytes(data)
    try:
        result = load_documents(path)
    except InputError as exc:
        message = str(exc)
        assert message.startswith(str(path)), message
        assert "\n" not in message and len(message) < 1000, message
        return
    assert result.documents
    for doc in result.documents:
        assert isinstance(doc.text, str) and doc.text.strip()
        json.dumps(doc.metadata)  # metadata must stay JSON (it is written to the store and state)


def make_pdf(text: str) -> bytes:
    """A minimal valid one-page PDF showing ``text``."""
    content = b"BT /F1 11 Tf 72 760 Td (" + text.encode("latin-1") + b") Tj ET"
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for k, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % k + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 6\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def make_docx(text: str) -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Title", 1)
    document.add_paragraph(text)
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


PDF = make_pdf("The Bureau shall publish the plan.")


# --- random and hostile bytes -----------------------------------------------------------------
@settings(max_examples=EXAMPLES["random_bytes"])
@given(data=st.binary(max_size=2048), ext=st.sampled_from(EXTENSIONS))
def test_random_bytes(tmp_path_factory, data, ext):
    _load(tmp_path_factory.mktemp("f"), f"f{ext}", data)


@settings(max_examples=EXAMPLES["bom_truncated"])
@given(bom=st.sampled_from(BOMS), tail=st.binary(max_size=64), ext=st.sampled_from([".txt", ".md", ".html", ".jsonl"]))
def test_bom_followed_by_truncated_data(tmp_path_factory, bom, tail, ext):
    _load(tmp_path_factory.mktemp("f"), f"f{ext}", bom + tail)


@settings(max_examples=EXAMPLES["mixed_encodings"])
@given(parts=st.lists(st.tuples(st.text(max_size=40), st.sampled_from(["utf-8", "latin-1", "utf-16", "cp1252", "utf-32"])),
                      min_size=1, max_size=6),
       ext=st.sampled_from([".txt", ".md", ".html", ".jsonl"]))
def test_mixed_encodings(tmp_path_factory, parts, ext):
    data = b"".join(text.encode(codec, "replace") for text, codec in parts)
    _load(tmp_path_factory.mktemp("f"), f"f{ext}", data)


@settings(max_examples=EXAMPLES["nul_bytes"])
@given(text=st.text(min_size=1, max_size=200), at=st.integers(0, 200), ext=st.sampled_from([".txt", ".md", ".html"]))
def test_nul_bytes(tmp_path_factory, text, at, ext):
    raw = text.encode()
    _load(tmp_path_factory.mktemp("f"), f"f{ext}", raw[:at] + b"\x00" + raw[at:])


@settings(max_examples=EXAMPLES["huge_lines"])
@given(char=st.sampled_from(["a", "é", "-", " ", ".", "<", "#", "\u200b"]), n=st.integers(10_000, 300_000),
       ext=st.sampled_from([".txt", ".md", ".html", ".jsonl"]))
def test_huge_lines(tmp_path_factory, char, n, ext):
    _load(tmp_path_factory.mktemp("f"), f"f{ext}", ("Title\n\n" + char * n).encode())


@settings(max_examples=EXAMPLES["nested_html"])
@given(depth=st.integers(10, 5000), tag=st.sampled_from(["div", "p", "li", "span", "h2", "table", "b"]),
       closed=st.booleans())
def test_deeply_nested_html(tmp_path_factory, depth, tag, closed):
    html = f"<html><body>{f'<{tag}>' * depth}deep text{f'</{tag}>' * depth if closed else ''}</body></html>"
    _load(tmp_path_factory.mktemp("f"), "f.html", html.encode())


# --- damaged containers -----------------------------------------------------------------------
@settings(max_examples=EXAMPLES["malformed_pdf"])
@given(cut=st.integers(0, len(PDF)), flips=st.lists(st.tuples(st.integers(0, len(PDF) - 1), st.integers(0, 255)), max_size=8))
def test_malformed_pdf(tmp_path_factory, cut, flips):
    data = bytearray(PDF)
    for at, byte in flips:
        data[at] = byte
    _load(tmp_path_factory.mktemp("f"), "f.pdf", b"%PDF-" + bytes(data[5:cut]))


@settings(max_examples=EXAMPLES["malformed_docx"])
@given(cut=st.integers(10, 40_000), xml=st.one_of(st.none(), st.binary(max_size=300), st.text(max_size=300).map(str.encode)))
def test_malformed_docx(tmp_path_factory, cut, xml):
    data = make_docx("Some policy text.")
    if xml is not None:  # a well-formed zip whose document part is garbage
        buf = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(buf, "w") as dst:
            for item in src.infolist():
                dst.writestr(item, xml if item.filename == "word/document.xml" else src.read(item))
        data = buf.getvalue()
    else:
        data = data[:cut]
    _load(tmp_path_factory.mktemp("f"), "f.docx", data)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
_record = st.dictionaries(
    st.sampled_from(["text", "content", "title", "id", "category", "article_number", "act", "celex", "x"]), _json, max_size=6
)


@settings(max_examples=EXAMPLES["jsonl"])
@given(lines=st.lists(st.one_of(_record.map(json.dumps), _json.map(json.dumps), st.text(max_size=60)), min_size=1, max_size=8))
def test_jsonl_lines(tmp_path_factory, lines):
    _load(tmp_path_factory.mktemp("f"), "f.jsonl", "\n".join(lines).encode("utf-8", "surrogatepass"))


_yaml_bits = st.sampled_from([
    "title: T", "a: &x [1, *x]", "b: *x", "c: 2021-02-30", "d: 2024-13-01", "e: !!binary aGk=", "f: !!set {a}",
    "g: .nan", "h: [[[[[[", "? [k]\n: v", "- item", "!!python/object:os.system {}", "date: 2024-05-01", "k: 'x",
    "category: law", "category: nonsense", "i: {a: {b: {c: {d: 1}}}}", "\t", "j: !!timestamp 2020-99-99", "---",
])


@settings(max_examples=EXAMPLES["front_matter"])
@given(bits=st.lists(st.one_of(_yaml_bits, st.text(max_size=20)), max_size=6), ext=st.sampled_from([".md", ".txt"]))
def test_yaml_front_matter(tmp_path_factory, bits, ext):
    text = "---\n" + "\n".join(bits) + "\n---\nThe Bureau shall publish the plan.\n"
    _load(tmp_path_factory.mktemp("f"), f"f{ext}", text.encode("utf-8", "surrogatepass"))


# --- regressions: every bug the fuzzers found ---------------------------------------------------
def test_regression_bom_then_truncated_data_is_an_input_error(tmp_path):
    path = tmp_path / "weird.html"
    path.write_bytes(b"\xff\xfe\x00\x00bad")  # a UTF-32 BOM, then 3 bytes: used to be UnicodeDecodeError
    with pytest.raises(InputError, match=r"weird\.html: not valid UTF-32LE \(truncated data at offset 4\)"):
        load_documents(path)


@pytest.mark.parametrize("text", ["héllo wörld", "a"])
@pytest.mark.parametrize("codec", ["utf-32", "utf-32-be", "utf-16", "utf-16-be"])
def test_regression_utf32_and_utf16_with_bom_decode(text, codec):
    bom = {"utf-32-be": b"\x00\x00\xfe\xff", "utf-16-be": b"\xfe\xff"}.get(codec, b"")
    assert decode_text(Path("x.txt"), bom + text.encode(codec)) == text


def test_regression_utf16_lone_surrogate_is_an_input_error():
    with pytest.raises(InputError, match="not valid UTF-16LE"):
        decode_text(Path("x.txt"), b"\xff\xfe\x00\xd8a\x00")


@pytest.mark.parametrize(
    "block, reason",
    [
        ("a: &a [*a]", "aliases"),  # recursive alias: used to be RecursionError
        ("a: &a [1, 2]\nb: [*a, *a]", "aliases"),  # alias expansion ("billion laughs")
        ("a: " + "[" * 3000, "nested deeper"),  # used to be RecursionError in the YAML composer
        ("- " * 3000 + "x", "nested deeper"),
        ("a: 2021-02-30", "day is out of range"),  # used to be ValueError from the timestamp constructor
        ("a: !!timestamp 2020-99-99", "month must be"),
    ],
)
def test_regression_hostile_front_matter_is_an_input_error(block, reason):
    with pytest.raises(InputError, match=reason):
        split_front_matter(f"---\n{block}\n---\nbody", "f.md")


def test_regression_front_matter_values_stay_json():
    meta, _ = split_front_matter("---\nb: !!binary aGk=\ns: !!set {x}\nn: .nan\nd: 2024-05-01\n---\nbody")
    assert meta == {"b": "hi", "s": ["x"], "n": "nan", "d": "2024-05-01"}
    json.dumps(meta, allow_nan=False)


def test_regression_pypdf_warnings_are_not_printed(tmp_path, capfd, caplog):
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\n1 0 obj <<>> endobj\n")  # no xref, no %%EOF
    with caplog.at_level(logging.DEBUG), pytest.raises(InputError, match=r"broken\.pdf: corrupt PDF"):
        load_documents(path)
    out, err = capfd.readouterr()
    assert "EOF marker" not in out + err  # pypdf used to print it next to our skip line
    ours = [r for r in caplog.records if r.name == "kgpipeline.preprocess.readers"]
    assert any(r.levelno == logging.DEBUG and "EOF marker" in r.getMessage() for r in ours)
