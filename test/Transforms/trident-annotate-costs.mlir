// RUN: trident-opt %s --pass-pipeline='builtin.module(tgraph.model(trident-annotate-costs{batch=2 seq-len=8}))' | FileCheck %s
// RUN: trident-opt %s --pass-pipeline='builtin.module(tgraph.model(trident-annotate-costs{batch=1}))' | FileCheck %s --check-prefix=DEFAULT
// RUN: not trident-opt %s --pass-pipeline='builtin.module(tgraph.model(trident-annotate-costs{batch=0}))' 2>&1 | FileCheck %s --check-prefix=BAD

// Hand-computed for micro-batch 2, sequence 8 (16 tokens), fp32:
//   linear 64 -> 128: fwd 2*16*128*64 = 262144, bwd twice that; reads x
//   (16*64*4 = 4096 B) and W (128*64*4 = 32768 B), writes 16*128*4 = 8192 B;
//   keeps x (4096 B) unless fully recomputed.
//   attention, 4 heads of 16 over 8 keys: QK^T and PV are 2*2*4*8*8*16 =
//   16384 FLOPs each; keeps its input (one tensor as q, k and v: 16*64*4 =
//   4096 B) and the softmax output (2*4*8*8*4 = 2048 B), which selective
//   recompute drops.
//   The layer: 262144 + 262144 + 32768 = 557056 forward FLOPs; kept
//   4096 + 8192 + 6144 = 18432 B; full recompute keeps its input, 4096 B.
//   With the 64 -> 8 head (16384 FLOPs): 573440 / 16 tokens = 35840
//   FLOPs per token forward, 107520 for training.

// CHECK-LABEL: tgraph.model @costs
// CHECK-SAME: tgraph.flops_per_token = {forward = 35840 : i64, train = 107520 : i64}
tgraph.model @costs attributes {seq_len = 32 : i64} {
  %x = tgraph.input "x" : tensor<?x?x64xf32>
  %labels = tgraph.input "labels" : tensor<?x?xi32>
  // CHECK: tgraph.repeat
  // CHECK-SAME: fwd_flops = 557056 : i64
  // CHECK-SAME: saved_full = 4096 : i64, saved_none = 18432 : i64, saved_selective = 16384 : i64
  %h = tgraph.repeat "layers" x 1 (%x) : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  ^bb0(%a: tensor<?x?x64xf32>):
    %w = tgraph.param "w" <mlp> : tensor<128x64xf32>
    // CHECK: tgraph.linear
    // CHECK-SAME: tgraph.cost = {bwd_flops = 524288 : i64, bytes_read = 36864 : i64, bytes_written = 8192 : i64, fwd_flops = 262144 : i64, params = 8192 : i64, saved_full = 0 : i64, saved_none = 4096 : i64, saved_selective = 4096 : i64}
    %y = tgraph.linear %a, %w : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
    %w2 = tgraph.param "w2" <mlp> : tensor<64x128xf32>
    %z = tgraph.linear %y, %w2 : (tensor<?x?x128xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32>
    // CHECK: tgraph.attention
    // CHECK-SAME: fwd_flops = 32768 : i64
    // CHECK-SAME: saved_none = 6144 : i64, saved_selective = 4096 : i64
    %o = tgraph.attention %z, %z, %z {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 16 : i64, causal} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    tgraph.yield %o : tensor<?x?x64xf32>
  }
  %wh = tgraph.param "head" <head> : tensor<8x64xf32>
  %logits = tgraph.linear %h, %wh : (tensor<?x?x64xf32>, tensor<8x64xf32>) -> tensor<?x?x8xf32>
  %loss = tgraph.cross_entropy %logits, %labels : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// The model's own seq_len (32) when the option is absent.
// DEFAULT: tgraph.model @costs
// DEFAULT-SAME: seq_len = 32

// BAD: error: trident-annotate-costs: batch must be positive, got 0
