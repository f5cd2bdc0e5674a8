//===- Replan.cpp - Re-planning a running job for another cluster ---------===//

#include "trident/Explore/Replan.h"

#include "trident/Explore/Explore.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>

namespace trident::explore {

namespace {

using json = nlohmann::ordered_json;

/// Bytes of state one GPU of `st` holds: its weights and its optimizer
/// state (fp32 master copy and moments), as the memory model counts them.
double stateBytes(const plan::StagePlan &st) {
  return st.weightBytes + st.optimizerBytes;
}

/// Bytes of the checkpoint: every parameter once, with its weight and
/// optimizer state as the memory model counts them.
double checkpointBytes(const LayerProfile &profile, const ParallelConfig &c,
                       const EvalOptions &eo) {
  StateBytesPerParam b = stateBytesPerParam(c.precision, eo);
  return double(profile.totalParams) * (b.weight + b.optimizer);
}

/// The resharding time of `perRank` bytes read by every GPU of `p`'s
/// stages: each node receives the bytes of its GPUs through its NICs, all
/// nodes at once; the store serves `storeBytes` (each byte once, the
/// replicas passing it on) at its rate.
StateMove moveOf(const plan::Plan &p, const std::vector<double> &perRank,
                 const Cluster &cluster, double storeBytes,
                 const ReplanOptions &o) {
  StateMove m;
  std::map<std::pair<int64_t, int64_t>, double> nodeBytes; // group, node
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const plan::StagePlan &st = p.stages[i];
    double b = perRank[i];
    m.bytesPerRankMax = std::max(m.bytesPerRankMax, b);
    for (int64_t g = st.firstGpu; g < st.firstGpu + st.numGpus; ++g) {
      int64_t group = std::max<int64_t>(0, cluster.groupOfGpu(g));
      const NodeGroup &hw = cluster.groups[size_t(group)];
      int64_t local = g - cluster.firstGpuOfGroup(group);
      nodeBytes[{group, local / std::max<int64_t>(1, hw.gpusPerNode)}] += b;
      m.bytesTotal += b;
    }
  }
  double seconds = 0;
  for (const auto &[key, bytes] : nodeBytes) {
    double bw = cluster.groups[size_t(key.first)].nodeNetworkBytesPerS();
    if (bw > 0)
      seconds = std::max(seconds, bytes / bw);
  }
  m.storeBytes = storeBytes;
  if (o.storageBytesPerS > 0)
    seconds = std::max(seconds, storeBytes / o.storageBytesPerS);
  m.seconds = seconds + o.restartSeconds;
  return m;
}

/// The old layout on the new cluster: dp as large as the GPUs allow (the
/// old dp at most) and dividing the global batch into whole micro-batches,
/// the first one that fits.
ReplanSide staySide(const LayerProfile &profile, const plan::Plan &old,
                    const ParallelConfig &cfg, const Cluster &cluster,
                    const EvalOptions &eo, const ReplanOptions &o) {
  ReplanSide side;
  if (!cluster.homogeneous()) {
    side.why = "the new cluster has several node groups";
    return side;
  }
  const NodeGroup &hw = cluster.groups.front();
  int64_t shape = cfg.tp * cfg.pp * cfg.cp;
  int64_t maxDp = std::min(cfg.dp, cluster.totalGpus() / shape);
  std::string last = fmt::format(
      "the old layout (tp{} pp{} cp{}) needs {} GPUs per replica; the "
      "cluster has {}",
      cfg.tp, cfg.pp, cfg.cp, shape, cluster.totalGpus());
  for (int64_t dp = maxDp; dp >= 1; --dp) {
    int64_t gpus = dp * shape;
    // The replicas on whole nodes (a sub-cluster of the new one), or on
    // part of one node; the global batch in whole micro-batches.
    if ((gpus > hw.gpusPerNode && gpus % hw.gpusPerNode != 0) ||
        cfg.globalBatch % (dp * cfg.microBatch) != 0)
      continue;
    Cluster sub = cluster;
    if (gpus < hw.gpusPerNode) {
      sub.groups[0].nodes = 1;
      sub.groups[0].gpusPerNode = gpus;
    } else {
      sub.groups[0].nodes = gpus / hw.gpusPerNode;
    }
    ParallelConfig c = cfg;
    c.dp = dp;
    auto e = evaluate(profile, sub, c, eo);
    if (!e) {
      last = fmt::format("dp{}: {}", dp, e.message());
      continue;
    }
    if (!e->fits) {
      last = fmt::format("dp{}: {}", dp, describeFit(*e));
      continue;
    }
    side.possible = true;
    side.plan = plan::makePlan(profile, sub, c, *e);
    if (gpus < hw.gpusPerNode)
      side.plan.clusterNote = fmt::format("{} of the {} GPUs of one node",
                                          gpus, hw.gpusPerNode);
    else if (sub.groups[0].nodes != hw.nodes)
      side.plan.clusterNote =
          fmt::format("{} of {} nodes", sub.groups[0].nodes, hw.nodes);
    // Ranks keep their shards; where the data-parallel degree changed,
    // ZeRO-sharded state regroups: each rank reads what its larger shard
    // adds to the one it holds, and the store serves that share of the
    // checkpoint.
    std::vector<double> perRank(side.plan.stages.size(), 0.0);
    double storeBytes = 0;
    if (dp != cfg.dp && cfg.zeroStage > 0) {
      for (size_t i = 0; i < perRank.size() && i < old.stages.size(); ++i) {
        perRank[i] = std::max(0.0, stateBytes(side.plan.stages[i]) -
                                       stateBytes(old.stages[i]));
        storeBytes += perRank[i] * double(side.plan.stages[i].numGpus);
      }
      storeBytes = std::min(storeBytes, checkpointBytes(profile, c, eo));
    }
    side.move = moveOf(side.plan, perRank, sub, storeBytes, o);
    return side;
  }
  side.why = last;
  return side;
}

std::string gbText(double bytes) {
  return bytes >= 1e12 ? fmt::format("{:.2f} TB", bytes / 1e12)
                       : fmt::format("{:.1f} GB", bytes / 1e9);
}

json sideJson(const ReplanSide &s) {
  json j;
  j["possible"] = s.possible;
  if (!s.possible) {
    j["why"] = s.why;
    return j;
  }
  j["plan"] = json::parse(plan::planToJson(s.plan));
  j["iteration_time_s"] = s.plan.predicted.iterationSeconds;
  j["bytes_total"] = s.move.bytesTotal;
  j["bytes_per_rank_max"] = s.move.bytesPerRankMax;
  j["store_bytes"] = s.move.storeBytes;
  j["reshard_s"] = s.move.seconds;
  return j;
}

} // namespace

Result<ReplanResult> replan(const LayerProfile &profile, const plan::Plan &old,
                            const Cluster &cluster, const ReplanOptions &o,
                            const EvalOptions &eo) {
  if (!old.dataShares.empty())
    return Status::error("--plan: a plan with data shares (several GPU "
                         "types) cannot be re-planned yet");
  if (o.storageBytesPerS < 0 || !std::isfinite(o.storageBytesPerS))
    return Status::error("--storage-gbps must be a positive number");
  if (o.restartSeconds < 0 || !std::isfinite(o.restartSeconds))
    return Status::error("--restart-s must be a positive number");
  if (old.stages.empty())
    return Status::error("--plan: the plan lists no stages (write it with "
                         "trident plan -o)");
  auto cfg = plan::toParallelConfig(old);
  if (!cfg)
    return Status::error("--plan: " + cfg.message());
  ReplanResult r;
  r.stay = staySide(profile, old, *cfg, cluster, eo, o);

  search::SearchOptions so;
  so.globalBatch = old.globalBatch;
  so.precision = cfg->precision;
  so.topK = 1;
  so.threads = o.threads;
  auto res = search::searchPlans(profile, cluster, so, eo);
  if (!res)
    return Status::error(res.message());
  if (res->top.empty()) {
    r.move.why = res->noFit ? res->noFit->message : "nothing fits";
  } else {
    const search::Candidate &c = res->top.front();
    const Cluster &cl = res->clusters[size_t(c.clusterIndex)];
    r.move.possible = true;
    r.move.plan = plan::makePlan(profile, cl, c.config, c.eval);
    r.move.plan.clusterNote = res->clusterNotes[size_t(c.clusterIndex)];
    r.move.plan.partition = c.partition;
    if (r.stay.possible &&
        static_cast<const ParallelAxes &>(r.move.plan) ==
            static_cast<const ParallelAxes &>(r.stay.plan) &&
        r.move.plan.layersPerChunk == r.stay.plan.layersPerChunk) {
      r.move.move = r.stay.move; // the same layout: nothing more to move
    } else {
      // Another layout: every rank reads its whole new shard.
      std::vector<double> perRank;
      for (const plan::StagePlan &st : r.move.plan.stages)
        perRank.push_back(stateBytes(st));
      r.move.move = moveOf(r.move.plan, perRank, cl,
                           checkpointBytes(profile, c.config, eo), o);
    }
  }
  if (!r.move.possible && !r.stay.possible)
    return Status::error("--cluster " + cluster.name +
                         ": no plan fits, neither the old layout (" +
                         r.stay.why + ") nor a new one (" + r.move.why + ")");
  if (!r.stay.possible) {
    r.breakEvenSteps = 0;
  } else if (r.move.possible) {
    double tStay = r.stay.plan.predicted.iterationSeconds;
    double tMove = r.move.plan.predicted.iterationSeconds;
    if (tMove < tStay) {
      double extra = r.move.move.seconds - r.stay.move.seconds;
      r.breakEvenSteps =
          extra <= 0 ? 0 : int64_t(std::ceil(extra / (tStay - tMove)));
    }
  }
  return r;
}

std::string renderReplanText(const ReplanResult &r, const plan::Plan &old,
                             const Cluster &cluster) {
  std::string out = fmt::format(
      "replan      {}: {} on {} ({} GPUs), {:.3f} s/step -> {} ({} GPUs)\n",
      old.model, planSummary(old), old.cluster, old.gpus,
      old.predicted.iterationSeconds, cluster.name, cluster.totalGpus());
  auto side = [&](const char *label, const ReplanSide &s) {
    if (!s.possible)
      return fmt::format("{:<12}not possible: {}\n", label, s.why);
    return fmt::format(
        "{:<12}{} on {} GPUs{}: {:.3f} s/step, MFU {:.1f}%, {:.1f} GB/GPU; "
        "reads {} ({} on the busiest rank) in {:.1f} s\n",
        label, planSummary(s.plan), s.plan.gpus,
        s.plan.clusterNote.empty() ? "" : " (" + s.plan.clusterNote + ")",
        s.plan.predicted.iterationSeconds, s.plan.predicted.mfu * 100,
        s.plan.predicted.peakMemoryBytes / 1e9, gbText(s.move.bytesTotal),
        gbText(s.move.bytesPerRankMax), s.move.seconds);
  };
  out += side("stay", r.stay);
  out += side("move", r.move);
  if (!r.stay.possible)
    out += "break-even  moving is the only way on\n";
  else if (!r.breakEvenSteps)
    out += "break-even  never: the new plan is not faster; stay\n";
  else if (*r.breakEvenSteps == 0)
    out += "break-even  at once: moving costs no more than staying\n";
  else
    out += fmt::format(
        "break-even  after {} step{} moving has paid for its resharding "
        "({:.1f} s more, {:.3f} s/step saved)\n",
        *r.breakEvenSteps, *r.breakEvenSteps == 1 ? "" : "s",
        r.move.move.seconds - r.stay.move.seconds,
        r.stay.plan.predicted.iterationSeconds -
            r.move.plan.predicted.iterationSeconds);
  return out;
}

std::string renderReplanJson(const ReplanResult &r, const plan::Plan &old,
                             const Cluster &cluster) {
  json root;
  root["schema"] = "trident.replan/v1";
  root["old"] = json::parse(plan::planToJson(old));
  root["cluster"] = cluster.name;
  root["gpus"] = cluster.totalGpus();
  root["stay"] = sideJson(r.stay);
  root["move"] = sideJson(r.move);
  if (r.breakEvenSteps)
    root["break_even_steps"] = *r.breakEvenSteps;
  else
    root["break_even_steps"] = nullptr;
  return root.dump(2) + "\n";
}

} // namespace trident::explore
