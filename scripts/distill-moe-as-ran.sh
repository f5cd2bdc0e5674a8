#!/usr/bin/env bash
#===- scripts/distill-moe-as-ran.sh - MoE dispatcher settings as benchmarked -===#
#
# Usage:
#   scripts/distill-moe-as-ran.sh [--out FILE] [--details] [--compare CASES.json] BRIDGE_GIT
#   BRIDGE_GIT=... scripts/distill-moe-as-ran.sh [--out FILE] [--details]
#   scripts/distill-moe-as-ran.sh --self-test
#
# Reads, from a Megatron-Bridge git mirror (a bare git directory, as the
# search tool's `fetch github:NVIDIA-NeMo/Megatron-Bridge` brings it, or a
# clone) with `git show TAG:path`, the MoE token-dispatcher settings with
# which Megatron-Bridge's performance scripts (scripts/performance/) ran the
# benchmark rows of test/data/validation's MoE cases, and writes them to FILE
# (default test/data/validation/mbridge-moe-as-ran.json):
#
#   {"generated_by": ..., "repo": "NVIDIA-NeMo/Megatron-Bridge",
#    "cases": {"<case id>": {"moe_dispatcher": "alltoall"|"allgather"|"flex",
#                            "moe_overlap_ep_comm": true|false,
#                            "release": "<NeMo container release>",
#                            "source": {"tag", "commit" (full sha), "files"
#                                       (read, in order), "read" (one line:
#                                       each setting, file:line of its last
#                                       assignment and the calls above it)}}}}
#
# The rows (id, container release, model, GPU, GPU count) are DEFAULT_SPEC
# in scripts/distill_moe_as_ran.py. Release -> tag comes from the mirror's
# docs at v0.6.0: docs/releases/software-versions.md ("## NeMo Framework R",
# "| Megatron-Bridge | V |"), then docs/versions1.json ("V · R") for the
# patch releases the table leaves out (26.02.01, 26.04.01); tag vV must exist.
#
# How a row is read (nothing is imported or run): scripts/performance/
# run_script.py's main() at the tag is walked with Python's `ast` as the
# launcher would call it: argparse defaults of scripts/performance/
# argument_parser.py plus the row's model, --gpu h100, the FP8 (current
# scaling) precision and --num_gpus, spelled the way that tag's parser names
# them (25.09's YAML --config_file as setup_experiment.py builds it). The
# walk follows calls into the repository's own modules (recipes, presets,
# dataclass defaults, Megatron-Bridge's provider classes and bridges), the
# YAML overrides (OmegaConf.merge / apply_overrides), importlib and
# dataclasses.replace, and stops at pretrain(): the config handed to it is
# what ran. torch.cuda.get_device_properties is an H100 (sm 9.0); Hugging
# Face configs come from HF_CONFIGS. An `if` the sources cannot decide runs
# both ways; a branch ending in `raise` is dropped. Then:
#   moe_dispatcher       model.moe_token_dispatcher_type; never assigned:
#                        Megatron-Core's default "allgather" (MCORE_DEFAULTS)
#   moe_overlap_ep_comm  comm_overlap.overlap_moe_expert_parallel_comm; None:
#                        the False that comm_overlap.py's
#                        _get_model_comm_overlap_cfgs sets (cited); no
#                        comm_overlap config: Megatron-Core's default False
# `read` also names launcher flags on the path left at their defaults
# (--moe_flex_dispatcher_backend=-1 is a no-op there), a token-drop capacity
# factor, and docs/releases/known-issues.md lines of the release saying the
# flex backend is not supported. --details prints every recipe setting that
# bears on speed with file:line; --compare CASES.json adds the row's
# parallelism vs the script's.
#
# The script stops with an error naming the row, tag and file when a file,
# function, tag or setting it needs is missing, when the settings would
# depend on something the sources do not decide, or when code it cannot
# follow is handed the model config; no partial output is written (the file
# is replaced atomically).
#
# Needs git and python3 (standard library only). `--self-test` checks the
# walker on inline snippets, then builds a small synthetic repository (two
# tags, docs, a launcher, a preset table, a flex helper) and checks the JSON.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/test/data/validation/mbridge-moe-as-ran.json
self_test=0
pos=()
extra=()
shown=()        # the command line as given, git dir replaced (generated_by)
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs FILE}; shown+=("$1" "$2"); shift 2 ;;
    --details) extra+=(--details); shown+=("$1"); shift ;;
    --compare) extra+=(--compare "${2:?--compare needs FILE}"); shown+=("$1" "$2"); shift 2 ;;
    --self-test) self_test=1; shift ;;
    -h|--help) sed -n '4,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "distill-moe-as-ran: unknown option $1" >&2; exit 2 ;;
    *) pos+=("$1"); shown+=(BRIDGE_GIT); shift ;;
  esac
done

# The Python part (shared code: scripts/distill_common.py).
py=$root/scripts/distill_moe_as_ran.py
# shellcheck source=scripts/distill-common.sh
. "$root/scripts/distill-common.sh"   # mkrepo, self_test_result; removes $work

if [ $self_test = 1 ]; then
  fail=0
  python3 -B "$py" --self-test || fail=1
  work=$(mktemp -d "${TMPDIR:-/tmp}/distill-moe-as-ran-test.XXXXXX")
  python3 -B "$py" --write-fixture "$work"
  mkrepo "$work/tree"
  git -C "$work/tree.git" tag v9.9.9 HEAD
  git -C "$work/tree.git" tag v9.9.10 HEAD
  commit=$(git -C "$work/tree.git" rev-parse HEAD)
  if ! python3 -B "$py" --out "$work/out.json" --spec "$work/spec.json" \
      --generated-by "scripts/distill-moe-as-ran.sh BRIDGE_GIT" "$work/tree.git" >/dev/null; then
    echo "self-test: the synthetic repository run failed"; fail=1
  elif ! python3 - "$work/out.json" "$commit" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
text = open(sys.argv[1]).read()
c = doc["cases"]
ok = (sorted(doc) == ["cases", "generated_by", "repo"]
      and doc["generated_by"] == "scripts/distill-moe-as-ran.sh BRIDGE_GIT"
      and text == json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
      and c["case_a"]["source"]["tag"] == "v9.9.9"
      and c["case_b"]["source"]["tag"] == "v9.9.10"
      and c["case_a"]["source"]["commit"] == sys.argv[2]
      and all(v["moe_dispatcher"] == "flex" and v["moe_overlap_ep_comm"] is False for v in c.values())
      and c["case_b"]["release"] == "99.01.01"
      and "scripts/performance/run_script.py" in c["case_a"]["source"]["files"]
      and "known-issues.md@v9.9.10:5" in c["case_b"]["source"]["read"]
      and "known-issues" not in c["case_a"]["source"]["read"])
sys.exit(0 if ok else 1)
EOF
  then
    echo "self-test: unexpected JSON"; cat "$work/out.json"; fail=1
  fi
  # A missing tag is an error that names it, and leaves no output.
  sed 's/"99.01.01"/"99.02"/' "$work/spec.json" >"$work/bad.json"
  if python3 -B "$py" --out "$work/bad-out.json" --spec "$work/bad.json" "$work/tree.git" \
      >/dev/null 2>"$work/err" || ! grep -q "99.02" "$work/err" || [ -e "$work/bad-out.json" ]; then
    echo "self-test: a release without a tag is not an error"; fail=1
  fi
  self_test_result distill-moe-as-ran "$fail"
  exit 0
fi

bridge_git=${pos[0]:-${BRIDGE_GIT:-}}
if [ -z "$bridge_git" ] || [ ${#pos[@]} -gt 1 ]; then
  echo "usage: $0 [--out FILE] [--details] [--compare CASES.json] BRIDGE_GIT" >&2
  echo "   or: BRIDGE_GIT=.. $0;  $0 --self-test" >&2
  exit 2
fi
if [ ${#pos[@]} -eq 0 ]; then shown+=(BRIDGE_GIT); fi
generated_by="scripts/distill-moe-as-ran.sh ${shown[*]}"
python3 -B "$py" --out "$out" --generated-by "$generated_by" \
  ${extra[@]+"${extra[@]}"} "$bridge_git"
