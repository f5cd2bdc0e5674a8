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
      %24 = tgraph.attention %17, %20, %23 {causal, head_dim = 16 : i64, num_heads = 4 : i6