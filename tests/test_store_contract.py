"""One contract, every backend: embedded Oxigraph (memory and disk) and a real `oxigraph serve`."""

from __future__ import annotations

import pytest
from pyoxigraph import Literal, NamedNode, Quad
from support.servers import free_port, oxigraph_server

from core.errors import InputError, QuerySyntaxError, StoreConnectionError, UnsupportedOperationError
from store.base import AskResult, GraphResult, SelectResult
from store.oxigraph_store import OxigraphStore
from store.remote import SparqlEndpointStore

EX = "http://example.org/"
G1, G2 = NamedNode(EX + "g1"), NamedNode(EX + "g2")


def q(s: str, p: str, o, g: NamedNode) -> Quad:
    obj = o if isinstance(o, (NamedNode, Literal)) else NamedNode(EX + o)
    return Quad(NamedNode(EX + s), NamedNode(EX + p), obj, g)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with oxigraph_server(tmp_path_factory.mktemp("oxserve")) as base:
        yield base


@pytest.fixture(params=["memory", "disk", "remote"])
def store(request, tmp_path):
    if request.param == "memory":
        s = OxigraphStore()
    elif request.param == "disk":
        s = OxigraphStore(tmp_path / "store")
    else:
        base = request.getfixturevalue("server")
        s = SparqlEndpointStore(base + "/query", base + "/update", base + "/store", bulk_load_param="no_transaction")
        s.update("DROP ALL")
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
