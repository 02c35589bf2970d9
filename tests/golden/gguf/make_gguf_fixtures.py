#!/usr/bin/env python3
"""Writes tests/golden/fixtures/gguf/: GGUF models made by llama.cpp's own
code and llama.cpp's own logits on them (CI never runs this; it reads the
committed outputs).

    /usr/bin/python3 tests/golden/gguf/make_gguf_fixtures.py [LLAMA_CPP_DIR] [LIB_DIR]

LLAMA_CPP_DIR: llama.cpp's source (default /work/llamacpp/llama.cpp, cloned
from node-llama-cpp's gitRelease.bundle); LIB_DIR: node-llama-cpp's
prebuilt CPU libraries (default .../@node-llama-cpp/linux-x64/bins/linux-x64).

1. Two tiny random Hugging Face checkpoints (torch, fixed seed): `llama`
   (LlamaForCausalLM, 4 heads of 64 sharing 2 key/value heads, untied
   lm_head) and `qwen2` (Qwen2ForCausalLM, q/k/v biases, tied embeddings).
   Every row is 256 values (hidden and intermediate 256), so the k-quants
   apply to every matrix.
2. llama.cpp's convert_hf_to_gguf.py turns each into an F16 GGUF: its
   hyper-parameters, tensor names and q/k row permutation are the
   converter's own. Two things stand in for what is absent here:
   `transformers` (a shim module whose AutoConfig raises, so the converter
   reads config.json itself; Debian's torch also lacks the float8 dtypes
   its tables name, given stand-ins, and tqdm, a silent bar) and a tokenizer (set_vocab replaced by a
   minimal SentencePiece-style vocabulary written through the converter's
   gguf_writer: <unk>, <s>, </s>, the 256 byte tokens, a few pieces).
3. llama.cpp's quantizer (llama_model_quantize, default parameters) makes
   llama Q8_0, Q4_0 and Q4_K_M (Q4_K with Q6_K where llama.cpp puts it) and
   qwen2 Q5_K_M (Q5_K with Q6_K).
4. llama.cpp (libllama on the CPU) decodes the same 12 ids on each file one
   position at a time, then 6 greedy tokens; llamacpp.safetensors holds
   <file>.ids (I64: the 12 ids then the greedy ones) and <file>.logits (F32
   [18, vocab]: the logits after each id). With <model>_adapter.gguf, the
   LoRA adapter vkamp's write_gguf_adapter wrote (test_gguf_golden.cpp
   writes it there when run with VKAMP_WRITE_GGUF_ADAPTER=1, from values
   it draws itself), llama.cpp's logits on <model>_f16.gguf with the adapter
   applied (llama_adapter_lora_init, scale 1) are added as
   <file>+adapter.*, for the F16 file and each quantized one; and on the
   F16 files from PROMPT_TEXT as llama.cpp tokenizes it,
   <model>_f16+adapter.text.* (for vkamp-generate --prompt).
   With VKAMP_WRITE_GGUF_MERGED=DIR (where the same test, run with it, left <model>_merged.gguf, the base with that adapter
   merged in by vkamp's --merge FILE.gguf, and <file>_merged.gguf, a
   quantized base merged in its own types, --merge-type base), llama.cpp's
   logits on each merged file are added as <name>_merged.* and the file's
   FNV-1a 64 in the metadata (<name>_merged.fnv1a64): the test checks that
   vkamp still writes those bytes.

llamacpp_run.c is the small C program over libllama that quantizes and
decodes (built here with gcc against llama.cpp's headers).
"""
import json
import os
import subprocess
import sys
import tempfile
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from safetensors_writer import write_safetensors  # noqa: E402

LLAMA_CPP = sys.argv[1] if len(sys.argv) > 1 else "/work/llamacpp/llama.cpp"
LIBS = sys.argv[2] if len(sys.argv) > 2 else \
    "/work/llamacpp/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
OUT = os.path.join(os.path.dirname(HERE), "fixtures", "gguf")
# Where test_gguf_golden.cpp left the merged files (VKAMP_WRITE_GGUF_MERGED=DIR): too large to commit,
# they are fingerprinted instead.
MERGED = os.environ.get("VKAMP_WRITE_GGUF_MERGED", "")

SEED = 20261206
VOCAB = 288
PROMPT = [1, 271, 45, 200, 7, 280, 99, 3, 130, 287, 64, 260]  # <s> then bytes and pieces
N_GEN = 6
PROMPT_TEXT = "the cat sat on the mat"  # llama.cpp tokenizes it (with <s>) for the text runs

MODELS = {
    "llama": dict(architectures=["LlamaForCausalLM"], model_type="llama", hidden_size=256,
                  intermediate_size=256, num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
                  rope_theta=10000.0, rms_norm_eps=1e-5, tie_word_embeddings=False, bias=False),
    "qwen2": dict(architectures=["Qwen2ForCausalLM"], model_type="qwen2", hidden_size=256,
                  intermediate_size=256, num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
                  rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True, bias=True,
                  use_sliding_window=False),
}
# llama_ftype ids (llama.h)
QUANTS = {"llama": {"q8_0": 7, "q4_0": 2, "q4_k_m": 15}, "qwen2": {"q5_k_m": 17}}


def checkpoint(name, spec, folder):
    """A random checkpoint whose logits are O(1-10): embeddings N(0, 1)
    (N(0, 0.2^2) when tied, as they are then the lm_head too),
    matrices N(0, 1/in) (the attention's a little larger, so it is not
    uniform), RMSNorm weights 1 + N(0, 0.1), biases N(0, 0.1)."""
    g = torch.Generator().manual_seed(SEED + len(name))
    C, I, L = spec["hidden_size"], spec["intermediate_size"], spec["num_hidden_layers"]
    H, KV = spec["num_attention_heads"], spec["num_key_value_heads"]
    hd = C // H

    def mat(out, inp, gain=1.0):
        return torch.randn(out, inp, generator=g) * gain / inp ** 0.5

    def vec(n, mean, std):
        return mean + std * torch.randn(n, generator=g)

    emb = 0.2 if spec["tie_word_embeddings"] else 1.0
    t = [("model.embed_tokens.weight", emb * torch.randn(VOCAB, C, generator=g))]
    for i in range(L):
        p = f"model.layers.{i}."
        t += [(p + "input_layernorm.weight", vec(C, 1, 0.1)),
              (p + "self_attn.q_proj.weight", mat(H * hd, C, 3)),
              (p + "self_attn.k_proj.weight", mat(KV * hd, C, 3)),
              (p + "self_attn.v_proj.weight", mat(KV * hd, C)),
              (p + "self_attn.o_proj.weight", mat(C, H * hd))]
        if spec["bias"]:
            t += [(p + "self_attn.q_proj.bias", vec(H * hd, 0, 0.1)),
                  (p + "self_attn.k_proj.bias", vec(KV * hd, 0, 0.1)),
                  (p + "self_attn.v_proj.bias", vec(KV * hd, 0, 0.1))]
        t += [(p + "post_attention_layernorm.weight", vec(C, 1, 0.1)),
              (p + "mlp.gate_proj.weight", mat(I, C)),
              (p + "mlp.up_proj.weight", mat(I, C)),
              (p + "mlp.down_proj.weight", mat(C, I))]
    t += [("model.norm.weight", vec(C, 1, 0.1))]
    if not spec["tie_word_embeddings"]:
        t += [("lm_head.weight", mat(VOCAB, C, 3))]
    # Rounded to F16 first: the converter's F16 output then holds exactly
    # these values.
    t = [(n, v.half()) for n, v in t]
    os.makedirs(folder, exist_ok=True)
    write_safetensors(os.path.join(folder, "model.safetensors"), t, {"format": "pt"})
    config = {k: v for k, v in spec.items() if k != "bias"}
    config.update(vocab_size=VOCAB, max_position_embeddings=64, bos_token_id=1, eos_token_id=2,
                  torch_dtype="float16", hidden_act="silu")
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)


def vocabulary():
    """A SentencePiece-style vocabulary llama.cpp loads: tokens, scores, types."""
    pieces = ["▁the", "▁a", "▁of", "▁and", "▁to", "▁in", "▁is", "▁it", "▁on", "▁for", "▁that", "▁with",
              "▁as", "▁was", "▁he", "▁be", "▁at", "▁by", "er", "in", "on", "an", "re", "ed", "nd", "ing",
              "▁t", "▁s", "▁w"]
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + pieces
    assert len(tokens) == VOCAB
    # llama.cpp's token types: 1 normal, 2 unknown, 3 control, 6 byte
    types_ = [2, 3, 3] + [6] * 256 + [1] * len(pieces)
    scores = [0.0, 0.0, 0.0] + [0.0] * 256 + [-float(i) for i in range(len(pieces))]
    return tokens, scores, types_


def convert(folder, out):
    """convert_hf_to_gguf.py --outtype f16, in this process, with the shims."""
    shim = types.ModuleType("transformers")

    class AutoConfig:
        @staticmethod
        def from_pretrained(*a, **k):
            raise OSError("no transformers here: read config.json")

    shim.AutoConfig = AutoConfig
    sys.modules["transformers"] = shim
    # The writer's progress bar (tqdm, absent too): a silent one.
    bars = types.ModuleType("tqdm")

    class Bar:
        def __init__(self, *a, **k):
            pass

        def __getattr__(self, name):
            return lambda *a, **k: None

    bars.tqdm = Bar
    sys.modules["tqdm"] = bars
    # Debian's torch predates the float8 dtypes the converter's tables name;
    # stand-ins that no tensor here has.
    for absent in ("float8_e4m3fn", "float8_e5m2"):
        if not hasattr(torch, absent):
            setattr(torch, absent, "absent " + absent)
    sys.path.insert(0, LLAMA_CPP)
    import convert_hf_to_gguf
    from conversion import base, llama, qwen

    def set_vocab(self):
        tokens, scores, toktypes = vocabulary()
        w = self.gguf_writer
        w.add_tokenizer_model("llama")
        w.add_tokenizer_pre("default")
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types(toktypes)
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.add_unk_token_id(0)
        w.add_add_bos_token(True)
        w.add_add_eos_token(False)

    llama.LlamaModel.set_vocab = set_vocab
    qwen.Qwen2Model.set_vocab = set_vocab
    sys.argv = ["convert_hf_to_gguf.py", folder, "--outtype", "f16", "--outfile", out]
    convert_hf_to_gguf.main()


def fnv1a64(data):
    """FNV-1a, 64 bits: the merged file's fingerprint (test_gguf_golden.cpp computes it too)."""
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def build_tool(tmp):
    exe = os.path.join(tmp, "llamacpp_run")
    subprocess.check_call(["gcc", "-O1", "-o", exe, os.path.join(HERE, "llamacpp_run.c"),
                           "-I" + os.path.join(LLAMA_CPP, "include"), "-I" + os.path.join(LLAMA_CPP, "ggml", "include"),
                           os.path.join(LIBS, "libllama.v0.4.0.so"), os.path.join(LIBS, "libggml.v0.4.0.so"),
                           os.path.join(LIBS, "libggml-base.so"), "-Wl,-rpath," + LIBS])
    return exe


def run_logits(tool, tmp, model, adapter="-", prompt=PROMPT):
    raw = os.path.join(tmp, "logits.f32")
    out = subprocess.run([tool, LIBS, "logits", model, adapter, str(N_GEN), raw] + [str(i) for i in prompt],
                         check=True, capture_output=True, text=True).stdout
    greedy = [int(x) for x in out.split()]
    assert len(greedy) == N_GEN, out
    z = torch.frombuffer(bytearray(open(raw, "rb").read()), dtype=torch.float32).reshape(len(prompt) + N_GEN, -1)
    return torch.tensor(prompt + greedy, dtype=torch.int64), z.clone()


def main():
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tool = build_tool(tmp)
        files = []
        for name, spec in MODELS.items():
            folder = os.path.join(tmp, name)
            checkpoint(name, spec, folder)
            f16 = os.path.join(OUT, f"{name}_f16.gguf")
            subprocess.check_call([sys.executable, __file__, "--convert", folder, f16])
            files.append(f"{name}_f16")
            for q, ftype in QUANTS[name].items():
                subprocess.check_call([tool, LIBS, "quantize", f16, os.path.join(OUT, f"{name}_{q}.gguf"), str(ftype)],
                                      stdout=subprocess.DEVNULL)
                files.append(f"{name}_{q}")
        tensors = []
        for f in files:
            ids, z = run_logits(tool, tmp, os.path.join(OUT, f + ".gguf"))
            tensors += [(f + ".ids", ids), (f + ".logits", z)]
            print(f, "greedy", ids[len(PROMPT):].tolist(), "logit rms %.3f" % z.pow(2).mean().sqrt())
        for f in files:
            adapter = os.path.join(OUT, f.split("_")[0] + "_adapter.gguf")
            if not os.path.exists(adapter):
                print("no", adapter, "(run the test with VKAMP_WRITE_GGUF_ADAPTER=1 first)")
                continue
            ids, z = run_logits(tool, tmp, os.path.join(OUT, f + ".gguf"), adapter)
            tensors += [(f + "+adapter.ids", ids), (f + "+adapter.logits", z)]
            print(f + "+adapter greedy", ids[len(PROMPT):].tolist())
            if f.endswith("_f16"):  # from text, for vkamp-generate --prompt
                words = subprocess.run([tool, LIBS, "tokenize", os.path.join(OUT, f + ".gguf"), PROMPT_TEXT],
                                       check=True, capture_output=True, text=True).stdout
                ids, z = run_logits(tool, tmp, os.path.join(OUT, f + ".gguf"), adapter, [int(x) for x in words.split()])
                tensors += [(f + "+adapter.text.ids", ids), (f + "+adapter.text.logits", z)]
                print(f + "+adapter from text", ids.tolist())
        metadata = {"prompt_length": str(len(PROMPT)), "generated": str(N_GEN)}
        if not MERGED:
            print("no VKAMP_WRITE_GGUF_MERGED: no runs of merged files recorded (test_gguf_golden.cpp needs them)")
        for merged in sorted(os.listdir(MERGED)) if MERGED else []:
            if not merged.endswith("_merged.gguf"):
                continue
            key = merged[:-len(".gguf")]
            ids, z = run_logits(tool, tmp, os.path.join(MERGED, merged))
            tensors += [(key + ".ids", ids), (key + ".logits", z)]
            metadata[key + ".fnv1a64"] = "%016x" % fnv1a64(open(os.path.join(MERGED, merged), "rb").read())
            print(key, "greedy", ids[len(PROMPT):].tolist())
        write_safetensors(os.path.join(OUT, "llamacpp.safetensors"), tensors, metadata)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--convert":
        folder, out = sys.argv[2], sys.argv[3]
        LLAMA_CPP = os.environ.get("VKAMP_LLAMA_CPP", LLAMA_CPP)
        convert(folder, out)
    else:
        os.environ["VKAMP_LLAMA_CPP"] = LLAMA_CPP
        main()
