// RUN: trident-translate --texec-to-cpp %s | FileCheck %s

// ZeRO-0: each gradient sum over a group inside the stage (tp, dp) starts
// right after the parameter's last contribution of the step, or after the
// backward's last transfer when that comes later; the sum with the other
// stage (pp_0_1, a tied table) waits until after the schedule.

// Stage 0's schedule ends with the backward of micro-batch 0, not 1: the
// sums start in that one. The bias is summed over tp, then over dp.
// CHECK-LABEL: class Stage0 final : public Stage {
// CHECK-LABEL: void backward0(int mb) {
// CHECK: rt::linearBackward(
// CHECK: if (mb == 0) { // its last contribution this step
// CHECK-NEXT: startGradSums(1, {"dp"});
// CHECK: if (mb == 0) { // its last contribution this step
// CHECK-NEXT: startGradSums(2, {"tp", "dp"});
// CHECK: rt::embeddingBackward(
// CHECK: if (mb == 0) { // its last contribution this step
// CHECK-NEXT: startGradSums(0, {"dp"});
// CHECK-NOT: startGradSums
// CHECK-LABEL: void step() override {
// CHECK: rt::waitAllSends();
// CHECK-NEXT: waitGradSums(); // started in the backward
// CHECK-NEXT: gradAllReduce({0}, c.group("pp_0_1"));
// "unused" is reached by no backward: summed after the schedule.
// CHECK-NEXT: gradAllReduce({3}, c.group("dp"));
// CHECK-NEXT: optimizerStep(0);
// Stage 1 ends with micro-batch 1's backward, which sends the input's
// gradient to stage 0 after the table's last contribution: the table's sum
// starts after that send, which goes out first (on CUDA it would otherwise
// queue behind the sum).
// CHECK-LABEL: class Stage1 final : public Stage {
// CHECK-LABEL: void backward0(int mb) {
// CHECK-NOT: startGradSums
// CHECK: rt::sendAsync(
// CHECK-NEXT: if (mb == 1) { // complete this step; after the transfer
// CHECK-NEXT: rt::exchangeStep({}, c.group("pp"));
// CHECK-NEXT: startGradSums(0, {"dp"});
// CHECK-LABEL: void step() override {
// CHECK: waitGradSums(); // started in the backward
// CHECK-NEXT: gradAllReduce({0}, c.group("pp_0_1"));
// CHECK-NEXT: optimizerStep(0);
texec.program @overlap attributes {dp = 2 : i64, tp = 2 : i64, pp = 2 : i64,
    vpp = 1 : i64, micro_batches = 2 : i64, micro_batch_size = 2 : i64,
    seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64,
    schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.group "pp_0_1" axes ["pp"] members [0, 1]
  texec.stage 0 {
    texec.param "wte" global [16, 8] split 0 over "tp" init "uniform" : tensor<8x8xf32>
    texec.param "w" global [8, 8] init "uniform" : tensor<8x8xf32>
    texec.param "b" global [8] init "zeros" : tensor<8xf32>
    texec.param "unused" global [8] init "zeros" : tensor<8xf32>
    texec.chunk 0 forward {
      %ids = texec.input "tokens" : tensor<2x4xi32>
      %wte = texec.param_ref "wte" : tensor<8x8xf32>
      %e = texec.kernel "embedding"(%ids, %wte) config {vocab_axis = "tp"} : (tensor<2x4xi32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      %s = texec.all_reduce %e group "tp" : tensor<2x4x8xf32>
      %w = texec.param_ref "w" : tensor<8x8xf32>
      %b = texec.param_ref "b" : tensor<8xf32>
      %h = texec.kernel "linear_bias"(%s, %w, %b) : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
      texec.send %h to 1 : tensor<2x4x8xf32>
      texec.save %ids, %s : tensor<2x4xi32>, tensor<2x4x8xf32>
    } backward {
    ^bb0(%ids: tensor<2x4xi32>, %s: tensor<2x4x8xf32>):
      %d = texec.recv from 1 : tensor<2x4x8xf32>
      %w = texec.param_ref "w" : tensor<8x8xf32>
      %g:3 = texec.kernel "linear_bias_bwd"(%d, %s, %w) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8x8xf32>) -> (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>)
      texec.accumulate_grad "w", %g#1 : tensor<8x8xf32>
      texec.accumulate_grad "b", %g#2 : tensor<8xf32>
      %dw = texec.kernel "embedding_bwd"(%ids, %g#0) config {vocab_axis = "tp"} : (tensor<2x4xi32>, tensor<2x4x8xf32>) -> tensor<8x8xf32>
      texec.accumulate_grad "wte", %dw : tensor<8x8xf32>
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0]
    texec.grad_all_reduce group "tp" params ["b"]
    texec.grad_all_reduce group "pp_0_1" params ["wte"]
    texec.grad_all_reduce group "dp"
    texec.optimizer "adam" group "dp" zero 0 {lr = 1.0e-03 : f64}
  }
  texec.stage 1 {
    texec.param "wte" global [16, 8] split 0 over "tp" init "uniform" : tensor<8x8xf32>
    texec.chunk 0 forward {
      %h = texec.recv from 0 : tensor<2x4x8xf32>
      %w = texec.param_ref "wte" : tensor<8x8xf32>
      %logits = texec.kernel "linear"(%h, %w) : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      %lab = texec.input "labels" : tensor<2x4xi32>
      %loss, %lse = texec.kernel "cross_entropy"(%logits, %lab) config {vocab_axis = "tp"} : (tensor<2x4x8xf32>, tensor<2x4xi32>) -> (tensor<1xf32>, tensor<8xf32>)
      texec.loss %loss : tensor<1xf32>
      texec.save %h, %logits, %lse : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>
    } backward {
    ^bb0(%h: tensor<2x4x8xf32>, %logits: tensor<2x4x8xf32>, %lse: tensor<8xf32>):
      %lab = texec.input "labels" : tensor<2x4xi32>
      %w = texec.param_ref "wte" : tensor<8x8xf32>
      %d = texec.kernel "cross_entropy_bwd"(%logits, %lab, %lse) config {grad_scale = 3.125e-02 : f64, vocab_axis = "tp"} : (tensor<2x4x8xf32>, tensor<2x4xi32>, tensor<8xf32>) -> tensor<2x4x8xf32>
      %g:2 = texec.kernel "linear_bwd"(%d, %h, %w) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8x8xf32>) -> (tensor<2x4x8xf32>, tensor<8x8xf32>)
      texec.accumulate_grad "wte", %g#1 : tensor<8x8xf32>
      %ds = texec.all_reduce %g#0 group "tp" : tensor<2x4x8xf32>
      texec.send %ds to 0 : tensor<2x4x8xf32>
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0]
    texec.grad_all_reduce group "pp_0_1" params ["wte"]
    texec.grad_all_reduce group "dp"
    texec.optimizer "adam" group "dp" zero 0 {lr = 1.0e-03 : f64}
  }
}
