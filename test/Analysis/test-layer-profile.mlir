// The LayerProfile of GPT-3 175B at s = 2048, checked against Korthikanti
// et al. 2022 (Sec. 4.1-4.2, bytes per layer and sequence, b = 1):
//   TP-split activations 24 s h = 603979776, replicated 10 s h = 251658240,
//   attention core 5 a s^2 = 2013265920, full-recompute checkpoint 2 s h.
// The head keeps the logits in fp32 (4 s V, vocab-parallel) and shares the
// embedding table (tied).
// RUN: trident import --model gpt3-175b -o %t.mlir
// RUN: trident-opt %t.mlir --pass-pipeline='builtin.module(tgraph.model(test-layer-profile))' -o /dev/null | FileCheck %s

// CHECK: profile gpt3_175b seq 2048 hidden 12288 vocab 51200 heads 96 layers 96 params 174615846912
// CHECK: group embedding kind embedding count 1 gemms 0 params 654311424 (tp 0, replicated 25165824, experts 0, vocab 629145600, tied 0)
// CHECK: group layers.0-95 kind block count 96 gemms 8 params 1812099072 (tp 1812025344, replicated 73728, experts 0, vocab 0, tied 0) act (tp 603979776, replicated 251658240, core 2013265920, input 50331648) tp-collectives 2
// CHECK: group head kind head count 1 gemms 1 params 24576 {{.*}}tied 629145600) act (tp 419438592, replicated 100663296

// Mixtral 8x7B: attention q, o 4096^2 and k, v 1024 x 4096 (TP-split);
// two RMS norms and the 4096 x 8 router replicated; 8 experts of
// 3 x 4096 x 14336.
// RUN: trident import --model mixtral-8x7b --seq-len 4096 -o %t.moe.mlir
// RUN: trident-opt %t.moe.mlir --pass-pipeline='builtin.module(tgraph.model(test-layer-profile))' -o /dev/null | FileCheck %s --check-prefix=MOE
// MOE: group layers.0-31 kind block count 32 gemms 9 params 1451270144 (tp 41943040, replicated 40960, experts 1409286144, vocab 0, tied 0)
