"""Time to the first training step of the parser: reading the KB and synthesizing the questions.

Compares, on one KB in the same run, the synthesis reads of ``spr/parsing/synth.py`` (three flat
queries joined in Python, plus the policy facts) with the single OPTIONAL × GROUP BY query they
replaced (kept here as the baseline; it runs in a subprocess killed after ``--baseline-timeout``
seconds). Not a timed test. Usage:

    .venv/bin/python bench/bench_synth.py --kb ~/.cache/policykb/structured-all-mpnet-base-v2/eval/eu_regulations/kb
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.config import load_config  # noqa: E402
from spr.parsing.refresh import training_examples  # noqa: E402
from store.oxigraph_store import OxigraphStore  # noqa: E402
from store.vocab import PKB, RDF, RDFS, SKOS  # noqa: E402

OLD_QUERY = f"""SELECT ?s ?p ?o (COALESCE(SAMPLE(?sa), SAMPLE(?sl)) AS ?sn) (COALESCE(SAMPLE(?oa), SAMPLE(?ol)) AS ?on)
  (SAMPLE(?st) AS ?stype) (SAMPLE(?ot) AS ?otype)
WHERE {{ GRAPH ?g {{ ?s ?p ?o }} FILTER(isIRI(?o) && !STRSTARTS(STR(?s), "{PKB}") && !STRSTARTS(STR(?o), "{PKB}"))
  ?s <{SKOS}prefLabel>|<{RDFS}label> ?sl . ?o <{SKOS}prefLabel>|<{RDFS}label> ?ol .
  OPTIONAL {{ ?s <{SKOS}altLabel> ?sa }} OPTIONAL {{ ?o <{SKOS}altLabel> ?oa }}
  OPTIONAL {{ ?s <{RDF}type> ?st }} OPTIONAL {{ ?o <{RDF}type> ?ot }} }}
GROUP BY ?s ?p ?o ORDER BY ?s ?p ?o LIMIT 5000"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", type=Path, required=True)
    ap.add_argument("--baseline-timeout", type=float, default=300.0)
    args = ap.parse_args()
    store = OxigraphStore(args.kb / "store", read_only=True)
    n = int(store.select("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }").rows[0]["n"].value)  # type: ignore[union-attr]
    t0 = time.perf_counter()
    train, dev = training_examples(store, load_config(kb_dir=args.kb).spr)
    new_s = time.perf_counter() - t0
    store.close()
    print(f"KB {args.kb}: {n} triples")
    print(f"now: {new_s:.1f} s to {len(train)} train + {len(dev)} dev questions")
    code = (f"import sys, time; sys.path.insert(0, {str(ROOT)!r}); from store.oxigraph_store import OxigraphStore; "
            f"s = OxigraphStore({str(args.kb / 'store')!r}, read_only=True); t = time.perf_counter(); "
            f"rows = s.select({OLD_QUERY!r}).rows; print(len(rows), round(time.perf_counter() - t, 1))")  # fmt: skip
    t0 = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=args.baseline_timeout, check=True)
        print(f"baseline (one OPTIONAL x GROUP BY query): {out.stdout.split()[1]} s for {out.stdout.split()[0]} rows")
    except subprocess.TimeoutExpired:
        print(f"baseline (one OPTIONAL x GROUP BY query): not done after {time.perf_counter() - t0:.0f} s (killed)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
