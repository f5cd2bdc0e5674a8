// A plan written by `trident plan -o` reads back onto the model with the
// attributes trident-plan attaches for the same search.
// RUN: trident import --model tiny-gpt -o %t.mlir
// RUN: trident plan --model tiny-gpt --cluster dgx-h100:1 --global-batch 64 --seq-len 32 --fix pp=2,tp=1,vpp=1 -o %t.json > /dev/null
// RUN: trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=%t.json}))' -o %t.applied.mlir
// RUN: trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(trident-plan{cluster=dgx-h100:1 global-batch=64 fix=pp=2,tp=1,vpp=1}))' -o %t.planned.mlir
// RUN: diff %t.applied.mlir %t.planned.mlir
// RUN: FileCheck %s < %t.applied.mlir

// CHECK: tgraph.plan = #tgraph.plan<model = "tiny_gpt", seq_len = 32,
// CHECK-SAME: layers_per_chunk = [2, 2]
// CHECK: {tgraph.stage = array<i64: 0, 0, 1, 1>}

// A plan for another model or sequence length is refused.
// RUN: trident plan --model llama-3-8b --cluster dgx-h100:1 --global-batch 8 --seq-len 32 -o %t.other.json > /dev/null
// RUN: not trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=%t.other.json}))' 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: error: trident-apply-plan: {{.*}}other.json: the plan is for model 'llama_3_8b' but model @tiny_gpt is 'tiny_gpt'
// RUN: not trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=%t.missing.json}))' 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: trident-apply-plan: {{.*}}missing.json: cannot open
// RUN: echo '{"schema": "trident.plan/v1", "dp": "x"}' > %t.bad.json
// RUN: not trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=%t.bad.json}))' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: trident-apply-plan: {{.*}}bad.json

// The same model's plan at another sequence length, or held to a cluster
// of another size (the optional `cluster` option), is refused too.
// RUN: sed 's/"seq_len": 32/"seq_len": 16/' %t.json > %t.seq16.json
// RUN: not trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=%t.seq16.json}))' 2>&1 | FileCheck %s --check-prefix=SEQ
// SEQ: error: trident-apply-plan: {{.*}}seq16.json: the plan is for sequence length 16 but model @tiny_gpt is at 32
// RUN: not trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=%t.json cluster=dgx-h100:2}))' 2>&1 | FileCheck %s --check-prefix=GPUS
// GPUS: error: trident-apply-plan: {{.*}}.json: the plan uses 8 GPUs but cluster dgx-h100:2 has 16
// RUN: trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=%t.json cluster=dgx-h100:1}))' | FileCheck %s --check-prefix=SAME
// SAME: tgraph.plan
