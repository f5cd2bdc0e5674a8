// trident-lower-to-texec: a planned tgraph model becomes the texec program
// of its training step, the pass `trident emit` runs after
// trident-apply-plan. The pipeline in trident-opt gives what `trident emit
// --emit texec` gives, byte for byte (trident-opt adds a last empty line).
// RUN: trident import --model tiny-gpt -o %t.mlir
// RUN: trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=%srcroot/test/e2e/plans/dp2-tp2-pp2.json}),trident-lower-to-texec)' -o %t.texec.mlir
// RUN: FileCheck %s < %t.texec.mlir
// RUN: trident emit --plan %srcroot/test/e2e/plans/dp2-tp2-pp2.json --model tiny-gpt --emit texec -o %t.emitted.mlir
// RUN: diff -B %t.texec.mlir %t.emitted.mlir

// CHECK-NOT: tgraph.model
// CHECK: texec.program @tiny_gpt attributes {dp = 2 : i64
// CHECK-SAME: pp = 2 : i64
// CHECK-SAME: tp = 2 : i64
// CHECK: texec.schedule "1f1b"

// The training options are the pass's: SGD with its learning rate.
// RUN: trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=%srcroot/test/e2e/plans/dp2.json}),trident-lower-to-texec{optimizer=sgd lr=0.5})' | FileCheck %s --check-prefix=SGD
// SGD: texec.optimizer "sgd"
// SGD-SAME: {lr = 5.000000e-01 : f64}

// A model without a plan, or a module of two models, is refused.
// RUN: not trident-opt %t.mlir --trident-lower-to-texec 2>&1 | FileCheck %s --check-prefix=NOPLAN
// NOPLAN: error: trident-lower-to-texec: model @tiny_gpt has no tgraph.plan attribute: attach a plan with trident-plan or trident-apply-plan first
