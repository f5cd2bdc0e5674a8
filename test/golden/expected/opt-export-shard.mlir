TMP/tiny-llama.mlir:17:13: error: trident-export-shard: attention with rotary embedding, a window, sinks or latent rotary keys has no shard export yet
      %18 = tgraph.attention %13, %15, %17 {causal, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, rotary_dim = 16 : i64} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
            ^
TMP/tiny-llama.mlir:17:13: note: see current operation: %18 = "tgraph.attention"(%13, %15, %17) <{causal, dropout = 0.000000e+00 : f64, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, rope_theta = 1.000000e+04 : f64, rotary_dim = 16 : i64, window = 0 : i64}> : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
# exit 1
