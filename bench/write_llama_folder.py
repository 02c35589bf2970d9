#!/usr/bin/python3
"""Writes a Hugging Face Llama folder of a real shape with random bf16
weights (config.json and model.safetensors, no tokenizer), for the load
benchmark: bench/write_llama_folder.py DIR [llama-3.2-1b|qwen2.5-0.5b].
numpy only; the weights are N(0, 0.02) rounded to bf16 by truncation."""
import json
import os
import struct
import sys

import numpy as np

SHAPES = {
    "llama-3.2-1b": dict(architectures=["LlamaForCausalLM"], vocab_size=128256, hidden_size=2048,
                         intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                         num_key_value_heads=8, head_dim=64, rms_norm_eps=1e-5, rope_theta=500000.0,
                         rope_scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0,
                                           high_freq_factor=4.0, original_max_position_embeddings=8192),
                         max_position_embeddings=131072, tie_word_embeddings=True, torch_dtype="bfloat16"),
    "qwen2.5-0.5b": dict(architectures=["Qwen2ForCausalLM"], vocab_size=151936, hidden_size=896,
                         intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                         num_key_value_heads=2, rms_norm_eps=1e-6, rope_theta=1000000.0,
                         max_position_embeddings=32768, tie_word_embeddings=True, torch_dtype="bfloat16"),
}


def tensors(c):
    h, i, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    hd = c.get("head_dim", h // c["num_attention_heads"])
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    bias = c["architectures"][0] == "Qwen2ForCausalLM"
    yield "model.embed_tokens.weight", (v, h)
    for n in range(c["num_hidden_layers"]):
        p = f"model.layers.{n}."
        for name, shape in [("self_attn.q_proj", (q, h)), ("self_attn.k_proj", (kv, h)),
                            ("self_attn.v_proj", (kv, h)), ("self_attn.o_proj", (h, q)),
                            ("mlp.gate_proj", (i, h)), ("mlp.up_proj", (i, h)), ("mlp.down_proj", (h, i))]:
            yield p + name + ".weight", shape
            if bias and name in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"):
                yield p + name + ".bias", (shape[0],)
        yield p + "input_layernorm.weight", (h,)
        yield p + "post_attention_layernorm.weight", (h,)
    yield "model.norm.weight", (h,)
    if not c["tie_word_embeddings"]:
        yield "lm_head.weight", (v, h)


def main():
    out, shape = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "llama-3.2-1b"
    c = SHAPES[shape]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(c, f, indent=2)
    listed = list(tensors(c))
    header, offset = {}, 0
    for name, shape_ in listed:
        n = int(np.prod(shape_)) * 2
        header[name] = dict(dtype="BF16", shape=list(shape_), data_offsets=[offset, offset + n])
        offset += n
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    rng = np.random.default_rng(0)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name, shape_ in listed:
            count = int(np.prod(shape_))
            for start in range(0, count, 1 << 24):  # 16 M values at a time
                x = (rng.standard_normal(min(1 << 24, count - start), dtype=np.float32) * 0.02)
                f.write((x.view(np.uint32) >> 16).astype(np.uint16).tobytes())
    print(f"wrote {out}: {shape}, {len(listed)} tensors, {offset / 2**20:.0f} MiB of bf16")


if __name__ == "__main__":
    main()
