//===- Bounds.cpp - cost probes and lower bounds --------------------------===//
//
// Phase 2 of the search (Search.cpp): the per-layer costs of every
// distinct (GPU type, tp, cp, ep, etp, micro-batch, sp, recompute) key,
// probed in parallel with the Evaluator itself, and from them each
// family's step-time lower bound and the order the workers visit them in.
//
//===----------------------------------------------------------------------===//

#include "SearchInternal.h"

namespace trident::search::detail {

//===----------------------------------------------------------------------===//
// Probes
//===----------------------------------------------------------------------===//

/// A one-layer profile of profile group `gi`, treated as a block so the
/// Evaluator puts it on the single stage with nothing else.
LayerProfile probeProfile(const LayerProfile &p, size_t gi) {
  LayerProfile q;
  q.modelName = p.modelName + "/" + p.groups[gi].cost.name;
  q.seqLen = p.seqLen;
  q.dtype = p.dtype;
  q.hidden = p.hidden;
  q.vocabSize = p.vocabSize;
  q.numHeads = p.numHeads;
  q.numKvHeads = p.numKvHeads;
  q.numLayers = 1;
  LayerGroup g = p.groups[gi];
  g.count = 1;
  g.cost.kind = LayerKind::Block;
  q.groups.push_back(g);
  return q;
}

/// Probe evaluators of one thread: [input group][profile group].
struct Probes {
  std::vector<std::vector<Evaluator>> ev;
  Evaluation out;
};

Result<Probes> makeProbes(const LayerProfile &profile, const Cluster &cluster,
                          const EvalOptions &eo) {
  Probes pr;
  for (const NodeGroup &ng : cluster.groups) {
    Cluster c;
    c.name = cluster.name + "/" + ng.name;
    c.groups.push_back(ng);
    c.interGroup = cluster.interGroup;
    std::vector<Evaluator> row;
    for (size_t gi = 0; gi < profile.groups.size(); ++gi) {
      Result<Evaluator> e = Evaluator::create(probeProfile(profile, gi), c, eo);
      if (!e)
        return e.status();
      row.push_back(std::move(*e));
    }
    pr.ev.push_back(std::move(row));
  }
  return pr;
}

/// Seconds and activation bytes of one layer of each profile group.
Status probeKey(const Shared &sh, const Cluster &input, const AxesKey &k,
                Probes &pr, GroupCosts &out, int64_t &probes) {
  const LayerProfile &prof = sh.profile;
  const NodeGroup &ng = input.groups[size_t(k.group)];
  size_t n = prof.groups.size();
  out.fwd.assign(n, 0);
  out.bwd.assign(n, 0);
  out.actBytes.assign(n, 0);
  out.peakActBytes.assign(n, 0);
  for (size_t gi = 0; gi < n; ++gi) {
    const LayerCost &L = prof.groups[gi].cost;
    bool expertLayer = L.paramsExpert > 0 || L.numExperts > 0;
    ParallelConfig c;
    c.tp = k.tp;
    c.cp = k.cp;
    c.pp = 1;
    c.dp = ng.gpus() / (int64_t(k.tp) * k.cp);
    // Dense layers do not see ep or etp; the probe model has no experts
    // then.
    c.ep = expertLayer ? k.ep : 1;
    c.etp = expertLayer ? k.etp : 0;
    c.microBatch = k.mb;
    c.globalBatch = c.dp * k.mb;
    c.sequenceParallel = k.sp;
    c.tpCommOverlap = k.tpOverlap;
    c.precision = sh.opt.precision;
    Evaluator &ev = pr.ev[size_t(k.group)][gi];
    auto run = [&](Recompute r, double &act) -> Status {
      c.recompute = r;
      ++probes;
      if (Status s = ev.evaluate(c, pr.out); !s)
        return Status::error("probing layer '" + L.name + "': " + s.message());
      const StageBreakdown &st = pr.out.stages[0];
      act = st.activationBytes / double(std::max<int32_t>(1, st.peakInFlight));
      return Status::ok();
    };
    double act = 0;
    if (Status s = run(k.recompute, act); !s)
      return s;
    out.fwd[gi] = pr.out.stages[0].forwardSecondsPerMicroBatch;
    out.bwd[gi] = pr.out.stages[0].backwardSecondsPerMicroBatch;
    if (k.recompute == Recompute::Full) {
      // The probe's activations are the kept input plus one layer's whole
      // activations (the Evaluator's full-recompute peak term); the
      // latter is what the layer keeps without recompute.
      double actNone = 0;
      if (Status s = run(Recompute::None, actNone); !s)
        return s;
      out.peakActBytes[gi] = actNone;
      out.actBytes[gi] = std::max(0.0, act - actNone);
    } else {
      out.actBytes[gi] = act;
    }
  }
  out.totalSeconds = 0;
  for (size_t gi = 0; gi < n; ++gi)
    out.totalSeconds += double(prof.groups[gi].count) * out.seconds(gi);
  return Status::ok();
}

void initProfile(Shared &sh) {
  for (size_t i = 0; i < sh.profile.groups.size(); ++i) {
    const LayerGroup &g = sh.profile.groups[i];
    switch (g.cost.kind) {
    case LayerKind::Embedding:
      sh.embGroups.push_back(int32_t(i));
      break;
    case LayerKind::Head:
      sh.headGroups.push_back(int32_t(i));
      break;
    default:
      sh.blockGroups.push_back(int32_t(i));
      for (int64_t k = 0; k < g.count; ++k)
        sh.blockGroupOf.push_back(int32_t(i));
      sh.numBlocks += g.count;
      if (g.cost.paramsExpert > 0 || g.cost.numExperts > 0) {
        sh.hasExperts = true;
        if (g.cost.numExperts > 0)
          sh.minExperts = sh.minExperts == 0
                              ? g.cost.numExperts
                              : std::min(sh.minExperts, g.cost.numExperts);
      }
    }
  }

}

/// Probes every key of sh.keys into sh.costs, on `threads` threads.
Status probeAll(Shared &sh, const Cluster &input, int64_t threads,
                int64_t &probeCount) {
  sh.costs.resize(sh.keys.size());
  std::atomic<size_t> nextKey{0};
  std::vector<Status> errors(static_cast<size_t>(threads));
  std::vector<int64_t> probes(static_cast<size_t>(threads), 0);
  auto probeWorker = [&](size_t t) {
    Result<Probes> pr = makeProbes(sh.profile, input, sh.evalOpt);
    if (!pr) {
      errors[t] = pr.status();
      return;
    }
    for (size_t i; (i = nextKey.fetch_add(1)) < sh.keys.size();) {
      if (Status s = probeKey(sh, input, sh.keys[i], *pr, sh.costs[i],
                              probes[t]);
          !s) {
        errors[t] = s;
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t)
    pool.emplace_back(probeWorker, size_t(t));
  probeWorker(0);
  for (std::thread &th : pool)
    th.join();
  for (const Status &s : errors)
    if (!s)
      return s;
  for (int64_t n : probes)
    probeCount += n;
  return Status::ok();
}

/// Registers the cost keys of every stage of `C`; returns the first.
int32_t addKeys(Shared &sh, const Config &C) {
  const Variant &var = sh.variants[size_t(C.variant)];
  const ParallelConfig &c = C.cfg;
  int64_t stageGpus = c.dp * c.tp * c.cp;
  int32_t first = -1;
  for (int64_t s = 0; s < c.pp; ++s) {
    int64_t vg = var.cluster.groupOfGpu(s * stageGpus);
    AxesKey k = axesKeyOf(var.origGroup[size_t(vg)], c);
    auto [it, inserted] = sh.keyIndex.emplace(k, int32_t(sh.keys.size()));
    if (inserted)
      sh.keys.push_back(k);
    if (first < 0)
      first = it->second;
  }
  return first;
}

/// Drops the families whose tensor-parallel overlap cannot pay: every
/// layer of every stage at least as slow in the forward and in the
/// backward as without it (the GEMMs' lost SMs outweigh the collectives
/// it hides), while its userbuffers only add memory. A step is never
/// faster for slower layer passes (the schedule's makespan, the layer
/// split's busiest stage and the communication they hide grow together),
/// so the family without the overlap, enumerated beside it, is at least
/// as fast and as small. Pinned on, the overlap has no twin and stays.
void dropDominatedOverlap(Shared &sh) {
  auto dominated = [&](const Config &C) {
    if (!C.cfg.tpCommOverlap)
      return false;
    const Variant &var = sh.variants[size_t(C.variant)];
    ParallelConfig plain = C.cfg;
    plain.tpCommOverlap = false;
    int64_t stageGpus = C.cfg.dp * C.cfg.tp * C.cfg.cp;
    for (int64_t s = 0; s < C.cfg.pp; ++s) {
      int32_t g = var.origGroup[size_t(var.cluster.groupOfGpu(s * stageGpus))];
      auto on = sh.keyIndex.find(axesKeyOf(g, C.cfg));
      auto off = sh.keyIndex.find(axesKeyOf(g, plain));
      if (on == sh.keyIndex.end() || off == sh.keyIndex.end())
        return false;
      const GroupCosts &a = sh.costs[size_t(on->second)];
      const GroupCosts &b = sh.costs[size_t(off->second)];
      for (size_t gi = 0; gi < a.fwd.size(); ++gi)
        if (a.fwd[gi] < b.fwd[gi] || a.bwd[gi] < b.bwd[gi])
          return false;
    }
    return true;
  };
  std::vector<Config> kept;
  kept.reserve(sh.configs.size());
  for (Config &C : sh.configs) {
    if (dominated(C))
      sh.members -= C.members;
    else
      kept.push_back(std::move(C));
  }
  sh.configs = std::move(kept);
}

/// Each family's lower bound on its objective, and the visiting order:
/// the least bound first.
void orderByBound(Shared &sh) {
  for (Config &C : sh.configs) {
    const Variant &var = sh.variants[size_t(C.variant)];
    const ParallelConfig &c = C.cfg;
    int64_t m = c.globalBatch / (c.dp * c.microBatch);
    // The least total work of the model on any GPU type the configuration
    // uses; the busiest stage does at least 1/pp of it per micro-batch.
    double minTotal = kInf;
    int64_t stageGpus = c.dp * c.tp * c.cp;
    for (int64_t s = 0; s < c.pp; ++s) {
      int64_t vg = var.cluster.groupOfGpu(s * stageGpus);
      AxesKey k = axesKeyOf(var.origGroup[size_t(vg)], c);
      // Bounded by its own policy's work: a per-stage refinement (phase
      // 3, step 3) of a family pruned here is not tried (docs/planner.md).
      minTotal = std::min(minTotal,
                          sh.costs[size_t(sh.keyIndex.at(k))].totalSeconds);
    }
    C.minWork = minTotal;
    C.lowerBound =
        var.objectiveScale * double(m) * minTotal / double(c.pp);
  }
  std::sort(sh.configs.begin(), sh.configs.end(),
            [](const Config &a, const Config &b) {
              if (a.lowerBound != b.lowerBound)
                return a.lowerBound < b.lowerBound;
              if (a.variant != b.variant)
                return a.variant < b.variant;
              return compareConfigs(a.cfg, b.cfg) < 0;
            });
}


} // namespace trident::search::detail
