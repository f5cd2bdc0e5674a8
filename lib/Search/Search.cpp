//===- Search.cpp - The planner: enumerate, partition, prune, rank --------===//
//
// Three phases (docs/planner.md has the full story):
//
//  1. Enumerate every valid combination of the outer axes on every cluster
//     variant, as families (tp, cp, pp, dp, ep, sp, micro-batch, recompute)
//     whose members are the (vpp, ZeRO) choices: members share per-layer
//     costs and the step-time bound, so sorting and pruning work on
//     families and a worker expands the members it visits.
//  2. Probe, once per (GPU type, tp, cp, ep, micro-batch, sp, recompute),
//     the Evaluator's forward+backward time and activation memory of one
//     layer of each profile group (a one-layer, one-stage evaluation), so
//     the partitioner optimises the very numbers the final ranking uses.
//     From them each configuration gets an exact step-time lower bound
//     (m * total work / pp: the busiest stage runs at least its share for
//     each micro-batch) and configurations are visited in bound order.
//  3. Workers take configurations in that order: split the layers by
//     dynamic programming under the memory limits (Partition.h), evaluate
//     the split (and the even split) with the full Evaluator, and keep the
//     top K. A configuration whose bound exceeds the current K-th best is
//     skipped, and since configurations come in bound order, so is every
//     later one. Pruning is strict (bound > K-th best), so whatever the
//     thread timing, every plan that belongs in the final top K is
//     evaluated: the result does not depend on the number of threads.
//
//===----------------------------------------------------------------------===//

#include "SearchInternal.h"

#include <chrono>

namespace trident::search {

using namespace detail;

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

int compareConfigs(const ParallelConfig &a, const ParallelConfig &b) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  int r;
  if ((r = cmp(a.tp, b.tp)) || (r = cmp(a.cp, b.cp)) || (r = cmp(a.pp, b.pp)) ||
      (r = cmp(a.dp, b.dp)) || (r = cmp(a.ep, b.ep)) ||
      (r = cmp(a.etp, b.etp)) || (r = cmp(a.vpp, b.vpp)) ||
      (r = cmp(a.microBatch, b.microBatch)) ||
      (r = cmp(a.globalBatch, b.globalBatch)) ||
      (r = cmp(int(a.sequenceParallel), int(b.sequenceParallel))) ||
      (r = cmp(int(a.tpCommOverlap), int(b.tpCommOverlap))) ||
      (r = cmp(int(a.recompute), int(b.recompute))) ||
      (r = cmp(a.zeroStage, b.zeroStage)) ||
      (r = cmp(int(a.precision), int(b.precision))))
    return r;
  if (a.stageRecompute < b.stageRecompute)
    return -1;
  if (b.stageRecompute < a.stageRecompute)
    return 1;
  if (a.dataShares < b.dataShares)
    return -1;
  if (b.dataShares < a.dataShares)
    return 1;
  int sa = a.schedule ? int(*a.schedule) : -1;
  int sb = b.schedule ? int(*b.schedule) : -1;
  if ((r = cmp(sa, sb)))
    return r;
  if (a.layersPerChunk < b.layersPerChunk)
    return -1;
  if (b.layersPerChunk < a.layersPerChunk)
    return 1;
  return 0;
}

Result<StageModel> stageModel(const LayerProfile &profile,
                              const Cluster &cluster, const ParallelConfig &cfg,
                              const EvalOptions &evalOpt,
                              double maxMemoryFraction) {
  if (cfg.vpp != 1)
    return Status::error("stageModel: vpp must be 1");
  Result<Evaluator> ev = Evaluator::create(profile, cluster, evalOpt);
  if (!ev)
    return ev.status();
  if (Status s = ev->validate(cfg); !s)
    return s;
  SearchOptions opt;
  opt.precision = cfg.precision;
  opt.globalBatch = cfg.globalBatch;
  opt.maxMemoryFraction = maxMemoryFraction;
  Shared sh{profile, opt, evalOpt};
  sh.sb = stateBytes(opt.precision, evalOpt);
  initProfile(sh);
  Variant v;
  v.cluster = cluster;
  for (size_t g = 0; g < cluster.groups.size(); ++g)
    v.origGroup.push_back(int32_t(g));
  sh.variants.push_back(v);
  sh.evaluators.push_back(*ev);
  Config C;
  C.cfg = cfg;
  addKeys(sh, C);
  int64_t probes = 0;
  if (Status s = probeAll(sh, cluster, 1, probes); !s)
    return s;
  ScheduleKind kind = cfg.schedule.value_or(ScheduleKind::OneFOneB);
  int64_t m = cfg.globalBatch / (cfg.dp * cfg.microBatch);
  Result<ScheduleCache::Simulated> sched =
      ScheduleCache::global().getSimulated(kind, cfg.pp, m, 1);
  if (!sched)
    return sched.status();
  StageModel out;
  out.numBlocks = sh.numBlocks;
  stageCosts(sh, C, sched->schedule->peakInFlight(), out.costs, out.stages);
  return out;
}

bool rankedBefore(const Candidate &a, const Candidate &b) {
  if (a.objective != b.objective)
    return a.objective < b.objective;
  if (a.eval.peakMemoryBytes != b.eval.peakMemoryBytes)
    return a.eval.peakMemoryBytes < b.eval.peakMemoryBytes;
  if (a.clusterIndex != b.clusterIndex)
    return a.clusterIndex < b.clusterIndex;
  return compareConfigs(a.config, b.config) < 0;
}

namespace {

/// The search options' own bounds.
Status checkOptions(const SearchOptions &opt) {
  if (opt.globalBatch <= 0)
    return Status::error("--global-batch must be positive, got " +
                         str(opt.globalBatch));
  // The Evaluator's batch limit; also bounds the divisor enumeration.
  if (opt.globalBatch > (int64_t(1) << 31))
    return Status::error("--global-batch " + str(opt.globalBatch) +
                         " is above the supported limit " +
                         str(int64_t(1) << 31));
  if (opt.topK < 1)
    return Status::error("--top must be at least 1, got " + str(opt.topK));
  if (opt.threads < 0)
    return Status::error("--threads must be >= 0 (0 = all cores), got " +
                         str(opt.threads));
  if (!(opt.maxMemoryFraction > 0 && opt.maxMemoryFraction <= 1))
    return Status::error("--max-memory-fraction must be in (0, 1], got " +
                         std::to_string(opt.maxMemoryFraction));
  if (!(opt.pricePerGpuHour >= 0) || !std::isfinite(opt.pricePerGpuHour))
    return Status::error("--price-per-gpu-hour must be a non-negative number");
  if (opt.objective == Objective::CostPerToken && opt.pricePerGpuHour <= 0)
    return Status::error("the cost-per-token objective needs "
                         "--price-per-gpu-hour");
  return Status::ok();
}

} // namespace

Result<SearchResult> searchPlans(const LayerProfile &profile,
                                 const Cluster &cluster,
                                 const SearchOptions &opt,
                                 const EvalOptions &evalOpt) {
  auto t0 = std::chrono::steady_clock::now();
  if (Status s = checkOptions(opt); !s)
    return s;
  // A pinned tp_comm_overlap is each configuration's own (kSpOverlap,
  // tpOverlapCandidate); a pinned cp_comm_type holds for every
  // configuration of the search (else the runtime's).
  EvalOptions eo = evalOpt;
  if (auto cpComm = opt.pins.as<CpCommType>(Axis::CpCommType))
    eo.cpCommType = *cpComm;
  // And a pinned FP8 recipe (the planner does not choose one: it is a
  // numerics choice, priced here).
  if (auto recipe = opt.pins.as<Fp8Recipe>(Axis::Fp8Recipe)) {
    if (std::string why = fp8RecipePrecisionRefusal(*recipe, opt.precision);
        !why.empty())
      return Status::error("--fix: " + why);
    eo.fp8Recipe = *recipe;
  }
  Result<Evaluator> base = Evaluator::create(profile, cluster, eo);
  if (!base)
    return base.status();

  Shared sh{profile, opt, eo};
  sh.sb = stateBytes(opt.precision, evalOpt);
  sh.tokensPerStep = double(opt.globalBatch) * double(profile.seqLen);
  const AxisSpec &overlapRow = axisSpec(Axis::TpCommOverlap);
  sh.runtimeOverlapsTp =
      axisAccepts(overlapRow, overlapRow.runtimes[size_t(eo.runtime)], 1);
  initProfile(sh);
  if (Status s = checkPins(sh, cluster); !s)
    return s;
  if (Status s = buildVariants(sh, cluster, *base); !s)
    return s;

  // Phase 1: enumerate.
  for (size_t vi = 0; vi < sh.variants.size(); ++vi)
    enumerate(sh, int32_t(vi), sh.evaluators[vi]);
  if (sh.configs.empty())
    return Status::error(
        sh.axesRefusal.empty()
            ? whyNoConfig(sh, sh.evaluators[0])
            : "no configuration is accepted; the first refused: " +
                  sh.axesRefusal);

  // Phase 2: the distinct per-layer cost keys, probed in parallel.
  for (Config &C : sh.configs)
    C.keyIndex = addKeys(sh, C);
  int64_t threads = opt.threads > 0
                        ? opt.threads
                        : std::max<int64_t>(1, std::thread::hardware_concurrency());
  SearchResult result;
  result.stats.threads = threads;
  if (Status s = probeAll(sh, cluster, threads, result.stats.probes); !s)
    return s;

  dropDominatedOverlap(sh);
  orderByBound(sh);
  result.stats.configurations = sh.members;

  // Phase 3: partition, evaluate, rank.
  if (Status s = rankFamilies(sh, cluster, threads, result); !s)
    return s;
  for (Candidate &cand : result.top)
    stateSettings(cand.config, eo);
  for (ExploredPoint &pt : result.explored)
    stateSettings(pt.config, eo);
  if (result.bestRejected)
    stateSettings(result.bestRejected->candidate.config, eo);
  result.stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  return result;
}


} // namespace trident::search
