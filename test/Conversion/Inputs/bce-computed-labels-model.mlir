// A click loss whose labels are computed, not read: refused (the labels
// must be a model input, whose synthetic source gives 0 or 1).
module {
  tgraph.model @bce_computed attributes {architecture = "DLRM", seq_len = 1 : i64} {
    %dense = tgraph.input "dense" : tensor<?x4xf32>
    %w = tgraph.param "w" <other> : tensor<1x4xf32>
    %b = tgraph.param "b" <other> : tensor<1xf32>
    %logit = tgraph.linear %dense, %w, %b : (tensor<?x4xf32>, tensor<1x4xf32>, tensor<1xf32>) -> tensor<?x1xf32>
    %labels = tgraph.relu %logit : tensor<?x1xf32>
    %loss = tgraph.binary_cross_entropy %logit, %labels : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<f32>
    tgraph.output %loss : tensor<f32>
  }
}
