"""One Markdown table from the JSON files of ``bench/eval_retrieval.py --json``.

    .venv/bin/python bench/retrieval_report.py bench/out/retrieval/*.json

Per set and embedder: R@2/5/10 (gold passages) or QR@2/5/10 (gold quotes) of every system scored.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROWS = ("dense", "bm25", "bm25 + dense", "graph", "hybrid", "hybrid - bm25", "hybrid - dense", "hybrid - graph", "questions")


def main(paths: list[str]) -> int:
    for path in sorted(paths):
        data = json.loads(Path(path).read_text())
        systems = data["systems"]
        keys = [k for k in ("QR@2", "QR@5", "QR@10") if any(k in s for s in systems.values())] or ["R@2", "R@5", "R@10"]
        print(f"\n**{data['set']}** · {data['embed']} · {data['answerable']} answerable questions · {data['chunks']} chunks\n")
        print("| system | " + " | ".join(keys) + " |")
        print("|---|" + "---|" * len(keys))
        for name in ROWS:
            s = systems.get(name)
            if s and any(s.get(k) for k in keys):
                print(f"| {'vector (dense)' if name == 'dense' else name} | " + " | ".join(f"{s.get(k, 0):.3f}" for k in keys) + " |")
        if data.get("latency"):
            lat = data["latency"]
            print(f"\nlatency p50/p95 ms: hybrid {lat['hybrid']['p50_ms']}/{lat['hybrid']['p95_ms']}, "
                  f"vector {lat['vector']['p50_ms']}/{lat['vector']['p95_ms']} (ratio {lat['ratio_p50']['hybrid/vector']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
