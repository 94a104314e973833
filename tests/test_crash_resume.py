"""kill -9 in the middle of an ingest, resume, and the KB equals a clean run's — byte for byte.

Runs the real CLI in subprocesses on the sample corpus plus a real EU regulation (to make the
run long enough to be killed mid-way).
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EGD = ROOT.parent / "shared" / "data" / "policy_corpora" / "egd_regulations"

pytestmark = pytest.mark.slow


def policykb(kb: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "policykb", "--kb", str(kb), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
    )


def run(kb: Path, *args: str) -> str:
    proc = policykb(kb, *args)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    return out


def done_count(kb: Path) -> int:
    db = kb / "state.sqlite"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute("SELECT COUNT(*) FROM documents WHERE status = 'done'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("crash-corpus")
    shutil.copytree(ROOT / "examples" / "corpus", folder / "sample")
    if EGD.is_dir():
        for name in sorted(p.name for p in EGD.glob("3*.md"))[:1]:
            shutil.copy(EGD / name, folder / name)
    return folder


def dump(kb: Path, out: Path) -> list[str]:
    run(kb, "export", str(out))
    return sorted(out.read_text(encoding="utf-8").splitlines())


def test_kill_minus_nine_then_resume_equals_clean_run(tmp_path, corpus):
    clean, crashed = tmp_path / "clean", tmp_path / "crashed"
    run(clean, "ingest", str(corpus))
    total = done_count(clean)
    assert total >= 10

    proc = policykb(crashed, "ingest", str(corpus))
    deadline = time.monotonic() + 300
    while done_count(crashed) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    assert proc.poll() is None, "the ingest finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    interrupted = done_count(crashed)
    assert 0 < interrupted < total

    resumed = run(crashed, "ingest", str(corpus))
    assert "unchanged" in resumed and done_count(crashed) == total
    assert dump(crashed, tmp_path / "crashed.nq") == dump(clean, tmp_path / "clean.nq")
    # and resuming again is a no-op
    assert f"{total} unchanged" in run(crashed, "ingest", str(corpus))
