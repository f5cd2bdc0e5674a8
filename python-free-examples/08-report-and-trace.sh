#!/usr/bin/env bash
#===- 08-report-and-trace.sh - plan, trace, HTML report, schema check ---===#
#
# Shows: `trident plan` for Llama 3 70B on 4 DGX H100 nodes (32 GPUs, global
# batch 256, sequence 4096) writing
# three files at once: the best plan
# (plan.json, trident.plan/v1), its simulated training step as a Chrome
# trace (trace.json: open it in https://ui.perfetto.dev or
# chrome://tracing) and a self-contained HTML report (report.html: open it
# in any browser); then `trident validate-plan` checking the plan against
# the JSON Schema docs/plan-schema.json, and a summary of the trace's
# events per category. docs/report-and-trace.md explains every part.
#
# Expected output shape: the plan table, "wrote .../plan.json", "wrote
# .../trace.json", "wrote .../report.html"; "plan.json: conforms to
# docs/plan-schema.json and reads back (1 plan)"; "trace events" with
# forward / backward counts equal to stages x micro-batches x chunks, the
# communication exposed inside the passes by kind, and the report's size
# and sections.
#
# Usage: bash python-free-examples/08-report-and-trace.sh [OUT_DIR]
#        (OUT_DIR keeps the three files; default: a temporary folder)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TRIDENT_BIN:-build/bin}
if [ $# -ge 1 ]; then
  out=$1
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi

ARGS=(--model llama-3-70b --cluster dgx-h100:4 --global-batch 256
      --seq-len 4096 --top 3)
echo "\$ trident plan ${ARGS[*]} -o plan.json --trace trace.json --report report.html"
"$BIN/trident" plan "${ARGS[@]}" -o "$out/plan.json" --trace "$out/trace.json" \
  --report "$out/report.html" | sed -e "s|$out/||"

echo
echo "\$ trident validate-plan --plan plan.json --schema docs/plan-schema.json"
"$BIN/trident" validate-plan --plan "$out/plan.json" \
  --schema docs/plan-schema.json | sed -e "s|$out/||"

# The first `"KEY": VALUE` of the pretty-printed plan.
field() {
  grep -m1 "\"$1\":" "$out/plan.json" | sed -e 's/^[^:]*: *//' -e 's/,$//' -e 's/"//g'
}
# Events of one category in the trace (one event per line).
events() { grep -c "\"cat\":\"$1\"" "$out/trace.json" || true; }
pp=$(field pp); vpp=$(field vpp); m=$(field num_micro_batches)
echo
echo "trace events (best plan: pp $pp, vpp $vpp, $m micro-batches)"
echo "  forward        $(events forward)   (pp x micro-batches x vpp = $((pp * m * vpp)))"
echo "  backward       $(events backward)"
echo "  bubble         $(events bubble)"
echo "  blocked send   $(events send)"
echo "  p2p transfer   $(events p2p)"
echo "  data-parallel  $(events data-parallel)"
echo "  optimizer      $(events optimizer)"
echo "  inside the passes (exposed): tensor-parallel $(events tensor-parallel), context-parallel $(events context-parallel), expert-parallel $(events expert-parallel)"
echo "  step ends at   $(grep -o '"step_s":[0-9.e+-]*' "$out/trace.json" | cut -d: -f2) s (plan: $(field iteration_time_s) s)"

echo
echo "report.html: $(wc -c < "$out/report.html") bytes, $(grep -c '<svg ' "$out/report.html") inline SVG charts, $(grep -c -i '<script' "$out/report.html" || true) scripts"
grep -o '<h2>[^<]*</h2>' "$out/report.html" | sed -e 's/<[^>]*>//g' -e 's/^/  /'
