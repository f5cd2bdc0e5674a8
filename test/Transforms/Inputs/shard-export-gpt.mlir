// A 2-layer GPT block model (hidden 32, 4 heads of 8, MLP 64, vocab 64,
// sequence 16) whose plan fields DP, CP, TP, SP are filled in by the RUN
// lines of trident-export-shard.mlir.
tgraph.model @gpt attributes {seq_len = 16 : i64, tgraph.plan = #tgraph.plan<model = "gpt", seq_len = 16, global_batch = GB, num_micro_batches = 1, axes = {dp = DP : i64, tp = TP : i64, cp = CP : i64, micro_batch_size = 2 : i64, sequence_parallel = SP}, layers_per_chunk = [2]>} {
  %ids = tgraph.input "tokens" : tensor<?x?xi32>
  %labels = tgraph.input "labels" : tensor<?x?xi32>
  %wte = tgraph.param "wte" <embedding> : tensor<64x32xf32>
  %x = tgraph.embedding %ids, %wte : (tensor<?x?xi32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %h = tgraph.repeat "layers" x 2 (%x) : (tensor<?x?x32xf32>) -> tensor<?x?x32xf32> {
  ^bb0(%a: tensor<?x?x32xf32>):
    %g1 = tgraph.param "ln1.weight" <norm> : tensor<32xf32>
    %b1 = tgraph.param "ln1.bias" <norm> : tensor<32xf32>
    %n1 = tgraph.layer_norm %a, %g1, %b1 : (tensor<?x?x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
    %wq = tgraph.param "q.weight" <attention> : tensor<32x32xf32>
    %q = tgraph.linear %n1, %wq tp <column> : (tensor<?x?x32xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
    %wk = tgraph.param "k.weight" <attention> : tensor<32x32xf32>
    %k = tgraph.linear %n1, %wk tp <column> : (tensor<?x?x32xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
    %wv = tgraph.param "v.weight" <attention> : tensor<32x32xf32>
    %v = tgraph.linear %n1, %wv tp <column> : (tensor<?x?x32xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
    %o = tgraph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 4 : i64, head_dim = 8 : i64, causal} : (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
    %wo = tgraph.param "o.weight" <attention> : tensor<32x32xf32>
    %bo = tgraph.param "o.bias" <attention> : tensor<32xf32>
    %p = tgraph.linear %o, %wo, %bo tp <row> : (tensor<?x?x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
    %r1 = tgraph.add %a, %p : tensor<?x?x32xf32>
    %g2 = tgraph.param "ln2.weight" <norm> : tensor<32xf32>
    %b2 = tgraph.param "ln2.bias" <norm> : tensor<32xf32>
    %n2 = tgraph.layer_norm %r1, %g2, %b2 : (tensor<?x?x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
    %w1 = tgraph.param "fc1.weight" <mlp> : tensor<64x32xf32>
    %bb1 = tgraph.param "fc1.bias" <mlp> : tensor<64xf32>
    %u = tgraph.linear %n2, %w1, %bb1 tp <column> : (tensor<?x?x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %ge = tgraph.gelu %u : tensor<?x?x64xf32>
    %w2 = tgraph.param "fc2.weight" <mlp> : tensor<32x64xf32>
    %d = tgraph.linear %ge, %w2 tp <row> : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x32xf32>
    %r2 = tgraph.add %r1, %d : tensor<?x?x32xf32>
    tgraph.yield %r2 : tensor<?x?x32xf32>
  }
  %gf = tgraph.param "lnf.weight" <norm> : tensor<32xf32>
  %nf = tgraph.rms_norm %h, %gf : (tensor<?x?x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  %logits = tgraph.linear %nf, %wte tp <vocab> : (tensor<?x?x32xf32>, tensor<64x32xf32>) -> tensor<?x?x64xf32>
  %loss = tgraph.cross_entropy %logits, %labels : (tensor<?x?x64xf32>, tensor<?x?xi32>) -> tensor<f32>
  tgraph.output %loss : tensor<f32>
}
