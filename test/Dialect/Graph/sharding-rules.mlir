// The sharding rules of the ops beyond linear and elementwise
// (dialects/Graph/IR/ShardingInterfaceImpl.cpp), one function each,
// partitioned by upstream sharding-propagation and shard-partition.
// RUN: trident-opt %s --pass-pipeline='builtin.module(func.func(sharding-propagation,cse,shard-partition,canonicalize,cse))' | FileCheck %s

shard.grid @grid(shape = 2)

// A row-parallel linear with a bias: the partial products are summed, then
// the bias is added once.
// CHECK-LABEL: func.func @row_bias
// CHECK-SAME: (%[[X:.*]]: tensor<4x8x8xf32>, %[[W:.*]]: tensor<8x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK: %[[P:.*]] = tgraph.linear %[[X]], %[[W]] tp <row> : (tensor<4x8x8xf32>, tensor<8x8xf32>) -> tensor<4x8x8xf32>
// CHECK-NEXT: %[[S:.*]] = shard.all_reduce %[[P]] on @grid grid_axes = [0]
// CHECK: %[[BB:.*]] = linalg.broadcast ins(%[[B]] : tensor<8xf32>)
// CHECK-NEXT: %[[Y:.*]] = tgraph.add %[[S]], %[[BB]]
// CHECK-NEXT: return %[[Y]]
func.func @row_bias(%x: tensor<4x8x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<4x8x8xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %s annotate_for_users : tensor<8x16xf32>
  %y = tgraph.linear %x, %ws, %b tp <row> : (tensor<4x8x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8x8xf32>
  %r = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %ys = shard.shard %y to %r : tensor<4x8x8xf32>
  return %ys : tensor<4x8x8xf32>
}

// A vocabulary-split table is gathered before the lookup.
// CHECK-LABEL: func.func @embed_vocab
// CHECK: %[[T:.*]] = shard.all_gather %arg1 on @grid grid_axes = [0] gather_axis = 0 : tensor<16x16xf32> -> tensor<32x16xf32>
// CHECK-NEXT: tgraph.embedding %arg0, %[[T]]
func.func @embed_vocab(%ids: tensor<4x8xi32>, %t: tensor<32x16xf32>) -> tensor<4x8x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %ts = shard.shard %t to %s annotate_for_users : tensor<32x16xf32>
  %y = tgraph.embedding %ids, %ts : (tensor<4x8xi32>, tensor<32x16xf32>) -> tensor<4x8x16xf32>
  %r = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %ys = shard.shard %y to %r : tensor<4x8x16xf32>
  return %ys : tensor<4x8x16xf32>
}

// Each expert's features split (not gated, no biases): the outputs are
// partial sums.
// CHECK-LABEL: func.func @moe_features
// CHECK-SAME: %{{.*}}: tensor<4x16x16xf32>, %{{.*}}: tensor<4x16x16xf32>)
// CHECK: %[[Y:.*]] = tgraph.moe
// CHECK-NEXT: %[[R:.*]] = shard.all_reduce %[[Y]] on @grid grid_axes = [0] : tensor<4x8x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @moe_features(%x: tensor<4x8x16xf32>, %r: tensor<16x4xf32>, %wi: tensor<4x16x32xf32>, %wo: tensor<4x32x16xf32>) -> tensor<4x8x16xf32> {
  %s = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  %wis = shard.shard %wi to %s annotate_for_users : tensor<4x16x32xf32>
  %y = tgraph.moe %x router %r experts(%wis, %wo) {num_experts = 4 : i64, top_k = 2 : i64, activation = #tgraph.act<gelu>} : (tensor<4x8x16xf32>, tensor<16x4xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>) -> tensor<4x8x16xf32>
  %rr = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %ys = shard.shard %y to %rr : tensor<4x8x16xf32>
  return %ys : tensor<4x8x16xf32>
}

// A per-head norm (one gamma for every head) splits by whole heads.
// CHECK-LABEL: func.func @per_head_norm
// CHECK: tgraph.rms_norm %arg0, %arg1 : (tensor<4x8x16xf32>, tensor<8xf32>) -> tensor<4x8x16xf32>
func.func @per_head_norm(%x: tensor<4x8x32xf32>, %g: tensor<8xf32>) -> tensor<4x8x32xf32> {
  %s = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<4x8x32xf32>
  %y = tgraph.rms_norm %xs, %g : (tensor<4x8x32xf32>, tensor<8xf32>) -> tensor<4x8x32xf32>
  %ys = shard.shard %y to %s : tensor<4x8x32xf32>
  return %ys : tensor<4x8x32xf32>
}

// A batched matmul split on its contraction is summed.
// CHECK-LABEL: func.func @matmul_k
// CHECK: %[[C:.*]] = tgraph.matmul %arg0, %arg1 : (tensor<2x8x8xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
// CHECK-NEXT: shard.all_reduce %[[C]] on @grid grid_axes = [0]
func.func @matmul_k(%a: tensor<2x8x16xf32>, %b: tensor<2x16x4xf32>) -> tensor<2x8x4xf32> {
  %sa = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  %as = shard.shard %a to %sa annotate_for_users : tensor<2x8x16xf32>
  %sb = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %bs = shard.shard %b to %sb annotate_for_users : tensor<2x16x4xf32>
  %c = tgraph.matmul %as, %bs : (tensor<2x8x16xf32>, tensor<2x16x4xf32>) -> tensor<2x8x4xf32>
  %r = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %cs = shard.shard %c to %r : tensor<2x8x4xf32>
  return %cs : tensor<2x8x4xf32>
}

// Attention with sinks: heads split, and the sinks (one per head) with
// them.
// CHECK-LABEL: func.func @attention_sinks
// CHECK: tgraph.attention %arg0, %arg1, %arg2 sinks %arg3 {head_dim = 8 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64} : (tensor<2x8x16xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2xf32>)
func.func @attention_sinks(%q: tensor<2x8x32xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>, %sk: tensor<4xf32>) -> tensor<2x8x32xf32> {
  %s = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s annotate_for_users : tensor<2x8x32xf32>
  %ks = shard.shard %k to %s annotate_for_users : tensor<2x8x16xf32>
  %vs = shard.shard %v to %s annotate_for_users : tensor<2x8x16xf32>
  %o = tgraph.attention %qs, %ks, %vs sinks %sk {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64} : (tensor<2x8x32xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<4xf32>) -> tensor<2x8x32xf32>
  %os = shard.shard %o to %s : tensor<2x8x32xf32>
  return %os : tensor<2x8x32xf32>
}
