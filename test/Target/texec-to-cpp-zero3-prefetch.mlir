// RUN: trident-translate --texec-to-cpp %s | FileCheck %s

// ZeRO-3: each parameter gather of a region starts the next ones (rt::
// zero3GatherAsync, up to two matrices ahead: texec-to-cpp-zero3-window)
// so that their all-gathers run while the current parameter is used, and
// waits for its own where the parameter is needed. A send or receive
// between two gathers stops the chain: the gather after it is issued in
// place, so no collective moves past a pipeline transfer.

// Stage 0's forward: w1 gathered in place, w2 started there, waited for
// at its use; the send comes next, so w3 (after it) is gathered in place.
// CHECK-LABEL: class Stage0 final : public Stage {
// CHECK-LABEL: void forward0(int mb) {
// CHECK: rt::zero3Gather([[W1:v[0-9]+]], P[0].value, c.group("dp"));
// CHECK-NEXT: rt::Tensor [[W2:v[0-9]+]]({8, 8});
// CHECK-NEXT: rt::Pending [[W2]]_gather = rt::zero3GatherAsync([[W2]], P[1].value, c.group("dp")); // ahead, while this parameter is used
// CHECK: rt::linearForward({{.*}}, act2({{v[0-9]+}}), [[W1]], rt::Tensor());
// CHECK: [[W2]]_gather.wait();
// CHECK: rt::linearForward({{.*}}, [[W2]], rt::Tensor());
// CHECK-NOT: zero3GatherAsync
// CHECK: rt::sendAsync(
// CHECK: rt::zero3Gather({{v[0-9]+}}, P[2].value, c.group("dp"));
// The backward: after its receive, w2 in place, w1 and w3 both started
// there (two matrices ahead).
// CHECK-LABEL: void backward0(int mb) {
// CHECK: rt::recv(
// CHECK: rt::zero3Gather([[B2:v[0-9]+]], P[1].value, c.group("dp"));
// CHECK: rt::Pending [[B1:v[0-9]+]]_gather = rt::zero3GatherAsync([[B1]], P[0].value, c.group("dp"));
// CHECK: rt::Pending [[B3:v[0-9]+]]_gather = rt::zero3GatherAsync([[B3]], P[2].value, c.group("dp"));
// CHECK-NOT: zero3GatherAsync
// CHECK: rt::linearBackward({{.*}}, [[B2]]);
// CHECK: [[B1]]_gather.wait();
// CHECK: rt::linearBackward({{.*}}, [[B1]]);
// CHECK: [[B3]]_gather.wait();
texec.program @prefetch attributes {dp = 2 : i64, tp = 1 : i64, pp = 2 : i64,
    vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64,
    seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 3 : i64,
    schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w1" global [8, 8] init "uniform" : tensor<8x8xf32>
    texec.param "w2" global [8, 8] init "uniform" : tensor<8x8xf32>
    texec.param "w3" global [8, 8] init "uniform" : tensor<8x8xf32>
    texec.chunk 0 forward {
      %x = texec.input "x" : tensor<2x4x8xf32>
      %w1 = texec.param_gather "w1" group "dp" : tensor<8x8xf32>
      %h = texec.kernel "linear"(%x, %w1) : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      %w2 = texec.param_gather "w2" group "dp" : tensor<8x8xf32>
      %y = texec.kernel "linear"(%h, %w2) : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      texec.send %y to 1 : tensor<2x4x8xf32>
      %w3 = texec.param_gather "w3" group "dp" : tensor<8x8xf32>
      %z = texec.kernel "linear"(%x, %w3) : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      texec.save %x, %h, %z : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
    } backward {
    ^bb0(%x: tensor<2x4x8xf32>, %h: tensor<2x4x8xf32>, %z: tensor<2x4x8xf32>):
      %g = texec.recv from 1 : tensor<2x4x8xf32>
      %w2 = texec.param_gather "w2" group "dp" : tensor<8x8xf32>
      %r:2 = texec.kernel "linear_bwd"(%g, %h, %w2) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8x8xf32>) -> (tensor<2x4x8xf32>, tensor<8x8xf32>)
      texec.accumulate_grad "w2", %r#1 : tensor<8x8xf32>
      %w1 = texec.param_gather "w1" group "dp" : tensor<8x8xf32>
      %s:2 = texec.kernel "linear_bwd"(%r#0, %x, %w1) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8x8xf32>) -> (tensor<2x4x8xf32>, tensor<8x8xf32>)
      texec.accumulate_grad "w1", %s#1 : tensor<8x8xf32>
      %w3 = texec.param_gather "w3" group "dp" : tensor<8x8xf32>
      %t:2 = texec.kernel "linear_bwd"(%z, %x, %w3) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8x8xf32>) -> (tensor<2x4x8xf32>, tensor<8x8xf32>)
      texec.accumulate_grad "w3", %t#1 : tensor<8x8xf32>
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    texec.optimizer "adam" group "dp" zero 3 {lr = 1.000000e-03 : f64}
  }
  texec.stage 1 {
    texec.param "v" global [8, 8] init "uniform" : tensor<8x8xf32>
    texec.chunk 0 forward {
      %a = texec.recv from 0 : tensor<2x4x8xf32>
      %v = texec.param_gather "v" group "dp" : tensor<8x8xf32>
      %y = texec.kernel "linear"(%a, %v) : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      texec.save %a : tensor<2x4x8xf32>
    } backward {
    ^bb0(%a: tensor<2x4x8xf32>):
      %g = texec.input "x" : tensor<2x4x8xf32>
      %v = texec.param_gather "v" group "dp" : tensor<8x8xf32>
      %r:2 = texec.kernel "linear_bwd"(%g, %a, %v) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8x8xf32>) -> (tensor<2x4x8xf32>, tensor<8x8xf32>)
      texec.accumulate_grad "v", %r#1 : tensor<8x8xf32>
      texec.send %r#0 to 0 : tensor<2x4x8xf32>
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    texec.optimizer "adam" group "dp" zero 3 {lr = 1.000000e-03 : f64}
  }
}
