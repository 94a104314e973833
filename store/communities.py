"""Hierarchical communities and their reports in the store (the EGD GraphRAG design): written by
kgpipeline (stages ``communities`` and ``reports``), read by spr (modes ``community``, ``entity``,
``local``, ``global``).

Layout. The communities, in one named graph (``<base>graph/communities``, replaced on rebuild)::

    <community> a pkb:Community ; pkb:communityLevel 0 ; pkb:communitySize 12 ;
                pkb:parentCommunity <community one level up> ;     # absent at level 0
                pkb:hasMember <entity> , ... ; pkb:membersHash "9f2c…" .

Level 0 is the top (coarsest) partition; a level-n+1 community refines one of level n. Each
report is in its own named graph (``<base>graph/report/<hash of the community IRI>``), so the
stage rewrites only the communities whose members changed::

    <community> pkb:reportTitle "…" ; pkb:reportSummary "…" ; pkb:reportText "the whole report" ;
                pkb:generatedBy "extractive" ; pkb:promptTokens 0 ; pkb:completionTokens 0 ;
                pkb:generationSeconds 0.01 ; pkb:membersHash "9f2c…" ; pkb:hasFinding <finding> .
    <finding> a pkb:Finding ; pkb:order 0 ; pkb:findingText "…" ; pkb:citesEntity <entity> ;
              pkb:citesChunk <chunk> .

Entity descriptions, in ``<base>graph/descriptions`` (replaced on rebuild)::

    <entity> pkb:description "…" .

The embedded reports and descriptions live beside the other indexes: ``<kb>/indexes/reports``
(ids = community IRIs) and ``<kb>/indexes/entity_descriptions`` (ids = entity IRIs), both
:class:`store.vectors.VectorIndex`. The reports stage embeds them at ingest only with
``[communities] embed = "ingest"``; by default :func:`community_index` embeds them from the texts
above when a community mode first reads them (the default answer path never does).
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pyoxigraph import Literal, NamedNode, Quad

from core.errors import StoreError
from core.locks import locked
from store.base import RDFStore
from store.layout import KBLayout
from store.vocab import PKB, RDF, XSD, content_hash, mint, values_clause

if TYPE_CHECKING:
    from core.embed import Embedder
    from store.vectors import VectorIndex

logger = logging.getLogger(__name__)

_A = NamedNode(RDF + "type")
_INT = NamedNode(XSD + "integer")
_DOUBLE = NamedNode(XSD + "double")
REPORTS_INDEX = "reports"
DESCRIPTIONS_INDEX = "entity_descriptions"


def _p(local: str) -> NamedNode:
    return NamedNode(PKB + local)


def communities_graph(base_iri: str) -> NamedNode:
    return NamedNode(f"{base_iri.rstrip('/#')}/graph/communities")


def descriptions_graph(base_iri: str) -> NamedNode:
    return NamedNode(f"{base_iri.rstrip('/#')}/graph/descriptions")


def report_graph(base_iri: str, community: str) -> NamedNode:
    return NamedNode(f"{base_iri.rstrip('/#')}/graph/report/{content_hash(community)}")


def members_hash(members: Iterable[str]) -> str:
    """Digest of a member set (order-free): the key that says a report is still current."""
    return content_hash(*sorted(set(members)), length=16)


def community_iri(base_iri: str, level: int, members: Iterable[str]) -> NamedNode:
    """Deterministic: the same members at the same level give the same IRI across rebuilds."""
    return mint(base_iri, "community", str(level), members_hash(members))


@dataclass(frozen=True)
class Community:
    """One community: ``level`` 0 = top; ``parent`` the community it refines (None at level 0);
    ``members`` entity IRIs, sorted."""

    iri: str
    level: int
    parent: str | None
    members: tuple[str, ...]

    @property
    def members_hash(self) -> str:
        return members_hash(self.members)


@dataclass(frozen=True)
class Finding:
    """One statement of a report and what it rests on (entity and chunk IRIs)."""

    text: str
    entities: tuple[str, ...] = ()
    chunks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Report:
    """A community report. ``generated_by``: "extractive" or the model id; tokens and seconds are
    what writing it cost (0 tokens for extractive reports); ``members_hash`` the members it was
    written for."""

    community: str
    title: str
    summary: str
    findings: tuple[Finding, ...]
    generated_by: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    members_hash: str

    @property
    def text(self) -> str:
        """The report as one text (what is embedded and what a reader sees)."""
        lines = [f"# {self.title}", self.summary] + [f"- {f.text}" for f in self.findings]
        return "\n".join(line for line in lines if line)


# --- communities -------------------------------------------------------------------------------
def community_quads(communities: Sequence[Community], base_iri: str) -> list[Quad]:
    g = communities_graph(base_iri)
    quads: list[Quad] = []
    for c in communities:
        node = NamedNode(c.iri)
        quads += [
            Quad(node, _A, _p("Community"), g),
            Quad(node, _p("communityLevel"), Literal(str(c.level), datatype=_INT), g),
            Quad(node, _p("communitySize"), Literal(str(len(c.members)), datatype=_INT), g),
            Quad(node, _p("membersHash"), Literal(c.members_hash), g),
        ]
        if c.parent:
            quads.append(Quad(node, _p("parentCommunity"), NamedNode(c.parent), g))
        quads += [Quad(node, _p("hasMember"), NamedNode(m), g) for m in c.members]
    return quads


def write_communities(store: RDFStore, communities: Sequence[Community], base_iri: str) -> int:
    """Replace the communities graph; returns the number of quads written."""
    quads = community_quads(communities, base_iri)
    store.drop_graph(communities_graph(base_iri))
    return store.extend(quads)


def read_communities(store: RDFStore, level: int | None = None) -> list[Community]:
    """Every community (or those of one ``level``), ordered by level then IRI."""
    where = f"FILTER(?level = {int(level)})" if level is not None else ""
    rows = store.select(
        f"SELECT ?c ?level ?parent ?m WHERE {{ ?c a <{PKB}Community> ; <{PKB}communityLevel> ?level ; "
        f"<{PKB}hasMember> ?m . OPTIONAL {{ ?c <{PKB}parentCommunity> ?parent }} {where} }}"
    ).rows
    level_of: dict[str, int] = {}
    parent_of: dict[str, str | None] = {}
    members: dict[str, set[str]] = {}
    for r in rows:
        c = r["c"].value  # type: ignore[union-attr]
        level_of[c] = int(r["level"].value)  # type: ignore[union-attr]
        parent_of[c] = r["parent"].value if r.get("parent") is not None else None  # type: ignore[union-attr]
        members.setdefault(c, set()).add(r["m"].value)  # type: ignore[union-attr]
    return [
        Community(c, level_of[c], parent_of[c], tuple(sorted(members[c])))
        for c in sorted(level_of, key=lambda c: (level_of[c], c))
    ]


# --- reports -----------------------------------------------------------------------------------
def report_quads(report: Report, base_iri: str) -> list[Quad]:
    g = report_graph(base_iri, report.community)
    node = NamedNode(report.community)
    quads = [
        Quad(node, _p("reportTitle"), Literal(report.title), g),
        Quad(node, _p("reportSummary"), Literal(report.summary), g),
        Quad(node, _p("reportText"), Literal(report.text), g),
        Quad(node, _p("generatedBy"), Literal(report.generated_by), g),
        Quad(node, _p("promptTokens"), Literal(str(report.prompt_tokens), datatype=_INT), g),
        Quad(node, _p("completionTokens"), Literal(str(report.completion_tokens), datatype=_INT), g),
        Quad(node, _p("generationSeconds"), Literal(repr(float(report.seconds)), datatype=_DOUBLE), g),
        Quad(node, _p("membersHash"), Literal(report.members_hash), g),
    ]
    for i, f in enumerate(report.findings):
        finding = NamedNode(f"{report_graph(base_iri, report.community).value}#finding-{i}")
        quads += [
            Quad(node, _p("hasFinding"), finding, g),
            Quad(finding, _A, _p("Finding"), g),
            Quad(finding, _p("order"), Literal(str(i), datatype=_INT), g),
            Quad(finding, _p("findingText"), Literal(f.text), g),
        ]
        quads += [Quad(finding, _p("citesEntity"), NamedNode(e), g) for e in f.entities]
        quads += [Quad(finding, _p("citesChunk"), NamedNode(c), g) for c in f.chunks]
    return quads


def write_report(store: RDFStore, report: Report, base_iri: str) -> int:
    """Replace one community's report; returns the number of quads written."""
    store.drop_graph(report_graph(base_iri, report.community))
    return store.extend(report_quads(report, base_iri))


def drop_reports(store: RDFStore, communities: Iterable[str], base_iri: str) -> None:
    """Remove the reports of these communities (gone after a rebuild)."""
    store.drop_graphs([report_graph(base_iri, c) for c in communities])


def read_reports(store: RDFStore, communities: Iterable[str] | None = None) -> list[Report]:
    """Every report (or those of the given communities), ordered by community IRI."""
    values = ""
    if communities is not None:
        unique = sorted(set(communities))
        if not unique:
            return []
        values = values_clause("c", unique) + " "
    # The report graph's own membersHash (the communities graph has the current one).
    heads = store.select(
        f"SELECT ?c ?title ?summary ?by ?pt ?ct ?s ?h WHERE {{ {values}GRAPH ?g {{ ?c <{PKB}reportTitle> ?title ; "
        f"<{PKB}reportSummary> ?summary ; <{PKB}generatedBy> ?by ; <{PKB}promptTokens> ?pt ; "
        f"<{PKB}completionTokens> ?ct ; <{PKB}generationSeconds> ?s ; <{PKB}membersHash> ?h }} }}"
    ).rows
    found = store.select(
        f"SELECT ?c ?f ?i ?text ?e ?chunk WHERE {{ {values}?c <{PKB}hasFinding> ?f . ?f <{PKB}order> ?i ; "
        f"<{PKB}findingText> ?text . OPTIONAL {{ ?f <{PKB}citesEntity> ?e }} OPTIONAL {{ ?f <{PKB}citesChunk> ?chunk }} }}"
    ).rows
    findings: dict[str, dict[int, tuple[str, set[str], set[str]]]] = {}
    for r in found:
        c, i = r["c"].value, int(r["i"].value)  # type: ignore[union-attr]
        text, entities, chunks = findings.setdefault(c, {}).setdefault(i, (r["text"].value, set(), set()))  # type: ignore[union-attr]
        if r.get("e") is not None:
            entities.add(r["e"].value)  # type: ignore[union-attr]
        if r.get("chunk") is not None:
            chunks.add(r["chunk"].value)  # type: ignore[union-attr]
    out: dict[str, Report] = {}
    for r in heads:
        c = r["c"].value  # type: ignore[union-attr]
        if c in out:
            continue
        parts = findings.get(c, {})
        out[c] = Report(
            c, r["title"].value, r["summary"].value,  # type: ignore[union-attr]
            tuple(Finding(t, tuple(sorted(e)), tuple(sorted(ch))) for _, (t, e, ch) in sorted(parts.items())),
            r["by"].value, int(r["pt"].value), int(r["ct"].value), float(r["s"].value), r["h"].value,  # type: ignore[union-attr]
        )
    return [out[c] for c in sorted(out)]


# --- entity descriptions -------------------------------------------------------------------------
def write_descriptions(store: RDFStore, descriptions: dict[str, str], base_iri: str) -> int:
    """Replace the descriptions graph (entity IRI → description); returns the quads written."""
    g = descriptions_graph(base_iri)
    store.drop_graph(g)
    return store.extend(Quad(NamedNode(e), _p("description"), Literal(d), g) for e, d in sorted(descriptions.items()) if d)


def read_descriptions(store: RDFStore, entities: Iterable[str] | None = None) -> dict[str, str]:
    values = ""
    if entities is not None:
        unique = sorted(set(entities))
        if not unique:
            return {}
        values = values_clause("e", unique) + " "
    rows = store.select(f"SELECT ?e ?d WHERE {{ {values}?e <{PKB}description> ?d }}").rows
    return {r["e"].value: r["d"].value for r in rows}  # type: ignore[union-attr]


# --- their vector indexes ------------------------------------------------------------------------
def index_texts(store: RDFStore, name: str) -> tuple[list[str], list[str]]:
    """(ids, texts) the index ``name`` holds: every report by community IRI, or every entity
    description by entity IRI."""
    if name == REPORTS_INDEX:
        reports = read_reports(store)
        return [r.community for r in reports], [r.text for r in reports]
    if name == DESCRIPTIONS_INDEX:
        descriptions = read_descriptions(store)
        ids = sorted(descriptions)
        return ids, [descriptions[e] for e in ids]
    raise StoreError(f"unknown community index {name!r}")


def save_community_index(store: RDFStore, kb_dir: Path, name: str, embedder: Embedder) -> VectorIndex:
    """Embed the texts of index ``name`` (:func:`index_texts`) and save the index; the embedding
    cache makes unchanged texts free."""
    from store.vectors import embed_index  # FAISS loads only where vectors are used

    folder = KBLayout(kb_dir).index(name)
    with locked(folder):
        index = embed_index(embedder, *index_texts(store, name))
        index.save(folder)
        return index


def drop_community_index(kb_dir: Path, name: str) -> None:
    """Remove the saved index ``name`` (its texts changed; the next reader embeds them again)."""
    folder = KBLayout(kb_dir).index(name)
    with locked(folder):
        shutil.rmtree(folder, ignore_errors=True)


def community_index(store: RDFStore, kb_dir: Path, name: str, embedder: Embedder) -> VectorIndex:
    """The saved index ``name``; when there is none (the reports stage leaves it to first use),
    its texts embedded now and saved, once across threads and processes. A KB without any such
    text raises :class:`StoreError`; an index that cannot be saved is used from memory."""
    from store.vectors import VectorIndex, embed_index

    folder = KBLayout(kb_dir).index(name)
    with locked(folder):
        try:
            return VectorIndex.load(folder)
        except StoreError:
            pass
        ids, texts = index_texts(store, name)
        if not ids:
            raise StoreError(f"no {name.replace('_', ' ')} in the store")
        # The one slow step a community mode can hit: say so before a wait of minutes.
        logger.warning("embedding %d %s for the first time (once; kept in %s)", len(ids), name.replace("_", " "), folder)
        index = embed_index(embedder, ids, texts)
        try:
            index.save(folder)
        except OSError as exc:
            logger.warning("could not save %s (%s); it is embedded again next time", folder, exc)
        return index
