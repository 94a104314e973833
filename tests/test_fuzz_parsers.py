"""Fuzzing the parsers: S-expressions, their SPARQL compiler, prefix declaration, the config loader.

Contracts: the S-expression reader returns an AST or raises InputError (SExprError); the compiler
returns SPARQL that pyoxigraph parses, or raises InputError, and no label, IRI or literal can
inject SPARQL; ``declare_prefixes`` never raises and only prepends declarations; the config loader
returns a Config or raises ConfigError with one line. Derandomized (tests/conftest.py);
``EXAMPLES`` is how many inputs each target tries.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import Store

from core.config import load_config
from core.errors import ConfigError, InputError
from spr.grounding.compile import compile_query
from spr.grounding.sexpr import Entity, Iri, Join, Relation, Value, to_text
from spr.grounding.sexpr_reader import parse
from store.vocab import PREFIXES, declare_prefixes

EXAMPLES = {"sexpr_text": 300, "sexpr_grammar": 200, "hostile_terms": 200, "prefixes": 200, "config_toml": 150,
            "config_env": 150}
STORE = Store()  # empty: a query that parses runs and returns nothing
X = "https://x.org/"
HOSTILE = st.sampled_from(['"', "'", "}", "{", "]", "[", "\\", "\n", ">", "<", " DROP ALL ", "#", "?x", ";", "\x00",
                           "\u202e", "^^", "@en", "*/", "UNION", "}} ; INSERT DATA { <a> <b> <c> } #"])
_hostile_text = st.lists(st.one_of(HOSTILE, st.text(max_size=8)), max_size=8).map("".join)


def _runs(sparql: str) -> None:
    before = len(STORE)
    list(STORE.query(sparql))  # parses and runs
    assert len(STORE) == before  # and writes nothing


# --- the S-expression reader ------------------------------------------------------------------
_atoms = st.sampled_from(["JOIN", "AND", "COUNT", "ARGMAX", "ARGMIN", "TC", "lt", "ge", "R", "pkb:issues", "xsd:date",
                          "2024-01-01", "12", "3.5", "2027", "nope:x", "<https://x.org/a>", "<bad iri>", '"s"',
                          '"2025"^^xsd:gYear', '"x"^^<https://x.org/t>', "[ a label ]", "[", "]", "(", ")", '"'])


@settings(max_examples=EXAMPLES["sexpr_text"])
@given(text=st.one_of(st.text(max_size=80), st.lists(_atoms, max_size=14).map(" ".join)))
def test_sexpr_reader_random_text(text):
    try:
        expr = parse(text)
    except InputError as exc:
        assert "\n" not in str(exc).split(" in ")[0]
        return
    assert parse(to_text(expr)) == expr  # what it reads, it writes back


_iri = st.sampled_from([X + "a", X + "b", "https://w3id.org/policykb/ontology#issues", "urn:x:1"]).map(lambda i: f"<{i}>")
_ref = st.one_of(_iri, _hostile_text.map(lambda t: "[ " + t.replace("\\", "\\\\").replace("]", "\\]") + " ]"))
_value = st.one_of(st.sampled_from(["2024-01-01", "12", "3.5", "2024-01-01T10:00:00Z"]),
                   _hostile_text.map(lambda t: '"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"'))


def _exprs(depth: int) -> st.SearchStrategy[str]:
    leaf = _ref
    sub = _exprs(depth - 1) if depth else leaf
    arg = st.one_of(leaf, sub)
    return st.one_of(
        st.tuples(_ref, st.one_of(arg, _value)).map(lambda t: f"(JOIN {t[0]} {t[1]})"),
        st.tuples(_ref, arg).map(lambda t: f"(JOIN (R {t[0]}) {t[1]})"),
        st.tuples(arg, arg).map(lambda t: f"(AND {t[0]} {t[1]})"),
        st.tuples(st.sampled_from(["ARGMAX", "ARGMIN"]), arg, _ref).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(st.sampled_from(["lt", "le", "gt", "ge"]), _ref, _value).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(arg, _ref).map(lambda t: f"(TC {t[0]} {t[1]} 2027)"),
    )


@settings(max_examples=EXAMPLES["sexpr_grammar"])
@given(text=st.one_of(_exprs(2), _exprs(2).map(lambda e: f"(COUNT {e})")))
def test_grammar_expressions_compile_to_sparql_that_parses(text):
    try:
        expr = parse(text)
        compiled = compile_query(expr)
    except InputError:
        return  # unlinked labels, invalid literals, ... : refused with the project's error
    _runs(compiled.sparql)
    _runs(compiled.evidence_sparql)


@settings(max_examples=EXAMPLES["hostile_terms"])
@given(iri=_hostile_text, lexical=_hostile_text, datatype=st.sampled_from(["string", "integer", "date", "decimal", X + "t"]))
def test_hostile_terms_built_without_the_reader_never_inject(iri, lexical, datatype):
    for expr in (Join(Relation(Iri(X + "p")), Entity(Iri(X + iri))), Join(Relation(Iri(X + "p")), Value(lexical, datatype))):
        try:
            compiled = compile_query(expr)
        except InputError:
            continue
        _runs(compiled.sparql)


# --- SPARQL prefix declaration ----------------------------------------------------------------
_prefix = st.sampled_from(sorted(PREFIXES))


@settings(max_examples=EXAMPLES["prefixes"])
@given(used=st.lists(_prefix, min_size=1, max_size=4), declared=st.lists(_prefix, max_size=2), literal=_hostile_text)
def test_declare_prefixes_yields_a_query_that_parses(used, declared, literal):
    lit = literal.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    head = " ".join(f"PREFIX {p}: <{PREFIXES[p]}>" for p in declared)
    body = " ".join(f"?s {p}:x{i} ?o{i} ." for i, p in enumerate(used))
    query = f'{head}\nSELECT * WHERE {{ {body} FILTER(?s != "{lit}") }}'
    out = declare_prefixes(query)
    assert out.endswith(query)  # the query itself is untouched
    assert declare_prefixes(out) == out  # idempotent
    _runs(out)


@settings(max_examples=EXAMPLES["prefixes"])
@given(text=st.text(max_size=200))
def test_declare_prefixes_never_raises(text):
    assert declare_prefixes(text).endswith(text)


def test_regression_prefix_named_inside_a_string_is_still_declared():
    """Found by the fuzzer: a 'PREFIX p:' inside a string literal counted as a declaration."""
    out = declare_prefixes('SELECT * WHERE { ?s pkb:x "PREFIX pkb: <a>" }')
    _runs(out)


# --- the config loader ------------------------------------------------------------------------
_key = st.sampled_from(["kb", "ingest", "store", "llm", "answer", "nope", "ingest.chunk_tokens", "x"])
_tomlish = st.lists(st.one_of(
    st.sampled_from(["[ingest]", "[kb]", "[nope]", "chunk_tokens = 5", "chunk_tokens = 'many'", "max_file_mb = -1",
                     "file_timeout_s = -3", "max_token_chars = 1", "extractor = 'gpt'", "dir = 3", "[[ingest]]",
                     "a = [1, 'x']", "b = {c = 1}", "= 1", "x = 1979-05-27T07:32:00Z", "[ingest", "retries = 1e400",
                     "kb = 1", 'k = """', "\x00", "[answer]\nk = 0"]),
    st.text(max_size=30)), max_size=6).map("\n".join)


def _config_contract(**kwargs) -> None:
    try:
        load_config(**kwargs)
    except ConfigError as exc:
        message = " ".join(str(exc).split())
        assert message and len(message) < 500
        assert "Traceback" not in str(exc)


@settings(max_examples=EXAMPLES["config_toml"])
@given(toml=_tomlish, raw=st.binary(max_size=40))
def test_config_loader_random_toml(tmp_path_factory, toml, raw):
    path = tmp_path_factory.mktemp("c") / "policykb.toml"
    path.write_bytes(toml.encode("utf-8", "surrogatepass") + raw)
    _config_contract(path=path)


_env_key = st.tuples(st.sampled_from(["ingest", "kb", "llm", "answer", "store", "nope", "", "INGEST"]),
                     st.sampled_from(["chunk_tokens", "max_file_mb", "file_timeout_s", "extractor", "dir", "x", "",
                                      "a__b"]))


@settings(max_examples=EXAMPLES["config_env"])
@given(env=st.dictionaries(_env_key.map(lambda k: f"POLICYKB_{k[0]}__{k[1]}".upper()),
                           st.one_of(st.text(max_size=20), st.sampled_from(["-1", "nan", "inf", "1e400", "[1]", "{}"])),
                           max_size=4))
def test_config_loader_env_overrides(env):
    _config_contract(environ=env)
