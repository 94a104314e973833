"""One contract, every backend: embedded Oxigraph (memory and disk), a real `oxigraph serve` and a
real Virtuoso 7 (skipped only where `virtuoso-t` is not installed; scripts/setup.sh installs it)."""

from __future__ import annotations

import pytest
from pyoxigraph import BlankNode, Literal, NamedNode, Quad
from support.servers import free_port, oxigraph_server, virtuoso_binary, virtuoso_server

from core.errors import InputError, QuerySyntaxError, StoreConnectionError, StoreError, UnsupportedOperationError
from store.base import AskResult, GraphResult, SelectResult
from store.oxigraph_store import OxigraphStore
from store.remote import SparqlEndpointStore

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
G1, G2 = NamedNode(EX + "g1"), NamedNode(EX + "g2")
# The contract's Virtuoso caps results at this many rows, to show that no result is cut silently.
VIRTUOSO_MAX_ROWS = 200


def q(s: str, p: str, o, g: NamedNode) -> Quad:
    obj = o if isinstance(o, (NamedNode, Literal)) else NamedNode(EX + o)
    return Quad(NamedNode(EX + s), NamedNode(EX + p), obj, g)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with oxigraph_server(tmp_path_factory.mktemp("oxserve")) as base:
        yield base


@pytest.fixture(scope="module")
def virtuoso(tmp_path_factory):
    if virtuoso_binary() is None:
        pytest.skip("virtuoso-t is not installed (scripts/setup.sh installs Debian's virtuoso-opensource-7-bin)")
    with virtuoso_server(tmp_path_factory.mktemp("virtuoso"), max_rows=VIRTUOSO_MAX_ROWS) as server:
        yield server


@pytest.fixture(params=["memory", "disk", "remote", "virtuoso"])
def store(request, tmp_path):
    if request.param == "memory":
        s = OxigraphStore()
    elif request.param == "disk":
        s = OxigraphStore(tmp_path / "store")
    elif request.param == "remote":
        base = request.getfixturevalue("server")
        s = SparqlEndpointStore(base + "/query", base + "/update", base + "/store", bulk_load_param="no_transaction")
        s.update("DROP ALL")
    else:
        s = request.getfixturevalue("virtuoso").store()
        s.drop_graphs(s.named_graphs())  # not DROP ALL: that would drop Virtuoso's own graphs too
    yield s
    s.close()


def seed(store) -> None:
    store.extend([q("a", "knows", "b", G1), q("b", "knows", "c", G1), q("c", "knows", "d", G2)])


def test_extend_count_and_graphs(store):
    seed(store)
    assert store.count() == 3
    assert store.count(G1) == 2
    assert sorted(g.value for g in store.named_graphs()) == [G1.value, G2.value]


def test_default_graph_is_union_of_named_graphs(store):
    seed(store)
    result = store.query(f"SELECT ?x WHERE {{ <{EX}a> <{EX}knows>/<{EX}knows>/<{EX}knows> ?x }}")
    assert isinstance(result, SelectResult)
    assert result.column("x") == [NamedNode(EX + "d")]  # the path crosses g1 and g2


def test_ask_and_construct(store):
    seed(store)
    assert store.query(f"ASK {{ <{EX}a> <{EX}knows> <{EX}b> }}") == AskResult(True)
    built = store.query(f"CONSTRUCT {{ ?y <{EX}knownBy> ?x }} WHERE {{ ?x <{EX}knows> ?y }}")
    assert isinstance(built, GraphResult) and len(built) == 3


def test_drop_graph_removes_exactly_that_graph(store):
    seed(store)
    store.drop_graph(G1)
    assert store.count() == 1
    assert [g.value for g in store.named_graphs()] == [G2.value]


def test_update(store):
    store.update(f"INSERT DATA {{ GRAPH <{G1.value}> {{ <{EX}x> <{EX}p> 'v' }} }}")
    assert store.count(G1) == 1
    store.update(f"DELETE WHERE {{ GRAPH ?g {{ <{EX}x> ?p ?o }} }}")
    assert store.count() == 0


def test_hostile_literal_round_trips_and_cannot_inject(store):
    hostile = 'x" } ; DROP ALL ; INSERT DATA { <http://evil/> <http://evil/> "pwn'
    seed(store)
    store.extend([q("doc", "title", Literal(hostile + "\n{}\\'"), G2)])
    rows = store.select(f"SELECT ?t WHERE {{ <{EX}doc> <{EX}title> ?t }}").rows
    assert rows[0]["t"].value == hostile + "\n{}\\'"
    assert store.count() == 4  # nothing dropped, nothing injected


def test_syntax_error_has_position(store):
    with pytest.raises(QuerySyntaxError) as info:
        store.query("SELECT ?x WHERE { ?x ?y }")
    assert info.value.line == 1 and info.value.column is not None
    with pytest.raises(QuerySyntaxError) as info:
        store.update(f"PREFIX ex: <{EX}>\nINSERT DATA {{\n  GRAPH ex:g1 {{ ex:a ex:b }} }}")
    assert info.value.line == 3 and info.value.column is not None


LITERALS = [
    Literal("plain"),
    Literal("hallo", language="de-AT"),  # tags compare case-insensitively (Virtuoso keeps them lower case)
    Literal("2024-03-31", datatype=NamedNode(XSD + "date")),
    Literal("2024-03-30T00:00:00", datatype=NamedNode(XSD + "dateTime")),  # what policykb writes for dates
    Literal("2024-03-31T10:15:00Z", datatype=NamedNode(XSD + "dateTime")),
    Literal("2024", datatype=NamedNode(XSD + "gYear")),
    Literal("42", datatype=NamedNode(XSD + "integer")),
    Literal("1.5", datatype=NamedNode(XSD + "decimal")),
    Literal("true", datatype=NamedNode(XSD + "boolean")),
    Literal("x-1", datatype=NamedNode(EX + "code")),
    Literal("tab\there \U0001f600 é"),
]


def test_literals_round_trip(store):
    store.extend([q("lit", f"p{i}", lit, G1) for i, lit in enumerate(LITERALS)])
    rows = store.select(f"SELECT ?p ?o WHERE {{ <{EX}lit> ?p ?o }}").rows
    got = {row["p"].value.removeprefix(EX + "p"): row["o"] for row in rows}  # type: ignore[union-attr]
    assert got == {str(i): lit for i, lit in enumerate(LITERALS)}
    date = store.select(f"SELECT ?s WHERE {{ ?s ?p ?o FILTER(?o = '2024-03-31'^^<{XSD}date>) }}").rows
    assert len(date) == 1  # typed values compare as values, not as text
    assert sorted(map(str, store.iter_quads())) == sorted(map(str, (q("lit", f"p{i}", x, G1) for i, x in enumerate(LITERALS))))


def test_blank_nodes_are_shared_within_one_call(store):
    node = BlankNode()
    store.extend([Quad(node, NamedNode(EX + "p"), Literal("v"), G1), q("a", "has", "x", G1)])
    store.extend(
        [Quad(NamedNode(EX + "a"), NamedNode(EX + "has"), node, G1)] + [Quad(node, NamedNode(EX + "q"), Literal("w"), G1)]
    )
    rows = store.select(f"SELECT ?v WHERE {{ <{EX}a> <{EX}has> ?b . ?b <{EX}q> ?v }}").rows
    assert [row["v"].value for row in rows] == ["w"]  # type: ignore[union-attr]
    assert store.count(G1) == 4
    (blank,) = [quad.object for quad in store.iter_quads() if isinstance(quad.object, BlankNode)]
    assert isinstance(blank, BlankNode)


def test_results_beyond_a_row_cap_are_complete_or_refused(store):
    """More rows than the contract's Virtuoso returns at once: listings page, queries never cut."""
    n = VIRTUOSO_MAX_ROWS + 50
    store.extend([q(f"s{i}", "p", Literal(str(i)), G1) for i in range(n)])
    store.extend([q(f"t{i}", "p", "o", NamedNode(f"{EX}graph/{i}")) for i in range(n)])
    assert len(store.named_graphs()) == n + 1
    assert sum(1 for _ in store.iter_quads()) == 2 * n
    everything = f"SELECT ?s WHERE {{ GRAPH <{G1.value}> {{ ?s ?p ?o }} }}"
    try:
        assert len(store.select(everything)) == n
    except StoreError as exc:
        assert "row cap" in str(exc)
    assert len(store.select(everything + " LIMIT 10")) == 10


def test_long_query_text(store):
    seed(store)
    values = " ".join(f"<{EX}x{i}>" for i in range(3000)) + f" <{EX}a>"  # ~80 KB: too long for a GET
    rows = store.select(f"SELECT ?o WHERE {{ VALUES ?s {{ {values} }} ?s <{EX}knows> ?o }}").rows
    assert [row["o"] for row in rows] == [NamedNode(EX + "b")]


def test_load_triples_into_file_graph_and_trig_keeps_graphs(store, tmp_path):
    ttl = tmp_path / "data.ttl"
    ttl.write_text(f"<{EX}s> <{EX}p> <{EX}o> , <{EX}o2> .\n", encoding="utf-8")
    assert store.load(ttl) == 2
    trig = tmp_path / "data.trig"
    trig.write_text(f"<{EX}s> <{EX}p> <{EX}o3> .\nGRAPH <{G2.value}> {{ <{EX}s> <{EX}p> <{EX}o4> }}\n", encoding="utf-8")
    assert store.load(trig, graph=G1) == 2
    assert store.count() == 4 and store.count(G1) == 1 and store.count(G2) == 1
    assert len(store.named_graphs()) == 3  # the .ttl file got a graph of its own


def test_broken_file_writes_nothing(store, tmp_path):
    seed(store)
    bad = tmp_path / "bad.nt"
    good_lines = "".join(f"<{EX}s{i}> <{EX}p> <{EX}o> .\n" for i in range(1000))
    bad.write_text(good_lines + "<broken\n", encoding="utf-8")
    with pytest.raises(InputError, match="cannot parse"):
        store.load(bad)
    assert store.count() == 3


@pytest.mark.parametrize("name,content", [("empty.ttl", ""), ("data.xyz", "x"), ("missing.ttl", None)])
def test_bad_files_are_input_errors(store, tmp_path, name, content):
    path = tmp_path / name
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError):
        store.load(path)


def test_dump_and_reload_round_trip(store, tmp_path):
    seed(store)
    out = tmp_path / "dump.nq"
    assert store.dump(out) == 3
    fresh = OxigraphStore()
    fresh.load(out)
    assert sorted(map(str, fresh.iter_quads())) == sorted(map(str, store.iter_quads()))


def test_capabilities_declared(store):
    caps = store.capabilities
    assert caps.named_graphs and caps.union_default_graph and caps.updatable


def test_remote_endpoint_down_is_connection_error():
    store = SparqlEndpointStore(f"http://127.0.0.1:{free_port()}/query", timeout_s=2)
    with pytest.raises(StoreConnectionError, match="unreachable"):
        store.query("ASK {}")


def test_remote_without_update_endpoint_is_read_only(server):
    store = SparqlEndpointStore(server + "/query")
    assert not store.capabilities.updatable
    with pytest.raises(UnsupportedOperationError):
        store.update("DROP ALL")


def test_virtuoso_refuses_anonymous_writes(virtuoso):
    """The public /sparql stays read-only: only the digest-authenticated user may update."""
    anonymous = SparqlEndpointStore(virtuoso.base + "/sparql", virtuoso.base + "/sparql", dialect="virtuoso")
    with pytest.raises(StoreError, match="permission"):
        anonymous.update(f"INSERT DATA {{ GRAPH <{G1.value}> {{ <{EX}x> <{EX}p> 'v' }} }}")
    anonymous.close()
