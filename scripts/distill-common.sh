# shellcheck shell=bash
#===- scripts/distill-common.sh - shared by the distill-*-flags.sh scripts -===#
#
# Sourced by scripts/distill-export-flags.sh and scripts/distill-serve-flags.sh
# (their Python parts share scripts/distill_common.py).

# The self-test's scratch folder, removed on exit.
work=""
cleanup() { if [ -n "$work" ]; then rm -rf "$work"; fi; }
trap cleanup EXIT

# mkrepo DIR: commit what is in DIR, turn it into a bare repo DIR.git
mkrepo() {
  git -C "$1" init -q
  git -C "$1" add -A
  GIT_AUTHOR_DATE=2024-01-02T03:04:05Z GIT_COMMITTER_DATE=2024-01-02T03:04:05Z \
    git -C "$1" -c user.name=t -c user.email=t@t commit -qm fixture
  git clone -q --bare "$1" "$1.git"
}

# self_test_result NAME FAIL: the summary line; exits 1 when FAIL is not 0
self_test_result() {
  if [ "$2" = 0 ]; then echo "$1 self-test: 1 passed, 0 failed"
  else echo "$1 self-test: 0 passed, 1 failed"; exit 1; fi
}
