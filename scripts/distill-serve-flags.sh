#!/usr/bin/env bash
#===- scripts/distill-serve-flags.sh - serving engines' CLI options -------===#
#
# Usage:
#   scripts/distill-serve-flags.sh [--rev REV] [--out DIR] [--manifest ENGINE=FILE]...
#       [--source-note ENGINE=TEXT]... VLLM_GIT SGLANG_GIT TRTLLM_GIT
#   VLLM_GIT=... SGLANG_GIT=... TRTLLM_GIT=... scripts/distill-serve-flags.sh
#   scripts/distill-serve-flags.sh --self-test
#   (ENGINE: vllm, sglang or trtllm; FILE: lines `PATH UPSTREAM-COMMIT`)
#
# Reads the launch-argument sources of three LLM serving engines from git
# mirrors (bare git directories, as the search tool's `fetch` brings them,
# or clones) with `git show REV:path` (REV defaults to HEAD; nothing needs a
# work tree) and writes, under DIR (default test/data/serve-flags):
#
#   vllm.txt    long options of `vllm serve`: EngineArgs.add_cli_args and
#               AsyncEngineArgs.add_cli_args (vllm/engine/arg_utils.py), the
#               frontend's make_arg_parser and its dataclass-derived args
#               (vllm/entrypoints/openai/cli_args.py), the serve subcommand
#               (vllm/entrypoints/cli/serve.py)
#   sglang.txt  long options of `python -m sglang.launch_server`:
#               ServerArgs.add_cli_args (python/sglang/srt/server_args.py)
#               and, where it calls add_cli_args_from_dataclass, the
#               annotated fields it derives flags from
#   trtllm.txt  options of `trtllm-serve` (its default `serve` command;
#               tensorrt_llm/commands/serve.py click options), exact
#               spelling (TRT-LLM mixes `--tp_size` and `--metrics-log-interval`);
#               the other subcommands' options are listed in the header
#
# Each file starts with `#` lines (repository, full commit, commit date,
# the files read, the options registered as deprecated, and `# values
# --opt: [JSON list]` for each option whose values the source enumerates),
# then one option a line, sorted (byte order) and unique. Only options
# written in the source are listed: argparse's automatic --help is not,
# short options (-tp, -c) are not.
#
# When the repositories are not upstream snapshots but single files gathered
# one by one (e.g. from the search index's stored versions, each at its own
# commit), `--manifest ENGINE=FILE` names each file's upstream commit
# (FILE: lines `PATH COMMIT`, `#` comments): the header then says so
# (`origin:`), gives `source: PATH @ COMMIT` for every file read, calls the
# local commit `scratch-commit:` and omits `commit:`/`commit-date:`; a file
# read that the manifest does not name is an error. `--source-note
# ENGINE=TEXT` adds `# note: TEXT` lines.
#
# How names are derived (read from the sources, not run):
#   * a string argument of `add_argument(...)` / `click.option(...)` that
#     is a whole long option (`--x-y`; click's `--a/--b` gives both);
#   * option strings in list/tuple literals inside the same function
#     (vLLM registers its deprecated guided-decoding options in a loop);
#   * argparse.BooleanOptionalAction adds `--no-X` for each `--X`: either
#     given as `action=`, or implied by vLLM's get_kwargs(Config) for a
#     field whose annotation includes `bool` (and no dataclass); when the
#     Config class is not among the files read, the EngineArgs field named
#     like the option's dest stands in (named in the header);
#   * vLLM frontend classes whose add_cli_args loops over get_kwargs(cls)
#     and registers f"--{key.replace('_', '-')}": every dataclass field of
#     the class and its bases, `_` -> `-`;
#   * SGLang fields annotated A[T, "help"] / A[T, Arg(...)] when
#     add_cli_args calls add_cli_args_from_dataclass: `--` + name with
#     `_` -> `-` (or Arg's cli_name), plus Arg's aliases, skipping no_cli;
#   * helper functions of the same module that add_cli_args calls with the
#     parser are followed.
# Values (`# values`): argparse `choices=` and click.Choice([...]) (plus the
# alias keys of a Choice subclass's second argument) when written as
# literals, module-level names bound to literals or `+` of those; SGLang
# Arg(choices=) else the field's Literal[...]; vLLM get_kwargs(Config) fields
# typed Literal[...] or an alias of one (aliases looked up in the config
# modules and vllm/model_executor/layers/quantization/__init__.py). Values
# computed at run time (plugin registries, list(...)) are not recorded.
# The script stops with an error when an expected file, class or function
# is missing or an engine yields no option, rather than write a short list.
#
# Needs git and python3 (standard library only). `--self-test` builds three
# small synthetic repositories (no engine code) and checks the output.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
rev=${SERVE_FLAGS_REV:-HEAD}
out=${SERVE_FLAGS_OUT:-$root/test/data/serve-flags}
self_test=0
pos=()
# Per engine: extra arguments for the Python part (--manifest FILE, --note TEXT)
extra_vllm=() extra_sglang=() extra_trtllm=()
engine_arg() {  # engine_arg OPTION ENGINE=VALUE PYFLAG
  local eng=${2%%=*} val=${2#*=}
  if [ "$eng" = "$2" ] || [ -z "$val" ]; then
    echo "distill-serve-flags: $1 expects ENGINE=VALUE" >&2; exit 2
  fi
  case "$eng" in
    vllm) extra_vllm+=("$3" "$val") ;;
    sglang) extra_sglang+=("$3" "$val") ;;
    trtllm) extra_trtllm+=("$3" "$val") ;;
    *) echo "distill-serve-flags: $1: unknown engine '$eng'" >&2; exit 2 ;;
  esac
}
while [ $# -gt 0 ]; do
  case "$1" in
    --rev) rev=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --manifest) engine_arg "$1" "${2:-}" --manifest; shift 2 ;;
    --source-note) engine_arg "$1" "${2:-}" --note; shift 2 ;;
    --self-test) self_test=1; shift ;;
    -h|--help) sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "distill-serve-flags: unknown option $1" >&2; exit 2 ;;
    *) pos+=("$1"); shift ;;
  esac
done

# The Python part (shared code: scripts/distill_common.py).
py=$root/scripts/distill_serve_flags.py
# shellcheck source=scripts/distill-common.sh
. "$root/scripts/distill-common.sh"   # mkrepo, self_test_result; removes $work

# The options Trident writes (lib/Serve/Serve.cpp, launchCommand), checked
# after each run: missing ones are reported, not fatal (the report says what
# the engine spells instead); deprecated ones are named.
sanity_vllm="--tensor-parallel-size --pipeline-parallel-size --data-parallel-size
  --enable-expert-parallel --max-num-seqs --max-model-len --kv-cache-dtype
  --gpu-memory-utilization --max-num-batched-tokens --quantization
  --enforce-eager --kv-transfer-config"
sanity_sglang="--model-path --tp-size --pp-size --dp-size --ep-size
  --max-running-requests --context-length --kv-cache-dtype --mem-fraction-static
  --chunked-prefill-size --quantization --disable-cuda-graph
  --disaggregation-mode"
sanity_trtllm="--tp_size --pp_size --ep_size --max_batch_size --max_num_tokens
  --max_seq_len --kv_cache_free_gpu_memory_fraction --backend
  --extra_llm_api_options"

check() {  # check FILE FLAGS...
  local file=$1; shift
  local f miss=() dep=() deps
  deps=" $(sed -n 's/^# registered as deprecated (still accepted): //p' "$file") "
  for f in "$@"; do
    if ! grep -qxF -- "$f" "$file"; then miss+=("$f")
    elif [[ "$deps" == *" $f "* ]]; then dep+=("$f"); fi
  done
  if [ ${#miss[@]} -eq 0 ]; then
    echo "  $(basename "$file"): all ${#@} checked options present"
  else
    echo "  $(basename "$file"): MISSING ${miss[*]}"
  fi
  if [ ${#dep[@]} -gt 0 ]; then
    echo "  $(basename "$file"): registered as deprecated: ${dep[*]}"
  fi
}

run_all() {  # run_all VLLM SGLANG TRTLLM OUTDIR
  mkdir -p "$4"
  python3 -B "$py" vllm "$1" "$rev" "$4/vllm.txt" ${extra_vllm[@]+"${extra_vllm[@]}"}
  python3 -B "$py" sglang "$2" "$rev" "$4/sglang.txt" \
    ${extra_sglang[@]+"${extra_sglang[@]}"}
  python3 -B "$py" trtllm "$3" "$rev" "$4/trtllm.txt" \
    ${extra_trtllm[@]+"${extra_trtllm[@]}"}
}

if [ $self_test = 1 ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/distill-serve-flags-test.XXXXXX")
  # Synthetic sources: the shapes the parser must read, no engine code.
  mkdir -p "$work/v/vllm/engine" "$work/v/vllm/config" \
           "$work/v/vllm/entrypoints/openai" "$work/v/vllm/entrypoints/cli" \
           "$work/v/vllm/model_executor/layers/quantization"
  cat >"$work/v/vllm/model_executor/layers/quantization/__init__.py" <<'EOF'
QuantMethods = Literal["q1", "q2"]
EOF
  cat >"$work/v/vllm/config/alpha.py" <<'EOF'
@dataclass
class Inner:
    x: int = 0
@config
@dataclass
class AlphaConfig:
    on: bool = False
    maybe: bool | None = None
    size: int = 1
    nested: Inner | None = None
    kind: "Literal['a', 'b']" = "a"
    dt: DtypeT | None = None
DtypeT = Literal["d1", "d2"]
EOF
  cat >"$work/v/vllm/engine/arg_utils.py" <<'EOF'
class EngineArgs:
    absent_on: bool = False
    absent_quant: QuantMethods | None = None
    absent_num: int = 0
    @staticmethod
    def add_cli_args(parser):
        kw = get_kwargs(AlphaConfig)
        ab = get_kwargs(AbsentConfig)
        g = parser.add_argument_group("x")
        g.add_argument("--absent-on", **ab["on"])
        g.add_argument("--absent-quant", **ab["quant"])
        g.add_argument("--absent-num", **ab["num"])
        g.add_argument("--dt", **kw["dt"])
        g.add_argument("--pick", choices=PICKS + ["z"], type=str)
        g.add_argument("--dyn", choices=list(registry), type=str)
        if not ("serve" in sys.argv and "--help" in sys.argv):
            g.add_argument("--model", type=str)
        g.add_argument("--turn-on", **kw["on"])
        g.add_argument("--maybe", "-m", **kw["maybe"])
        g.add_argument("--size", "-s", **kw["size"])
        g.add_argument("--nested", **kw["nested"])
        g.add_argument("--kind", **kw["kind"])
        g.add_argument("--explicit", action=argparse.BooleanOptionalAction)
        g.add_argument("--old", type=int, deprecated=True)
        for arg, t in [("--loop-a", str), ("--loop-b", bool)]:
            g.add_argument(arg, type=t, deprecated=True)
        _helper(parser)
        return parser

class AsyncEngineArgs(EngineArgs):
    @staticmethod
    def add_cli_args(parser, async_args_only=False):
        parser = EngineArgs.add_cli_args(parser)
        parser.add_argument("--log-requests", action=argparse.BooleanOptionalAction)
        return parser

def _helper(parser):
    parser.add_argument("--from-helper", action="store_true",
                        help="see --not-a-flag for details")
PICKS = ["x", "y"]
EOF
  cat >"$work/v/vllm/entrypoints/openai/cli_args.py" <<'EOF'
@config
class BaseFront:
    chat_thing: str | None = None
    flag_thing: bool = False
    @classmethod
    def add_cli_args(cls, parser):
        kw = get_kwargs(cls)
        for key, value in kw.items():
            parser.add_argument(f"--{key.replace('_', '-')}", **value)
        return parser
@config
class Front(BaseFront):
    host: str | None = None
    port: int = 8000
    skip: ClassVar[int] = 3
def make_arg_parser(parser):
    parser.add_argument("model_tag", nargs="?")
    parser.add_argument("--headless", action="store_true")
    parser = Front.add_cli_args(parser)
    parser = AsyncEngineArgs.add_cli_args(parser)
    return parser
EOF
  cat >"$work/v/vllm/entrypoints/cli/serve.py" <<'EOF'
class ServeSubcommand:
    def subparser_init(self, subparsers):
        p = subparsers.add_parser("serve")
        p.add_argument("--from-subcommand", type=int)
        return make_arg_parser(p)
EOF
  mkdir -p "$work/s/python/sglang/srt/arg_groups"
  cat >"$work/s/python/sglang/srt/arg_groups/parallel.py" <<'EOF'
class ParallelPart:
    tp_size: A[int, Arg(help="tp", aliases=["--tensor-parallel-size"])] = 1
    hidden: A[int, Arg(help="x", no_cli=True)] = 0
EOF
  cat >"$work/s/python/sglang/srt/server_args.py" <<'EOF'
_HELP_NAMED = "named help"
CH = ["c1", "c2"]
@dataclasses.dataclass
class ServerArgs(ParallelPart):
    model_path: A[str, Arg(help="p", aliases=["--model"])]
    mem_fraction_static: A[Optional[float], "fraction"] = None
    renamed: A[int, Arg(help="r", cli_name="--other-name")] = 0
    unannotated: int = 0
    old_ep: A[bool, Arg(help="d", action=DeprecatedStoreTrueAction)] = False
    joined: A[int, "a " + "b", NS("x")] = 0
    named: A[int, _HELP_NAMED, NS("x")] = 0
    ns_only: A[Optional[Callable], NS("x")] = None
    hidden_arg: A[bool, Arg(no_cli=True), NS("x")] = False
    opt_bool: A[Optional[bool], Arg(help="o", action=argparse.BooleanOptionalAction)] = None
    mode: A[Literal["null", "p"], "mode", NS("x")] = "null"
    picked: A[Optional[str], Arg(help="x", choices=CH + ["c3"])] = None
    lit_arg: A[Literal["l1", "l2"], Arg(help="x", choices=["l1"])] = "l1"
    @staticmethod
    def add_cli_args(parser):
        add_cli_args_from_dataclass(parser, ServerArgs)
        parser.add_argument("--enable-thing", action="store_true")
        parser.add_argument("--gone", action=DeprecatedAction, help="gone")
        parser.add_argument("--config", type=str)
        parser.add_argument("--old-backend", choices=CH, action=DeprecatedAction)
EOF
  mkdir -p "$work/t/tensorrt_llm/commands"
  cat >"$work/t/tensorrt_llm/commands/serve.py" <<'EOF'
LEVELS = ["info", "debug"]
@click.command("serve")
@click.argument("model", type=str)
@click.option("--tensor_parallel_size", "--tp_size", type=int, default=1)
@click.option("--config", "--extra_llm_api_options", "extra_llm_api_options")
@click.option("--on/--off", default=True)
@click.option("-x", "--with-dash", type=int)
@click.option("--backend", type=ChoiceWithAlias(["pytorch", "tensorrt"], {"trt": "tensorrt"}))
@click.option("--lvl", type=click.Choice(LEVELS))
def serve(model, tensor_parallel_size, extra_llm_api_options, on, with_dash):
    pass
@click.command("disaggregated")
@click.option("-c", "--config_file", type=str)
def disaggregated(config_file):
    pass
EOF
  mkrepo "$work/v"; mkrepo "$work/s"; mkrepo "$work/t"
  run_all "$work/v.git" "$work/s.git" "$work/t.git" "$work/out" >/dev/null
  fail=0
  expect() {  # expect FILE OPTIONS...: the file's options are exactly these
    local got want
    got=$(grep -v '^#' "$work/out/$1")
    want=$(shift; printf '%s\n' "$@" | LC_ALL=C sort -u)
    if [ "$got" != "$want" ]; then
      echo "self-test: $1 differs"; diff <(echo "$want") <(echo "$got") || true
      fail=1
    fi
  }
  expect vllm.txt --model --turn-on --no-turn-on --maybe --no-maybe --size \
    --nested --kind --explicit --no-explicit --old --loop-a --loop-b \
    --from-helper --log-requests --no-log-requests --headless --chat-thing \
    --flag-thing --no-flag-thing --host --port --from-subcommand \
    --absent-on --no-absent-on --absent-quant --absent-num --dt --pick --dyn
  expect sglang.txt --tp-size --tensor-parallel-size --model-path --model \
    --mem-fraction-static --other-name --old-ep --enable-thing --gone --config \
    --joined --named --opt-bool --no-opt-bool --mode --picked --lit-arg \
    --old-backend
  expect trtllm.txt --tensor_parallel_size --tp_size --config \
    --extra_llm_api_options --on --off --with-dash --backend --lvl
  values() {  # values FILE: the `# values` lines, exactly these (sorted)
    local got want
    got=$(grep '^# values ' "$work/out/$1" || true)
    want=$(shift; printf '# values %s\n' "$@")
    if [ "$got" != "$want" ]; then
      echo "self-test: $1 values differ"; diff <(echo "$want") <(echo "$got") || true
      fail=1
    fi
  }
  values vllm.txt '--absent-quant: ["q1", "q2"]' '--dt: ["d1", "d2"]' \
    '--kind: ["a", "b"]' '--pick: ["x", "y", "z"]'
  values sglang.txt '--lit-arg: ["l1"]' \
    '--mode: ["null", "p"]' '--old-backend: ["c1", "c2"]' \
    '--picked: ["c1", "c2", "c3"]'
  values trtllm.txt '--backend: ["pytorch", "tensorrt", "trt"]' \
    '--lvl: ["info", "debug"]'
  grep -q '^# --no-X of options whose config class is not among the sources, from the EngineArgs field of the option.s dest: --absent-on$' \
    "$work/out/vllm.txt" || { echo "self-test: EngineArgs bool fallback"; fail=1; }
  grep -q '^# source: vllm/model_executor/layers/quantization/__init__.py$' \
    "$work/out/vllm.txt" || { echo "self-test: values module not listed"; fail=1; }
  # --manifest / --source-note: upstream commits in the header, no pinned
  # `commit:` line, an unlisted file read is an error
  c1=0123456789abcdef0123456789abcdef01234567
  printf '# upstream\ntensorrt_llm/commands/serve.py %s\nother/file.py %s\n' \
    "$c1" "$c1" >"$work/man-t"
  printf 'python/sglang/srt/elsewhere.py %s\n' "$c1" >"$work/man-s"
  if ! bash "$0" --out "$work/out2" --manifest trtllm="$work/man-t" \
      --source-note "trtllm=reassembled from index pages" \
      "$work/v.git" "$work/s.git" "$work/t.git" >/dev/null 2>&1; then
    echo "self-test: --manifest run failed"; fail=1
  else
    t2=$work/out2/trtllm.txt
    if ! { grep -q "^# source: tensorrt_llm/commands/serve.py @ $c1\$" "$t2" &&
           grep -q "^# manifest, not read: other/file.py @ $c1\$" "$t2" &&
           grep -q '^# note: reassembled from index pages$' "$t2" &&
           grep -q '^# origin: .*not one pinned snapshot' "$t2" &&
           grep -q '^# scratch-commit: [0-9a-f]\{40\} ' "$t2" &&
           ! grep -q '^# commit' "$t2" &&
           grep -q '^# commit: ' "$work/out2/vllm.txt"; }; then
      echo "self-test: --manifest header"; fail=1
    fi
  fi
  if bash "$0" --out "$work/out3" --manifest sglang="$work/man-s" \
      "$work/v.git" "$work/s.git" "$work/t.git" >/dev/null 2>"$work/err3" ||
      ! grep -q 'server_args.py was read but the manifest names no upstream commit' \
        "$work/err3"; then
    echo "self-test: a file missing from the manifest is not an error"; fail=1
  fi
  grep -q '^# commit-date: 2024-01-02T03:04:05' "$work/out/vllm.txt" || {
    echo "self-test: no commit date"; fail=1; }
  grep -qE '^# commit: [0-9a-f]{40}$' "$work/out/sglang.txt" || {
    echo "self-test: no full commit"; fail=1; }
  grep -q '^# registered as deprecated (still accepted): --loop-a --loop-b --old$' \
    "$work/out/vllm.txt" || { echo "self-test: vLLM deprecations"; fail=1; }
  grep -q '^# registered as deprecated (still accepted): --gone --old-backend --old-ep$' \
    "$work/out/sglang.txt" || { echo "self-test: SGLang deprecations"; fail=1; }
  # shellcheck disable=SC2016  # the backquotes are literal
  grep -q '^# subcommand `trtllm-serve disaggregated`: --config_file$' \
    "$work/out/trtllm.txt" || { echo "self-test: TRT-LLM subcommand"; fail=1; }
  grep -q '^# source: vllm/config/alpha.py$' "$work/out/vllm.txt" || {
    echo "self-test: config source not listed"; fail=1; }
  self_test_result distill-serve-flags "$fail"
  exit 0
fi

vllm_git=${pos[0]:-${VLLM_GIT:-}}
sglang_git=${pos[1]:-${SGLANG_GIT:-}}
trtllm_git=${pos[2]:-${TRTLLM_GIT:-}}
if [ -z "$vllm_git" ] || [ -z "$sglang_git" ] || [ -z "$trtllm_git" ]; then
  echo "usage: $0 [--rev REV] [--out DIR] VLLM_GIT SGLANG_GIT TRTLLM_GIT" >&2
  echo "   or: VLLM_GIT=.. SGLANG_GIT=.. TRTLLM_GIT=.. $0;  $0 --self-test" >&2
  exit 2
fi
run_all "$vllm_git" "$sglang_git" "$trtllm_git" "$out"
echo "options Trident writes:"
# shellcheck disable=SC2086
check "$out/vllm.txt" $sanity_vllm
# shellcheck disable=SC2086
check "$out/sglang.txt" $sanity_sglang
# shellcheck disable=SC2086
check "$out/trtllm.txt" $sanity_trtllm
