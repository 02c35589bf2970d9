#!/usr/bin/env bash
# Attention's two paths in one charlm build, in turns (bench/charlm_turns.sh):
# VKAMP_ATTENTION=fused (FlashAttention-2 tiles) and materialized (the
# stored probabilities; the default is engine/src/ops/attention_defaults.txt's).
#   bench/attention_paths.sh [--size S] [--steps N] [--rounds N] [--baseline BIN] [-- charlm flags...]
exec "$(dirname "${BASH_SOURCE[0]}")/charlm_turns.sh" VKAMP_ATTENTION=fused VKAMP_ATTENTION=materialized "$@"
