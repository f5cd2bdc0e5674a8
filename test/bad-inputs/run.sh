#!/usr/bin/env bash
# Runs the bad-input corpus: every case of cases.txt (format at its top).
#
#   bash run.sh [CORPUS_DIR] [NAME_FILTER]
#
# A case passes when its command exits non-zero by itself (124: it hung and
# `timeout` killed it; 128 and above: a signal, i.e. a crash), its stderr
# holds the expected substring, and that substring names the input: a file
# name or a flag of the command. Prints one line per failure, then
# "N passed, M failed"; exits 1 on any failure. TRIDENT_CASE_TIMEOUT sets
# the per-case limit in seconds (default 20).
set -u

dir=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
dir=$(cd "$dir" && pwd) || { echo "run.sh: no corpus directory '$1'"; exit 2; }
filter=${2:-}
manifest="$dir/cases.txt"
limit=${TRIDENT_CASE_TIMEOUT:-20}
[[ -r $manifest ]] || { echo "run.sh: cannot read $manifest"; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Does `expected` name the input of `cmd`: a file name (basename of a .json
# or .mlir path, or of a path ending in '/'), or a flag (--seq-len, -o,
# trident-plan option names) used by the command?
names_input() {
  local cmd=$1 expected=$2 tok base
  for tok in $(tr '{}()=,' '      ' <<<"$cmd"); do
    tok=${tok//\'/}
    case $tok in
      */) base=$(basename "$tok")/ ;;
      *.json | *.mlir) base=$(basename "$tok") ;;
      --*) base=${tok#--} ;;
      -o) base="$tok" ;;
      *) continue ;;
    esac
    [[ $expected == *"$base"* ]] && return 0
  done
  # A flag the message itself names (--cluster is required).
  [[ $expected =~ --[a-z] ]] && return 0
  # A zoo name or cluster spec given as a flag value.
  for tok in $(grep -oE -- '--(model|cluster) [^ ]+' <<<"$cmd" | cut -d' ' -f2); do
    [[ $expected == *"$tok"* ]] && return 0
  done
  return 1
}

passed=0 failed=0 lineno=0
while IFS= read -r line || [[ -n $line ]]; do
  lineno=$((lineno + 1))
  [[ -z ${line//[[:space:]]/} || $line == \#* ]] && continue
  name=${line%% | *}
  rest=${line#* | }
  cmd=${rest%% | *}
  expected=${rest#* | }
  if [[ $rest == "$line" || $cmd == "$rest" || -z $expected ]]; then
    echo "FAIL cases.txt:$lineno: not 'NAME | COMMAND | EXPECTED'"
    failed=$((failed + 1))
    continue
  fi
  [[ -n $filter && $name != *"$filter"* ]] && continue
  cmd=${cmd//\{DIR\}/$dir}
  expected=${expected//\{DIR\}/$dir}
  timeout -k 5 "$limit" bash -c "$cmd" >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  why=
  if ((rc == 0)); then
    why="exit 0 (the bad input was accepted)"
  elif ((rc == 124 || rc == 137)); then
    why="no answer within ${limit}s (hang)"
  elif ((rc >= 128)); then
    why="killed by signal $((rc - 128)) (crash)"
  elif ! grep -qF -- "$expected" "$tmp/err"; then
    why="stderr lacks '$expected'"
  elif ! names_input "$cmd" "$expected"; then
    why="the expected message names neither a file nor a flag of the command"
  fi
  if [[ -z $why ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name (rc=$rc): $why"
    echo "  command: $cmd"
    sed -n '1,3s/^/  stderr:  /p' "$tmp/err"
  fi
done <"$manifest"

echo "$passed passed, $failed failed"
((failed == 0))
