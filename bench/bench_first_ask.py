"""The first question to a freshly started `policykb serve`, with and without the warm-up, in one run.

For each setting the server is started as a user starts it (`policykb --kb KB serve`), and:

- *ask at once*: the first POST /ask is sent as soon as /health answers; reported: seconds from
  process start to the answer (the warm-up must not make this slower than loading on demand);
- *ask later*: a second server, whose first POST /ask is sent once the warm-up is done (for the
  server without warm-up: after the same wait); reported: that request's latency, which is what
  a user who comes a little after the start waits.

    .venv/bin/python bench/bench_first_ask.py --kb ~/.cache/policykb/retrieval-all-mpnet-base-v2/eval/eu_regulations-bfloat16/kb

Answers are extractive (the default); the question comes from the EU-law dev set.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "How often must financial entities carry out threat-led penetration testing under DORA?"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(kb: Path, warm_up: bool) -> tuple[subprocess.Popen, str, float]:
    port = free_port()
    flag = "--warm-up" if warm_up else "--no-warm-up"
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", "from policykb.cli import main; main()", "--kb", str(kb), "serve", "--port", str(port), flag],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    return proc, f"http://127.0.0.1:{port}", started


def poll(probe, deadline_s: float = 600.0, every: float = 0.05):
    """Call ``probe`` until it returns something truthy (a server that is starting refuses)."""
    end = time.perf_counter() + deadline_s
    while time.perf_counter() < end:
        try:
            value = probe()
        except httpx.TransportError:
            value = None
        if value:
            return value
        time.sleep(every)
    raise SystemExit("the server did not get there in time")


def qa_status(base: str) -> str:
    return httpx.get(f"{base}/health", timeout=30).json()["qa"]


def ask(base: str) -> float:
    mark = time.perf_counter()
    response = httpx.post(f"{base}/ask", json={"question": QUESTION}, timeout=600)
    response.raise_for_status()
    return time.perf_counter() - mark


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()


def at_once(kb: Path, warm_up: bool) -> dict[str, float]:
    proc, base, started = start(kb, warm_up)
    try:
        poll(lambda: qa_status(base))
        up = time.perf_counter() - started
        latency = ask(base)
        return {"health": up, "answer": time.perf_counter() - started, "first ask": latency}
    finally:
        stop(proc)


def later(kb: Path, warm_up: bool, wait_s: float | None) -> dict[str, float]:
    proc, base, started = start(kb, warm_up)
    try:
        if warm_up:
            poll(lambda: qa_status(base) == "ready")
        else:
            poll(lambda: qa_status(base))
            time.sleep(max(0.0, (wait_s or 0.0) - (time.perf_counter() - started)))
        ready = time.perf_counter() - started
        first = ask(base)
        return {"ready": ready, "first ask": first, "second ask": ask(base)}
    finally:
        stop(proc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kb", type=Path, required=True)
    args = ap.parse_args()
    rows = []
    for warm_up in (False, True):
        rows.append((warm_up, "ask at once", at_once(args.kb, warm_up)))
    warm = later(args.kb, True, None)
    cold = later(args.kb, False, warm["ready"])
    rows += [(False, "ask later", cold), (True, "ask later", warm)]
    print(f"KB {args.kb}\n")
    print("| warm-up | scenario | figures (s) |\n|---|---|---|")
    for warm_up, scenario, figures in rows:
        shown = ", ".join(f"{name} {value:.2f}" for name, value in figures.items())
        print(f"| {'on' if warm_up else 'off'} | {scenario} | {shown} |")


if __name__ == "__main__":
    main()
