// A test-sized DLRM (Naumov et al. 2019; not a published model): 4 dense
// features through a bottom MLP, four embedding bags (two ids per sample,
// the third table averaging three), the pairwise dot interaction of the
// five 8-wide features (8 + 10 outputs) and a top MLP to one click logit.
// Table sizes 50, 7, 23 and 3 rows: tp 2 and tp 4 pad the last three.
module {
  tgraph.model @tiny_dlrm attributes {architecture = "DLRM", seq_len = 1 : i64} {
    %dense = tgraph.input "dense" : tensor<?x4xf32>
    %labels = tgraph.input "labels" : tensor<?x1xf32>
    %w0 = tgraph.param "bot_l.0.weight" <other> : tensor<16x4xf32>
    %b0 = tgraph.param "bot_l.0.bias" <other> : tensor<16xf32>
    %h0 = tgraph.linear %dense, %w0, %b0 : (tensor<?x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %a0 = tgraph.relu %h0 : tensor<?x16xf32>
    %w1 = tgraph.param "bot_l.1.weight" <other> : tensor<8x16xf32>
    %b1 = tgraph.param "bot_l.1.bias" <other> : tensor<8xf32>
    %h1 = tgraph.linear %a0, %w1, %b1 : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %x = tgraph.relu %h1 : tensor<?x8xf32>
    %s0 = tgraph.input "sparse.0" : tensor<?x2xi64>
    %t0 = tgraph.param "emb_l.0" <embedding> : tensor<50x8xf32>
    %e0 = tgraph.embedding_bag %s0, %t0 : (tensor<?x2xi64>, tensor<50x8xf32>) -> tensor<?x8xf32>
    %s1 = tgraph.input "sparse.1" : tensor<?x2xi64>
    %t1 = tgraph.param "emb_l.1" <embedding> : tensor<7x8xf32>
    %e1 = tgraph.embedding_bag %s1, %t1 : (tensor<?x2xi64>, tensor<7x8xf32>) -> tensor<?x8xf32>
    %s2 = tgraph.input "sparse.2" : tensor<?x3xi64>
    %t2 = tgraph.param "emb_l.2" <embedding> : tensor<23x8xf32>
    %e2 = tgraph.embedding_bag %s2, %t2 {mean} : (tensor<?x3xi64>, tensor<23x8xf32>) -> tensor<?x8xf32>
    %s3 = tgraph.input "sparse.3" : tensor<?x1xi64>
    %t3 = tgraph.param "emb_l.3" <embedding> : tensor<3x8xf32>
    %e3 = tgraph.embedding_bag %s3, %t3 : (tensor<?x1xi64>, tensor<3x8xf32>) -> tensor<?x8xf32>
    %z = tgraph.dot_interaction %x, %e0, %e1, %e2, %e3 : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x18xf32>
    %w2 = tgraph.param "top_l.0.weight" <other> : tensor<16x18xf32>
    %b2 = tgraph.param "top_l.0.bias" <other> : tensor<16xf32>
    %h2 = tgraph.linear %z, %w2, %b2 : (tensor<?x18xf32>, tensor<16x18xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %a2 = tgraph.relu %h2 : tensor<?x16xf32>
    %w3 = tgraph.param "top_l.1.weight" <other> : tensor<1x16xf32>
    %b3 = tgraph.param "top_l.1.bias" <other> : tensor<1xf32>
    %logit = tgraph.linear %a2, %w3, %b3 : (tensor<?x16xf32>, tensor<1x16xf32>, tensor<1xf32>) -> tensor<?x1xf32>
    %loss = tgraph.binary_cross_entropy %logit, %labels : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<f32>
    tgraph.output %loss : tensor<f32>
  }
}
