// A two-layer model whose router bias only selects the experts
// (DeepSeek-V3's e_score_correction_bias) and whose experts also have
// biases (gpt-oss's): no model has both, and no kernel runs them: refused.
module {
  tgraph.model @moe_selection_bias attributes {seq_len = 8 : i64} {
    %ids = tgraph.input "tokens" : tensor<?x?xi32>
    %labels = tgraph.input "labels" : tensor<?x?xi32>
    %wte = tgraph.param "wte" <embedding> : tensor<16x8xf32>
    %x = tgraph.embedding %ids, %wte : (tensor<?x?xi32>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
    %h = tgraph.repeat "layers" x 2(%x) : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
    ^bb0(%a: tensor<?x?x8xf32>):
      %r = tgraph.param "router" <router> : tensor<8x4xf32>
      %rb = tgraph.param "router_bias" <router> : tensor<4xf32>
      %wi = tgraph.param "w_in" <expert> : tensor<4x8x16xf32>
      %wo = tgraph.param "w_out" <expert> : tensor<4x16x8xf32>
      %bi = tgraph.param "b_in" <expert> : tensor<4x16xf32>
      %bo = tgraph.param "b_out" <expert> : tensor<4x8xf32>
      %m = tgraph.moe %a router %r bias %rb experts(%wi, %wo) expert_bias(%bi, %bo) {activation = #tgraph.act<silu>, num_experts = 4 : i64, top_k = 2 : i64, selection_bias} : (tensor<?x?x8xf32>, tensor<8x4xf32>, tensor<4xf32>, tensor<4x8x16xf32>, tensor<4x16x8xf32>, tensor<4x16xf32>, tensor<4x8xf32>) -> tensor<?x?x8xf32>
      tgraph.yield %m : tensor<?x?x8xf32>
    }
    %logits = tgraph.linear %h, %wte tp <vocab> : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
    %loss = tgraph.cross_entropy %logits, %labels : (tensor<?x?x16xf32>, tensor<?x?xi32>) -> tensor<f32>
    tgraph.output %loss : tensor<f32>
  }
}
