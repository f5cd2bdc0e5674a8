// RUN: trident-translate --texec-to-cpp %s | FileCheck %s

// One stage, tp 2, dp 2 with ZeRO-1: each texec op becomes runtime calls.

// CHECK: constexpr int kDp = 2, kCp = 1, kTp = 2, kPp = 1, kEp = 1;
// CHECK: constexpr int kZeroStage = 1;
// CHECK: constexpr double kGlobalTokens = 16;
// CHECK: constexpr bool kOptimizerAdam = true;
// CHECK-LABEL: class Stage0 final : public Stage {
// CHECK: P.push_back(Param{"wte", {16, 8}, {8, 8}, 0, "tp", "uniform", kDataGroup, {}, {}, {}, {}});
// CHECK: P.push_back(Param{"g", {8}, {8}, -1, "", "ones", kDataGroup, {}, {}, {}, {}});
// CHECK-LABEL: void forward0(int mb) {
// CHECK: rt::Tensor v0 = c.tokens(mb);
// CHECK: rt::Tensor v1 = P[0].value;
// CHECK: rt::embeddingForward(v2_2, ids1(v0), v1, rt::Tensor(), 4, 0, c.coord("tp") * 8, c.coord("tp") == 0);
// CHECK: rt::allReduceSum(v3, c.group("tp"));
// CHECK: rt::geluForward(v4_2, act2(v3), false);
// CHECK: rt::vocabParallelCrossEntropyForward(v7, v8, act2(v5), ids1(v6), c.coord("tp") * 8, c.group("tp"));
// CHECK: rt::axpy(c.lossSum, v7);
// CHECK: S0[mb] = {v0, v3, v5, v8};
// CHECK-LABEL: void backward0(int mb) {
// CHECK: rt::Tensor v0 = S0[mb][0];
// CHECK: rt::vocabParallelCrossEntropyBackward(v{{[0-9]+}}_2, act2(v2), ids1(v{{[0-9]+}}), v3, c.coord("tp") * 8, 3.125000e-02f);
// CHECK: rt::geluBackward(
// The table's gradient is accumulated by the kernel into P[0].grad itself.
// CHECK: rt::Tensor [[DW:v[0-9]+]] = P[0].grad; // accumulated in place
// CHECK: rt::embeddingBackward([[DW]], [[DW]]_none, act2(v{{[0-9]+}}), ids1(v0), 4, 0, c.coord("tp") * 8, false);
// CHECK-NOT: rt::axpy(P[0].grad
// CHECK: S0[mb].clear();
// CHECK-LABEL: void step() override {
// CHECK: static const int kActions[][3] = {{[{][{]}}0, 0, 0}, {1, 0, 0}};
// CHECK: rt::waitAllSends();
// CHECK: gradAllReduce({1}, c.group("tp"));
// CHECK: optimizerStep(1);
// CHECK-LABEL: void makeGroups(Context &c) {
// CHECK: c.groups["dp"] = c.grid.group(rt::Axis::DP);
// CHECK: c.groups["tp"] = c.grid.group(rt::Axis::TP);
texec.program @mini attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64,
    vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64,
    seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 1 : i64,
    schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "wte" global [16, 8] split 0 over "tp" init "uniform" : tensor<8x8xf32>
    texec.param "g" global [8] init "ones" : tensor<8xf32>
    texec.chunk 0 forward {
      %ids = texec.input "tokens" : tensor<2x4xi32>
      %w = texec.param_ref "wte" : tensor<8x8xf32>
      %e = texec.kernel "embedding"(%ids, %w) config {vocab_axis = "tp"} : (tensor<2x4xi32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      %s = texec.all_reduce %e group "tp" : tensor<2x4x8xf32>
      %h = texec.kernel "gelu"(%s) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      %logits = texec.kernel "linear"(%h, %w) : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      %lab = texec.input "labels" : tensor<2x4xi32>
      %loss, %lse = texec.kernel "cross_entropy"(%logits, %lab) config {vocab_axis = "tp"} : (tensor<2x4x8xf32>, tensor<2x4xi32>) -> (tensor<1xf32>, tensor<8xf32>)
      texec.loss %loss : tensor<1xf32>
      texec.save %ids, %s, %logits, %lse : tensor<2x4xi32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>
    } backward {
    ^bb0(%ids: tensor<2x4xi32>, %s: tensor<2x4x8xf32>, %logits: tensor<2x4x8xf32>, %lse: tensor<8xf32>):
      %lab = texec.input "labels" : tensor<2x4xi32>
      %d = texec.kernel "cross_entropy_bwd"(%logits, %lab, %lse) config {grad_scale = 3.125e-02 : f64, vocab_axis = "tp"} : (tensor<2x4x8xf32>, tensor<2x4xi32>, tensor<8xf32>) -> tensor<2x4x8xf32>
      %dh = texec.kernel "gelu_bwd"(%d, %s) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      %dw = texec.kernel "embedding_bwd"(%ids, %dh) config {vocab_axis = "tp"} : (tensor<2x4xi32>, tensor<2x4x8xf32>) -> tensor<8x8xf32>
      texec.accumulate_grad "wte", %dw : tensor<8x8xf32>
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    texec.grad_all_reduce group "tp" params ["g"]
    texec.optimizer "adam" group "dp" zero 1 {lr = 1.0e-03 : f64}
  }
}
