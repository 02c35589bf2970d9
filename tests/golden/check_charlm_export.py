#!/usr/bin/env python3
"""Checks a vkamp charlm GPT export against PyTorch: loads its weights into
gpt_reference.GPT, recomputes the validation loss on the same text and
compares it with the loss vkamp reported.

    python3 tests/golden/check_charlm_export.py MODEL.safetensors [--text FILE]
                                                [--expect X] [--tol 0.01]

Why: vkamp's training loss only shows that vkamp agrees with itself. A model
whose exported weights give the same validation loss in an independent
implementation shows that the forward pass, the export (names, layouts,
the tied lm_head, the [q|k|v] row order of c_attn) and the data pipeline
(corpus, vocabulary, split, windows) are what they claim to be.

Exit 0 when |loss - expected| <= tol, 1 otherwise (both are printed);
expected is --expect, else the export's vkamp.val_loss. 2 for a file or
usage error.

The definitions below are the ones vkamp's C++ side implements identically
(gpt_reference.py holds the code):

Corpus. With --text FILE: that file's bytes. Otherwise every regular file
  directly in /usr/share/games/fortunes -- not symlinks (the *.u8 links), not
  the *.dat index files, no subdirectories -- sorted by file name in byte
  order, concatenated as raw bytes with nothing in between.
Vocabulary. Tokens are bytes. The export's vkamp.vocab is a JSON string whose
  i-th character is U+00XX for the byte XX of token id i (latin-1), so
  bytes(json.loads(meta["vkamp.vocab"]), "latin-1") is the vocabulary in
  token-id order. A byte of the text that is not in it is an error.
Split. split = len(tokens) * 9 // 10 (integer); train = tokens[:split],
  val = tokens[split:].
Validation loss. Over the consecutive non-overlapping windows of T =
  block_size: starts s = 0, T, 2T, ... while s + T + 1 <= len(val), with
  x = val[s:s+T] and y = val[s+1:s+T+1]; a shorter tail is dropped. The loss
  is the mean cross-entropy in nats per character over every position of
  every window (each position sees only its own window's earlier tokens).

The model runs in fp32 on the CPU, in batches of windows.
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt_reference as ref  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="vkamp GPT export (.safetensors)")
    ap.add_argument("--text", help="the corpus file (default: the fortunes files, see above)")
    ap.add_argument("--expect", type=float, help="expected val loss (default: the export's vkamp.val_loss)")
    ap.add_argument("--tol", type=float, default=0.01, help="allowed |loss - expected| in nats (default 0.01)")
    ap.add_argument("--batch", type=int, default=256, help="windows per forward pass")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's choice)")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)

    try:
        sd, meta = ref.load_vkamp_safetensors(a.model)
        model = ref.build_from_metadata(meta)
        model.load_state_dict(sd, strict=True)
        vocab = ref.vocab_from_metadata(meta)
        if len(vocab) != model.config.vocab_size:
            raise ValueError(f"vocab has {len(vocab)} bytes, the model {model.config.vocab_size} tokens")
        tokens = ref.tokenize(ref.load_corpus(a.text), vocab)
    except (OSError, ValueError, KeyError, RuntimeError) as e:
        print(f"check_charlm_export.py: {e}", file=sys.stderr)
        return 2
    expected = a.expect
    if expected is None:
        if "vkamp.val_loss" not in meta:
            print("check_charlm_export.py: no --expect and no vkamp.val_loss in the export", file=sys.stderr)
            return 2
        expected = float(meta["vkamp.val_loss"])

    cfg = model.config
    _, val = ref.split(tokens)
    windows = len(ref.val_windows(len(val), cfg.block_size))
    t0 = time.perf_counter()
    loss = ref.eval_loss(model, val, cfg.block_size, batch=a.batch)
    secs = time.perf_counter() - t0
    print(f"model    {a.model}: vocab {cfg.vocab_size}, block {cfg.block_size}, {cfg.n_layer} layers, "
          f"{cfg.n_head} heads, {cfg.n_embd} channels")
    print(f"text     {a.text or ref.FORTUNES}: {len(tokens)} bytes, val {len(val)} bytes, "
          f"{windows} windows of {cfg.block_size} ({secs:.1f} s)")
    diff = abs(loss - expected)
    ok = diff <= a.tol
    print(f"val_loss pytorch {loss:.6f}  expected {expected:.6f}  |diff| {diff:.6f}  tol {a.tol}  "
          f"{'OK' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
