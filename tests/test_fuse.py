"""Fusion: de-duplication, citation ids per source, packing to a token budget (pure functions)."""

from __future__ import annotations

from spr.fuse import FACTS_HEADER, PASSAGES_HEADER, dedupe, estimate_tokens, fuse, sentences
from spr.records import ChunkRef, Evidence, Fact
from spr.verbalize import format_literal, verbalize
from store.vocabulary import label_from_iri

B = "https://example.org/"


def chunk(name: str, text: str, start: int = 100, title: str = "Plan") -> ChunkRef:
    return ChunkRef(B + "chunk/" + name, B + "doc/" + title, title, start, start + len(text), text)


def passage(c: ChunkRef, score: float = 0.8, source: str = "k", matched: tuple[str, ...] = ()) -> Evidence:
    return Evidence("chunk", c.text, score, source, chunk=c, matched=matched)


def fact(s: str, p: str, o: str, c: ChunkRef | None) -> Evidence:
    f = Fact(B + s, B + p, B + o, s.title(), p, o.title(), graphs=(c.iri,) if c else ())
    return Evidence("triple", verbalize(f), 1.0, "spr", chunk=c, fact=f)


BUREAU = chunk("a", "The Bureau issues the Plan. The Plan sets a target of 12 GW by 2030.")
CENTER = chunk("b", "The Bureau shall establish a Center by 1 September 2025.", start=300)
OTHER = chunk("c", "Grants open on 1 June 2025.", start=0, title="Notice")


def test_verbalize_uses_labels_and_falls_back_to_local_names():
    f = Fact(B + "bureau-0123456789ab", B + "hasDeadline", "2030-12-31", "", "", "", object_is_literal=True)
    assert verbalize(f) == "Bureau has deadline 2030-12-31."
    assert label_from_iri("https://w3id.org/policykb/ontology#hasJurisdiction") == "has jurisdiction"
    assert format_literal("2030-12-31") == "31 December 2030"
    assert format_literal("12 GW") == "12 GW"


def test_sentences_keep_offsets():
    text = "# Targets\n\nThe Plan sets 12 GW.  An interim target of 6 GW applies! Rooftops: 500 MW"
    spans = sentences(text)
    assert [s.text for s in spans] == ["# Targets", "The Plan sets 12 GW.", "An interim target of 6 GW applies!", "Rooftops: 500 MW"]
    assert all(text[s.start : s.end] == s.text for s in spans)


def test_dedupe_merges_repeats_keeping_best_score_and_all_provenance():
    f1 = fact("bureau", "issues", "plan", BUREAU)
    f2 = fact("bureau", "issues", "plan", CENTER)
    merged = dedupe([passage(BUREAU, 0.5, matched=("q1",)), f1, passage(BUREAU, 0.9, matched=("q2",)), f2])
    assert len(merged) == 2
    assert merged[0].score == 0.9 and merged[0].matched == ("q1", "q2")
    assert merged[1].fact.graphs == (BUREAU.iri, CENTER.iri)


def test_a_fact_is_cited_by_its_chunk_when_the_chunk_is_in_the_context():
    ctx = fuse([fact("bureau", "issues", "plan", BUREAU), fact("bureau", "establishes", "center", CENTER), passage(BUREAU)], 1000)
    ids = {(p.kind, p.evidence.chunk.iri): p.cid for p in ctx.pieces}
    assert ids[("triple", BUREAU.iri)] == ids[("chunk", BUREAU.iri)] == 1
    # The second fact's chunk is not a passage: it still cites that chunk, under its own id.
    assert ids[("triple", CENTER.iri)] == 2 and ctx.sources[2] == CENTER
    assert set(ctx.sources) == {1, 2}


def test_ids_follow_first_appearance_facts_first():
    ctx = fuse([passage(OTHER), passage(BUREAU), fact("bureau", "establishes", "center", CENTER)], 1000)
    order = [(p.kind, p.cid) for p in ctx.pieces]
    assert order == [("triple", 1), ("chunk", 2), ("chunk", 3)]
    text = ctx.render()
    assert text.startswith(FACTS_HEADER + "\n[1] Bureau establishes Center.")
    assert f"{PASSAGES_HEADER}\n[2] (Notice) Grants open on 1 June 2025." in text


def test_packing_respects_the_budget_and_cuts_passages_at_sentences():
    long = chunk("long", " ".join(f"Sentence number {i} states a fact about the plan." for i in range(60)))
    budget = 200
    ctx = fuse([passage(long), passage(OTHER)], budget)
    assert ctx.tokens <= budget
    cut = ctx.passages[0]
    source = ctx.sources[cut.cid]
    assert cut.text.endswith("plan.") and len(source.text) < len(long.text)
    assert long.text.startswith(source.text) and source.end == long.start + len(source.text)
    # The cut passage filled the room; the short one that follows still got in if it fits.
    assert sum(p.tokens for p in ctx.pieces) + estimate_tokens(FACTS_HEADER) + estimate_tokens(PASSAGES_HEADER) <= budget


def test_facts_use_their_share_when_there_are_passages_and_all_room_otherwise():
    facts = [fact(f"entity{i}", "issues", f"plan{i}", chunk(f"f{i}", f"Entity{i} issues Plan{i}.")) for i in range(40)]
    with_text = fuse([*facts, passage(BUREAU)], 300, fact_share=0.3)
    alone = fuse(facts, 300, fact_share=0.3)
    assert 0 < len(with_text.facts) < len(alone.facts) < 40
    assert sum(p.tokens for p in with_text.facts) <= 300 * 0.3
    assert with_text.passages and with_text.dropped == 41 - len(with_text.pieces)


def test_nothing_fits_a_tiny_budget_and_empty_input_gives_an_empty_context():
    assert fuse([passage(BUREAU)], 5).pieces == ()
    empty = fuse([], 500)
    assert empty.pieces == () and empty.render() == "" and empty.tokens == 0
