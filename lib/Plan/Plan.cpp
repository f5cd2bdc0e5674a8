//===- Plan.cpp - Building a plan from an evaluated configuration ---------===//

#include "trident/Plan/Plan.h"
#include "trident/Cost/Envelope.h"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace trident::plan {

int64_t plannedBlocks(const LayerProfile &profile) {
  int64_t n = 0;
  for (const LayerGroup &g : profile.groups)
    if (g.cost.kind == LayerKind::Block || g.cost.kind == LayerKind::Other)
      n += g.count;
  return n;
}

ModelShape modelShapeOf(const LayerProfile &profile) {
  ModelShape s;
  s.layers = plannedBlocks(profile);
  s.hidden = profile.hidden;
  s.vocab = profile.vocabSize;
  s.params = profile.totalParams;
  return s;
}

double exposedCommShare(const Evaluation &e) {
  if (e.stages.empty() || e.iterationSeconds <= 0)
    return 0;
  size_t crit = 0;
  double busiest = -1;
  for (size_t s = 0; s < e.stages.size(); ++s) {
    double b = e.stages[s].computeSeconds + e.stages[s].exposedCommSeconds;
    if (b > busiest)
      busiest = b, crit = s;
  }
  return e.stages[crit].exposedCommSeconds / e.iterationSeconds;
}

Plan axesPlan(const ParallelConfig &cfg) {
  Plan p;
  static_cast<ParallelAxes &>(p) = cfg;
  p.precision = std::string(dtypeName(cfg.precision));
  p.globalBatch = cfg.globalBatch;
  if (cfg.dp > 0 && cfg.microBatch > 0)
    p.numMicroBatches = cfg.globalBatch / (cfg.dp * cfg.microBatch);
  // The heaviest policy of any stage (the same for every stage unless the
  // plan recomputes per stage).
  Recompute heaviest = Recompute::None;
  for (int64_t s = 0; s < cfg.pp; ++s)
    heaviest = std::max(heaviest, cfg.recomputeOf(s));
  p.recompute = heaviest;
  p.schedule = cfg.scheduleKind();
  return p;
}

Plan makePlan(const LayerProfile &profile, const Cluster &cluster,
              const ParallelConfig &cfg, const Evaluation &eval,
              double pricePerGpuHour) {
  Plan p = axesPlan(cfg);
  p.model = profile.modelName;
  p.modelShape = modelShapeOf(profile);
  p.seqLen = profile.seqLen;
  p.cluster = cluster.name;
  p.gpus = cluster.totalGpus();
  if (!cluster.groups.empty())
    p.gpusPerNode = cluster.groups.front().gpusPerNode;
  for (const NodeGroup &g : cluster.groups)
    if (g.gpusPerNode != p.gpusPerNode)
      p.gpusPerNode = 0; // node groups of different sizes
  p.runtime = std::string(runtimeName(eval.runtime));
  p.numMicroBatches = eval.microBatches;
  p.schedule = eval.schedule;

  // Blocks per model chunk: the given split or the Evaluator's even one.
  const int64_t numBlocks = plannedBlocks(profile);
  const int64_t G = cfg.pp * cfg.vpp;
  if (int64_t(cfg.layersPerChunk.size()) == G) {
    p.layersPerChunk = cfg.layersPerChunk;
  } else {
    p.layersPerChunk.resize(size_t(G));
    for (int64_t g = 0; g < G; ++g)
      p.layersPerChunk[size_t(g)] =
          numBlocks / G + ((g >= 1 && g <= numBlocks % G) ? 1 : 0);
  }
  std::vector<int64_t> begin(static_cast<size_t>(G));
  for (int64_t g = 0, at = 0; g < G; ++g) {
    begin[size_t(g)] = at;
    at += p.layersPerChunk[size_t(g)];
  }

  for (const DataShare &d : cfg.dataShares) {
    DataSharePlan dsp;
    if (d.group >= 0 && size_t(d.group) < cluster.groups.size())
      dsp.group = cluster.groups[size_t(d.group)].name;
    dsp.dp = d.dp;
    dsp.microBatches = d.microBatches;
    p.dataShares.push_back(dsp);
  }
  const int64_t shares = std::max<int64_t>(1, int64_t(cfg.dataShares.size()));
  for (int64_t k = 0; k < cfg.pp * shares && k < int64_t(eval.stages.size());
       ++k) {
    const int64_t s = k % cfg.pp;
    const StageBreakdown &b = eval.stages[size_t(k)];
    // Where the stage's GPUs start: stages follow each other inside the
    // plan's GPUs, or inside their share's node group.
    int64_t stageGpus = cfg.dp * cfg.tp * cfg.cp, base = 0;
    if (!cfg.dataShares.empty()) {
      const DataShare &d = cfg.dataShares[size_t(k / cfg.pp)];
      stageGpus = d.dp * cfg.tp * cfg.cp;
      base = cluster.firstGpuOfGroup(d.group);
    }
    StagePlan st;
    st.index = s;
    st.layers = b.layers;
    for (int64_t c = 0; c < cfg.vpp; ++c) {
      int64_t g = c * cfg.pp + s;
      st.chunkLayers.push_back(p.layersPerChunk[size_t(g)]);
      st.chunkBlockRanges.emplace_back(
          begin[size_t(g)], begin[size_t(g)] + p.layersPerChunk[size_t(g)]);
    }
    st.hasEmbedding = b.hasEmbedding;
    st.hasHead = b.hasHead;
    st.recompute = cfg.recomputeOf(s);
    if (b.nodeGroup >= 0 && size_t(b.nodeGroup) < cluster.groups.size()) {
      st.deviceGroup = cluster.groups[size_t(b.nodeGroup)].name;
      st.gpu = cluster.groups[size_t(b.nodeGroup)].gpu.name;
    }
    st.firstGpu = base + s * stageGpus;
    st.numGpus = stageGpus;
    st.weightBytes = b.weightBytes;
    st.gradientBytes = b.gradientBytes;
    st.optimizerBytes = b.optimizerBytes;
    st.activationBytes = b.activationBytes;
    st.bufferBytes = b.bufferBytes;
    st.totalBytes = b.totalBytes;
    st.capacityBytes = b.capacityBytes;
    st.peakInFlight = b.peakInFlight;
    st.zero3GatherElements = b.zero3GatherElements;
    st.computeSeconds = b.computeSeconds;
    st.exposedCommSeconds = b.exposedCommSeconds;
    st.bubbleSeconds = b.bubbleSeconds;
    p.stages.push_back(std::move(st));
  }

  p.predicted.iterationSeconds = eval.iterationSeconds;
  p.predicted.tokensPerSecond = eval.tokensPerSecond;
  p.predicted.tflopsPerGpu = eval.tflopsPerGpu;
  p.predicted.mfu = eval.mfu;
  p.predicted.peakMemoryBytes = eval.peakMemoryBytes;
  p.predicted.bubbleFraction = eval.bubbleFraction;
  p.predicted.exposedCommFraction = exposedCommShare(eval);
  TimeRange range =
      timeRange(regimeOf(profile, cluster, cfg), eval.iterationSeconds);
  p.predicted.iterationLowSeconds = range.lowSeconds;
  p.predicted.iterationHighSeconds = range.highSeconds;
  p.warnings = envelopeWarnings(profile, cluster, cfg, eval);
  if (pricePerGpuHour > 0 && eval.tokensPerSecond > 0)
    p.predicted.costPerMillionTokens = pricePerGpuHour * double(p.gpus) /
                                       3600.0 / eval.tokensPerSecond * 1e6;
  return p;
}

Result<ParallelConfig> toParallelConfig(const Plan &p) {
  ParallelConfig c;
  static_cast<ParallelAxes &>(c) = p;
  c.globalBatch = p.globalBatch;
  c.schedule = p.scheduleKind();
  // Per-stage policies, when the stages do not all use the plan's.
  bool differs = false;
  std::vector<Recompute> perStage;
  for (const StagePlan &st : p.stages) {
    if (int64_t(perStage.size()) == p.pp)
      break; // data shares repeat the stages per share
    perStage.push_back(st.recompute);
    differs = differs || st.recompute != p.recompute;
  }
  if (differs && int64_t(perStage.size()) == p.pp)
    c.stageRecompute = std::move(perStage);
  auto d = parseDType(p.precision);
  if (!d)
    return Status::error("plan: precision '" + p.precision + "' is unknown");
  c.precision = *d;
  c.layersPerChunk = p.layersPerChunk;
  // Data shares are listed in the cluster's node-group order.
  for (const DataSharePlan &d : p.dataShares) {
    DataShare share;
    share.group = int64_t(c.dataShares.size());
    share.dp = d.dp;
    share.microBatches = d.microBatches;
    c.dataShares.push_back(share);
  }
  return c;
}

namespace {

/// Model names compare as tgraph symbols in any case: every character
/// other than a letter or digit is '_' ("Llama-3-8B" and "llama_3_8b"
/// agree).
std::string symbolKey(std::string_view name) {
  std::string out;
  for (char c : name)
    out += std::isalnum(static_cast<unsigned char>(c))
               ? char(std::tolower(static_cast<unsigned char>(c)))
               : '_';
  return out;
}

std::string str(int64_t v) { return std::to_string(v); }

} // namespace

Status verify(const Plan &p, std::string_view planSource,
              const PlanTarget &target) {
  const std::string src(planSource);
  auto bad = [&](const std::string &what) {
    return Status::error(src + ": " + what);
  };
  // The plan's own rules.
  for (const AxisSpec &a : kAxes)
    if (Status s = checkAxisBounds(a, a.get(p),
                                   (a.inParallelObject ? "parallel." : "") +
                                       std::string(a.jsonKey));
        !s)
      return bad(s.message());
  if (p.numMicroBatches < 1 || p.globalBatch < 1 || p.seqLen < 1)
    return bad("num_micro_batches, global_batch and seq_len must be >= 1");
  if (p.dataShares.empty() &&
      p.globalBatch != p.dp * p.microBatch * p.numMicroBatches)
    return bad("global_batch " + str(p.globalBatch) +
               " is not dp * micro_batch_size * num_micro_batches = " +
               str(p.dp * p.microBatch * p.numMicroBatches));
  if (int64_t(p.layersPerChunk.size()) != p.pp * p.vpp)
    return bad("layers_per_chunk has " + str(int64_t(p.layersPerChunk.size())) +
               " entries, expected pp * vpp = " + str(p.pp * p.vpp));
  if ((p.scheduleKind() == ScheduleKind::Interleaved1F1B) != (p.vpp > 1))
    return bad("schedule '" + std::string(scheduleKindName(p.scheduleKind())) +
               "' does not match vpp " + str(p.vpp) +
               " (interleaved-1f1b needs vpp > 1, the others vpp 1)");
  const int64_t product = p.dp * p.tp * p.pp * p.cp;
  if (p.gpus > 0 && p.gpus != product)
    return bad("cluster.gpus is " + str(p.gpus) + " but dp * tp * pp * cp = " +
               str(product));
  int64_t layers = 0;
  for (int64_t n : p.layersPerChunk)
    layers += n;

  // The model it is applied to.
  if (const LayerProfile *m = target.model) {
    const std::string on = " but " + target.modelSource;
    if (!target.sameFile && !p.model.empty() &&
        symbolKey(p.model) != symbolKey(m->modelName))
      return bad("the plan is for model '" + p.model + "'" + on + " is '" +
                 m->modelName + "'");
    const int64_t blocks = plannedBlocks(*m);
    if (layers != blocks)
      return bad("the plan splits " + str(layers) + " layers into stages" + on +
                 " has " + str(blocks) +
                 ": the plan was made for another model");
    const ModelShape shape = modelShapeOf(*m);
    if (p.modelShape.known())
      for (auto [name, planned, actual] :
           {std::tuple{"hidden size", p.modelShape.hidden, shape.hidden},
            std::tuple{"vocabulary", p.modelShape.vocab, shape.vocab},
            std::tuple{"parameter count", p.modelShape.params, shape.params},
            std::tuple{"layer count", p.modelShape.layers, shape.layers}})
        if (planned != actual)
          return bad("the plan's model has " + std::string(name) + " " +
                     str(planned) + on + " has " + str(actual) +
                     ": the plan was made for another model of that name");
    if (m->seqLen > 0 && m->seqLen != p.seqLen)
      return bad("the plan is for sequence length " + str(p.seqLen) + on +
                 " is at " + str(m->seqLen));
  }

  // The cluster.
  if (const Cluster *c = target.cluster) {
    const int64_t total = c->totalGpus();
    // A plan may use a part of the cluster (the cost objective tries
    // fewer nodes; the note says so).
    const bool part = !p.clusterNote.empty() && p.gpus > 0 && p.gpus < total;
    if (p.gpus > 0 && p.gpus != total && !part)
      return bad("the plan uses " + str(p.gpus) + " GPUs but " +
                 target.clusterSource + " has " + str(total));
    if (product > total)
      return bad("dp * tp * pp * cp = " + str(product) + " GPUs but " +
                 target.clusterSource + " has " + str(total));
  }
  return Status::ok();
}

} // namespace trident::plan
