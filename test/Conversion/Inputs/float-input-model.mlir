// A model with a float input that no synthetic source provides.
module {
  tgraph.model @float_input attributes {seq_len = 8 : i64} {
    %ids = tgraph.input "tokens" : tensor<?x?xi32>
    %labels = tgraph.input "labels" : tensor<?x?xi32>
    %wte = tgraph.param "wte" <embedding> : tensor<16x8xf32>
    %x = tgraph.embedding %ids, %wte : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %extra = tgraph.input "features" : tensor<?x?x8xf32>
    %y = tgraph.add %x, %extra : tensor<?x?x8xf32>
    %h = tgraph.repeat "layers" x 2(%y) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
    ^bb0(%a: tensor<?x?x8xf32>):
      %o = tgraph.attention %a, %a, %a {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64, causal} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      tgraph.yield %o : tensor<?x?x8xf32>
    }
    %logits = tgraph.linear %h, %wte tp <vocab> : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
    %loss = tgraph.cross_entropy %logits, %labels : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
    tgraph.output %loss : tensor<f32>
  }
}
