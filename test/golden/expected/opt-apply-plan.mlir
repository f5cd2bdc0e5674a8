module {
  tgraph.model @tiny_llama attributes {architecture = "LlamaForCausalLM", seq_len = 32 : i64, tgraph.plan = #tgraph.plan<model = "tiny_llama", seq_len = 32, gpus = 8, global_batch = 16, num_micro_batches = 1, axes = {cp = 1 : i64, dp = 2 : i64, ep = 1 : i64, etp = 2 : i64, micro_batch_size = 8 : i64, pp = 2 : i64, recompute = "none", schedule = "1f1b", sequence_parallel = true, tp = 2 : i64, tp_comm_overlap = true, vpp = 1 : i64, zero_stage = 0 : i64}, layers_per_chunk = [2, 2], stage_recompute = ["none", "none"], model_shape = [4, 64, 256, 180800], predicted = {iteration_time_s = 7.3310972012525393E-4 : f64, mfu = 9.5411992428841267E-5 : f64, peak_memory_bytes = 1001682117.12 : f64, tokens_per_s = 698394.77767737594 : f64}>} {
    %0 = tgraph.input "tokens" : tensor<?x?xi32>
    %1 = tgraph.input "labels" : tensor<?x?xi32>
    %2 = tgraph.param "embed_tokens.weight" <embedding> : tensor<256x64xf32>
    %3 = tgraph.embedding %0, %2 : (tensor<?x?xi32>, tensor<256x64xf32>) -> tensor<?x?x64xf32>
    %4 = tgraph.repeat "layers.0-3" x 4(%3) {tgraph.stage = array<i64: 0, 0, 1, 1>} : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
    ^bb0(%arg0: tensor<?x?x64xf32>):
      %10 = tgraph.param "input_layernorm.weight" <norm> : tensor<64xf32>
      %11 = tgraph.rms_norm %arg0, %10 : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
      %12 = tgraph.param "attn.q_proj.weight" <attention> : tensor<64x64xf32>
      %13 = tgraph.linear %11, %12 tp <column> : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
      %14 = tgraph.param "attn.k_proj.weight" <attention> : tensor<32x64xf32>
      %15 = tgraph.linear %11, %14 tp <column> : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x32xf32>
      %16 = tgraph.param "attn.v_proj.weight" <attention> : tensor<32x64xf32>
      %17 = tgraph.linear %11, %16 tp <column> : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x32xf32>
      %18 = tgraph.attention %13, %15, %17 {causal, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, rotary_dim = 16 : i64} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x64xf32>
      %19 = tgraph.param "attn.o_proj.weight" <attention> : tensor<64x64xf32>
      %20 = tgraph.linear %18, %19 tp <row> : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
      %21 = tgraph.add %arg0, %20 : tensor<?x?x64xf32>
      %22 = tgraph.param "post_attention_layernorm.weight" <norm> : tensor<64xf32>
      %23 = tgraph.rms_norm %21, %22 : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
      %24 = tgraph.param "mlp.gate_proj.weight" <mlp> : tensor<128x64xf32>
      %25 = tgraph.linear %23, %24 tp <column> : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
      %26 = tgraph.param "mlp.up_proj.weight" <mlp> : tensor<128x64xf32>
      %27 = tgraph.linear %23, %26 tp <column> : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
      %28 = tgraph.swiglu %25, %27 : tensor<?x?x128xf32>
      %29 = tgraph.param "mlp.down_proj.weight" <mlp> : tensor<64x128xf32>
      %30 = tgraph.linear %28, %29 tp <row> : (tensor<?x?x128xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32>
      %31 = tgraph.add %21, %30 : tensor<?x?x64xf32>
      tgraph.yield %31 : tensor<?x?x64xf32>
    }
    %5 = tgraph.param "norm.weight" <norm> : tensor<64xf32>
    %6 = tgraph.rms_norm %4, %5 : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %7 = tgraph.param "lm_head.weight" <head> : tensor<256x64xf32>
    %8 = tgraph.linear %6, %7 tp <vocab> : (tensor<?x?x64xf32>, tensor<256x64xf32>) -> tensor<?x?x256xf32>
    %9 = tgraph.cross_entropy %8, %1 : (tensor<?x?x256xf32>, tensor<?x?xi32>) -> tensor<f32>
    tgraph.output %9 : tensor<f32>
  }
}

# exit 0
