"""The "reports" stage: a report per community, a description per member entity, both embedded.

Reads the communities (:func:`store.communities.read_communities`, written by the stage
"communities") and writes, for each one with at least ``[communities] min_size`` members, a
:class:`store.communities.Report`:

- ``reports = "extractive"`` (the default, no model): title from the most central members, a
  two-sentence summary, findings = the best-supported relations verbalized and key sentences
  quoted verbatim from the chunks that mention the most members
  (:mod:`kgpipeline.derived.report_writers`);
- ``reports = "llm"``: the ``[llm]`` model writes title, summary and findings as JSON bounded by
  a schema over a numbered context (members, relations, key sentences; under 1,000 prompt tokens); the
  members and evidence numbers it cites are mapped back to IRIs and what does not resolve is
  dropped. Invalid output falls back to the extractive report of that community (the summary
  line counts the fallbacks). The response cache makes an unchanged community free to redo.

Incremental: a community whose members hash equals its report's (and whose report came from the
configured writer) keeps its report; reports of communities that are gone are dropped. Then every
member of a community gets a short extractive description (type, relations, first mentioning
sentence). With ``[communities] embed = "ingest"`` the report texts and descriptions are then
embedded into ``<kb>/indexes/reports`` and ``<kb>/indexes/entity_descriptions``
(:class:`store.vectors.VectorIndex`, ids = community / entity IRIs; the embedding cache makes
unchanged texts free). By default (``"first_use"``) the stage removes those two indexes instead
and a community mode's first read embeds them (:func:`store.communities.community_index`): the
default answer path never reads them, and on a CPU without fast matrix units they cost more than
half an ingest's time.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import ModelOutputError
from core.usage import UsageScope
from kgpipeline.derived.report_writers import (
    EXTRACTIVE,
    Evidence,
    KBView,
    describe,
    extractive_report,
    gather,
    read_view,
)
from store.base import RDFStore
from store.communities import (
    DESCRIPTIONS_INDEX,
    REPORTS_INDEX,
    Finding,
    Report,
    drop_community_index,
    drop_reports,
    read_communities,
    read_reports,
    save_community_index,
    write_descriptions,
    write_report,
)
from store.layout import KBLayout

if TYPE_CHECKING:
    from core.config import CommunitiesConfig, Config
    from core.usage import UsageTracker

NAME = "reports"
log = logging.getLogger("policykb.reports")
MAX_CONTEXT_CHARS = 3200  # ~800 tokens of context; with the instructions the prompt stays < 1,000
CONTEXT_ENTITIES, CONTEXT_RELATIONS, CONTEXT_QUOTES = 12, 8, 5
# What the schema's bounds allow at most (~100 tokens a finding): under a grammar the output then
# always closes before the limit; the [llm] default of 512 cut reports of five findings short.
REPORT_MAX_TOKENS = 800


# --- the LLM writer ---------------------------------------------------------------------------------


def report_schema(findings: int, labels: list[str], evidence: int) -> dict:
    """Title, summary and 1 to ``findings`` findings, each citing member labels and evidence numbers
    (both enums, so a grammar-constrained model can only cite what the context offers)."""
    entity = {"type": "string", "enum": labels} if labels else {"type": "string", "maxLength": 80}
    cite = {"type": "integer", "enum": list(range(1, evidence + 1))} if evidence else {"type": "integer"}
    return {
        "type": "object",
        "properties": {
            "title": {"type": "string", "maxLength": 80},
            "summary": {"type": "string", "maxLength": 300},
            "findings": {
                "type": "array",
                "minItems": 1,
                "maxItems": findings,
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "maxLength": 160},
                        "entities": {"type": "array", "items": entity, "minItems": 1 if labels else 0, "maxItems": 3},
                        "chunks": {"type": "array", "items": cite, "minItems": 1 if evidence else 0, "maxItems": 2},
                    },
                    "required": ["text", "entities", "chunks"],
                },
            },
        },
        "required": ["title", "summary", "findings"],
    }


def llm_context(view: KBView, ev: Evidence) -> tuple[str, list[str], list[str]]:
    """(numbered context text, member labels offered, chunk IRI of each evidence number)."""
    members = list(ev.central[:CONTEXT_ENTITIES])
    labels = list(dict.fromkeys(view.label(m) for m in members))
    lines = ["Entities:"] + [f"- {view.label(m)} ({view.type_label(m)})" for m in members]
    if len(ev.central) > len(members):
        lines.append(f"- ... and {len(ev.central) - len(members)} more")
    lines.append("Evidence:")
    chunks: list[str] = []
    items = [(view.verbalize(r), r.chunks[0]) for r in ev.relations[:CONTEXT_RELATIONS] if r.chunks]
    items += [(f'"{q.text}"', q.chunk) for q in ev.quotes[:CONTEXT_QUOTES]]
    size = sum(len(line) + 1 for line in lines)
    for text, chunk in items:
        line = f"[{len(chunks) + 1}] {text}"
        if size + len(line) > MAX_CONTEXT_CHARS:
            continue
        lines.append(line)
        chunks.append(chunk)
        size += len(line) + 1
    return "\n".join(lines), labels, chunks


def report_messages(context: str, findings: int) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "You summarize communities of related entities in policy documents for an analyst. "
                                      "Use only the given entities and numbered evidence."},
        {"role": "user", "content": f"{context}\n\nWrite: a title of at most 10 words naming the main entities; a summary "
                                    "of one or two sentences (at most 30 words) saying what connects them; and up to "
                                    f"{findings} findings, each one short sentence of at most 25 words, in your own words, "
                                    "stating one fact from the evidence, with the entities it names and the numbers of "
                                    "the evidence it rests on."},
    ]  # fmt: skip


def llm_report(view: KBView, ev: Evidence, llm, findings: int) -> Report:
    """The model's report of one community; raises ModelOutputError when it is unusable."""
    context, labels, chunks = llm_context(view, ev)
    messages = report_messages(context, findings)
    scope, started = UsageScope(), time.perf_counter()  # this call's use alone, whatever else shares the tracker
    with scope.active():
        data = llm.complete_json(messages, report_schema(findings, labels, len(chunks)), max_tokens=REPORT_MAX_TOKENS)
    seconds, used = time.perf_counter() - started, scope.totals
    if not isinstance(data, dict):
        raise ModelOutputError("report is not a JSON object")
    by_label = {view.label(m).casefold(): m for m in ev.central}
    out: list[Finding] = []
    for item in data.get("findings") or []:
        text = " ".join(str(item.get("text", "")).split()) if isinstance(item, dict) else ""
        if not text or text.casefold() in {f.text.casefold() for f in out}:  # small models repeat themselves
            continue
        cited = [by_label.get(str(e).strip().casefold()) for e in item.get("entities") or [] if isinstance(e, str)]
        numbers = [n for n in item.get("chunks") or [] if isinstance(n, int) and 1 <= n <= len(chunks)]
        out.append(Finding(text, tuple(sorted({e for e in cited if e})), tuple(sorted({chunks[n - 1] for n in numbers}))))
    title, summary = (" ".join(str(data.get(k, "")).split()) for k in ("title", "summary"))
    if not title or not summary or not out:
        raise ModelOutputError("report without title, summary or findings")
    prompt = used.usage.prompt_tokens + used.saved.prompt_tokens
    completion = used.usage.completion_tokens + used.saved.completion_tokens
    c = ev.community
    return Report(c.iri, title, summary, tuple(out[:findings]), llm.model_id, prompt, completion, seconds, c.members_hash)


# --- the stage ----------------------------------------------------------------------------------------


class ReportsStage:
    """Derived stage "reports". Embedder and LLM come as factories: they load only when needed."""

    name = NAME

    def __init__(self, config: CommunitiesConfig, base_iri: str, embedder_factory, llm_factory=None):
        self.config = config
        self.base_iri = base_iri
        self._embedder = embedder_factory
        self._llm = llm_factory
        self.timings: dict[str, float] = {}  # of the last run: read, reports, descriptions, embed
        self.counts: dict[str, int] = {}  # of the last run: written, reused, dropped, fallbacks, ...

    def write(self, view: KBView, ev: Evidence, llm) -> tuple[Report, bool]:
        """(the report of one community, whether the LLM failed and the extractive writer stood in)."""
        if llm is not None:
            try:
                return llm_report(view, ev, llm, self.config.findings), False
            except ModelOutputError as exc:
                log.warning("LLM report failed for %s (%s); using the extractive report", ev.community.iri, exc)
                return extractive_report(view, ev, self.config.findings), True
        return extractive_report(view, ev, self.config.findings), False

    def run(self, store: RDFStore, kb_dir: Path) -> str:
        started = time.perf_counter()
        communities = read_communities(store)
        eligible = [c for c in communities if len(c.members) >= self.config.min_size]
        existing = {r.community: r for r in read_reports(store)}
        view = read_view(store)
        read_at = time.perf_counter()
        llm = self._llm() if self.config.reports == "llm" and self._llm is not None else None
        writer = llm.model_id if llm is not None else EXTRACTIVE
        current = {c.iri for c in eligible}
        gone = sorted(set(existing) - current)
        if gone:
            drop_reports(store, gone, self.base_iri)
        reports: dict[str, Report] = {}
        # A community repeated at the next level (same members, new IRI) gets a copy of its report.
        same: dict[str, Report] = {r.members_hash: r for r in existing.values() if r.generated_by == writer}
        written = copied = fallbacks = 0
        for c in eligible:
            old = existing.get(c.iri)
            if old is not None and old.members_hash == c.members_hash and old.generated_by == writer:
                reports[c.iri] = old
                continue
            if c.members_hash in same:
                report = replace(same[c.members_hash], community=c.iri)
                copied += 1
            else:
                report, failed = self.write(view, gather(view, c), llm)
                fallbacks += failed
            write_report(store, report, self.base_iri)
            if report.generated_by == writer:
                same.setdefault(c.members_hash, report)
            reports[c.iri] = report
            written += 1
        reports_at = time.perf_counter()
        members = sorted({m for c in communities for m in c.members if m in view.entities})
        descriptions = {m: describe(view, m) for m in members}
        write_descriptions(store, descriptions, self.base_iri)
        described_at = time.perf_counter()
        embedder = self._embedder() if self.config.embed == "ingest" else None
        for name in (REPORTS_INDEX, DESCRIPTIONS_INDEX):
            if embedder is not None:
                save_community_index(store, kb_dir, name, embedder)
            else:  # the texts may have changed: a community mode's first read embeds them again
                drop_community_index(kb_dir, name)
        done = time.perf_counter()
        self.timings = {"read": read_at - started, "reports": reports_at - read_at, "descriptions": described_at - reports_at,
                        "embed": done - described_at, "total": done - started}  # fmt: skip
        self.counts = {"reports": len(reports), "written": written, "copied": copied, "reused": len(reports) - written,
                       "dropped": len(gone), "fallbacks": fallbacks, "small": len(communities) - len(eligible),
                       "descriptions": len(descriptions)}  # fmt: skip
        note = f", {fallbacks} LLM fallbacks to extractive" if fallbacks else ""
        copies = f" ({copied} copied from the same members one level up)" if copied else ""
        return (
            f"{len(reports)} reports ({written} written{copies}, {len(reports) - written} reused, {len(gone)} dropped; "
            f"{self.config.reports}{note}) for {len(communities)} communities "
            f"({len(communities) - len(eligible)} below {self.config.min_size} members), {len(descriptions)} entity "
            f"descriptions; read {self.timings['read']:.1f} s, reports {self.timings['reports']:.1f} s, "
            f"descriptions {self.timings['descriptions']:.1f} s, "
            + (f"embed {self.timings['embed']:.1f} s" if self.config.embed == "ingest" else "vectors embedded on first use")
        )


def make_stage(config: Config, tracker: UsageTracker | None = None, llm_cache: bool | None = None) -> ReportsStage:
    """The stage a configuration describes (``[communities]``, ``[embed]``, ``[llm]``)."""

    def embedder():
        from core.embed import make_embedder

        return make_embedder(config.embed, KBLayout(config.kb_dir).embed_cache, tracker)

    def llm():
        from core.llm import make_llm

        return make_llm(config.llm, KBLayout(config.kb_dir).llm_cache, tracker=tracker, cache=llm_cache)

    return ReportsStage(config.communities, config.kb.base_iri, embedder, llm)
