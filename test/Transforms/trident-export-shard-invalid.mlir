// RUN: trident-opt %s -split-input-file -verify-diagnostics --trident-export-shard

// No plan attached.
// expected-error@+1 {{trident-export-shard: model @m has no tgraph.plan attribute: attach a plan with trident-plan or trident-apply-plan first}}
tgraph.model @m attributes {seq_len = 8 : i64} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %h = tgraph.repeat "layers" x 2 (%x) : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  ^bb0(%a: tensor<?x?x16xf32>):
    %r = tgraph.add %a, %a : tensor<?x?x16xf32>
    tgraph.yield %r : tensor<?x?x16xf32>
  }
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %h, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// -----

// A plan for another number of layers.
// expected-error@+1 {{trident-export-shard: tgraph.plan: the plan splits 3 layers into stages but model @m has 2: the plan was made for another model}}
tgraph.model @m attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "m", seq_len = 8, global_batch = 1, num_micro_batches = 1, axes = {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, cp = 1 : i64, vpp = 1 : i64, micro_batch_size = 1 : i64, sequence_parallel = false}, layers_per_chunk = [3]>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %h = tgraph.repeat "layers" x 2 (%x) : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  ^bb0(%a: tensor<?x?x16xf32>):
    %r = tgraph.add %a, %a : tensor<?x?x16xf32>
    tgraph.yield %r : tensor<?x?x16xf32>
  }
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %h, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// -----

// layers_per_chunk must have pp x vpp entries.
// expected-error@+1 {{trident-export-shard: tgraph.plan: layers_per_chunk has 1 entries, expected pp * vpp = 2}}
tgraph.model @m attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "m", seq_len = 8, global_batch = 1, num_micro_batches = 1, axes = {dp = 1 : i64, tp = 1 : i64, pp = 2 : i64, cp = 1 : i64, vpp = 1 : i64, micro_batch_size = 1 : i64, sequence_parallel = false}, layers_per_chunk = [2]>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %x, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// -----

// tp = 3 does not divide the 64 MLP features.
tgraph.model @m attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "m", seq_len = 8, global_batch = 1, num_micro_batches = 1, axes = {dp = 1 : i64, tp = 3 : i64, pp = 1 : i64, cp = 1 : i64, vpp = 1 : i64, micro_batch_size = 1 : i64, sequence_parallel = false}, layers_per_chunk = [1]>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %h = tgraph.repeat "layers" x 1 (%x) : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  ^bb0(%a: tensor<?x?x16xf32>):
    %w = tgraph.param "fc1" <mlp> : tensor<64x16xf32>
    // expected-error@+1 {{trident-export-shard: dimension 0 of 'fc1' ('tensor<64x16xf32>') has size 64, not divisible by tp = 3}}
    %u = tgraph.linear %a, %w tp <column> : (tensor<?x?x16xf32>, tensor<64x16xf32>) -> tensor<?x?x64xf32>
    %w2 = tgraph.param "fc2" <mlp> : tensor<16x64xf32>
    %d = tgraph.linear %u, %w2 tp <row> : (tensor<?x?x64xf32>, tensor<16x64xf32>) -> tensor<?x?x16xf32>
    tgraph.yield %d : tensor<?x?x16xf32>
  }
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %h, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// -----

// dp = 2 does not divide a batch of 3 (checked by the second RUN line; the
// default batch, dp x micro-batch, is fine).
// RUN: not trident-opt %s -split-input-file --trident-export-shard=batch=3 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: error: trident-export-shard: batch 3 is not divisible by dp = 2
tgraph.model @m attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "m", seq_len = 8, global_batch = 2, num_micro_batches = 1, axes = {dp = 2 : i64, tp = 1 : i64, pp = 1 : i64, cp = 1 : i64, vpp = 1 : i64, micro_batch_size = 1 : i64, sequence_parallel = false}, layers_per_chunk = [1]>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %h = tgraph.repeat "layers" x 1 (%x) : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  ^bb0(%a: tensor<?x?x16xf32>):
    tgraph.yield %a : tensor<?x?x16xf32>
  }
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %h, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// -----

// An op with no export is named.
tgraph.model @m attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "m", seq_len = 8, global_batch = 1, num_micro_batches = 1, axes = {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, cp = 1 : i64, vpp = 1 : i64, micro_batch_size = 1 : i64, sequence_parallel = false}, layers_per_chunk = [1]>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %h = tgraph.repeat "layers" x 1 (%x) : (tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  ^bb0(%a: tensor<?x?x16xf32>):
    tgraph.yield %a : tensor<?x?x16xf32>
  }
  // expected-error@+1 {{trident-export-shard: 'tgraph.select_token' has no shard export}}
  %c = tgraph.select_token %h {index = 0 : i64} : tensor<?x?x16xf32> -> tensor<?x16xf32>
  %l = tgraph.input "labels" : tensor<?x1xi32>
  %loss = tgraph.binary_cross_entropy %c, %c : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// -----

// The attribute's own structure is checked by the dialect.
// expected-error@+1 {{tgraph.plan: model_shape holds layers, hidden, vocab and params (4 entries), got 2}}
tgraph.model @m attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "m", seq_len = 8, global_batch = 1, num_micro_batches = 1, axes = {}, layers_per_chunk = [1], model_shape = [1, 2]>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %x, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}

// -----

// An axis outside its row of the axis table.
// expected-error@+1 {{trident-export-shard: tgraph.plan: 'zero_stage' must be in [0, 3], got 7}}
tgraph.model @m attributes {seq_len = 8 : i64, tgraph.plan = #tgraph.plan<model = "m", seq_len = 8, global_batch = 1, num_micro_batches = 1, axes = {zero_stage = 7 : i64}, layers_per_chunk = [1]>} {
  %x = tgraph.input "features" : tensor<?x?x16xf32>
  %l = tgraph.input "labels" : tensor<?x?xi32>
  %loss = tgraph.cross_entropy %x, %l : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}
