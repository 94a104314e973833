"""Parsers: the rule parser over the real ontology lexicon, LoRA training/reload (slow), and
``policykb parse`` / ``policykb train-parser`` through click's CliRunner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.config import SPRConfig
from core.resources import resource_dir
from core.text import stem
from policykb.cli import cli
from spr.grounding.sexpr import to_text
from spr.grounding.sexpr_reader import parse
from spr.parsing.factory import load_parser
from spr.parsing.lora import LoRAParser, parse_outputs, prompt
from spr.parsing.rules import RuleParser
from spr.parsing.synth import Example, split_dev, synthesize, verb_forms
from store.ontologies import put_ontologies
from store.oxigraph_store import OxigraphStore
from store.vocabulary import read_terms

CORPUS = Path(__file__).resolve().parents[1] / "examples" / "corpus"


@pytest.fixture(scope="module")
def properties():
    store = OxigraphStore()
    put_ontologies(store, resource_dir(Path("ontologies")))
    return read_terms(store, "property")


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Who issued the National Solar Plan?", "(JOIN [ issues ] [ National Solar Plan ])"),
        ("What did the National Energy Bureau establish?", "(JOIN (R [ establishes ]) [ National Energy Bureau ])"),
        ("What is supported by the Notice on Distributed Photovoltaics?", "(JOIN (R [ supports ]) [ Notice on Distributed Photovoltaics ])"),
        ("By whom was the Renewable Energy Act of 2024 implemented?", "(JOIN [ implements ] [ Renewable Energy Act of 2024 ])"),
        ("Which plans does the Notice support?", "(AND [ plans ] (JOIN (R [ supports ]) [ Notice ]))"),
        ("How many policies did the Energy Bureau issue?", "(COUNT (AND [ policies ] (JOIN (R [ issues ]) [ Energy Bureau ])))"),
        ("What is the deadline of the Solar Monitoring Center?", "(JOIN (R [ has deadline ]) [ Solar Monitoring Center ])"),
        ("What does the Decision on the Establishment of the Center set up?",
         "(JOIN (R [ establishes ]) [ Decision on the Establishment of the Center ])"),
    ],
)  # fmt: skip
def test_rule_parser_question_forms(properties, question, expected):
    top = RuleParser(properties).parse(question)[0]
    assert top.text == expected and to_text(parse(top.text)) == expected


def test_rule_parser_when_question_offers_a_date_reading_first(properties):
    out = RuleParser(properties).parse("When must the Solar Monitoring Center be established?")
    assert out[0].text == "(JOIN (R [ date ]) [ Solar Monitoring Center ])" and out[0].score > out[1].score


def test_rule_parser_chains_relations_nearest_the_entity_first():
    from store.vocabulary import Term

    lexicon = {f"https://x.org/{r}": Term(f"https://x.org/{r}", r) for r in ("children", "gender")}
    parser = RuleParser(lexicon)
    expected = "(JOIN (R [ gender ]) (JOIN (R [ children ]) [ abaqa_khan ]))"
    assert parser.parse("what is the gender of children of abaqa_khan ?")[0].text == expected
    assert parser.parse("abaqa_khan 's children 's gender ?")[0].text == expected


def test_rule_parser_gives_up_without_a_relation_phrase(properties):
    assert RuleParser(properties).parse("Tell me a joke") == []


def test_stem_and_verb_forms():
    assert {stem(w) for w in ("issue", "issues", "issued", "issuing")} == {"issu"}
    assert stem("established") == stem("establishes") == stem("establish")
    assert verb_forms("issues") == ("issue", "issues", "issued")
    assert verb_forms("applies to") == ("apply to", "applies to", "applied to")
    assert verb_forms("set up", base=True) == ("set up", "sets up", "set up")
    assert verb_forms("has deadline") is None and verb_forms("children") is None


def test_parse_outputs_keeps_valid_beams_in_score_order():
    out = parse_outputs(["(JOIN [ a ] [ b ])\nQuestion: x", "(JOIN [ a ]", " (join [ a ] [ b ])", "(COUNT [ c ])"], [0.5, 0.9, 0.4, 0.7])
    assert [c.text for c in out] == ["(COUNT [ c ])", "(JOIN [ a ] [ b ])"]


def test_synthesis_forms_and_split_by_logical_form():
    from spr.parsing.synth import _Fact
    from store.vocabulary import Term

    x = "https://x.org/"
    props = {x + "issues": Term(x + "issues", "issues", ("publish", "adopt")), x + "hasDeadline": Term(x + "hasDeadline", "has deadline", ("deadline",))}
    classes = {x + "Agency": Term(x + "Agency", "agency"), x + "Plan": Term(x + "Plan", "plan"), x + "Deadline": Term(x + "Deadline", "deadline")}
    facts = [_Fact(x + "b", x + "issues", x + "p", "the Bureau", "the Plan", x + "Agency", x + "Plan"),
             _Fact(x + "p", x + "hasDeadline", x + "d", "the Plan", "2030", x + "Plan", x + "Deadline")]  # fmt: skip
    examples = synthesize(facts, [(x + "dateValue", "2030-12-31", x + "Deadline")], props, classes, per_form=2)
    forms = {e.form for e in examples}
    assert forms == {"1-hop", "reversed", "typed", "count", "2-hop", "dated"}
    assert all(to_text(parse(e.sexpr)) == e.sexpr for e in examples)
    assert Example("Who published the Plan?", "(JOIN [ issues ] [ the Plan ])", "reversed") in examples or any(
        e.sexpr == "(JOIN [ issues ] [ the Plan ])" for e in examples
    )
    train, dev = split_dev(examples * 3, dev_fraction=0.5)
    assert not {e.sexpr for e in train} & {e.sexpr for e in dev}


def test_load_parser_without_adapter_is_the_rule_parser(tmp_path, properties):
    assert isinstance(load_parser("auto", tmp_path, properties, 1, 96), RuleParser)
    with pytest.raises(Exception, match="no parser adapter"):
        load_parser("lora", tmp_path, properties, 1, 96)


@pytest.mark.slow
def tok_text(parser: LoRAParser, decoded) -> str:
    return parser._load()[1].decode(decoded.tokens, skip_special_tokens=True)


def test_lora_training_smoke(tmp_path):
    """A few steps on a handful of examples: the adapter is saved, reloads, and beams come back."""
    import torch

    from spr.parsing.train import train_parser

    examples = [
        Example("Who issued the National Solar Plan?", "(JOIN [ issues ] [ National Solar Plan ])", "reversed"),
        Example("What did the Bureau establish?", "(JOIN (R [ establishes ]) [ Bureau ])", "1-hop"),
        Example("How many plans did the Bureau issue?", "(COUNT (JOIN (R [ issues ]) [ Bureau ]))", "count"),
        Example("What does the Notice support?", "(JOIN (R [ supports ]) [ Notice ])", "1-hop"),
    ]
    # 20 steps (~20 s): enough for the four examples to come back as expressions, which the
    # decoding shortcuts below need to be seen at work.
    config = SPRConfig(batch_size=4, max_seq_tokens=48, learning_rate=1e-2)
    report = train_parser(examples, examples[:1], tmp_path / "parser", config, steps=20)
    assert report.steps == 20 and report.first_loss > 0 and 0.0 <= report.dev_exact_match <= 1.0
    assert (tmp_path / "parser" / "adapter_config.json").is_file()
    assert (tmp_path / "parser" / "adapter_model.safetensors").is_file()
    reloaded = LoRAParser(tmp_path / "parser", beams=3, max_new_tokens=24)
    (beams,) = reloaded.generate(["Who issued the National Solar Plan?"])
    assert len(beams) == 3 and [s for _, s in beams] == sorted((s for _, s in beams), reverse=True)
    assert all(isinstance(c.text, str) for c in reloaded.parse("Who issued the Plan?"))
    # The training targets are kept beside the adapter: the greedy decoder drafts from them.
    targets = (tmp_path / "parser" / "policykb-parser-targets.txt").read_text(encoding="utf-8").splitlines()
    assert "(JOIN [ issues ] [ National Solar Plan ])" in targets
    greedy = LoRAParser(tmp_path / "parser", beams=1, max_new_tokens=24)
    assert greedy.decoder_name == "greedy, draft-and-verify" and greedy.drafter().vocab
    out = greedy.parse("Who issued the National Solar Plan?")
    assert all(0.0 < c.score <= 1.0 for c in out)
    # Decoding in bfloat16 (the default where the CPU has it natively): the merged model is cast,
    # training stayed float32, and the parse is scored the same way.
    half = LoRAParser(tmp_path / "parser", beams=1, max_new_tokens=24, dtype="bfloat16")
    assert all(0.0 < c.score <= 1.0 for c in half.parse("Who issued the National Solar Plan?"))
    assert next(half._load()[0].parameters()).dtype == torch.bfloat16
    # With int8 copies for narrow passes (the default, [spr] parser_int8_rows): the same parse.
    narrow = LoRAParser(tmp_path / "parser", beams=1, max_new_tokens=24, dtype="bfloat16", int8_rows=4)
    question = "Who issued the National Solar Plan?"
    assert narrow.decode(question).tokens == half.decode(question).tokens
    assert any(type(m).__name__ == "NarrowInt8Linear" for m in narrow._load()[0].modules())
    # Drafting relation labels from the KB's and writing the closings the grammar forces (both on
    # by default) leave the output as it is.
    kb_labels = ["issues", "establishes", "supports"]
    plain = LoRAParser(tmp_path / "parser", beams=1, max_new_tokens=24, labels=kb_labels)
    plain.draft_labels = plain.close_by_grammar = False
    quick = LoRAParser(tmp_path / "parser", beams=1, max_new_tokens=24, labels=kb_labels)
    assert quick.drafter().labels is not None and plain.drafter().labels is None
    for q in ("Who issued the National Solar Plan?", "What does the Notice support?"):
        text = tok_text(quick, quick.decode(q))
        assert text == tok_text(plain, plain.decode(q)) and parse_outputs([text], [1.0]), text
    # float32 decoding never adds them (the kernel was slower with float32 activations)
    wide = LoRAParser(tmp_path / "parser", beams=1, max_new_tokens=24, dtype="float32", int8_rows=4)
    assert not any(type(m).__name__ == "NarrowInt8Linear" for m in wide._load()[0].modules())
    assert prompt("  a \n b ") == "Question: a b\nS-expression:"
    # A greedy parse is narrow work: half of PyTorch's threads; beams in batches get all of them.
    from core import cpu

    if not os.environ.get("OMP_NUM_THREADS"):  # else the user's count stands
        default = cpu._TORCH_DEFAULT[0]
        narrow.decode(question)
        assert torch.get_num_threads() == cpu.torch_threads(False, default)
        reloaded.generate([question])
        assert torch.get_num_threads() == default


@pytest.fixture(scope="module")
def cli_kb(tmp_path_factory):
    kb = tmp_path_factory.mktemp("clikb") / "kb"
    runner = CliRunner()
    assert runner.invoke(cli, ["--kb", str(kb), "init"]).exit_code == 0
    result = runner.invoke(cli, ["--kb", str(kb), "ingest", str(CORPUS / "national-solar-plan.md")])
    assert result.exit_code == 0, result.output
    assert "entities:" in result.output
    return kb


def test_cli_parse(cli_kb):
    result = CliRunner().invoke(cli, ["--kb", str(cli_kb), "parse", "Who issued the National Solar Plan?", "--explain"])
    assert result.exit_code == 0, result.output
    assert "parser      rules" in result.output
    assert "s-expr      (JOIN [ issues ] [ National Solar Plan ])" in result.output
    assert "SELECT DISTINCT ?x" in result.output
    assert "triple      Energy Bureau (National) | issues | National Solar Plan" in result.output
    assert "from      <https://w3id.org/policykb/id/chunk/" in result.output
    assert "entity      [National Solar Plan] →" in result.output


def test_cli_parse_json(cli_kb):
    result = CliRunner().invoke(cli, ["--kb", str(cli_kb), "parse", "What did the National Energy Bureau establish?", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)  # progress bars of model loading go to stderr
    assert data["parser"] == "rules" and data["answers"][0]["label"] == "Solar Monitoring Center"
    assert data["triples"][0]["graphs"] and data["sparql"].startswith("SELECT")


def test_cli_parse_forced_lora_without_adapter_is_one_line_error(cli_kb):
    result = CliRunner().invoke(cli, ["--kb", str(cli_kb), "parse", "Who?", "--parser", "lora"])
    assert result.exit_code == 4 and "no parser adapter" in result.output


@pytest.mark.slow
def test_cli_train_parser_then_parse_with_lora(cli_kb, tmp_path):
    """`train-parser` (two steps: a smoke run) saves an adapter; `parse` then says the LoRA parser ran
    and prints whatever it decoded, or a clear note."""
    import shutil

    kb = tmp_path / "kb"
    shutil.copytree(cli_kb, kb)
    runner = CliRunner()
    result = runner.invoke(cli, ["--kb", str(kb), "train-parser", "--steps", "2"])
    assert result.exit_code == 0, result.output
    assert "training on cpu" in result.output or "training on cuda" in result.output
    assert "adapter saved in" in result.output and (kb / "parser" / "policykb-parser-targets.txt").is_file()
    parsed = runner.invoke(cli, ["--kb", str(kb), "parse", "Who issued the National Solar Plan?"])
    assert parsed.exit_code == 0, parsed.output
    assert "parser      lora" in parsed.output and "s-expr" in parsed.output


def test_reindex_parser_pauses_resumes_then_is_up_to_date(cli_kb, tmp_path):
    """A refresh stopped by its budget leaves the KB's parser alone and resumes where it stopped;
    a finished one installs the adapter; with the KB unchanged the next one trains nothing."""
    import shutil

    from core.config import load_config
    from spr.parsing.refresh import STAMP, refresh_parser, training_examples
    from store.oxigraph_store import OxigraphStore

    kb = tmp_path / "kb"
    shutil.copytree(cli_kb, kb)
    (kb / "policykb.toml").write_text("[spr]\ntrain_steps = 3\nbatch_size = 2\nmax_seq_tokens = 48\nmax_new_tokens = 8\n", encoding="utf-8")
    config = load_config(kb_dir=kb).spr
    store = OxigraphStore(kb / "store")
    train, _ = training_examples(store, config)
    assert train
    first = refresh_parser(store, kb, config, budget_s=0.0, dev_limit=0)  # one step, then the budget is spent
    store.close()
    assert (first.status, first.steps_done, first.steps) == ("paused", 1, 3)
    assert not (kb / "parser").exists() and (kb / "parser.partial" / STAMP).is_file()
    runner = CliRunner()
    resumed = runner.invoke(cli, ["--kb", str(kb), "reindex", "parser"])
    assert resumed.exit_code == 0, resumed.output
    assert "parser: trained: 3/3 steps" in resumed.output
    assert (kb / "parser" / "adapter_config.json").is_file() and not (kb / "parser.partial").exists()
    again = runner.invoke(cli, ["--kb", str(kb), "reindex", "parser"])
    assert "parser: up to date: 3/3 steps" in again.output, again.output
    parsed = runner.invoke(cli, ["--kb", str(kb), "parse", "Who issued the National Solar Plan?"])
    assert "parser      lora" in parsed.output


@pytest.mark.slow
def test_parser_base_is_unpacked_once_and_reloads_identically(tmp_path, monkeypatch):
    import torch

    from spr.parsing.base_model import load_base

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first_model, first_tok = load_base()  # from the GGUF, then written unpacked
    (folder,) = (tmp_path / "cache" / "policykb" / "parser-base").iterdir()
    assert (folder / "model.safetensors").is_file() and (folder / "config.json").is_file()
    second_model, second_tok = load_base()  # from the unpacked copy
    text = prompt("What did the National Energy Bureau establish?")
    ids = first_tok(text, return_tensors="pt")
    assert ids["input_ids"].tolist() == second_tok(text, return_tensors="pt")["input_ids"].tolist()
    with torch.no_grad():
        assert torch.equal(first_model(**ids).logits, second_model(**ids).logits)
    # A damaged copy is dropped, not fatal: the GGUF is read again and the copy rewritten.
    (folder / "model.safetensors").write_bytes(b"not a safetensors file")
    model, _ = load_base()
    assert model.config.vocab_size == first_model.config.vocab_size
    assert (folder / "model.safetensors").stat().st_size > 100_000_000
