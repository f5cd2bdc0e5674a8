// RUN: trident-opt %s | FileCheck %s
// RUN: trident-opt %s | trident-opt | FileCheck %s
// RUN: trident-opt %s --mlir-print-op-generic | trident-opt | FileCheck %s

// CHECK-LABEL: tgraph.model @decoder
// CHECK-SAME: seq_len = 32
tgraph.model @decoder attributes {seq_len = 32 : i64} {
  // CHECK: %[[IDS:.*]] = tgraph.input "tokens" : tensor<?x?xi32>
  %ids = tgraph.input "tokens" : tensor<?x?xi32>
  %labels = tgraph.input "labels" : tensor<?x?xi32>
  // CHECK: %[[WTE:.*]] = tgraph.param "wte" <embedding> : tensor<256x64xf32>
  %wte = tgraph.param "wte" <embedding> : tensor<256x64xf32>
  %wpe = tgraph.param "wpe" <embedding> : tensor<32x64xf32>
  // CHECK: tgraph.embedding %[[IDS]], %[[WTE]]
  %e = tgraph.embedding %ids, %wte : (tensor<?x?xi32>, tensor<256x64xf32>) -> tensor<?x?x64xf32>
  // CHECK: tgraph.position_embedding
  %x = tgraph.position_embedding %e, %wpe : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x64xf32>
  // CHECK: tgraph.dropout %{{.*}} {rate = 1.000000e-01 : f64}
  %xd = tgraph.dropout %x {rate = 0.1 : f64} : tensor<?x?x64xf32>
  // CHECK: tgraph.repeat "layers" x 4
  %h = tgraph.repeat "layers" x 4 (%xd) : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  ^bb0(%a: tensor<?x?x64xf32>):
    %g = tgraph.param "ln1.g" <norm> : tensor<64xf32>
    %bt = tgraph.param "ln1.b" <norm> : tensor<64xf32>
    // CHECK: tgraph.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {zero_centered}
    %n = tgraph.layer_norm %a, %g, %bt {zero_centered} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %wq = tgraph.param "q" <attention> : tensor<64x64xf32>
    %bq = tgraph.param "q.b" <attention> : tensor<64xf32>
    %wk = tgraph.param "k" <attention> : tensor<16x64xf32>
    %wv = tgraph.param "v" <attention> : tensor<16x64xf32>
    // CHECK: tgraph.linear %{{.*}}, %{{.*}}, %{{.*}} tp <column>
    %q = tgraph.linear %n, %wq, %bq tp <column> : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %k = tgraph.linear %n, %wk tp <column> : (tensor<?x?x64xf32>, tensor<16x64xf32>) -> tensor<?x?x16xf32>
    %v = tgraph.linear %n, %wv tp <column> : (tensor<?x?x64xf32>, tensor<16x64xf32>) -> tensor<?x?x16xf32>
    %qg = tgraph.param "qn" <norm> : tensor<16xf32>
    // CHECK: tgraph.rms_norm
    %qn = tgraph.rms_norm %q, %qg : (tensor<?x?x64xf32>, tensor<16xf32>) -> tensor<?x?x64xf32>
    %sinks = tgraph.param "sinks" <attention> : tensor<4xf32>
    // CHECK: tgraph.attention %{{.*}}, %{{.*}}, %{{.*}} sinks %{{.*}} {causal, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 1 : i64, rotary_dim = 8 : i64, window = 8 : i64}
    %o = tgraph.attention %qn, %k, %v sinks %sinks {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 16 : i64, causal, window = 8 : i64, rotary_dim = 8 : i64} : (tensor<?x?x64xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<4xf32>) -> tensor<?x?x64xf32>
    %wo = tgraph.param "o" <attention> : tensor<64x64xf32>
    // CHECK: tp <row>
    %p = tgraph.linear %o, %wo tp <row> : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    // CHECK: tgraph.add
    %r = tgraph.add %a, %p : tensor<?x?x64xf32>
    %wg = tgraph.param "gate" <mlp> : tensor<128x64xf32>
    %wu = tgraph.param "up" <mlp> : tensor<128x64xf32>
    %wd = tgraph.param "down" <mlp> : tensor<64x128xf32>
    %gt = tgraph.linear %r, %wg tp <column> : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
    %up = tgraph.linear %r, %wu tp <column> : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
    // CHECK: tgraph.swiglu
    %sw = tgraph.swiglu %gt, %up : tensor<?x?x128xf32>
    // CHECK: tgraph.geglu
    %gg = tgraph.geglu %gt, %up : tensor<?x?x128xf32>
    // CHECK: tgraph.mul
    %mm = tgraph.mul %sw, %gg : tensor<?x?x128xf32>
    // CHECK: tgraph.gelu %{{.*}} {approximate}
    %ge = tgraph.gelu %mm {approximate} : tensor<?x?x128xf32>
    // CHECK: tgraph.silu
    %si = tgraph.silu %ge : tensor<?x?x128xf32>
    // CHECK: tgraph.relu
    %re = tgraph.relu %si : tensor<?x?x128xf32>
    // CHECK: tgraph.squared_relu
    %sq = tgraph.squared_relu %re : tensor<?x?x128xf32>
    // CHECK: tgraph.tanh
    %th = tgraph.tanh %sq : tensor<?x?x128xf32>
    %dn = tgraph.linear %th, %wd tp <row> : (tensor<?x?x128xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32>
    %y = tgraph.add %r, %dn : tensor<?x?x64xf32>
    // CHECK: tgraph.yield %{{.*}} : tensor<?x?x64xf32>
    tgraph.yield %y : tensor<?x?x64xf32>
  }
  %rt = tgraph.param "router" <router> : tensor<64x8xf32>
  %rb = tgraph.param "router.b" <router> : tensor<8xf32>
  %wi = tgraph.param "w_in" <expert> : tensor<8x64x256xf32>
  %wo2 = tgraph.param "w_out" <expert> : tensor<8x128x64xf32>
  %bi = tgraph.param "b_in" <expert> : tensor<8x256xf32>
  %bo = tgraph.param "b_out" <expert> : tensor<8x64xf32>
  // CHECK: tgraph.moe %{{.*}} router %{{.*}} bias %{{.*}} experts(%{{.*}}, %{{.*}}) expert_bias(%{{.*}}, %{{.*}}) {activation = #tgraph.act<silu>, gated, num_experts = 8 : i64, top_k = 2 : i64}
  %m = tgraph.moe %h router %rt bias %rb experts(%wi, %wo2) expert_bias(%bi, %bo) {num_experts = 8 : i64, top_k = 2 : i64, activation = #tgraph.act<silu>, gated} : (tensor<?x?x64xf32>, tensor<64x8xf32>, tensor<8xf32>, tensor<8x64x256xf32>, tensor<8x128x64xf32>, tensor<8x256xf32>, tensor<8x64xf32>) -> tensor<?x?x64xf32>
  // CHECK: tgraph.linear %{{.*}}, %[[WTE]] tp <vocab>
  %logits = tgraph.linear %m, %wte tp <vocab> : (tensor<?x?x64xf32>, tensor<256x64xf32>) -> tensor<?x?x256xf32>
  // CHECK: tgraph.softmax
  %sm = tgraph.softmax %logits : tensor<?x?x256xf32>
  // CHECK: tgraph.cross_entropy
  %loss = tgraph.cross_entropy %sm, %labels : (tensor<?x?x256xf32>, tensor<?x?xi32>) -> tensor<f32>
  // CHECK: tgraph.output %{{.*}} : tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// CHECK-LABEL: tgraph.model @mla
tgraph.model @mla attributes {seq_len = 16 : i64} {
  %ids = tgraph.input "tokens" : tensor<?x?xi32>
  %labels = tgraph.input "labels" : tensor<?x?xi32>
  %wte = tgraph.param "wte" <embedding> : tensor<64x32xbf16>
  %x = tgraph.embedding %ids, %wte : (tensor<?x?xi32>, tensor<64x32xbf16>) -> tensor<?x?x32xbf16>
  %wq = tgraph.param "q" <attention> : tensor<24x32xbf16>
  %wk = tgraph.param "k" <attention> : tensor<16x32xbf16>
  %wr = tgraph.param "kr" <attention> : tensor<2x32xbf16>
  %wv = tgraph.param "v" <attention> : tensor<16x32xbf16>
  %q = tgraph.linear %x, %wq : (tensor<?x?x32xbf16>, tensor<24x32xbf16>) -> tensor<?x?x24xbf16>
  %k = tgraph.linear %x, %wk : (tensor<?x?x32xbf16>, tensor<16x32xbf16>) -> tensor<?x?x16xbf16>
  %kr = tgraph.linear %x, %wr : (tensor<?x?x32xbf16>, tensor<2x32xbf16>) -> tensor<?x?x2xbf16>
  %v = tgraph.linear %x, %wv : (tensor<?x?x32xbf16>, tensor<16x32xbf16>) -> tensor<?x?x16xbf16>
  // CHECK: tgraph.attention %{{.*}}, %{{.*}}, %{{.*}} rope_key %{{.*}} {head_dim = 6 : i64, num_heads = 4 : i64, num_kv_heads = 4 : i64, rotary_dim = 2 : i64, softmax_scale = 5.000000e-01 : f64, v_head_dim = 4 : i64}
  %o = tgraph.attention %q, %k, %v rope_key %kr {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 6 : i64, v_head_dim = 4 : i64, rotary_dim = 2 : i64, softmax_scale = 0.5 : f64} : (tensor<?x?x24xbf16>, tensor<?x?x16xbf16>, tensor<?x?x16xbf16>, tensor<?x?x2xbf16>) -> tensor<?x?x16xbf16>
  %wh = tgraph.param "head" <head> : tensor<64x16xbf16>
  %logits = tgraph.linear %o, %wh tp <vocab> : (tensor<?x?x16xbf16>, tensor<64x16xbf16>) -> tensor<?x?x64xbf16>
  %loss = tgraph.cross_entropy %logits, %labels : (tensor<?x?x64xbf16>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// CHECK-LABEL: tgraph.model @vision
tgraph.model @vision attributes {seq_len = 5 : i64} {
  %img = tgraph.input "images" : tensor<?x3x8x8xf16>
  %labels = tgraph.input "labels" : tensor<?xi32>
  %w = tgraph.param "patch" <embedding> : tensor<48x16xf16>
  %b = tgraph.param "patch.b" <embedding> : tensor<16xf16>
  // CHECK: tgraph.patch_embed %{{.*}}, %{{.*}}, %{{.*}} {patch = 4 : i64}
  %t = tgraph.patch_embed %img, %w, %b {patch = 4 : i64} : (tensor<?x3x8x8xf16>, tensor<48x16xf16>, tensor<16xf16>) -> tensor<?x4x16xf16>
  %cls = tgraph.param "cls" <embedding> : tensor<1x16xf16>
  // CHECK: tgraph.prepend_token
  %x = tgraph.prepend_token %t, %cls : (tensor<?x4x16xf16>, tensor<1x16xf16>) -> tensor<?x5x16xf16>
  // CHECK: tgraph.select_token %{{.*}} {index = 0 : i64}
  %c = tgraph.select_token %x {index = 0 : i64} : tensor<?x5x16xf16> -> tensor<?x16xf16>
  %wc = tgraph.param "cls.w" <head> : tensor<10x16xf16>
  %logits = tgraph.linear %c, %wc : (tensor<?x16xf16>, tensor<10x16xf16>) -> tensor<?x10xf16>
  %loss = tgraph.cross_entropy %logits, %labels : (tensor<?x10xf16>, tensor<?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// CHECK-LABEL: tgraph.model @recsys
tgraph.model @recsys attributes {seq_len = 1 : i64} {
  %d = tgraph.input "dense" : tensor<?x4xf32>
  %img = tgraph.input "img" : tensor<?x3x8x8xf32>
  %ids = tgraph.input "sparse" : tensor<?x2xi64>
  %labels = tgraph.input "labels" : tensor<?x1xf32>
  %wconv = tgraph.param "conv" <other> : tensor<4x3x3x3xf32>
  // CHECK: tgraph.conv2d %{{.*}}, %{{.*}} {padding = array<i64: 1, 1>, strides = array<i64: 2, 2>}
  %cv = tgraph.conv2d %img, %wconv {strides = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x4x4xf32>
  %tab = tgraph.param "table" <embedding> : tensor<100x4xf32>
  %tab2 = tgraph.param "tok" <other> : tensor<1x4xf32>
  %e3 = tgraph.input "seq3" : tensor<?x3x4xf32>
  %eT = tgraph.input "seq4" : tensor<?x4x4xf32>
  // CHECK: tgraph.embedding_bag %{{.*}}, %{{.*}} {mean}
  %e = tgraph.embedding_bag %ids, %tab {mean} : (tensor<?x2xi64>, tensor<100x4xf32>) -> tensor<?x4xf32>
  %ei = tgraph.prepend_token %e3, %tab2 : (tensor<?x3x4xf32>, tensor<1x4xf32>) -> tensor<?x4x4xf32>
  // CHECK: tgraph.matmul
  %mm = tgraph.matmul %ei, %eT : (tensor<?x4x4xf32>, tensor<?x4x4xf32>) -> tensor<?x4x4xf32>
  // CHECK: tgraph.dot_interaction
  %z = tgraph.dot_interaction %d, %e : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x5xf32>
  %wt = tgraph.param "top" <other> : tensor<1x5xf32>
  %o = tgraph.linear %z, %wt : (tensor<?x5xf32>, tensor<1x5xf32>) -> tensor<?x1xf32>
  // CHECK: tgraph.binary_cross_entropy
  %loss = tgraph.binary_cross_entropy %o, %labels : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// The plan a model carries: the axes under the axis table's keys; the
// optional parameters may be left out.
// CHECK-LABEL: tgraph.model @planned
// CHECK-SAME: tgraph.plan = #tgraph.plan<model = "planned", seq_len = 8, gpus = 4, global_batch = 4, num_micro_batches = 2, axes = {dp = 2 : i64, tp = 2 : i64}, layers_per_chunk = [1], stage_recompute = ["full"], model_shape = [1, 16, 0, 32], predicted = {mfu = 5.000000e-01 : f64}>
tgraph.model @planned attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "planned", seq_len = 8, gpus = 4, precision = "bf16", runtime = "megatron-core", global_batch = 4, num_micro_batches = 2, axes = {dp = 2 : i64, tp = 2 : i64}, layers_per_chunk = [1], stage_recompute = ["full"], model_shape = [1, 16, 0, 32], predicted = {mfu = 5.000000e-01 : f64}>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %x, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}
