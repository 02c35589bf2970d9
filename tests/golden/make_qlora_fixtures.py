#!/usr/bin/python3
"""Writes tests/golden/fixtures/qlora_*/: LoRA over a base quantized into
ggml's blocks (QLoRA, issue 53 item 4), against PyTorch in float64 on the
weights as ggml dequantizes them.

    /usr/bin/python3 tests/golden/make_qlora_fixtures.py [fixtures_dir [name ...]]

Each fixture is make_vocab_fixtures.py's (config.json and
lora_expected.safetensors; the F32 weights drawn by the shared generator,
so no weights are committed) with one change: before the reference runs,
every matrix of the base (the projections, the embedding, the lm_head) goes
through ggml's own quantizer into the fixture's type and back through ggml's
own dequantizer. Both are called through ctypes in the prebuilt
libggml-base.so of node-llama-cpp 3.21.1, as tests/quant/make_fixtures.py
calls them (ggml_quantize_chunk without an importance matrix, which is
quantize_row_*_ref; dequantize_row_*). CI never runs this.

Added to lora_expected.safetensors:
  metadata  quantize: the type's llama.cpp name
            dequantized: JSON {name: checksum} of each quantized matrix's
            dequantized float32 values (shared_weights.py's checksum over
            their bits): what vkamp's store must read back
  orig.*    the reference's sample.logits, label_logits, logsumexp, loss,
            logit_rms and grad.<adapter> on the file's own (unquantized)
            weights: the C++ test shows vkamp's results are not those
Everything else (input_ids, init.*, sample.*, loss, grad.*, adamw.*) is on
the dequantized base.

Shapes: every matrix's rows are whole blocks (hidden, heads x head_dim and
intermediate multiples of 32 for Q8_0 and of 256 for Q4_K).
"""
import ctypes
import importlib.util
import json
import os
import sys

import numpy as np
import torch

from make_vocab_fixtures import make
from shared_weights import checksum

HERE = os.path.dirname(os.path.abspath(__file__))
ALL = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def load_ggml():
    """tests/quant/make_fixtures.py's ctypes binding (its module also loads
    the library): ggml, ptr and its TYPES {id: (name, block values, block
    bytes, ...)}."""
    spec = importlib.util.spec_from_file_location("ggml_quant_fixtures",
                                                  os.path.join(HERE, "..", "quant", "make_fixtures.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


Q = load_ggml()

VARIANTS = {
    # Q8_0 (32-value blocks): a tied lm_head, so the output projection reads
    # the embedding's blocks too; 2 layers, grouped key/value heads.
    "qlora_q8_0": dict(seed=5400, quantize="q8_0", arch="LlamaForCausalLM", vocab_size=61, hidden_size=64,
                       intermediate_size=96, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                       head_dim=16, rope_theta=10000.0, rope_scaling=None, tie_word_embeddings=True, bias=False,
                       rms_norm_eps=1e-6, dtype="float32", lora=dict(r=2, alpha=4.0, targets=ALL)),
    # Q4_K (256-value super-blocks): Qwen2 with q, k, v biases (left in
    # floats: they are vectors), an untied lm_head; one layer. Weights a
    # quarter of make_vocab_fixtures.py's spread at 4 times its width.
    "qlora_q4_k": dict(seed=5500, quantize="q4_K", weight_scale=0.25, arch="Qwen2ForCausalLM", vocab_size=53, hidden_size=256,
                       intermediate_size=512, num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
                       head_dim=64, rope_theta=1000000.0, rope_scaling=None, tie_word_embeddings=False, bias=True,
                       rms_norm_eps=1e-6, dtype="float32", lora=dict(r=3, alpha=8.0, targets=ALL)),
}


def ggml_round_trip(type_name, rows):
    """float32 [R, N] through ggml's quantizer and dequantizer."""
    tid, (name, bv, bb, _) = next((i, t) for i, t in Q.TYPES.items() if t[0] == type_name)
    R, N = rows.shape
    assert N % bv == 0, f"rows of {N} values are not whole {name} blocks"
    src = np.ascontiguousarray(rows, dtype=np.float32)
    raw = np.zeros(R * (N // bv) * bb, dtype=np.uint8)
    written = Q.ggml.ggml_quantize_chunk(tid, Q.ptr(src), Q.ptr(raw), 0, R, N, None)
    assert written == raw.size, (name, written, raw.size)
    out = np.zeros(R * N, dtype=np.float32)
    getattr(Q.ggml, "dequantize_row_" + name)(Q.ptr(raw), Q.ptr(out), ctypes.c_int64(R * N))
    return out.reshape(R, N)


def dequantized_base(type_name):
    def base_of(params):
        base, sums = {}, {}
        for name, t in params.items():
            if t.dim() == 2:
                deq = ggml_round_trip(type_name, t.float().numpy())
                sums[name] = checksum(deq.view(np.uint32))
                base[name] = torch.from_numpy(deq).to(torch.float64)
            else:
                base[name] = t.to(torch.float64)
        return base, {"quantize": type_name.lower(), "dequantized": json.dumps(sums)}
    return base_of


def main():
    torch.set_num_threads(1)
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "fixtures")
    for name in sys.argv[2:] or list(VARIANTS):
        v = VARIANTS[name]
        make(name, v, out_dir, dequantized_base(v["quantize"]))


if __name__ == "__main__":
    main()
