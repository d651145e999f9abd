#!/usr/bin/env bash
# Create .venv and install tefcore with everything the CPU book and the tests need.
# vLLM is NOT installed (GPU boxes only: `pip install -e ".[vllm]"` there).
# Usage: bash scripts/setup.sh            (add --browser to also install Debian's chromium)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [[ "${1:-}" == "--browser" ]] && ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-noto-cjk >/dev/null
fi
[[ -x .venv/bin/python ]] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
# llama-cpp-python has no binary wheel on PyPI: build only the library (about 4 minutes on 2 cores).
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF}"
python -m pip install -q -e ".[local,e5,api,book,test]"
python -m ipykernel install --sys-prefix --name python3 >/dev/null
echo "set-up done: $(python -c 'import tefcore; print("tefcore", tefcore.__version__)')"
