#!/usr/bin/python3
"""The validation loss at real vocabulary sizes, vkamp against PyTorch.

For each vocabulary V, a random Qwen2-style checkpoint (hidden 96, 2
layers by default; --hidden 896 --head-dim 64 --layers 4 is Qwen2.5-0.5B's
width; tied embeddings, intermediate twice the hidden size, heads of 24, weights N(0, 0.02) in float32) is written with a
real byte-level BPE tokenizer from tests/text/fixtures (GPT-2's below
128,256 entries; Llama 3's, whose ids reach 122,420, from there). Then
    vkamp-finetune --model M --data TEXT --max-steps 0 --seq-len 128 --precision fp32
gives its validation loss, with the Khronos validation layer on
(VKAMP_VALIDATION=1, its messages counted), and a float64 PyTorch forward
(tests/golden/llama_reference.py) gives the reference on the same
validation windows, rebuilt as vkamp-finetune builds them: the text's ids
(vkamp-tokenize, BOS where the tokenizer adds one), EOS after them, the last
10% of the tokens, windows of 128 at stride 128.

    bench/vocab_loss.py [--build build] [--vocab 50257,151936]

The bound: both sides read the same float32 weights; vkamp's float32
forward errs by a few 1e-6 relative in each logit (the golden tests'
bounds), and its loss by its log-sum-exp's float32 rounding (about 1,200
u32 at 151,936 classes, tests/shaders/test_losses_vocabulary.cpp): 1e-4
absolute is far above both and far below any defect.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "golden"))
from llama_reference import forward, parameter_shapes  # noqa: E402
from safetensors_writer import write_safetensors  # noqa: E402

SEQ, VAL_FRACTION, BOUND = 128, 0.1, 1e-4


def tokenizer_dir(vocab):
    return os.path.join(ROOT, "tests", "text", "fixtures", "llama3" if vocab >= 128256 else "gpt2")


def eos_id(tok_dir):
    cfg = json.load(open(os.path.join(tok_dir, "tokenizer_config.json")))
    tok = json.load(open(os.path.join(tok_dir, "tokenizer.json")))
    ids = {t["content"]: t["id"] for t in tok.get("added_tokens", [])}
    ids.update(tok["model"]["vocab"])
    return ids[cfg["eos_token"]]


def write_model(d, vocab, gen, hidden=96, layers=2, head_dim=24):
    heads = hidden // head_dim
    cfg = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "vocab_size": vocab, "hidden_size": hidden,
           "intermediate_size": 2 * hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
           "num_key_value_heads": 2,
           "hidden_act": "silu", "max_position_embeddings": 512, "rms_norm_eps": 1e-6, "rope_theta": 1e6,
           "tie_word_embeddings": True, "torch_dtype": "float32"}
    ref_cfg = dict(cfg, head_dim=head_dim, bias=True, rope_scaling=None)
    params = {}
    for name, shape in parameter_shapes(ref_cfg):
        if name == "lm_head.weight":
            continue
        t = torch.ones(shape, dtype=torch.float64) if name.endswith("norm.weight") else \
            0.02 * torch.randn(shape, generator=gen, dtype=torch.float64)
        params[name] = t.float()
    write_safetensors(os.path.join(d, "model.safetensors"), list(params.items()), {"format": "pt"})
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(tokenizer_dir(vocab), f), d)
    params["lm_head.weight"] = params["model.embed_tokens.weight"]
    return ref_cfg, {n: t.double() for n, t in params.items()}


def reference_loss(cfg, params, ids):
    split = int(len(ids) * (1 - VAL_FRACTION))
    val = ids[split:]
    count = (len(val) - SEQ - 1) // SEQ + 1
    x = torch.tensor([val[i * SEQ:i * SEQ + SEQ] for i in range(count)])
    y = torch.tensor([val[i * SEQ + 1:i * SEQ + SEQ + 1] for i in range(count)])
    with torch.no_grad():
        logits = forward(cfg, params, x)
    return torch.nn.functional.cross_entropy(logits.reshape(-1, cfg["vocab_size"]), y.reshape(-1)).item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--vocab", default="50257,60000,80000,100000,128256,151936,262144")
    ap.add_argument("--hidden", type=int, default=96, help="hidden size, a multiple of --head-dim")
    ap.add_argument("--head-dim", type=int, default=24, help="per head; 2 key/value heads")
    ap.add_argument("--layers", type=int, default=2)
    a = ap.parse_args()
    fortunes = open("/usr/share/games/fortunes/fortunes", encoding="utf-8", errors="replace").read()
    text = " ".join(fortunes.split())[:12000]  # one line: the document vkamp-tokenize sees whole
    gen = torch.Generator().manual_seed(51)
    print(f"hidden {a.hidden}, {a.layers} layers")
    print("| vocabulary V | PyTorch (float64) | vkamp (fp32) | difference | validation messages |")
    print("|---|---|---|---|---|")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "text.txt")
        open(data, "w", encoding="utf-8").write(text)
        for vocab in [int(v) for v in a.vocab.split(",")]:
            d = os.path.join(tmp, f"v{vocab}")
            os.makedirs(d)
            cfg, params = write_model(d, vocab, gen, a.hidden, a.layers, a.head_dim)
            tok = subprocess.run([os.path.join(a.build, "samples", "vkamp-tokenize"), "--model", d], input=text,
                                 capture_output=True, text=True, check=True)
            ids = [int(t) for t in tok.stdout.split()] + [eos_id(d)]
            ref = reference_loss(cfg, params, ids)
            env = dict(os.environ, VKAMP_VALIDATION="1")
            run = subprocess.run([os.path.join(a.build, "samples", "vkamp-finetune"), "--model", d, "--data", data,
                                  "--max-steps", "0", "--seq-len", str(SEQ), "--precision", "fp32"],
                                 capture_output=True, text=True, env=env)
            found = re.findall(r"val(?:idation)? loss[^0-9-]*(-?[0-9.]+)", run.stdout)
            messages = run.stderr.count("Validation Error") + run.stdout.count("Validation Error")
            if run.returncode != 0 or not found:
                print(f"| {vocab:,} | {ref:.4f} | exit {run.returncode} | | {messages} |")
                print(run.stdout[-2000:], run.stderr[-2000:], file=sys.stderr)
                failed = True
                continue
            got = float(found[-1])
            failed |= abs(got - ref) > BOUND or messages > 0
            print(f"| {vocab:,} | {ref:.4f} | {got:.4f} | {got - ref:+.1e} | {messages} |", flush=True)
    print(f"bound {BOUND:g}: {'FAILED' if failed else 'every row within it, no validation message'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
