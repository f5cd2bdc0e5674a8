tgraph.model @broken attributes {seq_len = 8 : i64} {
  %ids = tgraph.input "tokens" : tensor<?x?xi32>
  %w = tgraph.param "w" <embedding> : tensor<16x8xf32>
  %x = tgraph.embedding %ids, %w : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x9xf32>
  %l = tgraph.param "l" <other> : tensor<f32>
  tgraph.output %l : tensor<f32>
}
