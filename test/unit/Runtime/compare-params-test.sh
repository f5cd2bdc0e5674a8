#!/bin/sh
# compare-params-test.sh COMPARE_TOOL MPI_TEST MPIRUN: writes two sharded
# dumps with the 4-rank test program (one with a perturbed element) and
# checks the compare tool's verdicts and exit codes.
set -u
tool=$1 prog=$2 mpirun=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() { "$mpirun" -np 4 --oversubscribe --allow-run-as-root "$prog" "$@"; }
run "$dir/a" same || exit 1
run "$dir/b" same || exit 1
run "$dir/c" perturb || exit 1
"$tool" "$dir/a" "$dir/b" > "$dir/ab.txt"; rc=$?
cat "$dir/ab.txt"
[ $rc -eq 0 ] && grep -q '^OK: 2 parameters, 27 elements' "$dir/ab.txt" || { echo "FAIL: identical dumps"; exit 1; }
"$tool" "$dir/a" "$dir/c" > "$dir/ac.txt"; rc=$?
cat "$dir/ac.txt"
[ $rc -eq 1 ] && grep -q '^worst: w\[9\]' "$dir/ac.txt" || { echo "FAIL: perturbed dump not caught"; exit 1; }
"$tool" "$dir/a" "$dir/c" --rtol 1e-2 > /dev/null || { echo "FAIL: rtol 1e-2 should accept"; exit 1; }
"$tool" "$dir/a" "$dir/missing" 2> "$dir/err.txt"; rc=$?
[ $rc -eq 2 ] && grep -q 'missing: cannot open directory' "$dir/err.txt" || { echo "FAIL: missing dir"; exit 1; }
printf 'step 1 loss 2.5 time 0.1\nstep 2 loss 2.25 time 0.1\n' > "$dir/l1"
printf 'noise\nstep 1 loss 2.5000001 time 0.3\nstep 2 loss 2.25 time 0.2\n' > "$dir/l2"
printf 'step 1 loss 2.5 time 0.1\nstep 2 loss 2.3 time 0.1\n' > "$dir/l3"
"$tool" --losses "$dir/l1" "$dir/l2" || { echo "FAIL: equal losses"; exit 1; }
"$tool" --losses "$dir/l1" "$dir/l3"; [ $? -eq 1 ] || { echo "FAIL: loss mismatch"; exit 1; }
echo "compare-params-test: PASSED"
