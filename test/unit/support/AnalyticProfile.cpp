//===- AnalyticProfile.cpp - LayerProfile of a transformer, by formula ----===//
//
// Activation bytes per layer follow Korthikanti et al. 2022, Sec. 4.1
// (16-bit activations, 1-byte dropout masks), generalised to GQA (kv heads),
// any FFN size and gated MLPs:
//   attention: QKV input 2sh (replicated), Q and K 2s(h + kv), V 2s kv,
//     softmax 2as^2 + mask as^2 + dropout output 2as^2 (attention core),
//     output-projection input 2sh, dropout mask sh (replicated);
//   MLP: input 2sh (replicated), up output 2sf (x2 for the gate),
//     activation output 2sf, dropout mask sh (replicated);
//   two norms: 2sh each (replicated).
// For GPT-3 (kv = h, f = 4h, dropout) this is 10sh replicated + 24sh
// TP-sharded + 5as^2: the paper's sbh(34 + 5as/h).
//
//===----------------------------------------------------------------------===//

#include "AnalyticProfile.h"

#include <algorithm>
#include <utility>

namespace trident {

Result<LayerProfile> buildTransformerProfile(const TransformerShape &in) {
  TransformerShape t = in;
  if (t.kvHeads == 0)
    t.kvHeads = t.heads;
  if (t.ffn == 0)
    t.ffn = 4 * t.hidden;
  if (t.numExperts > 0 && t.moeFfn == 0)
    t.moeFfn = t.ffn;
  if (t.layers <= 0 || t.hidden <= 0 || t.heads <= 0 || t.vocab <= 0 ||
      t.seqLen <= 0 || t.kvHeads <= 0 || t.ffn <= 0)
    return Status::error("transformer '" + t.name +
                         "': layers, hidden, heads, vocab and seq_len must be "
                         "positive");
  if (t.hidden % t.heads != 0 || t.heads % t.kvHeads != 0)
    return Status::error("transformer '" + t.name +
                         "': hidden must divide by heads and heads by kv heads");
  if (t.numExperts > 0 && (t.topK <= 0 || t.topK > t.numExperts))
    return Status::error("transformer '" + t.name +
                         "': MoE needs 0 < top_k <= num_experts");

  const double s = double(t.seqLen), h = double(t.hidden), a = double(t.heads);
  const double d = h / a, kv = d * double(t.kvHeads), f = double(t.ffn);
  const double V = double(t.vocab);
  const double eb = double(dtypeBytes(t.dtype)); // activation element bytes
  const double mask = t.dropout ? 1.0 : 0.0;      // bytes per mask element
  const bool moe = t.numExperts > 0;
  const double E = double(t.numExperts), K = double(t.topK);
  const double fm = double(t.moeFfn);

  LayerProfile p;
  p.modelName = t.name;
  p.seqLen = t.seqLen;
  p.dtype = t.dtype;
  p.hidden = t.hidden;
  p.vocabSize = t.vocab;
  p.numHeads = t.heads;
  p.numLayers = t.layers;

  auto gemm = [](double rows, double n, double k, double batch, TpSplit split,
                 bool core = false, bool expert = false, double density = 1) {
    GemmCost g;
    g.rowsPerSample = rows;
    g.n = int64_t(n);
    g.k = int64_t(k);
    g.batch = int64_t(batch);
    g.split = split;
    g.attentionCore = core;
    g.expert = expert;
    g.density = density;
    return g;
  };
  auto flopsOf = [](const GemmCost &g) {
    return 2.0 * g.rowsPerSample * double(g.n) * double(g.k) * double(g.batch);
  };

  // --- embedding ---
  LayerCost emb;
  emb.name = "embedding";
  emb.kind = LayerKind::Embedding;
  emb.paramsVocab = t.vocab * t.hidden;
  emb.paramsReplicated = t.learnedPositions ? t.seqLen * t.hidden : 0;
  emb.largestTpShardedTensor = emb.paramsVocab;
  emb.largestReplicatedTensor = emb.paramsReplicated;
  emb.fwdBytesReplicated = s * h * eb * (t.learnedPositions ? 3 : 1);
  emb.actReplicated = mask * s * h; // embedding dropout mask
  emb.numKernels = t.learnedPositions ? 3 : 1;
  emb.tpCollectivesFwd = 1; // vocab-parallel embedding all-reduce
  emb.tpCollectiveBytes = s * h * eb;
  emb.paramBytesPerElem = eb;

  // --- block ---
  LayerCost blk;
  blk.name = "block";
  blk.kind = LayerKind::Block;
  blk.gemms.push_back(gemm(s, h + 2 * kv, h, 1, TpSplit::Column));
  // Causal, as ModelAnalysis records it for a fused kernel.
  const double causal = causalFlashDensity(t.seqLen);
  blk.gemms.push_back(gemm(s, s, d, a, TpSplit::Heads, true, false, causal));
  blk.gemms.push_back(gemm(s, d, s, a, TpSplit::Heads, true, false, causal));
  for (size_t i = 1; i <= 2; ++i)
    blk.gemms[i].keys = t.seqLen;
  blk.gemms.push_back(gemm(s, h, h, 1, TpSplit::Row));
  double mlpUp = t.gatedMlp ? 2 : 1;
  if (!moe) {
    blk.gemms.push_back(gemm(s, mlpUp * f, h, 1, TpSplit::Column));
    blk.gemms.push_back(gemm(s, h, f, 1, TpSplit::Row));
  } else {
    blk.gemms.push_back(gemm(s, E, h, 1, TpSplit::None)); // router
    blk.gemms.push_back(
        gemm(s * K / E, mlpUp * fm, h, E, TpSplit::Column, false, true));
    blk.gemms.push_back(gemm(s * K / E, h, fm, E, TpSplit::Row, false, true));
  }
  for (const GemmCost &g : blk.gemms) {
    blk.fwdFlops += flopsOf(g);
    if (g.attentionCore)
      blk.attnCoreFwdFlops += flopsOf(g);
  }
  blk.bwdFlops = 2 * blk.fwdFlops;
  double ffnAct = moe ? K * fm : f; // MLP width a token goes through
  // Non-GEMM traffic (read + write), forward. Replicated: 2 norms (r+w),
  // 2 residual adds (2r + w), 2 dropouts (r + w + mask).
  blk.fwdBytesReplicated =
      s * h * eb * (2 * 2 + 2 * 3) + (t.dropout ? 2 * s * h * (2 * eb + 1) : 0);
  // TP-sharded: activation function (gated: 2 reads), rotary / bias on
  // Q and K, and the unfused softmax + mask + dropout over a s^2 scores.
  double actFn = s * ffnAct * eb * (t.gatedMlp ? 3 : 2);
  double qk = 2 * s * (h + kv) * eb;
  blk.attnCoreBytes = a * s * s * (2 * eb + mask * (1 + 2 * eb));
  blk.fwdBytesTpSharded = actFn + qk + blk.attnCoreBytes;
  blk.numKernels = int64_t(blk.gemms.size()) + 12;

  int64_t hi = t.hidden, kvi = int64_t(kv), fi = t.ffn;
  blk.paramsTpSharded = hi * (hi + 2 * kvi) + hi * hi;
  if (!moe)
    blk.paramsTpSharded += int64_t(mlpUp + 1) * hi * fi;
  else
    blk.paramsExpert = t.numExperts * int64_t(mlpUp + 1) * hi * t.moeFfn;
  blk.paramsReplicated = (t.biases ? 4 : 2) * hi; // two norms
  // Largest tensors: the fused QKV weight or the MLP's up (+ gate)
  // weight; a norm's scale, or the router.
  blk.largestTpShardedTensor =
      std::max(hi * (hi + 2 * kvi), moe ? 0 : int64_t(mlpUp) * hi * fi);
  blk.largestReplicatedTensor = moe ? t.numExperts * hi : hi;
  if (t.biases) {
    blk.paramsTpSharded += (hi + 2 * kvi) + (moe ? 0 : int64_t(mlpUp) * fi);
    blk.paramsReplicated += 2 * hi; // row-linear biases
  }
  if (moe)
    blk.paramsReplicated += t.numExperts * hi; // router
  blk.paramBytesPerElem = eb;
  // Tensors: two norms (scale, + shift with biases); the attention's
  // fused QKV and output weights; the MLP's up (gate fused) and down
  // weights, or each expert's two and the router; a bias per dense linear.
  int64_t linears = 2 + (moe ? 2 * t.numExperts + 1 : 2);
  blk.paramTensors = (t.biases ? 4 : 2) + linears +
                     (t.biases ? (moe ? 2 : 4) : 0);

  // Activations (bytes per sample).
  blk.actReplicated = s * h * eb /*QKV in*/ + s * h * eb /*MLP in*/ +
                      2 * s * h * eb /*norm inputs*/ +
                      2 * mask * s * h /*dropout masks*/;
  blk.actTpSharded = 2 * s * (h + kv) /*Q,K*/ * eb / 2 + s * kv * eb /*V*/ +
                     s * h * eb /*out-proj in*/ +
                     s * ffnAct * eb * (t.gatedMlp ? 2 : 1) /*up (+gate)*/ +
                     s * ffnAct * eb /*act out*/;
  blk.actAttnCore = a * s * s * (eb + mask + (t.dropout ? eb : 0));
  blk.actLayerInput = s * h * eb;
  if (moe)
    blk.actReplicated += s * E * 4; // router logits, fp32

  blk.tpCollectivesFwd = 2;
  blk.tpCollectiveBytes = s * h * eb;
  blk.cpKvBytesPerSample = 2 * s * kv * eb;
  if (moe) {
    blk.a2aBytesPerSample = s * h * eb * K;
    blk.numExperts = t.numExperts;
    blk.topK = t.topK;
  }

  // --- head: final norm, LM head, fp32 cross entropy ---
  LayerCost head;
  head.name = "head";
  head.kind = LayerKind::Head;
  head.gemms.push_back(gemm(s, V, h, 1, TpSplit::Vocab));
  head.fwdFlops = flopsOf(head.gemms[0]);
  head.bwdFlops = 2 * head.fwdFlops;
  head.paramsVocab = t.vocab * t.hidden; // tied: a copy on the last stage
  head.paramsReplicated = (t.biases ? 2 : 1) * hi;
  head.largestTpShardedTensor = head.paramsVocab;
  head.largestReplicatedTensor = hi;
  head.fwdBytesReplicated = 2 * s * h * eb;
  head.fwdBytesTpSharded = s * V * (eb + 4 + 4); // logits -> fp32 softmax
  // Korthikanti Sec. 4.3: 4sbh/t (1 + v/h) after the last layer: norm
  // input, head input, fp32 logits.
  head.actReplicated = s * h * eb;
  head.actTpSharded = s * h * eb + 4 * s * V;
  head.actLayerInput = s * h * eb;
  head.numKernels = 6;
  head.tpCollectivesFwd = 1; // input gradient all-reduce / SP gather
  head.tpCollectiveBytes = s * h * eb;
  head.paramBytesPerElem = eb;

  p.groups.push_back({emb, 1});
  p.groups.push_back({blk, t.layers});
  p.groups.push_back({head, 1});

  double L = double(t.layers);
  int64_t blockParams = blk.params();
  p.totalParams = emb.params() + t.layers * blockParams + head.params() -
                  (t.tiedEmbeddings ? head.paramsVocab : 0);
  int64_t activeBlock = blockParams;
  if (moe)
    activeBlock = blockParams - blk.paramsExpert +
                  int64_t(double(blk.paramsExpert) * K / E);
  p.activeParams = emb.params() + t.layers * activeBlock + head.params() -
                   (t.tiedEmbeddings ? head.paramsVocab : 0);
  p.fwdFlopsPerToken = (L * blk.fwdFlops + head.fwdFlops) / s;
  p.trainFlopsPerToken = 3 * p.fwdFlopsPerToken;
  return p;
}

TransformerShape llamaStyleShape(std::string name, int64_t layers,
                                 int64_t hidden, int64_t heads,
                                 int64_t kvHeads, int64_t ffn, int64_t vocab,
                                 int64_t seqLen, int64_t experts) {
  TransformerShape s;
  s.name = std::move(name);
  s.layers = layers;
  s.hidden = hidden;
  s.heads = heads;
  s.kvHeads = kvHeads;
  s.ffn = ffn;
  s.vocab = vocab;
  s.seqLen = seqLen;
  s.gatedMlp = true;
  s.dropout = false;
  s.biases = false;
  s.learnedPositions = false;
  s.tiedEmbeddings = false;
  if (experts > 0) {
    s.numExperts = experts;
    s.topK = 2;
  }
  return s;
}

} // namespace trident
