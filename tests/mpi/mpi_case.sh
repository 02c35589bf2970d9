#!/usr/bin/env bash
# One mpi test case (ctest label `mpi`): runs mpi_train_driver under
# mpirun with two ranks, then checks the per-rank result files with the
# driver's check mode. Usage: mpi_case.sh CASE DRIVER SAMPLES_DIR
set -uo pipefail
case_name=$1 driver=$2 samples=$3
mpirun=(mpirun --allow-run-as-root --oversubscribe -np 2)
dir=$(mktemp -d "${TMPDIR:-/tmp}/vkamp-mpi-$case_name.XXXXXX")
trap 'rm -rf "$dir"' EXIT

case $case_name in
equivalence)
  # fp32: the summation order is the only difference (mpi_checks.cpp).
  common=(precision=fp32 epochs=4 rows=128)
  "$driver" train "$dir/single" "${common[@]}" batch=16 || exit 1
  "${mpirun[@]}" "$driver" train "$dir/dual" "${common[@]}" batch=8 || exit 1
  "$driver" equivalent "$dir/single.rank0" "$dir/dual" 1e-4 || exit 1
  # The ranks' shares come through the staging ring either way: streamed
  # from host memory, the run is the same bit for bit.
  "${mpirun[@]}" "$driver" train "$dir/streamed" "${common[@]}" batch=8 data_on_gpu=never || exit 1
  "$driver" identical "$dir/dual" "$dir/streamed" || exit 1
  # With micro-batches: each rank's fp32 sum over its micro-batches is what
  # the ranks all-reduce (32 updates of 2 x 16 rows).
  accum=(precision=fp32 epochs=8 rows=128 grad_accum=2)
  "$driver" train "$dir/single_accum" "${accum[@]}" batch=16 || exit 1
  "${mpirun[@]}" "$driver" train "$dir/dual_accum" "${accum[@]}" batch=8 || exit 1
  "$driver" equivalent "$dir/single_accum.rank0" "$dir/dual_accum" 1e-4
  ;;
shared_overflow)
  # An inf in rank 1's gradient at step 5 only.
  "${mpirun[@]}" "$driver" train "$dir/run" precision=float16 initial_loss_scale=1024 inject_overflow=5 \
    inject_rank=1 epochs=2 || exit 1
  "$driver" shared_overflow "$dir/run" 5 0.5
  ;;
resume)
  common=(precision=float16 checkpoint="$dir/ckpt.bin")
  "${mpirun[@]}" "$driver" train "$dir/full" precision=float16 epochs=4 || exit 1
  "${mpirun[@]}" "$driver" train "$dir/first" "${common[@]}" epochs=2 || exit 1
  "${mpirun[@]}" "$driver" train "$dir/resumed" "${common[@]}" epochs=4 resume=true || exit 1
  "$driver" resume "$dir/full" "$dir/resumed"
  ;;
rank_failure)
  # Rank 1 throws at step 3; the job must end, non-zero, naming the rank and
  # the reason, well within the test's timeout (no rank left waiting in an
  # all-reduce).
  start=$(date +%s)
  "${mpirun[@]}" "$driver" train "$dir/run" epochs=50 fail_rank=1 fail_at=3 >"$dir/out" 2>&1
  status=$?
  elapsed=$(( $(date +%s) - start ))
  cat "$dir/out"
  [ "$status" -ne 0 ] || { echo "FAIL: the job exited 0"; exit 1; }
  grep -q '\[rank 1/2\] mpi_train_driver: injected failure at step 3' "$dir/out" ||
    { echo "FAIL: no message naming rank 1 and the reason"; exit 1; }
  echo "job ended with status $status after ${elapsed}s"
  ;;
replica_mismatch)
  # Rank 1 starts from other weights: the check at step 5 must stop the run
  # (exit 1) and say after how many steps.
  "${mpirun[@]}" "$driver" train "$dir/run" replica_check_every=5 perturb_rank=1 >"$dir/out" 2>&1
  status=$?
  cat "$dir/out"
  [ "$status" -ne 0 ] || { echo "FAIL: the job exited 0"; exit 1; }
  grep -q 'the replicas differ after 5 steps' "$dir/out" || { echo "FAIL: no replica mismatch reported"; exit 1; }
  ;;
batch_norm)
  # BatchNorm without --sync-bn: each rank normalises with its own batch
  # statistics, so the running statistics differ until a replica check
  # (every 3 steps and at the end) averages them; a check that did not would
  # stop the run. The ranks end as replicas, buffers included.
  "${mpirun[@]}" "$driver" train "$dir/run" model=6-5-bnt-3 replica_check_every=3 epochs=2 || exit 1
  "$driver" replicas "$dir/run"
  ;;
bad_flag)
  # Bad input before training: every rank exits 2, the message printed once.
  "${mpirun[@]}" "$samples/vkamp-train" --batch 0 >"$dir/out" 2>&1
  status=$?
  cat "$dir/out"
  [ "$status" -eq 2 ] || { echo "FAIL: exit status $status, expected 2"; exit 1; }
  count=$(grep -c -- '--batch' "$dir/out")
  [ "$count" -eq 1 ] || { echo "FAIL: the message was printed $count times"; exit 1; }
  ;;
*)
  echo "unknown case $case_name"; exit 2 ;;
esac
