tgraph.model @broken attributes {seq_len = 8 : i64} {
  %ids = tgraph.input "tokens" : tensor<?x?xi32>
  %w = tgraph.param "w" <embedding> : tensor<16x8xf32
}
