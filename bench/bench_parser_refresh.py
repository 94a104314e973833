"""How soon a parser refresh starts training, and how far it gets in its budget, on a real KB.

Runs :func:`spr.parsing.refresh.refresh_parser` (what ``policykb reindex parser`` runs) on an
existing KB and prints the seconds to the first optimizer step (question synthesis from the KB,
model load, tokenization — the part the issue bounds at 30 s on a 20k-triple KB), the KB's size,
and every 25th step. Not a timed test. Usage:

    .venv/bin/python bench/bench_parser_refresh.py --kb KB [--budget-s 900] [--steps 300]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.config import SPRConfig  # noqa: E402
from spr.parsing.refresh import refresh_parser  # noqa: E402
from store.layout import KBLayout  # noqa: E402
from store.oxigraph_store import OxigraphStore  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", type=Path, required=True, help="a KB folder (ingested)")
    ap.add_argument("--budget-s", type=float, default=900.0)
    ap.add_argument("--steps", type=int, default=None, help="schedule length (default: [spr] train_steps)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    store = OxigraphStore(KBLayout(args.kb).store)
    triples = store.select("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }").rows[0]["n"].value
    started = time.perf_counter()
    first: dict[str, float] = {}

    def progress(step: int, total: int, loss: float) -> None:
        now = time.perf_counter() - started
        first.setdefault("first_step_s", now)
        if step == 1 or step % 25 == 0:
            print(f"step {step}/{total}  loss {loss:.4f}  {now:.0f} s", flush=True)

    report = refresh_parser(store, args.kb, SPRConfig(), args.budget_s, steps=args.steps, progress=progress)
    total = time.perf_counter() - started
    store.close()
    out = {"triples_in_graphs": int(triples), **first, "total_s": round(total, 1), "report": report.line()}
    print(json.dumps(out))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
