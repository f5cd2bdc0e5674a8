// trident-shard-tgraph outlines a planned model as one function of tgraph
// ops annotated only with the plan's decisions; upstream
// sharding-propagation and shard-partition then split every op of a whole
// Llama-style model by the ops' ShardingInterface rules
// (dialects/Graph/IR/ShardingInterfaceImpl.cpp): Megatron's layout comes
// out, with no per-op knowledge in the pass.
// RUN: trident import --model %srcroot/test/e2e/models/tiny-llama.json -o %t.llama.mlir
// RUN: trident-opt %t.llama.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=%S/Inputs/tiny-llama-dp2-tp2.json}),trident-shard-tgraph)' | FileCheck %s --check-prefix=OUTLINE
// RUN: trident-opt %t.llama.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=%S/Inputs/tiny-llama-dp2-tp2.json}),trident-shard-tgraph,func.func(sharding-propagation,cse,shard-partition,canonicalize,cse))' | FileCheck %s --check-prefix=PART

// The grid is dp x tp; the function takes the whole batch (dp x 2) and
// every layer's parameters, named.
// OUTLINE-NOT: tgraph.model
// OUTLINE: shard.grid @grid(shape = 2x2)
// OUTLINE: func.func @tiny_llama(%arg0: tensor<4x32xi32> {tgraph.name = "tokens"}, %arg1: tensor<4x32xi32> {tgraph.name = "labels"}, %arg2: tensor<256x64xf32> {tgraph.name = "embed_tokens.weight"}
// OUTLINE-SAME: {tgraph.name = "layers.3.mlp.down_proj.weight"}
// OUTLINE-SAME: -> tensor<f32>
// The inputs split over dp; the token table's rows (its vocabulary), a
// column weight's rows and a row weight's columns over tp; nothing else is
// annotated.
// OUTLINE: shard.sharding @grid split_axes = {{\[\[}}0]]
// OUTLINE: shard.shard %arg0
// OUTLINE: shard.sharding @grid split_axes = {{\[\[}}1]]
// OUTLINE-NEXT: shard.shard %arg2
// OUTLINE: tgraph.embedding
// OUTLINE-NEXT: tgraph.rms_norm
// OUTLINE-NEXT: shard.sharding @grid split_axes = {{\[\[}}1]]
// OUTLINE: tgraph.attention
// OUTLINE: shard.sharding @grid split_axes = {{\[\[}}], [1]]
// OUTLINE: tgraph.linear {{.*}} tp <row>
// OUTLINE: return

// Partitioned: each device holds half the batch, half the token table's
// rows and half the heads (GQA: 2 of 4 query heads, 1 of 2 kv heads); the
// table is gathered for the lookup (the embedding rule has no masked
// lookup); a row-parallel linear's output is summed over tp; the norms and
// residuals stay whole; the head's vocabulary split is gathered for the
// loss, whose mean is averaged over dp.
// PART: func.func @tiny_llama(%arg0: tensor<2x32xi32> {tgraph.name = "tokens"}
// PART-SAME: tensor<128x64xf32> {tgraph.name = "embed_tokens.weight"}
// PART-SAME: tensor<32x64xf32> {tgraph.name = "layers.0.attn.q_proj.weight"}
// PART-SAME: tensor<16x64xf32> {tgraph.name = "layers.0.attn.k_proj.weight"}
// PART-SAME: tensor<64x32xf32> {tgraph.name = "layers.0.attn.o_proj.weight"}
// PART-SAME: tensor<64x64xf32> {tgraph.name = "layers.0.mlp.gate_proj.weight"}
// PART-SAME: tensor<64x64xf32> {tgraph.name = "layers.0.mlp.down_proj.weight"}
// PART-SAME: tensor<128x64xf32> {tgraph.name = "lm_head.weight"}
// PART: %[[T:.*]] = shard.all_gather %arg2 on @grid grid_axes = [1] gather_axis = 0 : tensor<128x64xf32> -> tensor<256x64xf32>
// PART-NEXT: %[[E:.*]] = tgraph.embedding %arg0, %[[T]] : (tensor<2x32xi32>, tensor<256x64xf32>) -> tensor<2x32x64xf32>
// PART: tgraph.attention {{.*}} {causal, head_dim = 16 : i64, num_heads = 2 : i64, num_kv_heads = 1 : i64, rotary_dim = 16 : i64} : (tensor<2x32x32xf32>, tensor<2x32x16xf32>, tensor<2x32x16xf32>) -> tensor<2x32x32xf32>
// PART-NEXT: %[[O:.*]] = tgraph.linear {{.*}} tp <row> : (tensor<2x32x32xf32>, tensor<64x32xf32>) -> tensor<2x32x64xf32>
// PART-NEXT: %[[R:.*]] = shard.all_reduce %[[O]] on @grid grid_axes = [1] : tensor<2x32x64xf32>
// PART-NEXT: tgraph.add %[[E]], %[[R]] : tensor<2x32x64xf32>
// PART: tgraph.swiglu {{.*}} : tensor<2x32x64xf32>
// PART-COUNT-7: shard.all_reduce {{.*}} grid_axes = [1]
// PART: %[[H:.*]] = tgraph.linear {{.*}} tp <vocab> : (tensor<2x32x64xf32>, tensor<128x64xf32>) -> tensor<2x32x128xf32>
// PART-NEXT: %[[G:.*]] = shard.all_gather %[[H]] on @grid grid_axes = [1] gather_axis = 2 : tensor<2x32x128xf32> -> tensor<2x32x256xf32>
// PART-NEXT: %[[L:.*]] = tgraph.cross_entropy %[[G]], %arg1
// PART-NEXT: %[[M:.*]] = shard.all_reduce %[[L]] on @grid grid_axes = [0] reduction = average : tensor<f32>
// PART-NEXT: return %[[M]]

// A mixture of experts with etp 1: every tp rank holds whole experts and
// routes whole tokens; nothing is summed after it.
// RUN: trident import --model %srcroot/test/e2e/models/tiny-mixtral.json -o %t.mixtral.mlir
// RUN: trident-opt %t.mixtral.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=%S/Inputs/tiny-mixtral-dp2-tp2.json}),trident-shard-tgraph,func.func(sharding-propagation,cse,shard-partition,canonicalize,cse))' | FileCheck %s --check-prefix=MOE
// MOE: %[[Y:.*]] = tgraph.moe {{.*}} : (tensor<2x32x64xf32>, tensor<64x4xf32>, tensor<4x64x128xf32>, tensor<4x64x64xf32>) -> tensor<2x32x64xf32>
// MOE-NEXT: tgraph.add %{{.*}}, %[[Y]]

// GPT-2 style (tiny-gpt): the tied embedding table is the vocabulary-split
// head's weight, so the lookup gathers it; a row-parallel linear's bias is
// added once, after the sum.
// RUN: trident import --model tiny-gpt -o %t.gpt.mlir
// RUN: trident-opt %t.gpt.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=%S/Inputs/tiny-gpt-dp2-tp2.json}),trident-shard-tgraph,func.func(sharding-propagation,cse,shard-partition,canonicalize,cse))' | FileCheck %s --check-prefix=GPT
// GPT: shard.all_gather %arg2 on @grid grid_axes = [1] gather_axis = 0 : tensor<128x64xf32> -> tensor<256x64xf32>
// GPT: %[[P:.*]] = tgraph.linear {{.*}} tp <row> : (tensor<2x32x32xf32>, tensor<64x32xf32>) -> tensor<2x32x64xf32>
// GPT-NEXT: %[[S:.*]] = shard.all_reduce %[[P]]
// GPT: %[[B:.*]] = linalg.broadcast ins(%{{.*}} : tensor<64xf32>) outs(%{{.*}} : tensor<2x32x64xf32>) dimensions = [0, 1]
// GPT-NEXT: tgraph.add %[[S]], %[[B]]

// What the function does not show is refused, naming the plan's setting.
// RUN: not trident-opt %t.llama.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=%srcroot/test/e2e/plans/tiny-llama-pp2.json}),trident-shard-tgraph)' 2>&1 | FileCheck %s --check-prefix=PP
// PP: error: trident-shard-tgraph: the plan has 2 pipeline stages, each its own program: the outlined function shows data and tensor parallelism only
// RUN: not trident-opt %t.llama.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=%srcroot/test/e2e/plans/tiny-llama-tp2-sp.json}),trident-shard-tgraph)' 2>&1 | FileCheck %s --check-prefix=SP
// SP: error: trident-shard-tgraph: the plan uses sequence parallelism
// RUN: not trident-opt %t.mixtral.mlir --pass-pipeline='builtin.module(tgraph.model(trident-apply-plan{plan=%S/Inputs/tiny-mixtral-etp2.json}),trident-shard-tgraph)' 2>&1 | FileCheck %s --check-prefix=ETP
// ETP: error: trident-shard-tgraph: the plan splits each expert over etp = 2
// RUN: not trident-opt %t.llama.mlir --pass-pipeline='builtin.module(trident-shard-tgraph)' 2>&1 | FileCheck %s --check-prefix=NOPLAN
// NOPLAN: has no tgraph.plan attribute
