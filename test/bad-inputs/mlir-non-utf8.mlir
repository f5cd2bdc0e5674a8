module {
  tgraph.model @tiny_gpt attributes {architecture = "GPT2LMHeadModel", seq_len = 32 : i64} {
    %0 = tgraph.input "tokens" : tensor<?x?xi32>
    %1 = tgraph.input "labels" : tensor<?x?xi32>
    %2 = tgraph.param "embed_tokens.weight" <embedding> : tensor<256x64xf32>
    %3 = tgraph.embedding %0, %2 : (tensor<?x?xi32>, tensor<256x64xf32>) -> tensor<?x?x64xf32>
    %4 = tgraph.param "embed_positions.weight" <embedding> : tensor<32x64xf32>
    %5 = tgraph.position_embedding %3, %4 : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x64xf32>
    %6 = tgraph.repeat "layers.0-3" x 4(%5) : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
    ^bb0(%arg0: tensor<?x?x64xf32>):
      %12 = tgraph.param "input_layernorm.weight" <norm> : tensor<64xf32>
      %13 = tgraph.param "input_layernorm.bias" <norm> : tensor<64xf32>
      %14 = tgraph.layer_norm %arg0, %12, %13 : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
      %15 = tgraph.param "attn.q_proj.weight" <attention> : tensor<64x64xf32>
      %16 = tgraph.param "attn.q_proj.bias" <attention> : tensor<64xf32>
      %17 = tgraph.linear %14, %15, %16 tp <column> : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
      %18 = tgraph.param "attn.k_proj.weight" <attention> : tensor<64x64xf32>
      %19 = tgraph.param "attn.k_proj.bias" <attention> : tensor<64xf32>
      %20 = tgraph.linear %14, %18, %19 tp <column> : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
      %21 = tgraph.param "attn.v_proj.weight" <attention> : tensor<64x64xf32>
      %22 = tgraph.param "attn.v_proj.bias" <attention> : tensor<64xf32>
      %23 = tgraph.linear %14, %21, %22 tp <column> : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
      %24 = tgraph.attention %17, %20, %23 {causal, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 4 : i64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
      %25 = tgraph.param "attn.o_proj.weight" <attention> : tensor<64x64xf32>
      %26 = tgraph.param "attn.o_proj.bias" <attention> : tensor<64xf32>
      %27 = tgraph.linear %24, %25, %26 tp <row> : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
      %28 = tgraph.add %arg0, %27 : tensor<?x?x64xf32>
      %29 = tgraph.param "post_attention_layernorm.weight" <norm> : tensor<64xf32>
      %30 = tgraph.param "post_attention_layernorm.bias" <norm> : tensor<64xf32>
      %31 = tgraph.layer_norm %28, %29, %30 : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
      %32 = tgraph.param "mlp.fc1.weight" <mlp> : tensor<256x64xf32>
      %33 = tgraph.param "mlp.fc1.bias" <mlp> : tensor<256xf32>
      %34 = tgraph.linear %31, %32, %33 tp <column> : (tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<256xf32>) -> tensor<?x?x256xf32>
      %35 = tgraph.geluÿþ %34 : tensor<?x?x256xf32>
      %36 = tgraph.param "mlp.fc2.weight" <mlp> : tensor<64x256xf32>
      %37 = tgraph.param "mlp.fc2.bias" <mlp> : tensor<64xf32>
      %38 = tgraph.linear %35, %36, %37 tp <row> : (tensor<?x?x256xf32>, tensor<64x256xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
      %39 = tgraph.add %28, %38 : tensor<?x?x64xf32>
      tgraph.yield %39 : tensor<?x?x64xf32>
    }
    %7 = tgraph.param "norm.weight" <norm> : tensor<64xf32>
    %8 = tgraph.param "norm.bias" <norm> : tensor<64xf32>
    %9 = tgraph.layer_norm %6, %7, %8 : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %10 = tgraph.linear %9, %2 tp <vocab> : (tensor<?x?x64xf32>, tensor<256x64xf32>) -> tensor<?x?x256xf32>
    %11 = tgraph.cross_entropy %10, %1 : (tensor<?x?x256xf32>, tensor<?x?xi32>) -> tensor<f32>
    tgraph.output %11 : tensor<f32>
  }
}

