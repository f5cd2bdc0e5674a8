#!/usr/bin/env bash
#===- elastic.sh - Checkpoints that outlive a plan, end to end ------------===#
#
# Trains through checkpoints written under one plan and resumed under
# others (the emitted programs' --checkpoint-dir and --resume,
# docs/elastic.md) and holds every step's loss and the final parameters
# to the uninterrupted single-rank run of the same model, as run-e2e.sh
# does (losses within 1e-5 relative; parameters within 1e-5 relative plus
# the 1e-5 absolute floor that run-e2e.sh explains for Adam's steps on
# gradients within rounding of zero):
#
#  gpt    tiny-gpt, global batch 24: steps 1-2 under dp2 tp2 pp2 on 8 ranks
#         (a checkpoint after each), 3-4 resumed under dp3 tp2 on 6, 5-6
#         resumed under pp3 with layers 2-1-1 on 3;
#  zero3  tiny-gpt, global batch 8: 1-2 under dp2 cp2 with ZeRO-3, 3-4
#         under dp2 with ZeRO-1, 5-6 under pp4 with interleaving (vpp 2);
#  moe    tiny-mixtral: 1-2 under dp4 with experts over ep 2, 3-4 under
#         dp2 pp2 with ZeRO-1 (ep 1);
#  crash  the gpt chain with world rank 1 killed (SIGKILL) halfway through
#         its file of step 4's checkpoint (TRIDENT_RT_CHECKPOINT_KILL):
#         the run fails, step-4 never appears, and the resume starts from
#         step 3's checkpoint and still equals the uninterrupted run;
#  supervise scripts/elastic-run.sh: a planner-made dp2 tp2 pp2 plan on 8
#         ranks, rank 5 killed writing step 3's checkpoint; the script
#         replans for 6 GPUs (trident replan: dp6, ZeRO-0), re-emits,
#         resumes from step 2 and finishes step 4, equal to the
#         uninterrupted run;
#  refuse a flipped byte, a truncated file and a missing rank file are
#         refused, naming the file and the tensor's slice; a checkpoint of
#         another global batch is refused naming both.
#
# usage: elastic.sh --build-dir BUILD [--work DIR] [CASE ...]
# Exit: 0 all pass; 1 a mismatch or failure; 77 skipped (no mpirun).
#===----------------------------------------------------------------------===#
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$(cd "$here/../.." && pwd)"
build="" work="" cases=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    -*) echo "elastic: unknown option $1" >&2; exit 2 ;;
    *) cases+=("$1"); shift ;;
  esac
done
[ -n "$build" ] || { echo "elastic: --build-dir is required" >&2; exit 2; }
build="$(cd "$build" && pwd)"
[ ${#cases[@]} -gt 0 ] || cases=(gpt zero3 moe crash supervise refuse)
command -v mpirun > /dev/null || { echo "elastic: SKIP: mpirun not found"; exit 77; }
[ -n "$work" ] || work="$(mktemp -d "${TMPDIR:-/tmp}/trident-elastic.XXXXXX")"
mkdir -p "$work"
trident="$build/bin/trident" compare="$build/bin/trident-compare-params"
mpi=(mpirun --oversubscribe --allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none
fail=0

# program PLAN: emits and compiles $work/bin/PLAN once (models/ as run-e2e).
program() {
  local p="$1" m
  [ -x "$work/bin/$p" ] && return 0
  mkdir -p "$work/bin"
  m="$(sed -n 's/^  "model": "\(.*\)",$/\1/p' "$here/plans/$p.json")"
  [ -f "$here/models/$m.json" ] && m="$here/models/$m.json"
  "$trident" emit --plan "$here/plans/$p.json" --model "$m" --emit cpp \
    -o "$work/bin/$p.cpp"
  mpicxx -std=c++20 -O0 "$work/bin/$p.cpp" -I"$src/include" \
    "$build/lib/libTridentRuntimeCpu.a" -o "$work/bin/$p"
}
ranks() {
  sed -n 's/.*"\(dp\|cp\|tp\|pp\)": \([0-9]*\).*/\2/p' "$here/plans/$1.json" |
    head -4 | awk 'BEGIN{n=1}{n*=$1}END{print n}'
}
# run PLAN LOG ARGS...: runs the plan's program on its ranks, appending
# its output to LOG.
run() {
  local p="$1" log="$2"
  shift 2
  program "$p"
  "${mpi[@]}" -np "$(ranks "$p")" "$work/bin/$p" "$@" >> "$log"
}
# check NAME REF-LOG REF-DUMP LOG DUMP: the losses and the parameters.
check() {
  local name="$1"
  if "$compare" --losses "$2" "$4" --rtol 1e-5 > "$work/$name.cmp" 2>&1 &&
     "$compare" "$3" "$5" --rtol 1e-5 --atol 1e-5 >> "$work/$name.cmp" 2>&1; then
    echo "elastic: $name: match: $(grep '^OK' "$work/$name.cmp" | tr '\n' ' ')"
  else
    echo "elastic: $name: MISMATCH:"; cat "$work/$name.cmp"; fail=1
  fi
}
# chain NAME SINGLE STEPS PLAN:UNTIL ...: the single-rank run of STEPS
# steps, then each PLAN resuming the last checkpoint up to step UNTIL.
chain() {
  local name="$1" single="$2" steps="$3" d="$work/$1"
  shift 3
  rm -rf "$d" && mkdir -p "$d"
  run "$single" "$d/ref.log" --steps "$steps" --dump "$d/ref.dump"
  local resume=()
  for leg in "$@"; do
    run "${leg%%:*}" "$d/run.log" --steps "${leg#*:}" \
      --checkpoint-dir "$d/ckpt" "${resume[@]}"
    resume=(--resume "$d/ckpt")
  done
  # The last leg's parameters.
  local last="${*: -1}"
  run "${last%%:*}" "$d/last.log" --steps "${last#*:}" --resume "$d/ckpt" \
    --dump "$d/run.dump"
  check "$name" "$d/ref.log" "$d/ref.dump" "$d/run.log" "$d/run.dump"
  grep "^resumed" "$d/run.log" | sed "s/^/elastic: $name: /"
}

for c in "${cases[@]}"; do
  case "$c" in
    gpt)
      chain gpt elastic-single 6 elastic-dp2-tp2-pp2:2 elastic-dp3-tp2:4 \
        elastic-pp3-211:6 ;;
    zero3)
      chain zero3 single 6 dp2-cp2-zero3:2 zero1:4 pp4-vpp2:6 ;;
    moe)
      chain moe tiny-mixtral-single 4 tiny-mixtral-dp4-ep2:2 \
        tiny-mixtral-dp2-pp2:4 ;;
    crash)
      d="$work/crash"
      rm -rf "$d" && mkdir -p "$d"
      run elastic-single "$d/ref.log" --steps 6 --dump "$d/ref.dump"
      run elastic-dp2-tp2-pp2 "$d/run.log" --steps 2 --checkpoint-dir "$d/ckpt"
      # Steps 3 and 4 under dp3 tp2; rank 1 dies writing step 4's file.
      if TRIDENT_RT_CHECKPOINT_KILL=4:1 run elastic-dp3-tp2 "$d/killed.log" \
           --steps 4 --resume "$d/ckpt" --checkpoint-dir "$d/ckpt" 2> "$d/killed.err"; then
        echo "elastic: crash: the killed run succeeded"; fail=1
      fi
      if [ -e "$d/ckpt/step-4" ] || [ ! -d "$d/ckpt/.step-4.partial" ]; then
        echo "elastic: crash: expected .step-4.partial and no step-4: $(ls -a "$d/ckpt" | tr '\n' ' ')"; fail=1
      fi
      # Its step 3 stands (it completed before the crash); the resume
      # starts after it.
      grep "^step 3 " "$d/killed.log" >> "$d/run.log"
      run elastic-pp3-211 "$d/run.log" --steps 6 --resume "$d/ckpt" \
        --checkpoint-dir "$d/ckpt" --dump "$d/run.dump"
      grep "^resumed" "$d/run.log" | tail -n 1 | sed 's/^/elastic: crash: /'
      check crash "$d/ref.log" "$d/ref.dump" "$d/run.log" "$d/run.dump" ;;
    supervise)
      # scripts/elastic-run.sh: tiny-gpt planned for one node of 8 GPUs
      # (dp2 tp2 pp2), rank 5 killed writing step 3's checkpoint, replanned
      # for 6 GPUs (trident replan), re-emitted, resumed from step 2.
      d="$work/supervise"
      rm -rf "$d" && mkdir -p "$d"
      printf '{"name": "h100x8", "groups": [{"gpu": "h100", "nodes": 1, "gpus_per_node": 8}]}\n' > "$d/h8.json"
      printf '{"name": "h100x6", "groups": [{"gpu": "h100", "nodes": 1, "gpus_per_node": 6}]}\n' > "$d/h6.json"
      "$trident" plan --model tiny-gpt --cluster "$d/h8.json" --global-batch 24 \
        --seq-len 32 --precision fp32 --fix dp=2,tp=2,pp=2,mb=2,vpp=1,zero=0 \
        -o "$d/plan.json" > /dev/null
      run elastic-single "$d/ref.log" --steps 4 --dump "$d/ref.dump"
      if bash "$src/scripts/elastic-run.sh" --plan "$d/plan.json" --model tiny-gpt \
           --steps 4 --checkpoint-dir "$d/ckpt" --work "$d/w" --build-dir "$build" \
           --after-failure "$d/h6.json" --inject-kill 3:5 > "$d/out.log" 2> "$d/err.log"; then
        grep "^elastic-run: attempt\|^resumed\|^move" "$d/out.log" | sed 's/^/elastic: supervise: /'
        # Each step's last report (the killed attempt reported step 3 too).
        awk '/^step /{ a[$2] = $0; n = $2 > n ? $2 : n } END { for (i = 1; i <= n; i++) print a[i] }' \
          "$d/out.log" > "$d/run.log"
        "${mpi[@]}" -np 6 "$d/w/attempt-1/train" --steps 4 --resume "$d/ckpt" \
          --dump "$d/run.dump" > /dev/null
        check supervise "$d/ref.log" "$d/ref.dump" "$d/run.log" "$d/run.dump"
      else
        echo "elastic: supervise: elastic-run.sh failed:"; cat "$d/out.log" "$d/err.log"; fail=1
      fi ;;
    refuse)
      d="$work/refuse"
      rm -rf "$d" && mkdir -p "$d"
      run elastic-dp3-tp2 "$d/log" --steps 1 --checkpoint-dir "$d/ok"
      # expect NAME PATTERN CKPT [PLAN]: the resume fails with PATTERN.
      expect() {
        if run "${4:-elastic-single}" "$d/log" --steps 2 --resume "$3" 2> "$d/$1.err"; then
          echo "elastic: refuse: $1: resumed"; fail=1
        elif grep -q -- "$2" "$d/$1.err"; then
          echo "elastic: refuse: $1: $(grep -o -m1 'trident-runtime: error.*' "$d/$1.err")"
        else
          echo "elastic: refuse: $1: unexpected message:"; cat "$d/$1.err"; fail=1
        fi
      }
      cp -r "$d/ok" "$d/flip"
      f="$d/flip/step-1/rank2.ckpt"
      # A byte of the second tensor's values (past its header line).
      off=$(grep -a -b -m2 '^tensor ' "$f" | tail -n 1 | cut -d: -f1)
      off=$((off + $(grep -a -m2 '^tensor ' "$f" | tail -n 1 | wc -c) + 2))
      printf '\x55' | dd of="$f" bs=1 seek="$off" conv=notrunc 2> /dev/null
      expect flip "rank2.ckpt:3: tensor .*checksum mismatch (the file is corrupted)" "$d/flip"
      cp -r "$d/ok" "$d/trunc"
      f="$d/trunc/step-1/rank4.ckpt"
      truncate -s $(( $(stat -c %s "$f") - 100 )) "$f"
      expect trunc "rank4.ckpt:[0-9]*: tensor .* is truncated" "$d/trunc"
      cp -r "$d/ok" "$d/missing"
      rm "$d/missing/step-1/rank5.ckpt"
      expect missing "no complete checkpoint" "$d/missing"
      expect batch "was written with global_tokens '768'; this program trains with global_tokens '256'" "$d/ok" single ;;
    *) echo "elastic: unknown case '$c'" >&2; exit 2 ;;
  esac
done
# Passed: the compiled programs, parameter dumps and checkpoints go, the
# logs stay (as run-e2e.sh; TRIDENT_E2E_KEEP=1 keeps everything).
if [ "$fail" = 0 ] && [ "${TRIDENT_E2E_KEEP:-0}" != 1 ]; then
  rm -rf "$work/bin"
  find "$work" \( -name '*.dump' -o -name 'step-*' -o -name ckpt \) -prune \
    -exec rm -rf {} +
fi
exit $fail
