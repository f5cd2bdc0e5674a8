//===- ModelAnalysis.cpp - tgraph to LayerProfile -------------------------===//
//
// A model body is cut into groups: the ops before the first tgraph.repeat
// (embedding), each repeat (a stack of identical layers), the ops after the
// last repeat (head). Every op reports its cost through CostOpInterface;
// this analysis adds them up per group and classifies parameters, saved
// activations and memory traffic by whether Megatron tensor parallelism
// splits them, found by propagating "TP-split" from column-parallel linears
// forward to the next row-parallel linear (Shoeybi et al. 2019).
//
//===----------------------------------------------------------------------===//

#include "trident/Analysis/ModelAnalysis.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <numeric>

using namespace mlir;
using namespace mlir::trident::graph;

namespace trident::analysis {
namespace {

int64_t effectiveSeq(ModelOp model, int64_t seqLen) {
  return seqLen > 0 ? seqLen : static_cast<int64_t>(model.getSeqLen());
}

RankedTensorType rt(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Layers in one iteration of a repeat body: its attention ops, at least 1.
int64_t layersIn(Block &body) {
  int64_t n = 0;
  body.walk([&](AttentionOp) { ++n; });
  return std::max<int64_t>(1, n);
}

/// Repeat count of every enclosing tgraph.repeat of `op`.
int64_t enclosingRepeats(Operation *op) {
  int64_t n = 1;
  for (auto rep = op->getParentOfType<RepeatOp>(); rep;
       rep = rep->getParentOfType<RepeatOp>())
    n *= rep.getCountAttr().getInt();
  return n;
}

const char *paramKindName(ParamKind k) {
  switch (k) {
  case ParamKind::Embedding:
    return "embedding";
  case ParamKind::Attention:
    return "attention";
  case ParamKind::Mlp:
    return "mlp";
  case ParamKind::Expert:
    return "experts";
  case ParamKind::Router:
    return "router";
  case ParamKind::Norm:
    return "norm";
  case ParamKind::Head:
    return "head";
  case ParamKind::Other:
    return "other";
  }
  return "other";
}

/// Where tensor parallelism leaves a parameter.
enum class ParamPlace { Sharded, Replicated, Expert, Vocab };

ParamPlace placeOf(Value param) {
  for (OpOperand &use : param.getUses()) {
    Operation *user = use.getOwner();
    // Experts split over ep (and etp), decided by the plan, not the op.
    if (auto moe = dyn_cast<MoEOp>(user))
      return (param == moe.getRouter() || param == moe.getRouterBias())
                 ? ParamPlace::Replicated
                 : ParamPlace::Expert;
    // Where tensor parallelism splits it: the one answer the lowering and
    // the shard exports read too (tensorParallelDim, GraphOps.h).
    if (tensorParallelDim(user, use.getOperandNumber())) {
      std::optional<TensorParallelLoop> loop = tensorParallelLoop(user);
      // (DLRM's bag tables have no loop numbering and split as a
      // vocabulary.)
      return loop && !loop->vocabulary ? ParamPlace::Sharded
                                       : ParamPlace::Vocab;
    }
    // A linear that does not split it (no role, or a row linear's bias).
    if (isa<LinearOp>(user))
      return ParamPlace::Replicated;
  }
  return ParamPlace::Replicated;
}

/// Accumulates one group's LayerCost from its ops, at micro-batch 1.
class GroupBuilder {
public:
  GroupBuilder(int64_t seq, LayerCost &cost) : seq(seq), cost(cost) {
    ctx.batch = 1;
    ctx.seq = seq;
  }

  void addBlockArgsAsInput(Block &body) {
    for (Value a : body.getArguments())
      cost.actLayerInput += numBytes(a.getType(), ctx);
  }

  void add(Operation &op, const llvm::DenseSet<Operation *> &groupOps);

private:
  bool sharded(Value v) const { return v && shardedValues.contains(v); }
  GemmCost &addGemm(double rows, int64_t n, int64_t k, int64_t batch,
                    TpSplit split, bool core = false, bool expert = false,
                    bool sixteenBit = false) {
    GemmCost g;
    g.rowsPerSample = rows;
    g.n = n;
    g.k = k;
    g.batch = batch;
    g.split = split;
    g.attentionCore = core;
    g.expert = expert;
    g.sixteenBit = sixteenBit;
    cost.gemms.push_back(g);
    return cost.gemms.back();
  }

  int64_t seq;
  LayerCost &cost;
  CostContext ctx;
  llvm::DenseSet<Value> shardedValues;
  double tpCollectiveBytesSum = 0;
};

void GroupBuilder::add(Operation &op,
                       const llvm::DenseSet<Operation *> &groupOps) {
  auto costed = dyn_cast<CostOpInterface>(&op);
  if (!costed || isa<RepeatOp, YieldOp, OutputOp, InputOp>(op))
    return;
  if (auto param = dyn_cast<ParamOp>(op)) {
    int64_t n = rt(param.getResult()).getNumElements();
    cost.paramBytesPerElem = elementBytes(param.getResult().getType());
    ++cost.paramTensors;
    switch (placeOf(param.getResult())) {
    case ParamPlace::Sharded:
      cost.paramsTpSharded += n;
      cost.largestTpShardedTensor = std::max(cost.largestTpShardedTensor, n);
      break;
    case ParamPlace::Replicated:
      cost.paramsReplicated += n;
      cost.largestReplicatedTensor = std::max(cost.largestReplicatedTensor, n);
      break;
    case ParamPlace::Expert:
      cost.paramsExpert += n;
      break;
    case ParamPlace::Vocab:
      cost.paramsVocab += n;
      cost.largestTpShardedTensor = std::max(cost.largestTpShardedTensor, n);
      break;
    }
    return;
  }
  // Parameters owned by another group (a tied LM head).
  for (Value v : op.getOperands())
    if (auto p = v.getDefiningOp<ParamOp>(); p && !groupOps.contains(p))
      cost.tiedParams += rt(p.getResult()).getNumElements();

  OpCost c = costed.getCost(ctx);
  cost.fwdFlops += c.fwdFlops;
  cost.bwdFlops += c.bwdFlops;
  cost.attnCoreFwdFlops += c.attnCoreFlops;
  cost.numKernels += c.kernels;

  // Sharding of the result, by the propagation rule in the file comment.
  bool anyShardedOperand = llvm::any_of(
      op.getOperands(), [&](Value v) { return sharded(v); });
  bool resultSharded = anyShardedOperand;
  if (auto lin = dyn_cast<LinearOp>(op)) {
    TpRole role = lin.getTpRole();
    resultSharded = role == TpRole::Column || role == TpRole::Vocab;
    auto w = rt(lin.getWeight());
    double rows = numElements(lin.getX().getType(), ctx) / w.getDimSize(1);
    TpSplit split = role == TpRole::Column ? TpSplit::Column
                    : role == TpRole::Row  ? TpSplit::Row
                    : role == TpRole::Vocab ? TpSplit::Vocab
                                            : TpSplit::None;
    // The LM head stays out of FP8 (GemmCost::sixteenBit).
    GemmCost &g = addGemm(rows, w.getDimSize(0), w.getDimSize(1), 1, split,
                          false, false, /*sixteenBit=*/role == TpRole::Vocab);
    // The bf16 programs' storage of its operands: each weight through its
    // own bf16 copy (rt::toBf16 of the master weight, which only this
    // linear reads), x and dy where their readers allow.
    g.xBf16 = readFromBf16Tensors(lin.getX());
    g.wBf16 = true;
    g.dyBf16 = gradientInBf16Tensor(lin.getResult());
    if (role == TpRole::Row) {
      cost.tpCollectivesFwd += 1;
      tpCollectiveBytesSum += numBytes(lin.getResult().getType(), ctx);
      cost.tpCollectiveBytes =
          tpCollectiveBytesSum / static_cast<double>(cost.tpCollectivesFwd);
    }
  } else if (auto attn = dyn_cast<AttentionOp>(op)) {
    resultSharded = sharded(attn.getQ());
    int64_t h = attn.getNumHeadsAttr().getInt();
    int64_t d = attn.getHeadDimAttr().getInt(), dv = attn.getValueHeadDim();
    int64_t window = attn.getWindowAttr().getInt();
    int64_t keys = window > 0 ? std::min(window, seq) : seq;
    addGemm(seq, keys, d, h, TpSplit::Heads, /*core=*/true);
    cost.gemms.back().scores = true;
    addGemm(seq, dv, keys, h, TpSplit::Heads, /*core=*/true);
    // A fused kernel skips the blocks a causal mask hides (FlashAttention,
    // Dao et al. 2022): about half of the s x s square in whole blocks
    // (causalFlashDensity), or the part of each window beyond the
    // sequence start. Model FLOPs still count it all.
    double density = 1.0;
    if (attn.getCausal())
      density = window > 0 && window < seq
                    ? 1.0 - double(window - 1) / (2.0 * seq)
                    : causalFlashDensity(seq);
    for (size_t i = cost.gemms.size() - 2; i < cost.gemms.size(); ++i) {
      cost.gemms[i].density = density;
      cost.gemms[i].keys = keys;
    }
    // Unfused attention materialises the scores: written by QK^T, read and
    // written by the softmax, read by PV (4 passes), and with dropout a
    // mask and a second copy (Korthikanti et al. 2022, Sec. 4.1).
    int64_t e = elementBytes(attn.getQ().getType());
    double probs = double(h) * seq * keys;
    double core = probs * 4 * e;
    if (attn.getDropout().convertToDouble() > 0)
      core += probs * (1 + 2 * e);
    cost.attnCoreBytes += core;
    cost.fwdBytesTpSharded += core;
    cost.cpKvBytesPerSample += numBytes(attn.getK().getType(), ctx) +
                               numBytes(attn.getV().getType(), ctx);
    if (attn.getKRope())
      cost.cpKvBytesPerSample += numBytes(attn.getKRope().getType(), ctx);
    cost.cpQoBytesPerSample += numBytes(attn.getQ().getType(), ctx) +
                               numBytes(attn.getResult().getType(), ctx);
    // Serving: the cache a token adds, and the decode work per cached key.
    auto width = [&](Value x) { return double(rt(x).getShape().back()); };
    double kvElems = width(attn.getK()) + width(attn.getV());
    int64_t kvHeads = attn.getNumKvHeadsAttr().getInt();
    double decodePerKey = 2.0 * double(h) * double(d + dv);
    if (Value kRope = attn.getKRope()) {
      // Multi-head latent attention (DeepSeek-V2): engines cache the
      // normalised latent that k and v are projected from, plus the rotary
      // key, once for all heads (and whole on every TP rank), and decode
      // over it in the absorbed form (LayerCost::decodeFlopsPerKey).
      double latent = width(attn.getK());
      if (auto kProj = attn.getK().getDefiningOp<LinearOp>())
        latent = width(kProj.getX());
      kvElems = latent + width(kRope);
      kvHeads = 1;
      decodePerKey = 2.0 * double(h) * (2 * latent + width(kRope));
    }
    cost.kvCacheBytesPerToken += kvElems * double(e);
    cost.kvCacheHeads = kvHeads;
    cost.attentionWindow = window;
    cost.attnFlopsPerKey += 2.0 * double(h) * double(d + dv);
    cost.decodeFlopsPerKey += decodePerKey;
  } else if (auto moe = dyn_cast<MoEOp>(op)) {
    resultSharded = false;
    int64_t h = rt(moe.getX()).getDimSize(2);
    int64_t e = moe.getNumExpertsAttr().getInt(),
            k = moe.getTopKAttr().getInt();
    int64_t fin = rt(moe.getWIn()).getDimSize(2),
            f = rt(moe.getWOut()).getDimSize(1);
    double tokens = numElements(moe.getX().getType(), ctx) / h;
    // The router stays out of FP8 (GemmCost::sixteenBit).
    addGemm(tokens, e, h, 1, TpSplit::None, false, false, /*sixteenBit=*/true);
    addGemm(tokens * k, fin, h, 1, TpSplit::Column, false, /*expert=*/true);
    addGemm(tokens * k, h, f, 1, TpSplit::Row, false, /*expert=*/true);
    cost.numExperts = e;
    cost.topK = k;
    cost.a2aBytesPerSample += tokens * k * h * elementBytes(moe.getX().getType());
  } else if (auto pe = dyn_cast<PatchEmbedOp>(op)) {
    auto w = rt(pe.getWeight());
    addGemm(numElements(pe.getResult().getType(), ctx) / w.getDimSize(1),
            w.getDimSize(1), w.getDimSize(0), 1, TpSplit::None);
  } else if (auto conv = dyn_cast<Conv2DOp>(op)) {
    auto w = rt(conv.getWeight());
    addGemm(numElements(conv.getResult().getType(), ctx) / w.getDimSize(0),
            w.getDimSize(0), w.getDimSize(1) * w.getDimSize(2) * w.getDimSize(3),
            1, TpSplit::None);
  } else if (auto mm = dyn_cast<MatmulOp>(op)) {
    auto a = rt(mm.getLhs());
    int64_t r = a.getRank();
    int64_t k = a.getDimSize(r - 1);
    if (!ShapedType::isDynamic(k) && k > 0)
      addGemm(numElements(mm.getResult().getType(), ctx) /
                  std::max<int64_t>(1, rt(mm.getResult()).getShape().back()),
              rt(mm.getResult()).getShape().back(), k, 1, TpSplit::None);
  } else if (auto dot = dyn_cast<DotInteractionOp>(op)) {
    int64_t n = dot.getFeatures().size();
    addGemm(n, n, rt(dot.getFeatures()[0]).getDimSize(1), 1, TpSplit::None);
  } else if (isa<EmbeddingOp, EmbeddingBagOp, CrossEntropyOp>(op)) {
    resultSharded = false;
    if (auto bag = dyn_cast<EmbeddingBagOp>(op)) {
      // The table rows read, split over the tp ranks holding them; the
      // ids, the looked-up rows (written whole on each rank, zeros for
      // rows held elsewhere, then read back by the pooling) and the
      // pooled bag are traffic on every rank.
      double ids = numBytes(bag.getIds().getType(), ctx);
      double rows = c.bytesRead - ids;
      cost.fwdBytesTpSharded += rows;
      cost.fwdBytesReplicated += ids + 2 * rows + c.bytesWritten;
    }
    if (isa<EmbeddingOp, EmbeddingBagOp>(op)) {
      // Vocab-parallel embedding (or bag): partial rows are all-reduced.
      cost.tpCollectivesFwd += 1;
      tpCollectiveBytesSum += numBytes(op.getResult(0).getType(), ctx);
      cost.tpCollectiveBytes =
          tpCollectiveBytesSum / static_cast<double>(cost.tpCollectivesFwd);
    }
  } else {
    // Pointwise work: memory traffic only.
    (resultSharded ? cost.fwdBytesTpSharded : cost.fwdBytesReplicated) +=
        c.bytesRead + c.bytesWritten;
  }
  if (resultSharded)
    for (Value r : op.getResults())
      shardedValues.insert(r);

  // Saved activations: the s^2 core apart, the rest split by whether the
  // kept tensors (the op's inputs) are TP-split.
  double saved = c.savedBytes[(int)RecomputePolicy::None];
  double core = c.savedAttnCoreBytes;
  cost.actAttnCore += core;
  bool keptSharded =
      isa<CrossEntropyOp>(op)
          ? sharded(op.getOperand(0))
          : (op.getNumOperands() > 0 && sharded(op.getOperand(0)));
  (keptSharded ? cost.actTpSharded : cost.actReplicated) += saved - core;
  (keptSharded ? cost.actGemmInTpSharded : cost.actGemmInReplicated) +=
      c.savedGemmInputBytes;
  (keptSharded ? cost.actBf16TensorTpSharded : cost.actBf16TensorReplicated) +=
      c.savedBf16TensorBytes;
}

} // namespace

ModelSummary summarizeModel(ModelOp model, int64_t seqLen) {
  ModelSummary s;
  s.name = model.getSymName().str();
  if (auto arch = model->getAttrOfType<StringAttr>("architecture"))
    s.architecture = arch.str();
  s.seqLen = effectiveSeq(model, seqLen);
  CostContext ctx{1, s.seqLen};

  // Parameters: each tgraph.param once, times its enclosing repeats.
  double expertTotal = 0, expertActive = 0;
  model.walk([&](ParamOp p) {
    int64_t n = rt(p.getResult()).getNumElements() * enclosingRepeats(p);
    s.params += n;
    s.paramsByKind[paramKindName(p.getKind())] += n;
  });
  model.walk([&](MoEOp moe) {
    if (s.experts == 0) {
      s.experts = moe.getNumExpertsAttr().getInt();
      s.topK = moe.getTopKAttr().getInt();
    }
    int64_t reps = enclosingRepeats(moe);
    double frac = static_cast<double>(moe.getTopKAttr().getInt()) /
                  moe.getNumExpertsAttr().getInt();
    for (Value w : {moe.getWIn(), moe.getWOut(), moe.getBIn(), moe.getBOut()})
      if (w) {
        double n = static_cast<double>(rt(w).getNumElements()) * reps;
        expertTotal += n;
        expertActive += n * frac;
      }
  });
  s.activeParams = s.params - static_cast<int64_t>(expertTotal) +
                   static_cast<int64_t>(expertActive);

  // Rows: segments between repeats, and each repeat.
  Block &body = model.getBody().front();
  bool seenRepeat = false;
  LayerSummary segment;
  auto flush = [&](bool atEnd) {
    if (segment.fwdFlops == 0 && segment.params == 0 &&
        segment.savedBytes[0] == 0)
      return;
    segment.kind = !seenRepeat ? LayerKind::Embedding
                   : atEnd     ? LayerKind::Head
                               : LayerKind::Other;
    segment.name = !seenRepeat ? "embedding" : atEnd ? "head" : "between";
    s.rows.push_back(segment);
    segment = LayerSummary();
  };
  for (Operation &op : body) {
    if (auto rep = dyn_cast<RepeatOp>(op)) {
      flush(false);
      seenRepeat = true;
      LayerSummary row;
      row.name = rep.getName().str();
      row.kind = LayerKind::Block;
      row.count = rep.getCountAttr().getInt();
      row.layersPerIteration = layersIn(rep.getBody().front());
      OpCost layer;
      for (Operation &inner : rep.getBody().front())
        if (auto c = dyn_cast<CostOpInterface>(&inner))
          layer += c.getCost(ctx);
      OpCost all = rep.getCost(ctx);
      // Parameters of one iteration: each tgraph.param once (op costs also
      // report the parameters they read).
      row.params = 0;
      rep.getBody().front().walk([&](ParamOp p) {
        row.params += rt(p.getResult()).getNumElements() * enclosingRepeats(p) /
                      rep.getCountAttr().getInt();
      });
      row.fwdFlops = layer.fwdFlops;
      row.bwdFlops = layer.bwdFlops;
      for (int i = 0; i < 3; ++i)
        row.savedBytes[i] = all.savedBytes[i] / row.count;
      s.layers += row.count * row.layersPerIteration;
      s.rows.push_back(row);
      continue;
    }
    if (auto c = dyn_cast<CostOpInterface>(&op)) {
      OpCost oc = c.getCost(ctx);
      if (!isa<ParamOp>(op)) {
        segment.fwdFlops += oc.fwdFlops;
        segment.bwdFlops += oc.bwdFlops;
        for (int i = 0; i < 3; ++i)
          segment.savedBytes[i] += oc.savedBytes[i];
      } else {
        segment.params += oc.params;
      }
    }
  }
  flush(true);
  if (!seenRepeat && !s.rows.empty())
    s.rows.back().kind = LayerKind::Other;

  OpCost total = model.getCost(ctx);
  s.fwdFlopsPerSequence = total.fwdFlops;
  s.bwdFlopsPerSequence = total.bwdFlops;
  s.fwdFlopsPerToken = total.fwdFlops / s.seqLen;
  s.trainFlopsPerToken = (total.fwdFlops + total.bwdFlops) / s.seqLen;
  return s;
}

LayerProfile buildLayerProfile(ModelOp model, int64_t seqLen) {
  LayerProfile profile;
  int64_t seq = effectiveSeq(model, seqLen);
  ModelSummary summary = summarizeModel(model, seq);
  profile.modelName = summary.name;
  profile.seqLen = seq;
  profile.totalParams = summary.params;
  profile.activeParams = summary.activeParams;
  profile.fwdFlopsPerToken = summary.fwdFlopsPerToken;
  profile.trainFlopsPerToken = summary.trainFlopsPerToken;
  profile.numLayers = summary.layers;

  model.walk([&](AttentionOp a) {
    // tp must divide every attention's heads: it divides their gcd.
    profile.numHeads =
        std::gcd(profile.numHeads, int64_t(a.getNumHeadsAttr().getInt()));
    profile.numKvHeads =
        std::gcd(profile.numKvHeads, int64_t(a.getNumKvHeadsAttr().getInt()));
  });
  model.walk([&](EmbeddingOp e) {
    if (profile.vocabSize == 0) {
      profile.vocabSize = rt(e.getTable()).getDimSize(0);
      profile.hidden = rt(e.getTable()).getDimSize(1);
    }
  });
  // The training dtype: that of the parameters.
  bool dtypeSet = false;
  model.walk([&](ParamOp p) {
    if (dtypeSet)
      return;
    dtypeSet = true;
    Type el = rt(p.getResult()).getElementType();
    profile.dtype = el.isF32()    ? DType::F32
                    : el.isF16()  ? DType::F16
                    : el.isBF16() ? DType::BF16
                                  : DType::FP8;
  });

  if (profile.hidden == 0) {
    model.walk([&](RepeatOp r) {
      if (profile.hidden == 0 && !r.getInits().empty())
        profile.hidden = rt(r.getInits()[0]).getShape().back();
    });
    model.walk([&](LinearOp l) {
      if (profile.hidden == 0)
        profile.hidden = rt(l.getResult()).getShape().back();
    });
  }
  Block &body = model.getBody().front();
  bool seenRepeat = false;
  // Ops of the current top-level segment, so tied parameters are found.
  std::vector<Operation *> segmentOps;
  auto flushSegment = [&](bool atEnd) {
    if (segmentOps.empty())
      return;
    LayerGroup group;
    group.cost.kind = !seenRepeat ? LayerKind::Embedding
                      : atEnd     ? LayerKind::Head
                                  : LayerKind::Other;
    group.cost.name = !seenRepeat ? "embedding" : atEnd ? "head" : "between";
    llvm::DenseSet<Operation *> members(segmentOps.begin(), segmentOps.end());
    GroupBuilder gb(seq, group.cost);
    for (Operation *op : segmentOps)
      gb.add(*op, members);
    profile.groups.push_back(std::move(group));
    segmentOps.clear();
  };
  for (Operation &op : body) {
    if (auto rep = dyn_cast<RepeatOp>(op)) {
      flushSegment(false);
      seenRepeat = true;
      LayerGroup group;
      group.count = rep.getCountAttr().getInt();
      group.cost.kind = LayerKind::Block;
      group.cost.name = rep.getName().str();
      Block &inner = rep.getBody().front();
      llvm::DenseSet<Operation *> members;
      inner.walk([&](Operation *o) { members.insert(o); });
      GroupBuilder gb(seq, group.cost);
      gb.addBlockArgsAsInput(inner);
      for (Operation &o : inner)
        gb.add(o, members);
      profile.groups.push_back(std::move(group));
      continue;
    }
    if (!isa<OutputOp>(op))
      segmentOps.push_back(&op);
  }
  flushSegment(true);
  // A model without repeated layers is one block.
  if (!seenRepeat && !profile.groups.empty())
    profile.groups.back().cost.kind = LayerKind::Block;
  return profile;
}

} // namespace trident::analysis
