// Upstream sharding propagation and partitioning run on tgraph through its
// ShardingInterface rules (dialects/Graph/IR/ShardingInterfaceImpl.cpp): a
// Megatron MLP, column- then row-parallel, partitions into local GEMMs and
// one all-reduce.
// RUN: trident-opt %s --pass-pipeline='builtin.module(func.func(sharding-propagation,cse))' | FileCheck %s --check-prefix=PROP
// RUN: trident-opt %s --pass-pipeline='builtin.module(func.func(sharding-propagation,cse,shard-partition,canonicalize))' | FileCheck %s --check-prefix=PART

shard.grid @grid(shape = 2)

// PROP-LABEL: func.func @mlp
// PART-LABEL: func.func @mlp
// PART-SAME: (%[[X:.*]]: tensor<4x8x16xf32>, %[[W1:.*]]: tensor<16x16xf32>, %[[W2:.*]]: tensor<16x16xf32>)
func.func @mlp(%x: tensor<4x8x16xf32>, %w1: tensor<32x16xf32>, %w2: tensor<16x32xf32>) -> tensor<4x8x16xf32> {
  %s1 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %w1s = shard.shard %w1 to %s1 annotate_for_users : tensor<32x16xf32>
  // The column-parallel output is split on its features, and so is GeLU.
  // PROP: %[[H:.*]] = tgraph.linear
  // PROP: shard.sharding @grid split_axes = {{\[\[}}], [], [0]]
  // PROP: tgraph.gelu
  %h = tgraph.linear %x, %w1s tp <column> : (tensor<4x8x16xf32>, tensor<32x16xf32>) -> tensor<4x8x32xf32>
  %g = tgraph.gelu %h : tensor<4x8x32xf32>
  %s2 = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %w2s = shard.shard %w2 to %s2 annotate_for_users : tensor<16x32xf32>
  %y = tgraph.linear %g, %w2s tp <row> : (tensor<4x8x32xf32>, tensor<16x32xf32>) -> tensor<4x8x16xf32>
  %s0 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %ys = shard.shard %y to %s0 : tensor<4x8x16xf32>
  // PART: %[[A:.*]] = tgraph.linear %[[X]], %[[W1]] tp <column> : (tensor<4x8x16xf32>, tensor<16x16xf32>) -> tensor<4x8x16xf32>
  // PART: %[[G:.*]] = tgraph.gelu %[[A]] : tensor<4x8x16xf32>
  // PART: %[[B:.*]] = tgraph.linear %[[G]], %[[W2]] tp <row> : (tensor<4x8x16xf32>, tensor<16x16xf32>) -> tensor<4x8x16xf32>
  // PART: %[[R:.*]] = shard.all_reduce %[[B]] on @grid grid_axes = [0]
  // PART: return %[[R]]
  return %ys : tensor<4x8x16xf32>
}
