// RUN: trident-translate --texec-to-cpp %s | FileCheck %s

// ZeRO-3: a run of gathers keeps the all-gathers of up to two matrices
// running ahead of the parameter in use; 1-D parameters (biases, norm
// weights) start along with them without counting, so a bias between two
// weights does not leave the second weight's gather to start late.

// At w1 (gathered in place, the region's first): b1, w2, b2 and w3 start
// (two matrices ahead: w2, w3; the biases along). At w2: w4 starts (w3 and
// w4 ahead). At w3 and w4 nothing is left to start.
// CHECK-LABEL: void forward0(int mb) {
// CHECK: rt::zero3Gather([[W1:v[0-9]+]], P[0].value, c.group("dp"));
// CHECK-NEXT: rt::Tensor [[B1:v[0-9]+]]({8});
// CHECK-NEXT: rt::Pending [[B1]]_gather = rt::zero3GatherAsync([[B1]], P[1].value, c.group("dp")); // ahead, while this parameter is used
// CHECK-NEXT: rt::Tensor [[W2:v[0-9]+]]({8, 8});
// CHECK-NEXT: rt::Pending [[W2]]_gather = rt::zero3GatherAsync([[W2]], P[2].value, c.group("dp"));
// CHECK-NEXT: rt::Tensor [[B2:v[0-9]+]]({8});
// CHECK-NEXT: rt::Pending [[B2]]_gather = rt::zero3GatherAsync([[B2]], P[3].value, c.group("dp"));
// CHECK-NEXT: rt::Tensor [[W3:v[0-9]+]]({8, 8});
// CHECK-NEXT: rt::Pending [[W3]]_gather = rt::zero3GatherAsync([[W3]], P[4].value, c.group("dp"));
// CHECK-NOT: zero3GatherAsync
// CHECK: [[B1]]_gather.wait();
// CHECK-NOT: zero3GatherAsync
// CHECK: rt::linearForward({{.*}}, [[W1]], [[B1]]);
// CHECK-NOT: zero3GatherAsync
// CHECK: [[W2]]_gather.wait();
// CHECK-NEXT: rt::Tensor [[W4:v[0-9]+]]({8, 8});
// CHECK-NEXT: rt::Pending [[W4]]_gather = rt::zero3GatherAsync([[W4]], P[5].value, c.group("dp"));
// CHECK-NOT: zero3GatherAsync
// CHECK: [[B2]]_gather.wait();
// CHECK: rt::linearForward({{.*}}, [[W2]], [[B2]]);
// CHECK: [[W3]]_gather.wait();
// CHECK: rt::linearForward({{.*}}, [[W3]], rt::Tensor());
// CHECK: [[W4]]_gather.wait();
// CHECK: rt::linearForward({{.*}}, [[W4]], rt::Tensor());
// CHECK-NOT: zero3Gather
// The backward: w4 in place, w3 and w2 started there; w1 at w3.
// CHECK-LABEL: void backward0(int mb) {
// CHECK: rt::zero3Gather([[V4:v[0-9]+]], P[5].value, c.group("dp"));
// CHECK: rt::Pending [[V3:v[0-9]+]]_gather = rt::zero3GatherAsync([[V3]], P[4].value, c.group("dp"));
// CHECK: rt::Pending [[V2:v[0-9]+]]_gather = rt::zero3GatherAsync([[V2]], P[2].value, c.group("dp"));
// CHECK-NOT: zero3GatherAsync
// CHECK: rt::linearBackward({{.*}}, [[V4]]);
// CHECK: [[V3]]_gather.wait();
// CHECK-NEXT: rt::Tensor [[V1:v[0-9]+]]({8, 8});
// CHECK-NEXT: rt::Pending [[V1]]_gather = rt::zero3GatherAsync([[V1]], P[0].value, c.group("dp"));
// CHECK: [[V2]]_gather.wait();
// CHECK: [[V1]]_gather.wait();
// CHECK-NOT: zero3Gather
texec.program @window attributes {dp = 2 : i64, tp = 1 : i64, pp = 1 : i64,
    vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64,
    seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 3 : i64,
    schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w1" global [8, 8] init "uniform" : tensor<8x8xf32>
    texec.param "b1" global [8] init "zeros" : tensor<8xf32>
    texec.param "w2" global [8, 8] init "uniform" : tensor<8x8xf32>
    texec.param "b2" global [8] init "zeros" : tensor<8xf32>
    texec.param "w3" global [8, 8] init "uniform" : tensor<8x8xf32>
    texec.param "w4" global [8, 8] init "uniform" : tensor<8x8xf32>
    texec.chunk 0 forward {
      %x = texec.input "x" : tensor<2x4x8xf32>
      %w1 = texec.param_gather "w1" group "dp" : tensor<8x8xf32>
      %b1 = texec.param_gather "b1" group "dp" : tensor<8xf32>
      %h1 = texec.kernel "linear_bias"(%x, %w1, %b1) : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
      %w2 = texec.param_gather "w2" group "dp" : tensor<8x8xf32>
      %b2 = texec.param_gather "b2" group "dp" : tensor<8xf32>
      %h2 = texec.kernel "linear_bias"(%h1, %w2, %b2) : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
      %w3 = texec.param_gather "w3" group "dp" : tensor<8x8xf32>
      %h3 = texec.kernel "linear"(%h2, %w3) : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      %w4 = texec.param_gather "w4" group "dp" : tensor<8x8xf32>
      %h4 = texec.kernel "linear"(%h3, %w4) : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      texec.save %x, %h1, %h2, %h3 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
    } backward {
    ^bb0(%x: tensor<2x4x8xf32>, %h1: tensor<2x4x8xf32>, %h2: tensor<2x4x8xf32>, %h3: tensor<2x4x8xf32>):
      %g = texec.input "x" : tensor<2x4x8xf32>
      %w4 = texec.param_gather "w4" group "dp" : tensor<8x8xf32>
      %r4:2 = texec.kernel "linear_bwd"(%g, %h3, %w4) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8x8xf32>) -> (tensor<2x4x8xf32>, tensor<8x8xf32>)
      texec.accumulate_grad "w4", %r4#1 : tensor<8x8xf32>
      %w3 = texec.param_gather "w3" group "dp" : tensor<8x8xf32>
      %r3:2 = texec.kernel "linear_bwd"(%r4#0, %h2, %w3) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8x8xf32>) -> (tensor<2x4x8xf32>, tensor<8x8xf32>)
      texec.accumulate_grad "w3", %r3#1 : tensor<8x8xf32>
      %w2 = texec.param_gather "w2" group "dp" : tensor<8x8xf32>
      %r2:3 = texec.kernel "linear_bias_bwd"(%r3#0, %h1, %w2) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8x8xf32>) -> (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>)
      texec.accumulate_grad "w2", %r2#1 : tensor<8x8xf32>
      texec.accumulate_grad "b2", %r2#2 : tensor<8xf32>
      %w1 = texec.param_gather "w1" group "dp" : tensor<8x8xf32>
      %r1:3 = texec.kernel "linear_bias_bwd"(%r2#0, %x, %w1) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8x8xf32>) -> (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>)
      texec.accumulate_grad "w1", %r1#1 : tensor<8x8xf32>
      texec.accumulate_grad "b1", %r1#2 : tensor<8xf32>
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    texec.optimizer "adam" group "dp" zero 3 {lr = 1.000000e-03 : f64}
  }
}
