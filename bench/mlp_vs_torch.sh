#!/usr/bin/env bash
# fashion_mlp against PyTorch on the CPU, side by side: bench/vs_torch.sh
# --model mlp (kept for the commands recorded in bench/NOTES.md).
#   bench/mlp_vs_torch.sh [--epochs N] [--batch N] [--threads N] [--device SEL]
exec "$(dirname "${BASH_SOURCE[0]}")/vs_torch.sh" --model mlp "$@"
