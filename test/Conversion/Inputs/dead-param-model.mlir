// A two-layer model with a projection whose output reaches nothing: its
// weight would never train, so the lowering refuses it.
module {
  tgraph.model @dead_param attributes {seq_len = 8 : i64} {
    %ids = tgraph.input "tokens" : tensor<?x?xi32>
    %labels = tgraph.input "labels" : tensor<?x?xi32>
    %wte = tgraph.param "wte" <embedding> : tensor<16x8xf32>
    %x = tgraph.embedding %ids, %wte : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %h = tgraph.repeat "layers" x 2(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
    ^bb0(%a: tensor<?x?x8xf32>):
      %w = tgraph.param "unused_proj" <mlp> : tensor<8x8xf32>
      %dead = tgraph.linear %a, %w : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
      tgraph.yield %a : tensor<?x?x8xf32>
    }
    %logits = tgraph.linear %h, %wte tp <vocab> : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
    %loss = tgraph.cross_entropy %logits, %labels : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
    tgraph.output %loss : tensor<f32>
  }
}
