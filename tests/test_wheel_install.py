"""A non-editable install works: the wheel carries the ontologies, shapes and web assets, and its
``policykb`` runs init → ingest → ask → serve from an empty folder.

The wheel is built from a copy of this checkout (an in-tree build would leave ``build/`` behind,
whose stale files later builds pick up) and installed with ``--no-deps`` into a fresh virtualenv.
The third-party dependencies (torch & co.) come from the running virtualenv through a ``.pth``
line naming its site-packages: a plain path line, so that the ``.pth`` files in there — the
editable install's finder among them — are not run, and the project's own packages can come only
from the wheel (asserted below).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import httpx
import pytest
from support.servers import wait_until

from core import resources
from core.resources import resource_dir

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "store", "kgpipeline", "spr", "policykb")
QUESTION = "Who issues the National Solar Plan?"
# Not part of the build: environments, VCS data, build output, KBs, caches, source maps.
_SKIP_TOP = {".venv", ".git", "build", "dist", "kb", "demo-kb", "bench", "tests"}
_SKIP_ANY = ("__pycache__", ".pytest_cache", "*.egg-info", "*.map", "*.pyc")


# --- core.resources (fast) ------------------------------------------------------------------------
def test_a_folder_in_the_cwd_wins(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ontologies").mkdir()
    assert resource_dir(Path("ontologies")) == Path("ontologies")
    assert resource_dir(tmp_path / "elsewhere") == tmp_path / "elsewhere"  # absolute: as given


def test_otherwise_the_shipped_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resource_dir("ontologies") == ROOT / "ontologies"  # a checkout: the repository root
    packaged = tmp_path / "_data"
    (packaged / "web").mkdir(parents=True)
    monkeypatch.setattr(resources, "PACKAGED", packaged)  # as in a wheel
    assert resource_dir("web") == packaged / "web"


# --- the wheel, in a fresh virtualenv (slow) ------------------------------------------------------
def _ignore(directory: str, names: list[str]) -> set[str]:
    skipped = {n for n in names if any(Path(n).match(p) for p in _SKIP_ANY)}
    if Path(directory).resolve() == ROOT:
        skipped |= _SKIP_TOP & set(names)
    return skipped


def _run(args: list, cwd: Path, env: dict, timeout: float) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel, venv, its site-packages, env): the project's wheel installed into a fresh virtualenv."""
    base = tmp_path_factory.mktemp("wheel")
    source, dist, venv = base / "src", base / "dist", base / "venv"
    shutil.copytree(ROOT, source, ignore=_ignore, ignore_dangling_symlinks=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("POLICYKB_")}
    for key in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PYTHONNOUSERSITE"):
        env.pop(key, None)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONNOUSERSITE="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env["POLICYKB_EMBED__MODEL"] = "all-MiniLM-L6-v2"  # the fast test embedder, as in conftest
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", dist, source], base, env, 300)
    (wheel,) = dist.glob("policykb-*.whl")

    _run([sys.executable, "-m", "venv", "--without-pip", venv], base, env, 120)
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", wheel], base, env, 300)
    # Only now: pip would take the editable policykb it would see there for this one, installed.
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], base, env, 60).stdout.strip())
    (site / "_policykb_test_deps.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    return wheel, venv, site, env


@pytest.mark.slow
def test_the_wheel_carries_the_resources_and_no_source_maps(installed):
    wheel = installed[0]
    names = set(zipfile.ZipFile(wheel).namelist())
    for shipped in ["ontologies/core.owl", "ontologies/catalog-v001.xml", "shapes/core.ttl", "shapes/generated/core.ttl",
                    "web/index.html", "web/app.js", "web/style.css",
                    "web/node_modules/@zazuko/yasgui/build/yasgui.min.js",
                    "web/node_modules/cytoscape/dist/cytoscape.min.js",
                    "web/node_modules/swagger-ui-dist/swagger-ui-bundle.js"]:
        assert f"core/_data/{shipped}" in names
    assert {f"core/_data/ontologies/{p.name}" for p in (ROOT / "ontologies").glob("*.owl")} <= names
    assert not [n for n in names if n.endswith(".map") or n.startswith(("tests/", "bench/", "examples/"))]
    assert sum(zipfile.ZipFile(wheel).getinfo(n).file_size for n in names) < 20_000_000  # not all of node_modules


@pytest.mark.slow
def test_the_packages_come_from_the_wheel_only(installed, tmp_path):
    _, venv, site, env = installed
    probe = (
        "import json, sys, core, store, kgpipeline, spr, policykb\n"
        "from core.resources import resources_root\n"
        f"print(json.dumps({{'files': {{m: sys.modules[m].__file__ for m in {PACKAGES!r}}},"
        " 'resources': str(resources_root()), 'finders': [repr(f) for f in sys.meta_path]}))"
    )
    out = json.loads(_run([venv / "bin" / "python", "-c", probe], tmp_path, env, 120).stdout)
    for module, file in out["files"].items():
        assert Path(file).resolve().is_relative_to(site.resolve()), f"{module} from {file}"
    assert Path(out["resources"]).resolve() == (site / "core" / "_data").resolve()
    assert not [f for f in out["finders"] if "editable" in f.lower()]


@pytest.mark.slow
def test_init_ingest_ask_and_serve_from_an_empty_folder(installed, tmp_path):
    _, venv, _, env = installed
    policykb = venv / "bin" / "policykb"
    cwd = tmp_path / "empty"
    cwd.mkdir()

    init = _run([policykb, "init"], cwd, env, 300).stdout
    assert "loaded ontology" in init and "KB ready" in init
    _run([policykb, "ingest", ROOT / "examples" / "corpus"], cwd, env, 600)
    answer = json.loads(_run([policykb, "ask", QUESTION, "--json"], cwd, env, 600).stdout)
    assert not answer["abstained"] and answer["citations"], answer["text"]
    assert any("National Solar Plan" in (c["title"] + c["quote"]) for c in answer["citations"])

    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        server = subprocess.Popen([str(policykb), "serve", "--port", "0"], cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        base = _served_at(server, log, timeout=180)
        with httpx.Client(base_url=base, timeout=30) as http:
            health = http.get("/health")
            assert health.status_code == 200 and health.json()["web_assets"] is True, health.text
            page = http.get("/")
            assert page.status_code == 200 and "text/html" in page.headers["content-type"]
            docs = http.get("/docs")
            assert docs.status_code == 200
            # Every asset the page and /docs load, found in them rather than listed here.
            assets = set(re.findall(r"/vendor/[\w@./-]+", page.text + http.get("/app.js").text + docs.text))
            assert "/vendor/yasgui/yasgui.min.js" in assets and len(assets) >= 5, assets
            for asset in sorted(assets | {"/app.js", "/style.css"}):
                got = http.get(asset)
                assert got.status_code == 200 and got.content, f"{asset}: {got.status_code}"
            vendored = ROOT / "web" / "node_modules" / "@zazuko" / "yasgui" / "build" / "yasgui.min.js"
            assert http.get("/vendor/yasgui/yasgui.min.js").content == vendored.read_bytes()
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
            raise
    assert code == 0, log.read_text(errors="replace")[-3000:]


def _served_at(server: subprocess.Popen, log: Path, timeout: float) -> str:
    """The base URL uvicorn reports once it listens (``--port 0`` = a free port of its choosing)."""
    def listening() -> str | None:
        found = re.search(r"Uvicorn running on (http://[\d.]+:\d+)", log.read_text(errors="replace"))
        if found is None and server.poll() is not None:
            raise AssertionError(f"server exited ({server.poll()}):\n{log.read_text(errors='replace')[-3000:]}")
        return found.group(1) if found else None

    return wait_until(listening, "the server to listen", timeout)
