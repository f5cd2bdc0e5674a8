// Splits an op cannot compute locally are refused by its partition rule,
// naming the op and what is split.
// RUN: trident-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(func.func(sharding-propagation,cse,shard-partition))'

shard.grid @grid(shape = 2)

func.func @norm_rows(%x: tensor<4x8x16xf32>, %g: tensor<16xf32>) -> tensor<4x8x16xf32> {
  %s = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<4x8x16xf32>
  // expected-error @+1 {{'tgraph.rms_norm' op cannot be partitioned: it normalises whole rows and their features are split}}
  %y = tgraph.rms_norm %xs, %g : (tensor<4x8x16xf32>, tensor<16xf32>) -> tensor<4x8x16xf32>
  %ys = shard.shard %y to %s : tensor<4x8x16xf32>
  return %ys : tensor<4x8x16xf32>
}

// -----

shard.grid @grid(shape = 4)

func.func @heads(%q: tensor<2x8x32xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x8x32xf32> {
  %s = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s annotate_for_users : tensor<2x8x32xf32>
  // expected-error @+1 {{'tgraph.attention' op cannot be partitioned: 4 heads and 2 kv heads do not split 4 ways}}
  %o = tgraph.attention %qs, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, causal} : (tensor<2x8x32xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x32xf32>
  %os = shard.shard %o to %s : tensor<2x8x32xf32>
  return %os : tensor<2x8x32xf32>
}

// -----

shard.grid @grid(shape = 2)

func.func @seq(%q: tensor<2x8x32xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x8x32xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %qs = shard.shard %q to %s annotate_for_users : tensor<2x8x32xf32>
  // expected-error @+1 {{its query sequence is split}}
  %o = tgraph.attention %qs, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, causal} : (tensor<2x8x32xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x32xf32>
  %os = shard.shard %o to %s : tensor<2x8x32xf32>
  return %os : tensor<2x8x32xf32>
}

// -----

shard.grid @grid(shape = 2)

func.func @experts(%x: tensor<4x8x16xf32>, %r: tensor<16x4xf32>, %wi: tensor<4x16x32xf32>, %wo: tensor<4x32x16xf32>) -> tensor<4x8x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %wis = shard.shard %wi to %s annotate_for_users : tensor<4x16x32xf32>
  // expected-error @+1 {{its experts are split}}
  %y = tgraph.moe %x router %r experts(%wis, %wo) {num_experts = 4 : i64, top_k = 2 : i64, activation = #tgraph.act<gelu>} : (tensor<4x8x16xf32>, tensor<16x4xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>) -> tensor<4x8x16xf32>
  %rr = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %ys = shard.shard %y to %rr : tensor<4x8x16xf32>
  return %ys : tensor<4x8x16xf32>
}

// -----

shard.grid @grid(shape = 2)

func.func @softmax(%x: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %s = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<4x8x16xf32>
  // expected-error @+1 {{'tgraph.softmax' op cannot be partitioned: it normalises over its last dimension, which is split}}
  %y = tgraph.softmax %xs : tensor<4x8x16xf32>
  %ys = shard.shard %y to %s : tensor<4x8x16xf32>
  return %ys : tensor<4x8x16xf32>
}

// -----

shard.grid @grid(shape = 2)

func.func @gated_features(%x: tensor<4x8x16xf32>, %r: tensor<16x4xf32>, %wi: tensor<4x16x64xf32>, %wo: tensor<4x32x16xf32>) -> tensor<4x8x16xf32> {
  %s = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  %wis = shard.shard %wi to %s annotate_for_users : tensor<4x16x64xf32>
  // expected-error @+1 {{each expert's features are split, but its input weights hold the gate and up columns side by side}}
  %y = tgraph.moe %x router %r experts(%wis, %wo) {num_experts = 4 : i64, top_k = 2 : i64, activation = #tgraph.act<silu>, gated} : (tensor<4x8x16xf32>, tensor<16x4xf32>, tensor<4x16x64xf32>, tensor<4x32x16xf32>) -> tensor<4x8x16xf32>
  %rr = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %ys = shard.shard %y to %rr : tensor<4x8x16xf32>
  return %ys : tensor<4x8x16xf32>
}
