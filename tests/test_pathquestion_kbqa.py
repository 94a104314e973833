"""PathQuestion as KBQA: gold S-expressions, the split by path, answer scores, and the KB in
policykb's data model (read by the real weights-stage readers)."""

from __future__ import annotations

from kgpipeline.derived.surface_counts import read_corpus, read_labels, read_relation_pairs
from spr.eval.pathquestion_kbqa import answer_scores, gold_sexpr, kb_quads, load_questions, split_by_path
from spr.grounding.sexpr import to_text
from spr.grounding.sexpr_reader import parse
from store.oxigraph_store import OxigraphStore

KB = "abaqa_khan\tchildren\targhun\narghun\tchildren\tmahmud_ghazan\nmahmud_ghazan\tgender\tmale\n"
QUESTIONS = (
    "who is the gender of abaqa_khan 's grandson ?\tmale(male/)\tabaqa_khan#children#arghun#children#mahmud_ghazan#gender#male#<end>#male\n"
    "what is the gender of children of children of abaqa_khan ?\tmale(male/)\tabaqa_khan#children#arghun#children#mahmud_ghazan#gender#male#<end>#male\n"
    " what is the children of arghun ?\tmahmud_ghazan(mahmud_ghazan/)\targhun#children#mahmud_ghazan\n"
)


def test_gold_sexpr_nests_hops_from_the_subject():
    sexpr = gold_sexpr(["abaqa_khan", "children", "arghun", "__people__person__gender", "male"])
    assert sexpr == "(JOIN (R [ gender ]) (JOIN (R [ children ]) [ abaqa_khan ]))"
    assert to_text(parse(sexpr)) == sexpr


def test_questions_and_split_keep_paraphrases_together(tmp_path):
    f = tmp_path / "q.txt"
    f.write_text(QUESTIONS, encoding="utf-8")
    questions = load_questions(f)
    assert [q.hops for q in questions] == [3, 3, 1] and questions[2].answers == ("mahmud ghazan",)
    train, held = split_by_path(questions, seed=1, held_share=0.5)
    assert split_by_path(questions, seed=1, held_share=0.5) == (train, held)
    assert not {q.path for q in train} & {q.path for q in held} and len(train) + len(held) == 3


def test_answer_scores():
    assert answer_scores(["Male"], ("male",)) == {"hits@1": 1.0, "f1": 1.0, "em": 1.0}
    s = answer_scores(["a", "b"], ("b", "c"))
    assert s["hits@1"] == 0.0 and s["f1"] == 0.5 and s["em"] == 0.0
    assert answer_scores([], ("a",)) == {"hits@1": 0.0, "f1": 0.0, "em": 0.0}


def test_kb_in_the_document_data_model(tmp_path):
    f = tmp_path / "kb.txt"
    f.write_text(KB, encoding="utf-8")
    store = OxigraphStore()
    store.extend(kb_quads(f))
    labels = read_labels(store)
    assert len(labels) == 4 and any("abaqa_khan" in forms or "abaqa khan" in forms for forms in labels.values())
    corpus = read_corpus(store)
    assert len(corpus) == 3 and any(c.text == "abaqa khan children arghun." for c in corpus)
    assert len(read_relation_pairs(store)) == 3
