"""``policykb ask``: parse options, call ``spr.qa.KnowledgeBase.ask`` (``ask_stream`` to print an LLM
answer as it is written), render the answer; or, with ``--questions FILE``, answer every question
of a file with one KB and its models loaded once, as JSON lines."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

import click

from core.config import MAX_K, load_config
from core.errors import InputError, ModelError, PolicyKBError
from core.text import reading_text
from policykb.cli.app import AppContext, one_line_errors
from store.freshness import stale_since


@click.command()
@click.argument("question", required=False)
@click.option(
    "--questions",
    "questions_file",
    type=click.File("r", encoding="utf-8"),
    help="Answer every question of this file (- = stdin) as JSON lines: one question per line, or JSONL with "
    '"question" (and "id"); blank lines and lines starting with # are skipped.',
)
@click.option("--mode", help="Retrieval: dual (default), hybrid (fused text), spr (triples), questions (question bank), vector (plain chunks), bm25, naive-kg, docgraph (document graph), community, entity, local, global.")
@click.option("--answer", "kind", type=click.Choice(["extractive", "llm"]), help="extractive (quoted sentences, default) or llm.")
@click.option("-k", "k", type=click.IntRange(1, MAX_K), help="Text chunks to retrieve (default: [answer] k).")
@click.option("--explain", is_flag=True, help="Also show the parse, linked entities, SPARQL, triples and chunks.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole answer as JSON.")
@click.option(
    "--stream/--no-stream",
    default=None,
    help="Print an LLM answer as the model writes it, then the checked answer if it differs (default: on when stdout is a terminal; never with --json).",
)
@click.option("--kb", "kb_dir", type=click.Path(file_okay=False, path_type=Path), help="KB directory (overrides the global --kb).")
@click.pass_obj
@one_line_errors
def ask(
    app: AppContext,
    question: str | None,
    questions_file: TextIO | None,
    mode: str | None,
    kind: str | None,
    k: int | None,
    explain: bool,
    as_json: bool,
    stream: bool | None,
    kb_dir: Path | None,
) -> None:
    """Answer QUESTION from the KB, with numbered citations and their quotes (or every question of
    --questions FILE, loading the KB and its models once)."""
    from spr.qa import KnowledgeBase

    if (question is None) == (questions_file is None):
        raise InputError("give a QUESTION or --questions FILE (one of the two)")
    config = load_config(kb_dir=kb_dir) if kb_dir is not None else app.config
    if questions_file is not None:
        if explain or stream:
            raise InputError("--questions writes JSON lines (the trace included): --explain and --stream do not apply")
        with KnowledgeBase.open(config) as kb:
            sys.exit(_ask_batch(kb, questions_file, mode, kind, k))
    assert question is not None
    if since := stale_since(config.kb_dir):
        click.echo(f"note: the indexes predate a change to the store ({since}): `policykb reindex` brings them up to date", err=True)
    if stream is None:
        stream = sys.stdout.isatty()
    with KnowledgeBase.open(config) as kb:
        if as_json or not stream:
            answer, streamed = kb.ask(question, mode=mode, answer=kind, k=k), ""
        else:
            answer, streamed = _ask_streaming(kb, question, mode, kind, k)
    if as_json:
        click.echo(json.dumps(answer.to_dict(), ensure_ascii=False, indent=2))
        return
    if not streamed:
        click.echo(textwrap.fill(answer.text, width=100))
    elif " ".join(streamed.split()) != " ".join(answer.text.split()):
        # The check of citations dropped or renumbered something: the draft is not the answer.
        click.echo("\nChecked answer:")
        click.echo(textwrap.fill(answer.text, width=100))
    if answer.citations:
        click.echo("\nSources:")
        for c in answer.citations:
            where = f"{c.title or c.document}, characters {c.start}-{c.end}" if c.document else c.chunk or "(no text)"
            click.echo(f"  [{c.id}] {where}")
            if c.quote:  # as it reads: no footnote marks or Markdown headings (JSON keeps the exact quote)
                click.echo(textwrap.fill(f'"{reading_text(c.quote)}"', width=100, initial_indent="      ", subsequent_indent="      "))
    if explain:
        click.echo("\n" + render_explain(answer))


def _ask_batch(kb, lines: Iterable[str], mode: str | None, kind: str | None, k: int | None) -> int:
    """Answer each question of ``lines``, printing one JSON line per question as soon as it is
    answered (``id``, ``question``, then the answer's fields, or ``error`` and ``exit_code``: a bad
    question or a model that fails ends that question, not the batch). A summary goes to stderr.
    Returns the exit code: 0, or the first failed question's."""
    started, answered, failed, code = time.perf_counter(), 0, 0, 0
    for item_id, item in _batch_items(lines):
        question = None if isinstance(item, InputError) else item
        try:
            if question is None:
                raise item
            record = {"id": item_id, "question": question, **kb.ask(question, mode=mode, answer=kind, k=k).to_dict()}
            answered += 1
        except PolicyKBError as exc:
            record = {"id": item_id, "question": question, "error": " ".join(str(exc).split()), "exit_code": exc.exit_code}
            failed += 1
            code = code or exc.exit_code
        click.echo(json.dumps(record, ensure_ascii=False))
    click.echo(f"answered {answered} of {answered + failed} questions in {time.perf_counter() - started:.1f} s"
               + (f"; {failed} failed" if failed else ""), err=True)
    return code


def _batch_items(lines: Iterable[str]) -> Iterator[tuple[str, str | InputError]]:
    """(id, question) per question line; a JSONL line gives its own "question" and "id" (else the
    line number). A line that is not a question (bad JSON, no "question" string) yields an
    :class:`InputError` in its place."""
    try:
        for number, line in enumerate(lines, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            if not text.startswith("{"):
                yield str(number), text
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as exc:
                yield str(number), InputError(f"line {number}: not JSON ({exc.msg})")
                continue
            value = row.get("question") if isinstance(row, dict) else None
            item_id = str(row.get("id", number)) if isinstance(row, dict) else str(number)
            yield item_id, value if isinstance(value, str) else InputError(f'line {number}: no "question" string')
    except UnicodeDecodeError as exc:
        raise InputError(f"the questions file is not UTF-8 text: {exc.reason} at byte {exc.start}") from None


def _ask_streaming(kb, question: str, mode: str | None, kind: str | None, k: int | None):
    """Ask through ``ask_stream``, echoing the LLM's draft as it is written: (answer, draft)."""
    from spr.records import AnswerDone

    events = kb.ask_stream(question, mode=mode, answer=kind, k=k)  # input errors: before any output
    pieces: list[str] = []
    try:
        for event in events:
            if isinstance(event, AnswerDone):
                return event.answer, "".join(pieces)
            text = event.text if pieces else event.text.lstrip()  # no leading blank before the answer
            if text:
                pieces.append(text)
                click.echo(text, nl=False)  # click.echo flushes
    finally:
        if pieces:
            click.echo()  # end the draft's line, also when the model failed mid-reply
        close = getattr(events, "close", None)
        if callable(close):
            close()
    raise ModelError("the answer stream ended without an answer")


def render_explain(answer) -> str:
    """The retrieval trace as text: what was parsed, linked, queried and found."""
    t = answer.trace
    lines = [f"Mode: {answer.mode}   answer: {answer.kind}" + (f"   model: {answer.model}" if answer.model else "")]
    if t.parse or t.sexpr:
        lines.append(f"Parse:        {t.parse or '(none)'}")
        lines.append(f"S-expression: {t.sexpr or '(not grounded)'}")
    if t.note:
        lines.append(f"Note:         {t.note}")
    if answer.abstain_reason:
        lines.append(f"Abstained:    {answer.abstain_reason}")
    elif answer.abstained and answer.confidence is not None:
        lines.append(f"Abstained:    no sentence scores as high as [answer] min_score (best {answer.confidence:.2f})")
    if t.linked:
        lines.append("Linked entities (score = similarity x weight):")
        lines += [
            f"  [ {e.mention} ] -> {e.label}  {e.score:.3f} = {e.similarity:.3f} x {e.weight:.3f}  <{e.iri}>"
            for e in t.linked
        ]
    if t.sparql:
        lines.append("SPARQL:")
        lines += ["  " + line for line in t.sparql.strip().splitlines()]
    if t.count is not None or t.answers:
        lines.append(f"Query answers: {t.count if t.count is not None else ', '.join(t.answers)}")
    facts = [e for e in answer.evidence if e.kind == "triple"]
    chunks = [e for e in answer.evidence if e.kind == "chunk"]
    lines.append(f"Triples ({len(facts)}):")
    for e in facts:
        graphs = ", ".join(f"<{g}>" for g in e.fact.graphs) if e.fact else ""
        conf = f"   confidence {e.confidence:.2f}" if e.confidence is not None else ""
        lines.append(f"  {e.text}   from {graphs or '(no graph)'}{conf}")
    lines.append(f"Chunks ({len(chunks)}):")
    for e in chunks:
        c = e.chunk
        head = f"  {e.score:.3f} [{e.source}] {c.title if c else ''} ({c.start}-{c.end}) <{c.iri if c else ''}>"
        lines.append(head)
        if c and c.heading_path:
            lines.append(f"      in: {c.heading_path}")
        if e.ranks:
            lines.append("      found by: " + ", ".join(f"{name} #{rank}" for name, rank in e.ranks))
        lines += [f'      matched: "{q}"' for q in e.matched[:3]]
    timings = ", ".join(f"{k} {v:.0f} ms" for k, v in answer.timings_ms.items())
    u = answer.usage
    lines.append(f"Timings: {timings}")
    lines.append(
        f"LLM: {u.llm_calls} calls ({u.llm_cache_hits} cached), {u.prompt_tokens} prompt + {u.completion_tokens} "
        f"completion tokens; context ~{u.context_tokens} tokens"
    )
    if answer.draft:
        lines.append(f"Withheld uncited model reply: {answer.draft!r}")
    return "\n".join(lines)
