#!/usr/bin/env python3
"""Writes a random Llama-shaped F16 GGUF for bench/gguf_vs_llamacpp.sh with
llama.cpp's own writer (gguf-py), its 32,000-entry vocabulary copied from
llama.cpp's models/ggml-vocab-llama-spm.gguf. The weights are random (a
speed measurement only); the script quantizes the file with llama.cpp's
quantizer afterwards. Never committed: it goes to a temporary folder.

    /usr/bin/python3 bench/gguf_bench_model.py OUT.gguf [--hidden 1024]
        [--layers 4] [--heads 16] [--kv-heads 4] [--ffn 2816]
        [--llama-cpp /work/llamacpp/llama.cpp]
"""
import argparse
import os
import sys

import numpy as np


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--kv-heads", type=int, default=4)
    p.add_argument("--ffn", type=int, default=2816)  # 11 x 256: every row whole k-quant blocks
    p.add_argument("--llama-cpp", default="/work/llamacpp/llama.cpp")
    a = p.parse_args()
    sys.path.insert(0, os.path.join(a.llama_cpp, "gguf-py"))
    import gguf

    vocab = gguf.GGUFReader(os.path.join(a.llama_cpp, "models", "ggml-vocab-llama-spm.gguf"))

    def field(name):
        return vocab.fields[name].contents()

    tokens = field("tokenizer.ggml.tokens")
    C, L, H, KV, F, V = a.hidden, a.layers, a.heads, a.kv_heads, a.ffn, len(tokens)
    hd = C // H
    w = gguf.GGUFWriter(a.out, "llama")
    w.add_name("vkamp bench llama")
    w.add_block_count(L)
    w.add_context_length(2048)
    w.add_embedding_length(C)
    w.add_feed_forward_length(F)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_rope_dimension_count(hd)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(V)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(field("tokenizer.ggml.scores"))
    w.add_token_types(field("tokenizer.ggml.token_type"))
    w.add_bos_token_id(field("tokenizer.ggml.bos_token_id"))
    w.add_eos_token_id(field("tokenizer.ggml.eos_token_id"))
    w.add_unk_token_id(field("tokenizer.ggml.unknown_token_id"))
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)

    rng = np.random.default_rng(20261206)

    def mat(out, inp):  # N(0, 1/in): activations stay O(1)
        return (rng.standard_normal((out, inp), dtype=np.float32) / np.sqrt(inp)).astype(np.float16)

    def norm(n):  # RMSNorm weights stay fp32, as the converter writes 1-D tensors
        return (1 + 0.1 * rng.standard_normal(n, dtype=np.float32)).astype(np.float32)

    w.add_tensor("token_embd.weight", rng.standard_normal((V, C), dtype=np.float32).astype(np.float16))
    for i in range(L):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", norm(C))
        w.add_tensor(b + "attn_q.weight", mat(H * hd, C))
        w.add_tensor(b + "attn_k.weight", mat(KV * hd, C))
        w.add_tensor(b + "attn_v.weight", mat(KV * hd, C))
        w.add_tensor(b + "attn_output.weight", mat(C, H * hd))
        w.add_tensor(b + "ffn_norm.weight", norm(C))
        w.add_tensor(b + "ffn_gate.weight", mat(F, C))
        w.add_tensor(b + "ffn_up.weight", mat(F, C))
        w.add_tensor(b + "ffn_down.weight", mat(C, F))
    w.add_tensor("output_norm.weight", norm(C))
    w.add_tensor("output.weight", mat(V, C))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"{a.out}: llama, hidden {C}, {L} layers, {H} heads ({KV} key/value), ffn {F}, vocab {V}, F16")


if __name__ == "__main__":
    main()
