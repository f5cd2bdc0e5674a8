//===- Worker.cpp - partition, evaluate, rank -----------------------------===//
//
// Phase 3 of the search (Search.cpp): workers take the families in bound
// order, split the layers over the stages (Partition.h), evaluate the
// members and keep the top K; data shares on heterogeneous clusters; the
// result, and when nothing is ranked, why and what would make it fit.
//
//===----------------------------------------------------------------------===//

#include "SearchInternal.h"

namespace trident::search::detail {

namespace {

struct Worker {
  Shared &sh;
  std::vector<Evaluator> evaluators; ///< per variant
  Evaluation eval, evalAlt, evalLight, evalMixed;
  PartitionWorkspace pws;
  std::vector<LayerCosts> layerCosts; ///< per variant group
  std::vector<StageDevice> devices;
  SearchStats stats;
  // Closest miss when nothing fits: (ratio, config) minimal.
  double missRatio = kInf;
  Config miss;
  bool haveMiss = false;
  /// Evaluations kept for SearchResult::explored, with their lower bound.
  std::vector<std::pair<double, ExploredPoint>> explored;
  /// The best plan SearchOptions::accept refused in this worker.
  std::optional<Rejected> bestRejected;

  explicit Worker(Shared &s) : sh(s), evaluators(s.evaluators) {}

  /// Fills layerCosts[g] for every group of the variant.
  void buildLayerCosts(const Config &C) {
    const Variant &var = sh.variants[size_t(C.variant)];
    const ParallelConfig &c = C.cfg;
    const LayerProfile &prof = sh.profile;
    const int64_t etp = c.etp == 0 ? c.tp : c.etp;
    const double dpcp = double(c.dp * c.cp);
    const double edp = double(
        std::max<int64_t>(1, c.dp * c.cp * c.tp / (c.ep * etp)));
    const StateBytes &b = sh.sb;
    const double perDense = b.weight / (c.zeroStage >= 3 ? dpcp : 1) +
                            b.grad / (c.zeroStage >= 2 ? dpcp : 1) +
                            b.opt / (c.zeroStage >= 1 ? dpcp : 1);
    const double perExpert = b.weight / (c.zeroStage >= 3 ? edp : 1) +
                             b.grad / (c.zeroStage >= 2 ? edp : 1) +
                             b.opt / (c.zeroStage >= 1 ? edp : 1);
    layerCosts.resize(var.cluster.groups.size());
    for (size_t vg = 0; vg < var.cluster.groups.size(); ++vg) {
      AxesKey k = axesKeyOf(var.origGroup[vg], c);
      auto it = sh.keyIndex.find(k);
      if (it == sh.keyIndex.end())
        continue; // group unused by this configuration
      const GroupCosts &gc = sh.costs[size_t(it->second)];
      LayerCosts &lc = layerCosts[vg];
      // Per profile group: state and gather bytes.
      auto state = [&](size_t gi, double &stateB, double &gatherB) {
        const LayerCost &L = prof.groups[gi].cost;
        double dense = double(L.paramsTpSharded + L.paramsVocab) / double(c.tp) +
                       double(L.paramsReplicated);
        double expert = double(L.paramsExpert) / double(c.ep * etp);
        stateB = dense * perDense + expert * perExpert;
        gatherB =
            c.zeroStage == 3
                ? 2 *
                      zero3GatherElements(L, double(c.tp), double(c.ep * etp),
                                          sh.evalOpt.zero3GatherPerTensor) *
                      b.weight
                : 0;
      };
      // The embedding's groups and the head's, each summed into one part.
      auto part = [&](const std::vector<int32_t> &groups, double &seconds,
                      double &act, double &peak, double &stateB,
                      double &gather) {
        seconds = act = peak = stateB = gather = 0;
        for (int32_t gi : groups) {
          double st, g;
          state(size_t(gi), st, g);
          double cnt = double(prof.groups[size_t(gi)].count);
          seconds += cnt * gc.seconds(size_t(gi));
          act += cnt * gc.actBytes[size_t(gi)];
          peak = std::max(peak, gc.peakActBytes[size_t(gi)]);
          stateB += cnt * st;
          gather = std::max(gather, g);
        }
      };
      part(sh.embGroups, lc.embeddingSeconds, lc.embeddingActBytes,
           lc.embeddingPeakActBytes, lc.embeddingStateBytes,
           lc.embeddingGatherBytes);
      part(sh.headGroups, lc.headSeconds, lc.headActBytes, lc.headPeakActBytes,
           lc.headStateBytes, lc.headGatherBytes);
      size_t N = size_t(sh.numBlocks);
      lc.blockSeconds.resize(N);
      lc.blockActBytes.resize(N);
      lc.blockPeakActBytes.resize(N);
      lc.blockStateBytes.resize(N);
      lc.blockGatherBytes.resize(N);
      int32_t lastGi = -1;
      double s = 0, g = 0;
      for (size_t i = 0; i < N; ++i) {
        int32_t gi = sh.blockGroupOf[i];
        if (gi != lastGi) {
          state(size_t(gi), s, g);
          lastGi = gi;
        }
        lc.blockSeconds[i] = gc.seconds(size_t(gi));
        lc.blockActBytes[i] = gc.actBytes[size_t(gi)];
        lc.blockPeakActBytes[i] = gc.peakActBytes[size_t(gi)];
        lc.blockStateBytes[i] = s;
        lc.blockGatherBytes[i] = g;
      }
    }
  }

  /// The G model chunks' devices (stage = g % p). For vpp == 1 these are
  /// the stages with their exact memory model; with interleaving a stage's
  /// memory depends on all its chunks, which a left-to-right DP cannot
  /// see, so the DP balances time only and the full evaluation checks
  /// memory. Needs buildLayerCosts(C) first.
  void buildDevices(const Config &C, const std::vector<int32_t> &inflight) {
    const Variant &var = sh.variants[size_t(C.variant)];
    const ParallelConfig &cfg = C.cfg;
    const int64_t p = cfg.pp, v = cfg.vpp, G = p * v;
    const int64_t stageGpus = cfg.dp * cfg.tp * cfg.cp;
    const double fraction = sh.opt.maxMemoryFraction;
    const double actBytes =
        double(dtypeBytes(activationDtype(cfg.precision)));
    const double msgBytes = double(sh.profile.seqLen) / double(cfg.cp) *
                            double(cfg.microBatch) * double(sh.profile.hidden) *
                            actBytes / double(cfg.tp);
    // The Evaluator's buffers: reserved bytes and, with pp > 1, a send and
    // a receive buffer of one boundary activation, held with the
    // allocator's cache like the activations.
    const double scale = 1 + sh.evalOpt.allocatorCacheFraction;
    const double fixed =
        sh.evalOpt.reservedBytes + (p > 1 ? 2 * msgBytes * scale : 0);
    devices.resize(size_t(G));
    for (int64_t g = 0; g < G; ++g) {
      int64_t s = g % p;
      int64_t vg = var.cluster.groupOfGpu(s * stageGpus);
      StageDevice &d = devices[size_t(g)];
      d.costs = &layerCosts[size_t(vg)];
      d.inFlight = inflight[size_t(s)];
      d.fixedBytes = fixed;
      d.dynamicScale = scale;
      d.memoryLimitBytes =
          v == 1 ? fraction * var.cluster.groups[size_t(vg)].gpu.hbmBytes
                 : kInf;
    }
  }

  /// ev.evaluate(), or where no explored points are kept, stopped at the
  /// memory of a plan that does not fit (Evaluator::evaluateIfFits): the
  /// search never uses such a plan's time. Stops exactly where fitsWithin
  /// would say no (a stage over the fraction, or over its GPU).
  Status evaluateFor(Evaluator &ev, const ParallelConfig &cfg,
                     Evaluation &out) {
    if (sh.opt.maxExplored > 0)
      return ev.evaluate(cfg, out);
    return ev.evaluateIfFits(cfg, std::min(1.0, sh.opt.maxMemoryFraction),
                             out);
  }

  double objectiveOf(const Config &C, const ParallelConfig &cfg,
                     const Evaluation &e) const {
    const Variant &v = sh.variants[size_t(C.variant)];
    return v.objectiveScale * e.iterationSeconds *
           v.robustFactor[robustIndex(cfg)];
  }

  /// SearchOptions::accept on a fitting evaluation; a refused one is
  /// remembered. With `shortcut` (offer() alone) a plan that can no longer
  /// enter the top K is not asked: offer() turns it away (the threshold
  /// only falls). The choices between a configuration's splits always
  /// ask, so that they do not depend on the threads' timing.
  bool admits(const Config &C, const ParallelConfig &cfg, const Evaluation &e,
              bool shortcut = false) {
    if (!sh.opt.accept)
      return true;
    double objective = objectiveOf(C, cfg, e);
    if (shortcut && objective > sh.threshold.load(std::memory_order_relaxed))
      return true;
    std::string why =
        sh.opt.accept(cfg, e, sh.variants[size_t(C.variant)].cluster);
    if (why.empty())
      return true;
    ++stats.rejected;
    Rejected r;
    r.candidate.config = cfg;
    r.candidate.eval = e;
    r.candidate.clusterIndex = C.variant;
    r.candidate.objective = objective;
    r.reason = std::move(why);
    if (!bestRejected || rankedBefore(r.candidate, bestRejected->candidate))
      bestRejected = std::move(r);
    return false;
  }

  /// Offers a fitting evaluation to the shared top K (`admitted`: the
  /// caller has had it accepted already).
  void offer(const Config &C, const ParallelConfig &cfg, const Evaluation &e,
             const char *how, bool admitted = false) {
    if (!admitted && !admits(C, cfg, e, /*shortcut=*/true))
      return;
    Candidate cand;
    cand.config = cfg;
    cand.eval = e;
    cand.clusterIndex = C.variant;
    cand.objective = objectiveOf(C, cfg, e);
    cand.partition = how;
    if (sh.opt.pricePerGpuHour > 0)
      cand.costPerToken = sh.opt.pricePerGpuHour *
                          double(sh.variants[size_t(C.variant)].cluster.totalGpus()) *
                          e.iterationSeconds / 3600.0 / sh.tokensPerStep;
    std::lock_guard<std::mutex> lock(sh.topMutex);
    auto &top = sh.top;
    // The same plan offered twice (by two families: a per-stage
    // recomputation that settled on one level, and that level's own
    // family) is listed once, whichever offer came first; its split's
    // label is the smaller of the two, so the result does not depend on
    // the threads' order.
    for (Candidate &t : top)
      if (t.clusterIndex == cand.clusterIndex &&
          compareConfigs(t.config, cand.config) == 0) {
        if (cand.partition < t.partition)
          t.partition = cand.partition;
        return;
      }
    size_t K = size_t(sh.opt.topK);
    if (top.size() >= K && !rankedBefore(cand, top.back()))
      return;
    auto pos = std::upper_bound(top.begin(), top.end(), cand, rankedBefore);
    top.insert(pos, std::move(cand));
    if (top.size() > K)
      top.pop_back();
    if (top.size() >= K)
      sh.threshold.store(top.back().objective, std::memory_order_relaxed);
  }

  /// Keeps an evaluation for SearchResult::explored (a no-op unless
  /// asked). `bound` is the lower bound that let it be evaluated.
  void noteExplored(const Config &C, const ParallelConfig &cfg,
                    const Evaluation &e, double bound) {
    if (sh.opt.maxExplored <= 0)
      return;
    ExploredPoint pt;
    pt.config = cfg;
    pt.clusterIndex = C.variant;
    pt.objective = objectiveOf(C, cfg, e);
    pt.iterationSeconds = e.iterationSeconds;
    pt.peakMemoryBytes = e.peakMemoryBytes;
    pt.memoryCapacityBytes = e.memoryCapacityBytes;
    pt.fits = fitsWithin(e, sh.opt.maxMemoryFraction);
    explored.emplace_back(bound, std::move(pt));
    // Entries the threshold already prunes cannot be in the final list.
    if (explored.size() >= 4096 && (explored.size() & (explored.size() - 1)) == 0)
      std::erase_if(explored, [&](const auto &x) { return prunable(x.first); });
  }

  void noteMiss(const Config &C, double ratio) {
    if (!haveMiss || ratio < missRatio ||
        (ratio == missRatio && (C.variant < miss.variant ||
                                (C.variant == miss.variant &&
                                 compareConfigs(C.cfg, miss.cfg) < 0)))) {
      missRatio = ratio;
      miss = C;
      haveMiss = true;
    }
  }

  /// Strictly above the threshold, with a margin for the rounding
  /// difference between the probes' sums and the Evaluator's.
  bool prunable(double bound) const {
    return bound * (1 - 1e-9) > sh.threshold.load(std::memory_order_relaxed);
  }

  /// Heterogeneous clusters: plans in which every node group runs whole
  /// data-parallel replicas of one (tp, cp, pp) shape and the faster GPU
  /// type runs more micro-batches per step (DataShare). Single-threaded,
  /// after the main search, in a fixed order.
  Status processDataShares() {
    const Cluster &cl = sh.variants[0].cluster;
    const size_t n = cl.groups.size();
    const Pins &pin = sh.opt.pins;
    if (n < 2 || !pin.admits(Axis::Ep, 1) || !pin.admits(Axis::Vpp, 1) ||
        pin[Axis::Etp].value_or(0) != 0 ||
        pin.as<ScheduleKind>(Axis::Schedule) == ScheduleKind::Interleaved1F1B)
      return Status::ok();
    Evaluator &ev = evaluators[0];
    const LayerProfile &prof = sh.profile;
    const int64_t B = sh.opt.globalBatch;
    const double fraction = sh.opt.maxMemoryFraction;
    int64_t minGpus = std::numeric_limits<int64_t>::max();
    int64_t minNode = std::numeric_limits<int64_t>::max();
    for (const NodeGroup &g : cl.groups) {
      minGpus = std::min(minGpus, g.gpus());
      minNode = std::min(minNode, g.gpusPerNode);
    }
    Config C;
    C.variant = 0;
    ParallelConfig c;
    std::vector<double> t(n), f(n);
    for (int64_t tp : divisorsOf(minNode)) {
      bool tpOk = pin.admits(Axis::Tp, tp) &&
                  (prof.numHeads <= 0 || prof.numHeads % tp == 0) &&
                  (prof.numKvHeads <= 0 || prof.numKvHeads % tp == 0);
      for (const NodeGroup &g : cl.groups)
        tpOk = tpOk && g.gpusPerNode % tp == 0;
      if (!tpOk)
        continue;
      for (int64_t cp : divisorsOf(minGpus / tp)) {
        if (!pin.admits(Axis::Cp, cp) || prof.seqLen % cp != 0)
          continue;
        for (int64_t pp : divisorsOf(minGpus / (tp * cp))) {
          if (pp > sh.numBlocks || !pin.admits(Axis::Pp, pp))
            continue;
          const int64_t unit = tp * cp * pp;
          std::vector<DataShare> shares(n);
          int64_t dpSum = 0;
          bool ok = true;
          for (size_t g = 0; g < n; ++g) {
            ok = ok && cl.groups[g].gpus() % unit == 0;
            shares[g].group = int64_t(g);
            shares[g].dp = cl.groups[g].gpus() / unit;
            dpSum += shares[g].dp;
          }
          if (!ok || !pin.admits(Axis::Dp, dpSum))
            continue;
          for (auto [sp, ov] : kSpOverlap) {
            if (!spCandidate(sh, sp, tp, cp) ||
                !tpOverlapCandidate(sh, ov, tp, sp))
              continue;
            for (int64_t mb : divisorsOf(B)) {
              if (!pin.admits(Axis::MicroBatch, mb) || B / mb < dpSum)
                continue;
              for (Recompute rc : {Recompute::None, Recompute::Selective,
                                   Recompute::Full}) {
                if (!recomputeCandidate(sh, rc))
                  continue;
                for (int zero = 0; zero <= 3; ++zero) {
                  if (pin[Axis::Zero] ? !pin.admits(Axis::Zero, zero)
                                      : zero == 1 && zero1Dominated(sh))
                    continue;
                  c = ParallelConfig{};
                  c.dp = dpSum, c.tp = tp, c.pp = pp, c.cp = cp;
                  c.microBatch = mb;
                  c.sequenceParallel = sp;
                  c.tpCommOverlap = ov;
                  c.recompute = rc;
                  c.zeroStage = zero;
                  c.precision = sh.opt.precision;
                  c.schedule = pin.as<ScheduleKind>(Axis::Schedule);
                  // The search-wide settings (searchPlans), as the
                  // homogeneous families' check sees them.
                  stateSettings(c, sh.evalOpt);
                  if (!runtimeAccepts(c, sh.evalOpt.runtime))
                    continue;
                  if (Status s = shareShape(C, c, shares, B / mb, fraction, t,
                                            f, ev);
                      !s)
                    return s;
                }
              }
            }
          }
        }
      }
    }
    return Status::ok();
  }

  /// One shape: measures each group's seconds per micro-batch, splits the
  /// M micro-batches so that the groups finish together, and evaluates the
  /// integer splits nearest to that.
  Status shareShape(const Config &C, ParallelConfig &c,
                    std::vector<DataShare> &shares, int64_t M,
                    double fraction, std::vector<double> &t,
                    std::vector<double> &f, Evaluator &ev) {
    const size_t n = shares.size();
    // Two probes, a and 2a micro-batches per replica (a >= pp keeps the
    // pipeline full): step time = fixed + m * per-micro-batch time.
    const int64_t a = c.pp;
    int64_t need = 0;
    for (const DataShare &d : shares)
      need += 2 * a * d.dp;
    if (need > M)
      return Status::ok(); // too few micro-batches to fill the pipelines
    Evaluation &e1 = evalLight, &e2 = evalMixed;
    for (int64_t k : {a, 2 * a}) {
      c.globalBatch = 0;
      for (DataShare &d : shares) {
        d.microBatches = k;
        c.globalBatch += d.dp * c.microBatch * k;
      }
      c.dataShares = shares;
      if (!ev.validate(c).isOk())
        return Status::ok();
      ++stats.evaluations;
      if (Status s = ev.evaluate(c, k == a ? e1 : e2); !s)
        return s;
      // Memory does not depend on m once m >= pp: no fit, no plan.
      if (!fitsWithin(k == a ? e1 : e2, fraction))
        return Status::ok();
    }
    double num = double(M), den = 0;
    for (size_t g = 0; g < n; ++g) {
      t[g] = std::max(1e-12, (e2.shareSeconds[g] - e1.shareSeconds[g]) /
                                 double(a));
      f[g] = e1.shareSeconds[g] - double(a) * t[g];
      num += double(shares[g].dp) * f[g] / t[g];
      den += double(shares[g].dp) / t[g];
    }
    const double finish = num / den;
    // Nearest integer splits: every group but the last rounded down or
    // up; the last takes what is left (if it divides evenly).
    c.globalBatch = M * c.microBatch;
    ParallelConfig best;
    bool found = false;
    const size_t combos = size_t(1) << std::min<size_t>(n - 1, 4);
    for (size_t mask = 0; mask < combos; ++mask) {
      int64_t used = 0;
      bool ok = true;
      for (size_t g = 0; g + 1 < n; ++g) {
        double ideal = (finish - f[g]) / t[g];
        int64_t m = int64_t(std::floor(ideal)) + ((mask >> g) & 1);
        m = std::max<int64_t>(m, 1);
        shares[g].microBatches = m;
        used += shares[g].dp * m;
      }
      DataShare &last = shares[n - 1];
      int64_t rest = M - used;
      ok = rest >= last.dp && rest % last.dp == 0;
      if (!ok)
        continue;
      last.microBatches = rest / last.dp;
      c.dataShares = shares;
      if (!ev.validate(c).isOk())
        continue;
      ++stats.evaluations;
      if (Status s = ev.evaluate(c, evalAlt); !s)
        return s;
      if (!fitsWithin(evalAlt, fraction) || !admits(C, c, evalAlt))
        continue;
      if (!found || evalAlt.iterationSeconds < eval.iterationSeconds ||
          (evalAlt.iterationSeconds == eval.iterationSeconds &&
           compareConfigs(c, best) < 0)) {
        found = true;
        best = c;
        std::swap(eval, evalAlt);
      }
    }
    if (found) {
      ++stats.fitting;
      offer(C, best, eval, "balanced", /*admitted=*/true);
    }
    return Status::ok();
  }

  /// Every member (vpp, ZeRO stage) of a family.
  Status processFamily(const Config &F) {
    Status status;
    Config C = F;
    forEachMember(sh, F, [&](int64_t vpp, int zero) {
      if (!status.isOk())
        return;
      C.cfg.vpp = vpp;
      C.cfg.zeroStage = zero;
      C.cfg.schedule = sh.opt.pins.as<ScheduleKind>(Axis::Schedule);
      Evaluator &ev = evaluators[size_t(F.variant)];
      if (!ev.validate(C.cfg).isOk())
        return;
      C.lowerBound = memberBound(F, C.cfg, ev);
      if (C.lowerBound > F.lowerBound && prunable(C.lowerBound)) {
        ++stats.prunedByBound;
        return;
      }
      status = process(C);
    });
    return status;
  }

  /// A member's step-time lower bound, at least its family's:
  /// - ZeRO-3's collectives add at least Evaluator::zero3AddedFloor to
  ///   the stages' work per micro-batch, ZeRO-1/2's parameter gather at
  ///   least 1/pp of paramGatherFloor to the step;
  /// - without interleaving, on one GPU type, stage s cannot start before
  ///   the first micro-batch has passed the stages before it, nor end its
  ///   last backward before the stages after it have done theirs and then
  ///   the stages before it (pipelineFillBound).
  double memberBound(const Config &F, const ParallelConfig &c,
                     const Evaluator &ev) const {
    const Variant &var = sh.variants[size_t(F.variant)];
    const int64_t m = c.globalBatch / (c.dp * c.microBatch);
    const double p = double(c.pp);
    double work = F.minWork, after = 0;
    if (c.zeroStage == 3)
      work += ev.zero3AddedFloor(c);
    else if (c.zeroStage >= 1)
      after = ev.paramGatherFloor(c) / p;
    double pipe = double(m) * work / p;
    if (c.pp > 1 && c.vpp == 1 && var.cluster.groups.size() == 1)
      pipe = std::max(pipe, pipelineFillBound(work, m, c.pp));
    return std::max(F.lowerBound, var.objectiveScale * (pipe + after));
  }

  Status process(const Config &C) {
    const Variant &var = sh.variants[size_t(C.variant)];
    Evaluator &ev = evaluators[size_t(C.variant)];
    ParallelConfig cfg = C.cfg;
    const int64_t p = cfg.pp, v = cfg.vpp, G = p * v;
    const int64_t m = cfg.globalBatch / (cfg.dp * cfg.microBatch);
    const double scale = var.objectiveScale;
    const double fraction = sh.opt.maxMemoryFraction;

    if (p == 1) {
      cfg.layersPerChunk = {sh.numBlocks};
      ++stats.evaluations;
      if (Status s = evaluateFor(ev, cfg, eval); !s)
        return s;
      noteExplored(C, cfg, eval, C.lowerBound);
      if (fitsWithin(eval, fraction)) {
        ++stats.fitting;
        offer(C, cfg, eval, "single");
      } else {
        ++stats.prunedByMemory;
        noteMiss(C, memoryRatio(eval, fraction));
      }
      return Status::ok();
    }

    buildLayerCosts(C);
    const int64_t stageGpus = cfg.dp * cfg.tp * cfg.cp;
    ScheduleKind kind = cfg.scheduleKind();
    Result<ScheduleCache::Simulated> sched =
        ScheduleCache::global().getSimulated(kind, p, m, v);
    if (!sched)
      return sched.status();
    const std::vector<int32_t> &inflight = sched->schedule->peakInFlight();
    buildDevices(C, inflight);

    ++stats.partitions;
    PartitionResult part = partitionLayers(devices, sh.numBlocks, pws);

    // The even split, for comparison (and as the fallback under
    // interleaving when the DP's split does not fit).
    std::vector<int64_t> even = balancedSplit(sh.numBlocks, G);
    auto loadBound = [&](const std::vector<int64_t> &split) {
      // m times the busiest stage's per-micro-batch work.
      std::vector<double> load(static_cast<size_t>(p), 0.0);
      int64_t at = 0;
      for (int64_t g = 0; g < G; ++g) {
        load[size_t(g % p)] += stageSeconds(devices[size_t(g)], g == 0,
                                            g == G - 1, at,
                                            at + split[size_t(g)]);
        at += split[size_t(g)];
      }
      return double(m) * *std::max_element(load.begin(), load.end()) * scale;
    };
    auto evenFitsModel = [&]() {
      if (v > 1)
        return true;
      int64_t at = 0;
      for (int64_t s = 0; s < p; ++s) {
        double mem = stageBytes(devices[size_t(s)], s == 0, s == p - 1, at,
                                at + even[size_t(s)]);
        at += even[size_t(s)];
        if (mem > devices[size_t(s)].memoryLimitBytes)
          return false;
      }
      return true;
    };
    auto evenRatio = [&]() {
      int64_t at = 0;
      double r = 0;
      for (int64_t s = 0; s < p; ++s) {
        const StageDevice &d = devices[size_t(s)];
        int64_t vg = var.cluster.groupOfGpu(s * stageGpus);
        double cap = fraction * var.cluster.groups[size_t(vg)].gpu.hbmBytes;
        r = std::max(r, stageBytes(d, s == 0, s == p - 1, at,
                                   at + even[size_t(s)]) /
                            cap);
        at += even[size_t(s)];
      }
      return r;
    };

    if (!part.feasible) {
      ++stats.prunedByMemory;
      noteMiss(C, evenRatio());
      return Status::ok();
    }

    bool found = false;
    ParallelConfig best;
    bool bestIsDp = false;
    const Evaluation *bestEval = nullptr;
    // 1. The DP's split. Its bound: m times its slowest chunk, or with
    // interleaving m times its busiest stage's chunks together.
    const double dpBound =
        v == 1 ? double(m) * part.maxStageSeconds * scale
               : loadBound(part.layersPerStage);
    if (!prunable(dpBound)) {
      cfg.layersPerChunk = part.layersPerStage;
      ++stats.evaluations;
      if (Status s = evaluateFor(ev, cfg, eval); !s)
        return s;
      noteExplored(C, cfg, eval, std::max(C.lowerBound, dpBound));
      if (fitsWithin(eval, fraction) && admits(C, cfg, eval)) {
        found = true;
        best = cfg;
        bestIsDp = true;
        bestEval = &eval;
      } else {
        noteMiss(C, memoryRatio(eval, fraction));
      }
    } else {
      ++stats.prunedByBound;
    }
    // 2. The even split, unless it is the same or cannot win.
    if (even != part.layersPerStage && evenFitsModel() &&
        !prunable(loadBound(even))) {
      ParallelConfig alt = C.cfg;
      alt.layersPerChunk = even;
      ++stats.evaluations;
      if (Status s = evaluateFor(ev, alt, evalAlt); !s)
        return s;
      noteExplored(C, alt, evalAlt, std::max(C.lowerBound, loadBound(even)));
      if (fitsWithin(evalAlt, fraction) && admits(C, alt, evalAlt)) {
        double objAlt = scale * evalAlt.iterationSeconds;
        bool better = !found || objAlt < scale * bestEval->iterationSeconds ||
                      (objAlt == scale * bestEval->iterationSeconds &&
                       (evalAlt.peakMemoryBytes < bestEval->peakMemoryBytes ||
                        (evalAlt.peakMemoryBytes == bestEval->peakMemoryBytes &&
                         compareConfigs(alt, best) < 0)));
        if (better) {
          found = true;
          best = alt;
          bestIsDp = false;
          bestEval = &evalAlt;
        }
      }
    }
    // 3. Recomputation per stage: under 1F1B the first stages hold the
    // most micro-batches in flight, so a plan that recomputes everywhere
    // may only need it on those. Memory of a stage depends on its own
    // policy alone and a lighter policy never makes a stage slower, so
    // giving each stage the lightest policy that fits (for this split) is
    // the best per-stage assignment.
    if (found && p > 1 && best.recompute != Recompute::None &&
        !sh.opt.pins[Axis::Recompute]) {
      std::vector<Recompute> levels{Recompute::None};
      if (best.recompute == Recompute::Full &&
          !sh.evalOpt.selectiveIsDominated())
        levels.push_back(Recompute::Selective);
      std::vector<Recompute> chosen(size_t(p), best.recompute);
      std::vector<bool> settled(size_t(p), false);
      for (Recompute level : levels) {
        ParallelConfig light = best;
        light.recompute = level;
        light.stageRecompute.clear();
        ++stats.evaluations;
        if (Status s = evaluateFor(ev, light, evalLight); !s)
          return s;
        for (int64_t st = 0; st < p; ++st) {
          const StageBreakdown &b = evalLight.stages[size_t(st)];
          if (!settled[size_t(st)] && b.totalBytes <= fraction * b.capacityBytes) {
            chosen[size_t(st)] = level;
            settled[size_t(st)] = true;
          }
        }
      }
      // Every stage at one level is that level's plain plan, with this
      // family's split: not offered, since that level's own family weighs
      // its splits, and a family the threshold prunes must not change
      // what another offers (the best plan would depend on the top K).
      const bool uniform =
          std::all_of(chosen.begin(), chosen.end(),
                      [&](Recompute r) { return r == chosen.front(); });
      if (!uniform) {
        ParallelConfig alt = best;
        alt.stageRecompute = chosen;
        ++stats.evaluations;
        if (Status s = evaluateFor(ev, alt, evalMixed); !s)
          return s;
        if (fitsWithin(evalMixed, fraction) &&
            evalMixed.iterationSeconds < bestEval->iterationSeconds &&
            admits(C, alt, evalMixed)) {
          best = alt;
          bestEval = &evalMixed;
        }
      }
    }
    if (found) {
      ++stats.fitting;
      offer(C, best, *bestEval, bestIsDp ? "dp" : "balanced",
            /*admitted=*/true);
    }
    return Status::ok();
  }
};

/// Where the embedding, blocks and head sit in the profile.
/// Phase 3 on `threads` threads: each worker takes the next family in
/// bound order, partitions, evaluates and offers it, until the bound of
/// the rest passes the K-th best; then the data shares of heterogeneous
/// clusters on one thread.
Status runWorkers(Shared &sh, int64_t threads,
                  std::vector<std::unique_ptr<Worker>> &workers) {
  const SearchOptions &opt = sh.opt;
  for (int64_t t = 0; t < threads; ++t)
    workers.push_back(std::make_unique<Worker>(sh));
  std::vector<Status> errors(static_cast<size_t>(threads));
  const size_t numConfigs = sh.configs.size();
  auto run = [&](size_t t) {
    Worker &w = *workers[t];
    for (;;) {
      size_t i = sh.next.fetch_add(1, std::memory_order_relaxed);
      if (i >= numConfigs)
        return;
      const Config &C = sh.configs[i];
      if (w.prunable(C.lowerBound)) {
        // Configurations come in bound order: all the rest are pruned too.
        size_t claimed = sh.next.exchange(numConfigs);
        for (size_t k = claimed; k < numConfigs; ++k)
          w.stats.prunedByBound += sh.configs[k].members;
        w.stats.prunedByBound += C.members;
        return;
      }
      if (Status s = w.processFamily(C); !s) {
        errors[t] = Status::error("configuration tp=" + str(C.cfg.tp) +
                                  " pp=" + str(C.cfg.pp) + ": " + s.message());
        sh.next.store(numConfigs);
        return;
      }
      if (t == 0 && opt.progress && (++w.stats.configurations & 63) == 0)
        opt.progress(double(i) / double(numConfigs));
    }
  };
  {
    std::vector<std::thread> pool;
    for (int64_t t = 1; t < threads; ++t)
      pool.emplace_back(run, size_t(t));
    run(0);
    for (std::thread &th : pool)
      th.join();
  }
  for (const Status &s : errors)
    if (!s)
      return s;
  // Data shares on heterogeneous clusters (deterministic: one thread).
  if (opt.dataShares)
    if (Status s = workers[0]->processDataShares(); !s)
      return s;
  if (opt.progress)
    opt.progress(1.0);
  return Status::ok();
}

/// The workers' statistics, the best refused plan, the explored points
/// and the ranking, into `result`.
void collectResults(Shared &sh,
                    std::vector<std::unique_ptr<Worker>> &workers,
                    SearchResult &result) {
  const SearchOptions &opt = sh.opt;
  for (auto &w : workers) {
    SearchStats &s = w->stats;
    result.stats.prunedByBound += s.prunedByBound;
    result.stats.prunedByMemory += s.prunedByMemory;
    result.stats.partitions += s.partitions;
    result.stats.evaluations += s.evaluations;
    result.stats.fitting += s.fitting;
    result.stats.rejected += s.rejected;
  }
  // The best refused plan, kept only where every thread count finds it:
  // a plan that ranks before the final K-th was never pruned, and was
  // asked (see admits()).
  for (auto &w : workers)
    if (w->bestRejected &&
        (!result.bestRejected ||
         rankedBefore(w->bestRejected->candidate,
                      result.bestRejected->candidate)))
      result.bestRejected = std::move(w->bestRejected);
  if (result.bestRejected && sh.top.size() >= size_t(opt.topK) &&
      !rankedBefore(result.bestRejected->candidate, sh.top.back()))
    result.bestRejected.reset();
  if (opt.maxExplored > 0) {
    // Keep what every thread count evaluates: an evaluation whose bound is
    // within the final K-th best was never pruned (the threshold only
    // falls towards it); the others depend on the timing.
    double kth = sh.top.size() >= size_t(opt.topK) ? sh.top.back().objective
                                                   : kInf;
    for (auto &w : workers)
      for (auto &[bound, pt] : w->explored)
        if (!(bound * (1 - 1e-9) > kth))
          result.explored.push_back(std::move(pt));
    std::sort(result.explored.begin(), result.explored.end(),
              [](const ExploredPoint &a, const ExploredPoint &b) {
                if (a.objective != b.objective)
                  return a.objective < b.objective;
                if (a.peakMemoryBytes != b.peakMemoryBytes)
                  return a.peakMemoryBytes < b.peakMemoryBytes;
                if (a.clusterIndex != b.clusterIndex)
                  return a.clusterIndex < b.clusterIndex;
                return compareConfigs(a.config, b.config) < 0;
              });
    if (result.explored.size() > size_t(opt.maxExplored))
      result.explored.resize(size_t(opt.maxExplored));
  }
  result.top = std::move(sh.top);
  for (const Variant &v : sh.variants) {
    result.clusters.push_back(v.cluster);
    result.clusterNotes.push_back(v.note);
  }
}

/// When no plan is ranked: why (every fitting plan refused, or the
/// closest miss) and what would make the closest fit.
Status explainNoFit(Shared &sh, const Cluster &cluster,
                    std::vector<std::unique_ptr<Worker>> &workers,
                    SearchResult &result) {
  const SearchOptions &opt = sh.opt;
  const LayerProfile &profile = sh.profile;
  const EvalOptions &evalOpt = sh.evalOpt;
  const Pins &pin = opt.pins;
  const int64_t total = cluster.totalGpus();
  if (result.top.empty() && result.bestRejected) {
    // Plans fit, but SearchOptions::accept refused every one: say why for
    // the best of them.
    const Candidate &c = result.bestRejected->candidate;
    NoFit nf;
    nf.closest = c.config;
    nf.eval = c.eval;
    nf.clusterIndex = c.clusterIndex;
    const ParallelConfig &b = c.config;
    nf.message = "no plan that fits is accepted; the best that fits (dp=" +
                 str(b.dp) + " tp=" + str(b.tp) + " pp=" + str(b.pp) +
                 " cp=" + str(b.cp) + " ep=" + str(b.ep) + " vpp=" +
                 str(b.vpp) + " micro-batch " + str(b.microBatch) +
                 ", ZeRO-" + str(b.zeroStage) + ") is refused: " +
                 result.bestRejected->reason;
    result.noFit = std::move(nf);
  } else if (result.top.empty()) {
    // Nothing fits: describe the closest miss (deterministically the
    // smallest memory ratio, then the configuration order).
    Worker *bestW = nullptr;
    for (auto &w : workers) {
      if (!w->haveMiss)
        continue;
      if (!bestW || w->missRatio < bestW->missRatio ||
          (w->missRatio == bestW->missRatio &&
           (w->miss.variant < bestW->miss.variant ||
            (w->miss.variant == bestW->miss.variant &&
             compareConfigs(w->miss.cfg, bestW->miss.cfg) < 0))))
        bestW = w.get();
    }
    NoFit nf;
    if (bestW) {
      const Config &C = bestW->miss;
      Evaluator &ev = sh.evaluators[size_t(C.variant)];
      nf.closest = C.cfg;
      nf.closest.layersPerChunk.clear();
      nf.clusterIndex = C.variant;
      if (Status s = ev.evaluate(nf.closest, nf.eval); !s)
        return s;
      const StageBreakdown &st =
          nf.eval.stages[size_t(nf.eval.peakMemoryStage)];
      nf.limitBytes = opt.maxMemoryFraction * st.capacityBytes;
      nf.shortBytes = nf.eval.peakMemoryBytes - nf.limitBytes;
      // What would make it fit: try each lever on the closest plan.
      auto tryLever = [&](const std::string &what, ParallelConfig c) {
        Evaluation e;
        if (!ev.evaluate(c, e).isOk())
          return;
        double r = memoryRatio(e, opt.maxMemoryFraction);
        double limit = opt.maxMemoryFraction * e.memoryCapacityBytes;
        nf.suggestions.push_back(
            what + ": peak " + gbStr(e.peakMemoryBytes) +
            (r <= 1 ? std::string(" (fits)")
                    : " (still " + gbStr(e.peakMemoryBytes - limit) +
                          " over)"));
      };
      const ParallelConfig &c0 = nf.closest;
      if (c0.recompute != Recompute::Full) {
        ParallelConfig c = c0;
        c.recompute = Recompute::Full;
        tryLever(pin[Axis::Recompute] ? "full recompute (unpin recompute)"
                               : "full recompute",
                 c);
      }
      if (c0.zeroStage < 3 && c0.dp * c0.cp > 1) {
        ParallelConfig c = c0;
        c.zeroStage = 3;
        tryLever(pin[Axis::Zero] ? "ZeRO-3 (unpin zero)" : "ZeRO-3", c);
      }
      if (c0.microBatch > 1) {
        ParallelConfig c = c0;
        c.microBatch = 1;
        tryLever(pin[Axis::MicroBatch] ? "micro-batch 1 (unpin mb)" : "micro-batch 1",
                 c);
      }
      // More GPUs: model states alone, fully sharded, need this many.
      double params = double(profile.totalParams);
      double perGpu = nf.limitBytes - evalOpt.reservedBytes;
      if (params > 0 && perGpu > 0) {
        double need = params * (sh.sb.weight + sh.sb.grad + sh.sb.opt) / perGpu;
        const NodeGroup &g0 = cluster.groups[0];
        int64_t nodes = int64_t(std::ceil(need / double(g0.gpusPerNode)));
        nodes = std::max<int64_t>(nodes, 1);
        if (nodes * g0.gpusPerNode > total)
          nf.suggestions.push_back(
              "more GPUs: weights, gradients and optimizer states alone "
              "need at least " +
              str(nodes * g0.gpusPerNode) + " GPUs (" + str(nodes) +
              " nodes) even with ZeRO-3, before activations");
        else
          nf.suggestions.push_back(
              "more GPUs: with twice the nodes every stage holds half the "
              "layers or optimizer shards");
      }
      nf.message = "nothing fits in " +
                   gbStr(nf.limitBytes) + " per GPU" +
                   (opt.maxMemoryFraction < 1
                        ? " (--max-memory-fraction " +
                              std::to_string(opt.maxMemoryFraction) + ")"
                        : std::string()) +
                   "; the closest plan (dp=" + str(c0.dp) + " tp=" +
                   str(c0.tp) + " pp=" + str(c0.pp) + " cp=" + str(c0.cp) +
                   " micro-batch " + str(c0.microBatch) + ", recompute " +
                   std::string(recomputeName(c0.recompute)) + ", ZeRO-" +
                   str(c0.zeroStage) + ") is short by " + gbStr(nf.shortBytes) +
                   " on stage " + str(nf.eval.peakMemoryStage) + ": " +
                   describeFit(nf.eval);
    } else {
      nf.message = "nothing fits (no configuration could be evaluated)";
    }
    result.noFit = std::move(nf);
  }
  return Status::ok();
}

} // namespace

void stageCosts(Shared &sh, const Config &C,
                const std::vector<int32_t> &inflight,
                std::vector<LayerCosts> &costs,
                std::vector<StageDevice> &devices) {
  Worker w(sh);
  w.buildLayerCosts(C);
  w.buildDevices(C, inflight);
  // Moving a vector keeps its buffer, so the devices' pointers into
  // layerCosts stay valid in `costs` (StageModel is move-only).
  costs = std::move(w.layerCosts);
  devices = w.devices;
}

Status rankFamilies(Shared &sh, const Cluster &cluster, int64_t threads,
                    SearchResult &result) {
  std::vector<std::unique_ptr<Worker>> workers;
  if (Status s = runWorkers(sh, threads, workers); !s)
    return s;
  collectResults(sh, workers, result);
  if (result.top.empty())
    return explainNoFit(sh, cluster, workers, result);
  return Status::ok();
}

} // namespace trident::search::detail
