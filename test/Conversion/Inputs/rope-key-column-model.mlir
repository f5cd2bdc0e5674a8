// A two-layer model with multi-head latent attention whose rotary key comes
// from a column-parallel linear: split over tp, no rank holds the key all
// heads share, so the lowering refuses it (DeepSeek's k_rope_proj has no
// tensor-parallel role).
module {
  tgraph.model @rope_key_column attributes {seq_len = 8 : i64} {
    %ids = tgraph.input "tokens" : tensor<?x?xi32>
    %labels = tgraph.input "labels" : tensor<?x?xi32>
    %wte = tgraph.param "wte" <embedding> : tensor<16x8xf32>
    %x = tgraph.embedding %ids, %wte : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %h = tgraph.repeat "layers" x 2(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
    ^bb0(%a: tensor<?x?x8xf32>):
      %wq = tgraph.param "q_proj" <attention> : tensor<8x8xf32>
      %q = tgraph.linear %a, %wq tp <column> : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
      %wk = tgraph.param "k_proj" <attention> : tensor<4x8xf32>
      %k = tgraph.linear %a, %wk tp <column> : (tensor<?x?x8xf32>, tensor<4x8xf32>) -> tensor<?x?x4xf32>
      %wr = tgraph.param "k_rope_proj" <attention> : tensor<2x8xf32>
      %kr = tgraph.linear %a, %wr tp <column> : (tensor<?x?x8xf32>, tensor<2x8xf32>) -> tensor<?x?x2xf32>
      %wv = tgraph.param "v_proj" <attention> : tensor<4x8xf32>
      %v = tgraph.linear %a, %wv tp <column> : (tensor<?x?x8xf32>, tensor<4x8xf32>) -> tensor<?x?x4xf32>
      %o = tgraph.attention %q, %k, %v rope_key %kr {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, v_head_dim = 2 : i64, rotary_dim = 2 : i64, causal} : (tensor<?x?x8xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x2xf32>) -> tensor<?x?x4xf32>
      %wo = tgraph.param "o_proj" <attention> : tensor<8x4xf32>
      %y = tgraph.linear %o, %wo tp <row> : (tensor<?x?x4xf32>, tensor<8x4xf32>) -> tensor<?x?x8xf32>
      tgraph.yield %y : tensor<?x?x8xf32>
    }
    %logits = tgraph.linear %h, %wte tp <vocab> : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
    %loss = tgraph.cross_entropy %logits, %labels : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
    tgraph.output %loss : tensor<f32>
  }
}
