// A two-layer model whose block holds a tgraph.softmax: no gradient rule.
module {
  tgraph.model @with_softmax attributes {seq_len = 8 : i64} {
    %ids = tgraph.input "tokens" : tensor<?x?xi32>
    %labels = tgraph.input "labels" : tensor<?x?xi32>
    %wte = tgraph.param "wte" <embedding> : tensor<16x8xf32>
    %x = tgraph.embedding %ids, %wte : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %h = tgraph.repeat "layers" x 2(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
    ^bb0(%a: tensor<?x?x8xf32>):
      %s = tgraph.softmax %a : tensor<?x?x8xf32>
      tgraph.yield %s : tensor<?x?x8xf32>
    }
    %logits = tgraph.linear %h, %wte tp <vocab> : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
    %loss = tgraph.cross_entropy %logits, %labels : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
    tgraph.output %loss : tensor<f32>
  }
}
