// RUN: trident-opt %s | FileCheck %s
// RUN: trident-opt %s | trident-opt | FileCheck %s

// A two-stage, tp 2 program in miniature: every op of the dialect once.

// CHECK-LABEL: texec.program @mini
// CHECK: texec.group "tp" axes ["tp"]
// CHECK: texec.group "ends" axes ["pp"] members [0, 1]
// CHECK: texec.param "wte" global [16, 8] split 0 over "tp" init "uniform" : tensor<8x8xf32>
// CHECK: texec.param "wte15" global [15, 8] split 0 over "tp" padded init "uniform" : tensor<8x8xf32>
// CHECK: texec.chunk 0 forward
// CHECK: texec.input "tokens" : tensor<2x4xi32>
// CHECK: texec.kernel "embedding"(%{{.*}}, %{{.*}}) config {vocab_axis = "tp"}
// CHECK: texec.all_reduce %{{.*}} group "tp" : tensor<2x4x8xf32>
// CHECK: texec.send %{{.*}} to 1 : tensor<2x4x8xf32>
// CHECK: texec.save %{{.*}} : tensor<2x4xi32>
// CHECK: backward
// CHECK: texec.recv from 1 : tensor<2x4x8xf32>
// CHECK: texec.accumulate_grad "wte", %{{.*}} : tensor<8x8xf32>
// CHECK: texec.end
// CHECK: texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
// CHECK: texec.grad_all_reduce group "ends" params ["wte"]
// CHECK: texec.grad_all_reduce group "dp"
// CHECK: texec.optimizer "adam" group "dp" zero 0
texec.program @mini attributes {dp = 1 : i64, tp = 2 : i64, pp = 2 : i64,
    vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64,
    seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64,
    schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.group "ends" axes ["pp"] members [0, 1]
  texec.stage 0 {
    texec.param "wte" global [16, 8] split 0 over "tp" init "uniform" : tensor<8x8xf32>
    texec.param "wte15" global [15, 8] split 0 over "tp" padded init "uniform" : tensor<8x8xf32>
    texec.chunk 0 forward {
      %ids = texec.input "tokens" : tensor<2x4xi32>
      %w = texec.param_ref "wte" : tensor<8x8xf32>
      %e = texec.kernel "embedding"(%ids, %w) config {vocab_axis = "tp"} : (tensor<2x4xi32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      %s = texec.all_reduce %e group "tp" : tensor<2x4x8xf32>
      texec.send %s to 1 : tensor<2x4x8xf32>
      texec.save %ids : tensor<2x4xi32>
    } backward {
    ^bb0(%ids: tensor<2x4xi32>):
      %dy = texec.recv from 1 : tensor<2x4x8xf32>
      %dw = texec.kernel "embedding_bwd"(%ids, %dy) config {vocab_axis = "tp"} : (tensor<2x4xi32>, tensor<2x4x8xf32>) -> tensor<8x8xf32>
      texec.accumulate_grad "wte", %dw : tensor<8x8xf32>
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    texec.grad_all_reduce group "ends" params ["wte"]
    texec.grad_all_reduce group "dp"
    texec.optimizer "adam" group "dp" zero 0 {lr = 1.0e-03 : f64}
  }
  // CHECK-LABEL: texec.stage 1
  texec.stage 1 {
    texec.param "wte" global [16, 8] split 0 over "tp" init "uniform" : tensor<8x8xf32>
    texec.param "g" global [8] init "ones" : tensor<8xf32>
    texec.chunk 0 forward {
      // CHECK: texec.recv from 0
      %x = texec.recv from 0 : tensor<2x4x8xf32>
      %g = texec.param_ref "g" : tensor<8xf32>
      // CHECK: texec.kernel "rms_norm"
      %y, %r = texec.kernel "rms_norm"(%x, %g) config {eps = 1.0e-05 : f64} : (tensor<2x4x8xf32>, tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<8xf32>)
      // CHECK: texec.all_gather %{{.*}} group "tp" dim 1 : tensor<2x4x8xf32> -> tensor<2x8x8xf32>
      %f = texec.all_gather %y group "tp" dim 1 : tensor<2x4x8xf32> -> tensor<2x8x8xf32>
      // CHECK: texec.reduce_scatter %{{.*}} group "tp" dim 1 : tensor<2x8x8xf32> -> tensor<2x4x8xf32>
      %h = texec.reduce_scatter %f group "tp" dim 1 : tensor<2x8x8xf32> -> tensor<2x4x8xf32>
      // CHECK: texec.all_to_all %{{.*}} group "tp" dim 2 : tensor<2x4x8xf32>
      %a = texec.all_to_all %h group "tp" dim 2 : tensor<2x4x8xf32>
      %w = texec.param_ref "wte" : tensor<8x8xf32>
      %logits = texec.kernel "linear"(%a, %w) : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
      %lab = texec.input "labels" : tensor<2x4xi32>
      %loss, %lse = texec.kernel "cross_entropy"(%logits, %lab) config {vocab_axis = "tp"} : (tensor<2x4x8xf32>, tensor<2x4xi32>) -> (tensor<1xf32>, tensor<8xf32>)
      // A vocabulary of 15 padded to 16 over tp 2: 8 columns per rank.
      // CHECK: texec.kernel "cross_entropy"(%{{.*}}, %{{.*}}) config {vocab = 15 : i64, vocab_axis = "tp"}
      %loss15, %lse15 = texec.kernel "cross_entropy"(%logits, %lab) config {vocab = 15 : i64, vocab_axis = "tp"} : (tensor<2x4x8xf32>, tensor<2x4xi32>) -> (tensor<1xf32>, tensor<8xf32>)
      // CHECK: texec.loss %{{.*}} : tensor<1xf32>
      texec.loss %loss : tensor<1xf32>
      // A per-sample loss: [CLS] rows of the sequence shards, one label per
      // sample, counted seq_len times.
      // CHECK: texec.kernel "select_token"(%{{.*}}) config {index = 5 : i64, seq_axis = "tp"} : (tensor<2x4x8xf32>) -> tensor<2x8xf32>
      %cls = texec.kernel "select_token"(%a) config {index = 5 : i64, seq_axis = "tp"} : (tensor<2x4x8xf32>) -> tensor<2x8xf32>
      %pooled = texec.kernel "tanh"(%cls) : (tensor<2x8xf32>) -> tensor<2x8xf32>
      // CHECK: texec.input "nsp_labels" range 8 : tensor<2xi32>
      %nsp = texec.input "nsp_labels" range 8 : tensor<2xi32>
      // CHECK: texec.input "token_types" range 2 : tensor<2x4xi32>
      %types = texec.input "token_types" range 2 : tensor<2x4xi32>
      %nl, %nlse = texec.kernel "cross_entropy"(%pooled, %nsp) : (tensor<2x8xf32>, tensor<2xi32>) -> (tensor<1xf32>, tensor<2xf32>)
      // CHECK: texec.loss %{{.*}} scale 4.000000e+00 : tensor<1xf32>
      texec.loss %nl scale 4.0 : tensor<1xf32>
      texec.save %logits, %lse : tensor<2x4x8xf32>, tensor<8xf32>
    } backward {
    ^bb0(%logits: tensor<2x4x8xf32>, %lse: tensor<8xf32>):
      %lab = texec.input "labels" : tensor<2x4xi32>
      %d = texec.kernel "cross_entropy_bwd"(%logits, %lab, %lse) config {grad_scale = 3.125e-02 : f64, vocab_axis = "tp"} : (tensor<2x4x8xf32>, tensor<2x4xi32>, tensor<8xf32>) -> tensor<2x4x8xf32>
      texec.send %d to 0 : tensor<2x4x8xf32>
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    texec.optimizer "sgd" group "dp" zero 0 {lr = 1.0e-03 : f64}
  }
}

// Context parallelism: a dp 1 x cp 2 grid. Inputs are seq_len / cp long;
// rope reads positions at the cp offset; keys are gathered over cp for the
// attention, whose probabilities are [b, heads, local, whole]. A program
// without `cp` has cp = 1 and prints none.

// CHECK-LABEL: texec.program @cp
// CHECK-SAME: cp = 2 : i64
// CHECK-SAME: precision = "bf16"
// CHECK: texec.group "dpcp" axes ["dp", "cp"]
// CHECK: texec.param "x" global [1, 4, 8] init "uniform" data "dpcp" : tensor<1x4x8xf32>
// CHECK: texec.input "tokens" : tensor<1x4xi32>
// CHECK: texec.kernel "rope"(%{{.*}}) config {head_dim = 8 : i64, heads = 1 : i64, pos_axis = "cp", rotary_dim = 8 : i64, theta = 1.000000e+04 : f64}
// CHECK: texec.all_gather %{{.*}} group "cp" dim 1 : tensor<1x4x8xf32> -> tensor<1x8x8xf32>
// CHECK: texec.kernel "attention"({{.*}}) config {cp_axis = "cp", head_dim = 8 : i64, heads = 1 : i64, kv_heads = 1 : i64}
// CHECK: texec.optimizer "sgd" group "dpcp" zero 0
// CHECK-LABEL: texec.program @nocp
// CHECK-NOT: cp =
// CHECK-NOT: precision
// CHECK-SAME: {
// (In bf16 mixed precision: docs/texec.md.)
texec.program @cp attributes {dp = 1 : i64, cp = 2 : i64, precision = "bf16", tp = 1 : i64,
    pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64,
    micro_batch_size = 1 : i64, seq_len = 8 : i64, vocab = 16 : i64,
    zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "cp" axes ["cp"]
  texec.group "dpcp" axes ["dp", "cp"]
  texec.stage 0 {
    texec.param "x" global [1, 4, 8] init "uniform" data "dpcp" : tensor<1x4x8xf32>
    texec.chunk 0 forward {
      %ids = texec.input "tokens" : tensor<1x4xi32>
      %x = texec.param_ref "x" : tensor<1x4x8xf32>
      %r = texec.kernel "rope"(%x) config {heads = 1 : i64, head_dim = 8 : i64, rotary_dim = 8 : i64, theta = 1.0e4 : f64, pos_axis = "cp"} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
      %k = texec.all_gather %r group "cp" dim 1 : tensor<1x4x8xf32> -> tensor<1x8x8xf32>
      %o:2 = texec.kernel "attention"(%r, %k, %k) config {cp_axis = "cp", heads = 1 : i64, kv_heads = 1 : i64, head_dim = 8 : i64} : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x1x4x8xf32>)
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    texec.optimizer "sgd" group "dpcp" zero 0 {lr = 1.0e-3 : f64}
  }
}
texec.program @nocp attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64,
    vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 1 : i64,
    seq_len = 8 : i64, vocab = 16 : i64, zero_stage = 0 : i64,
    schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// ViT's stem: float images, patch embedding, class token, learned
// positions (and their backwards).
// CHECK-LABEL: texec.program @vit
texec.program @vit attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64,
    vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64,
    seq_len = 5 : i64, vocab = 1 : i64, zero_stage = 0 : i64,
    schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "w" global [12, 8] init "uniform" : tensor<12x8xf32>
    texec.param "b" global [8] init "zeros" : tensor<8xf32>
    texec.param "cls" global [1, 8] init "uniform" : tensor<1x8xf32>
    texec.param "pos" global [5, 8] init "uniform" : tensor<5x8xf32>
    texec.chunk 0 forward {
      // CHECK: texec.input "images" : tensor<2x3x4x4xf32>
      %img = texec.input "images" : tensor<2x3x4x4xf32>
      %w = texec.param_ref "w" : tensor<12x8xf32>
      %b = texec.param_ref "b" : tensor<8xf32>
      %cls = texec.param_ref "cls" : tensor<1x8xf32>
      %pos = texec.param_ref "pos" : tensor<5x8xf32>
      // CHECK: texec.kernel "patch_embed"
      %t = texec.kernel "patch_embed"(%img, %w, %b) config {patch = 2 : i64} : (tensor<2x3x4x4xf32>, tensor<12x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
      // CHECK: texec.kernel "prepend_token"
      %c = texec.kernel "prepend_token"(%t, %cls) : (tensor<2x4x8xf32>, tensor<1x8xf32>) -> tensor<2x5x8xf32>
      // CHECK: texec.kernel "position_add"
      %y = texec.kernel "position_add"(%c, %pos) : (tensor<2x5x8xf32>, tensor<5x8xf32>) -> tensor<2x5x8xf32>
      %dpos = texec.kernel "position_add_bwd"(%y) : (tensor<2x5x8xf32>) -> tensor<5x8xf32>
      %dt:2 = texec.kernel "prepend_token_bwd"(%y) : (tensor<2x5x8xf32>) -> (tensor<2x4x8xf32>, tensor<1x8xf32>)
      %dw:2 = texec.kernel "patch_embed_bwd"(%dt#0, %img) config {patch = 2 : i64} : (tensor<2x4x8xf32>, tensor<2x3x4x4xf32>) -> (tensor<12x8xf32>, tensor<8xf32>)
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// Expert weights under expert and expert-tensor parallelism: experts split
// over ep, the gated feature columns over tp in two blocks (gate, up).
// CHECK-LABEL: texec.program @experts
// CHECK: texec.param "w_in" global [4, 8, 32] split 0 over "ep" split 2 over "tp" blocks 2 init "uniform" data "edp" : tensor<2x8x16xf32>
// CHECK: texec.param "w_out" global [4, 16, 8] split 0 over "ep" split 1 over "tp" init "uniform" data "edp" : tensor<2x8x8xf32>
// CHECK: texec.param "w_tp" global [8, 32] split 1 over "tp" blocks 2 init "uniform" : tensor<8x16xf32>
texec.program @experts attributes {dp = 2 : i64, ep = 2 : i64, tp = 2 : i64,
    pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64,
    micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64,
    zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "edp" axes ["edp"]
  texec.stage 0 {
    texec.param "w_in" global [4, 8, 32] split 0 over "ep" split 2 over "tp" blocks 2 init "uniform" data "edp" : tensor<2x8x16xf32>
    texec.param "w_out" global [4, 16, 8] split 0 over "ep" split 1 over "tp" init "uniform" data "edp" : tensor<2x8x8xf32>
    texec.param "w_tp" global [8, 32] split 1 over "tp" blocks 2 init "uniform" : tensor<8x16xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}
