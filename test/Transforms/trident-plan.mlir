// The planner as a pass: the plan is attached to the model and each layer
// of a tgraph.repeat gets its pipeline stage.
// RUN: trident import --model tiny-gpt -o %t.mlir
// RUN: trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(trident-plan{cluster=dgx-h100:1 global-batch=64 fix=pp=2,tp=1,vpp=1}))' | FileCheck %s
// RUN: trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(trident-plan{cluster=dgx-h100:1 global-batch=64 threads=4}))' | FileCheck %s --check-prefix=FREE

// CHECK: tgraph.model @tiny_gpt
// CHECK-SAME: tgraph.plan = #tgraph.plan<model = "tiny_gpt", seq_len = 32
// CHECK-SAME: axes = {
// CHECK-SAME: dp = 4 : i64
// CHECK-SAME: pp = 2 : i64
// CHECK-SAME: tp = 1 : i64
// CHECK-SAME: layers_per_chunk = [2, 2], stage_recompute = [
// CHECK: tgraph.repeat "layers.0-3" x 4(%{{.*}}) {tgraph.stage = array<i64: 0, 0, 1, 1>}

// FREE: tgraph.plan = #tgraph.plan<
// FREE-SAME: predicted = {iteration_time_s =

// Errors name the option and the problem.
// RUN: not trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(trident-plan{global-batch=64}))' 2>&1 | FileCheck %s --check-prefix=NOCLUSTER
// NOCLUSTER: error: trident-plan: the cluster option is required
// RUN: not trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(trident-plan{cluster=dgx-h100:1}))' 2>&1 | FileCheck %s --check-prefix=NOBATCH
// NOBATCH: error: trident-plan: global-batch must be positive
// RUN: not trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(trident-plan{cluster=nosuch:1 global-batch=8}))' 2>&1 | FileCheck %s --check-prefix=BADCLUSTER
// BADCLUSTER: error: trident-plan: {{.*}}nosuch
// RUN: not trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(trident-plan{cluster=dgx-h100:1 global-batch=64 fix=tp=3}))' 2>&1 | FileCheck %s --check-prefix=BADPIN
// BADPIN: error: trident-plan: {{.*}}tp
