// RUN: trident-translate --texec-to-cpp %s | FileCheck %s

// ZeRO-1/2: the parameters' all-gathers after the optimizer step start in
// the order the stage's forwards first read them (gatherOrder), not the
// order they are declared in; each read waits for its parameter
// (awaitParam), which starts the next gathers of that order.

// Declared a, b, c (P[0..2]); the forward reads c, then a, then b.
// CHECK-LABEL: class Stage0 final : public Stage {
// CHECK: P.push_back(Param{"a",
// CHECK-NEXT: P.push_back(Param{"b",
// CHECK-NEXT: P.push_back(Param{"c",
// CHECK: gatherOrder = {2, 0, 1};
// CHECK-LABEL: void forward0(int mb) {
// CHECK: awaitParam(2);
// CHECK-NEXT: rt::Tensor {{v[0-9]+}} = P[2].value;
// CHECK: awaitParam(0);
// CHECK: awaitParam(1);
// CHECK-LABEL: void backward0(int mb) {
// CHECK: awaitParam(1);
texec.program @order attributes {dp = 2 : i64, tp = 1 : i64, pp = 1 : i64,
    vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64,
    seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 1 : i64,
    schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "a" global [8, 8] init "uniform" : tensor<8x8xf32>
    texec.param "b" global [8, 8] init "uniform" : tensor<8x8xf32>
    texec.param "c" global [8, 8] init "uniform" : tensor<8x8xf32>
    texec.chunk 0 forward {
      %x = texec.input "x" : tensor<2x4x8xf32>
      %c = texec.param_ref "c" : tensor<8x8xf32>
      %h = texec.kernel "linear"(%x, %c) : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      %a = texec.param_ref "a" : tensor<8x8xf32>
      %k = texec.kernel "linear"(%h, %a) : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      %b = texec.param_ref "b" : tensor<8x8xf32>
      %y = texec.kernel "linear"(%k, %b) : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      texec.save %k : tensor<2x4x8xf32>
    } backward {
    ^bb0(%k: tensor<2x4x8xf32>):
      %g = texec.input "x" : tensor<2x4x8xf32>
      %b = texec.param_ref "b" : tensor<8x8xf32>
      %r:2 = texec.kernel "linear_bwd"(%g, %k, %b) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8x8xf32>) -> (tensor<2x4x8xf32>, tensor<8x8xf32>)
      texec.accumulate_grad "b", %r#1 : tensor<8x8xf32>
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    texec.optimizer "adam" group "dp" zero 1 {lr = 1.000000e-03 : f64}
  }
}
