//===- Trace.cpp - The simulated training step as a timeline --------------===//
//
// Nothing here models time: every start and end comes from simulate() run
// on the Evaluator's own PipelineCosts (Evaluator::lastPipelineCosts), and
// the tail of the step (exposed data-parallel synchronisation, optimizer)
// from the Evaluation. This file only decides where each interval is
// drawn: the gaps of a stage between its actions become `bubble` events
// (minus the part it spends blocked sending, when sends do not overlap
// compute), and each transfer goes to the track of its boundary and
// direction.
//
//===----------------------------------------------------------------------===//

#include "trident/Report/Trace.h"

#include "trident/Schedule/ScheduleCache.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace trident::report {

std::string_view traceCategoryName(TraceCategory c) {
  switch (c) {
  case TraceCategory::Forward:
    return "forward";
  case TraceCategory::Backward:
    return "backward";
  case TraceCategory::Bubble:
    return "bubble";
  case TraceCategory::SendBlocked:
    return "send";
  case TraceCategory::P2P:
    return "p2p";
  case TraceCategory::DataParallel:
    return "data-parallel";
  case TraceCategory::Optimizer:
    return "optimizer";
  case TraceCategory::TensorParallel:
    return "tensor-parallel";
  case TraceCategory::ContextParallel:
    return "context-parallel";
  case TraceCategory::ExpertParallel:
    return "expert-parallel";
  }
  return "other";
}

Result<StepTimeline> simulateStep(const LayerProfile &profile,
                                  const Cluster &cluster,
                                  const ParallelConfig &cfg,
                                  const EvalOptions &options) {
  Result<Evaluator> ev = Evaluator::create(profile, cluster, options);
  if (!ev)
    return ev.status();
  StepTimeline t;
  t.model = profile.modelName;
  t.cluster = cluster.name;
  t.config = cfg;
  if (Status s = ev->evaluate(cfg, t.eval); !s)
    return s;
  if (!cfg.dataShares.empty()) {
    // Data shares: each node group runs its own pipelines; the timeline
    // is the slowest share's (its group alone, its own batch), which sets
    // the step time before the cross-group gradient all-reduce.
    size_t slow = 0;
    for (size_t i = 1; i < t.eval.shareSeconds.size(); ++i)
      if (t.eval.shareSeconds[i] > t.eval.shareSeconds[slow])
        slow = i;
    const DataShare &d = cfg.dataShares[slow];
    Cluster one = cluster;
    one.name = cluster.name + "/" + cluster.groups[size_t(d.group)].name;
    one.groups = {cluster.groups[size_t(d.group)]};
    ParallelConfig sub = cfg;
    sub.dataShares.clear();
    sub.dp = d.dp;
    sub.globalBatch = d.dp * cfg.microBatch * d.microBatches;
    Result<StepTimeline> r = simulateStep(profile, one, sub, options);
    if (r)
      r->cluster += " (slowest of " + std::to_string(cfg.dataShares.size()) +
                    " data shares)";
    return r;
  }
  t.costs = ev->lastPipelineCosts();
  Result<ScheduleCache::Entry> sched = ScheduleCache::global().get(
      t.eval.schedule, cfg.pp, t.eval.microBatches, cfg.vpp);
  if (!sched)
    return sched.status();
  t.schedule = *sched;
  if (Status s = simulateInto(*t.schedule, t.costs, t.sim); !s)
    return s;
  // The same numbers: the makespans agree, exactly when the Evaluator
  // simulated this schedule op by op, to 1e-12 plus rounding when it
  // extended a shorter one's steady state (docs/schedules.md, "Long
  // steps"); 1e-9 leaves room for the rounding of a million ops. Anything
  // more means the Evaluator changed its costs after simulating.
  if (std::abs(t.sim.makespanSeconds - t.eval.pipelineSeconds) >
      1e-9 * std::abs(t.eval.pipelineSeconds))
    return Status::error(
        "internal: the replayed schedule takes " +
        std::to_string(t.sim.makespanSeconds) + " s but the Evaluator "
        "simulated " + std::to_string(t.eval.pipelineSeconds) + " s");
  for (const StageBreakdown &st : t.eval.stages) {
    const NodeGroup &g = cluster.groups[size_t(st.nodeGroup)];
    t.stageGroup.push_back(g.name);
    t.stageGpu.push_back(g.gpu.name);
  }
  t.gpusPerStage = cfg.dp * cfg.tp * cfg.cp;
  return t;
}

namespace {

/// How the trace shows each PassComm kind, in the enum's order: its
/// category, its events' name and its tracks' name.
struct PassCommTrace {
  TraceCategory category;
  const char *event, *track;
};
constexpr PassCommTrace kPassCommTrace[kPassCommKinds] = {
    {TraceCategory::TensorParallel, "TP collectives", "tensor parallel"},
    {TraceCategory::ContextParallel, "CP ring exchange", "context parallel"},
    {TraceCategory::ExpertParallel, "EP all-to-all", "expert parallel"},
    {TraceCategory::DataParallel, "ZeRO-3 gather/scatter",
     "ZeRO-3 (data parallel)"},
};
static_assert(size_t(PassComm::TensorParallel) == 0 &&
              size_t(PassComm::ContextParallel) == 1 &&
              size_t(PassComm::ExpertParallel) == 2 &&
              size_t(PassComm::DataParallel) == 3);

/// A pipeline transfer: its boundary, direction and event.
struct Transfer {
  int32_t boundary;
  bool forward;
  TraceEvent ev;
};

/// The transfers on tracks of their own: one per boundary and direction,
/// and more lanes where two transfers over the same link overlap in time.
void placeTransfers(std::vector<Transfer> &transfers, int64_t p,
                    int32_t commPid, double eps, Trace &tr) {
  std::stable_sort(transfers.begin(), transfers.end(),
                   [](const Transfer &a, const Transfer &b) {
                     if (a.boundary != b.boundary)
                       return a.boundary < b.boundary;
                     if (a.forward != b.forward)
                       return a.forward;
                     return a.ev.startSeconds < b.ev.startSeconds;
                   });
  int32_t tid = 0;
  for (size_t i = 0; i < transfers.size();) {
    size_t j = i;
    while (j < transfers.size() &&
           transfers[j].boundary == transfers[i].boundary &&
           transfers[j].forward == transfers[i].forward)
      ++j;
    std::vector<double> laneEnd;
    std::vector<int32_t> laneTrack;
    int32_t b = transfers[i].boundary;
    bool fwd = transfers[i].forward;
    int64_t from = fwd ? b : (b + 1) % p, to = fwd ? (b + 1) % p : b;
    for (size_t k = i; k < j; ++k) {
      TraceEvent &e = transfers[k].ev;
      size_t lane = 0;
      while (lane < laneEnd.size() && laneEnd[lane] > e.startSeconds + eps)
        ++lane;
      if (lane == laneEnd.size()) {
        TraceTrack t;
        t.pid = commPid;
        t.tid = tid++;
        t.process = "pipeline point-to-point";
        t.thread = std::string(fwd ? "activations" : "gradients") + " s" +
                   std::to_string(from) + "->s" + std::to_string(to) +
                   (lane > 0 ? " (" + std::to_string(lane + 1) + ")" : "");
        laneTrack.push_back(int32_t(tr.tracks.size()));
        tr.tracks.push_back(std::move(t));
        laneEnd.push_back(0);
      }
      laneEnd[lane] = e.startSeconds + e.durationSeconds;
      e.track = laneTrack[lane];
      tr.events.push_back(e);
    }
    i = j;
  }

}

} // namespace

/// After the pipeline drains: the exposed data-parallel sync, then the
/// optimizer, on two tracks of process `pid`.
static void addStepTail(const StepTimeline &step, int32_t pid, Trace &tr) {
  const ParallelConfig &c = step.config;
  const Evaluation &ev = step.eval;
  TraceTrack dpTrack{pid, 0, "step tail", "data parallel (exposed)"};
  TraceTrack optTrack{pid, 1, "step tail", "optimizer"};
  int32_t dpIdx = int32_t(tr.tracks.size());
  tr.tracks.push_back(dpTrack);
  int32_t optIdx = int32_t(tr.tracks.size());
  tr.tracks.push_back(optTrack);
  // The data-parallel part, then the tied embedding's sum over the first
  // and last stage (both counted in dpExposedSeconds).
  auto dpEvent = [&](std::string name, double start, double duration) {
    if (duration <= 0)
      return;
    TraceEvent e;
    e.name = std::move(name);
    e.category = TraceCategory::DataParallel;
    e.track = dpIdx;
    e.startSeconds = start;
    e.durationSeconds = duration;
    tr.events.push_back(std::move(e));
  };
  const double dpOwn = ev.dpExposedSeconds - ev.tiedEmbeddingSeconds;
  dpEvent(c.zeroStage >= 1 ? "gradient reduce-scatter / parameter "
                             "all-gather (exposed)"
                           : "gradient all-reduce (exposed)",
          tr.pipelineSeconds, dpOwn);
  dpEvent("tied embedding gradient all-reduce (first and last stage)",
          tr.pipelineSeconds + std::max(0.0, dpOwn), ev.tiedEmbeddingSeconds);
  if (ev.optimizerSeconds > 0) {
    TraceEvent e;
    e.name = "optimizer step";
    e.category = TraceCategory::Optimizer;
    e.track = optIdx;
    e.startSeconds = tr.pipelineSeconds + ev.dpExposedSeconds;
    e.durationSeconds = ev.optimizerSeconds;
    tr.events.push_back(std::move(e));
  }
}

Trace buildTrace(const StepTimeline &step) {
  Trace tr;
  const ParallelConfig &c = step.config;
  const CompiledSchedule &sched = *step.schedule;
  const int64_t p = sched.p(), v = sched.v(), G = p * v;
  tr.numStages = p;
  tr.pipelineSeconds = step.sim.makespanSeconds;
  tr.stepSeconds = step.eval.iterationSeconds;
  tr.title = step.model + " on " + step.cluster + ": dp=" +
             std::to_string(c.dp) + " tp=" + std::to_string(c.tp) +
             " pp=" + std::to_string(c.pp) + " cp=" + std::to_string(c.cp) +
             (c.ep > 1 ? " ep=" + std::to_string(c.ep) : "") +
             " vpp=" + std::to_string(c.vpp) + ", " +
             std::to_string(step.eval.microBatches) + " micro-batches of " +
             std::to_string(c.microBatch) + ", " +
             std::string(scheduleKindName(sched.kind()));

  // --- tracks: stages, grouped into one process per node group ---
  std::vector<std::string> groupOrder;
  for (int64_t s = 0; s < p; ++s) {
    const std::string &g = step.stageGroup[size_t(s)];
    if (std::find(groupOrder.begin(), groupOrder.end(), g) == groupOrder.end())
      groupOrder.push_back(g);
  }
  // Block range of each stage, for the track name.
  std::vector<int64_t> chunkBegin(static_cast<size_t>(G) + 1, 0);
  for (int64_t g = 0; g < G; ++g) {
    int64_t n = size_t(g) < c.layersPerChunk.size()
                    ? c.layersPerChunk[size_t(g)]
                    : 0;
    chunkBegin[size_t(g) + 1] = chunkBegin[size_t(g)] + n;
  }
  for (int64_t s = 0; s < p; ++s) {
    TraceTrack t;
    const std::string &g = step.stageGroup[size_t(s)];
    t.pid = int32_t(std::find(groupOrder.begin(), groupOrder.end(), g) -
                    groupOrder.begin()) +
            1;
    t.tid = int32_t(s);
    t.process = "pipeline stages on " + g + " (" + step.stageGpu[size_t(s)] +
                "), " + std::to_string(step.gpusPerStage) + " GPUs per stage";
    const StageBreakdown &st = step.eval.stages[size_t(s)];
    t.thread = "stage " + std::to_string(s) + ": " +
               std::to_string(st.layers) + " layers" +
               (st.hasEmbedding ? " + embedding" : "") +
               (st.hasHead ? " + head" : "");
    tr.tracks.push_back(std::move(t));
  }
  const int32_t commPid = int32_t(groupOrder.size()) + 1;

  // --- stage work, bubbles and blocked sends ---
  const auto &boundary = sched.sendBoundary();
  const double eps = 1e-12 * std::max(tr.pipelineSeconds, 1e-30);
  std::vector<Transfer> transfers;
  // Communication inside the passes: (stage, kind) -> its events.
  std::map<std::pair<int64_t, size_t>, std::vector<TraceEvent>> passComm;
  const bool commKnown = int64_t(step.costs.forwardComm.size()) == G &&
                         int64_t(step.costs.backwardComm.size()) == G;
  for (int64_t s = 0; s < p; ++s) {
    double cursor = 0;
    auto bubbleTo = [&](double until) {
      if (until - cursor > eps) {
        TraceEvent b;
        b.name = "bubble";
        b.category = TraceCategory::Bubble;
        b.track = int32_t(s);
        b.startSeconds = cursor;
        b.durationSeconds = until - cursor;
        b.stage = int32_t(s);
        tr.events.push_back(std::move(b));
      }
    };
    for (const TimedAction &a : step.sim.timeline[size_t(s)]) {
      bool fwd = a.action.kind == ActionKind::Forward;
      int64_t g = globalChunk(a.action.chunk, s, p);
      bubbleTo(a.startSeconds);
      TraceEvent e;
      e.name = std::string(fwd ? "F" : "B") + " mb" +
               std::to_string(a.action.microBatch) + " chunk" +
               std::to_string(a.action.chunk);
      e.category = fwd ? TraceCategory::Forward : TraceCategory::Backward;
      e.track = int32_t(s);
      e.startSeconds = a.startSeconds;
      e.durationSeconds = a.endSeconds - a.startSeconds;
      e.stage = int32_t(s);
      e.microBatch = a.action.microBatch;
      e.chunk = a.action.chunk;
      tr.events.push_back(e);
      cursor = a.endSeconds;
      if (commKnown) {
        // The exposed parts, back to back, ending with the pass.
        const auto &parts =
            (fwd ? step.costs.forwardComm : step.costs.backwardComm)[size_t(g)];
        double total = 0;
        for (double d : parts)
          total += d;
        double at = a.endSeconds - std::min(total, e.durationSeconds);
        for (size_t k = 0; k < kPassCommKinds; ++k) {
          double d = std::min(parts[k], a.endSeconds - at);
          if (d <= 0)
            continue;
          TraceEvent x = e;
          x.name = std::string(kPassCommTrace[k].event) + " in " + e.name;
          x.category = kPassCommTrace[k].category;
          x.startSeconds = at;
          x.durationSeconds = d;
          passComm[{s, k}].push_back(std::move(x));
          at += d;
        }
      }
      // Its output crosses a boundary: the transfer, and without overlap
      // the sender is held for it (the simulator's blockSeconds).
      int32_t b = boundary[size_t(fwd ? g : G + g)];
      double link = b >= 0 && !step.costs.p2pSeconds.empty()
                        ? step.costs.p2pSeconds[size_t(b)]
                        : 0.0;
      if (link > 0) {
        int64_t to = fwd ? (s + 1) % p : (s + p - 1) % p;
        TraceEvent x = e;
        x.name = e.name + " s" + std::to_string(s) + "->s" + std::to_string(to);
        x.category = TraceCategory::P2P;
        x.startSeconds = a.endSeconds;
        x.durationSeconds = link;
        transfers.push_back({b, fwd, x});
        if (!step.costs.overlapP2P) {
          TraceEvent blk = e;
          blk.name = "send " + e.name + " to s" + std::to_string(to);
          blk.category = TraceCategory::SendBlocked;
          blk.startSeconds = a.endSeconds;
          blk.durationSeconds = link;
          tr.events.push_back(std::move(blk));
          cursor = a.endSeconds + link;
        }
      }
    }
    bubbleTo(tr.pipelineSeconds);
  }

  // --- transfers: one track per boundary and direction ---
  placeTransfers(transfers, p, commPid, eps, tr);

  // --- after the pipeline drains: exposed DP sync, then the optimizer ---
  addStepTail(step, commPid + 1, tr);

  // --- communication exposed inside the passes: a track per stage and
  // kind that has any ---
  for (auto &[key, events] : passComm) {
    const auto [s, k] = key;
    const int32_t idx = int32_t(tr.tracks.size());
    tr.tracks.push_back(
        {commPid + 2, int32_t(s * int64_t(kPassCommKinds) + k),
         "communication inside the passes (exposed)",
         "stage " + std::to_string(s) + ": " + kPassCommTrace[k].track});
    for (TraceEvent &x : events) {
      x.track = idx;
      tr.events.push_back(std::move(x));
    }
  }

  std::stable_sort(tr.events.begin(), tr.events.end(),
                   [](const TraceEvent &a, const TraceEvent &b) {
                     if (a.track != b.track)
                       return a.track < b.track;
                     return a.startSeconds < b.startSeconds;
                   });
  return tr;
}

std::string traceToChromeJson(const Trace &trace) {
  using Json = nlohmann::ordered_json;
  // Microseconds, rounded to the nanosecond: short, stable text.
  auto us = [](double seconds) {
    return std::round(seconds * 1e9) / 1e3;
  };
  Json events = Json::array();
  std::map<int32_t, std::string> processes;
  for (const TraceTrack &t : trace.tracks)
    processes.emplace(t.pid, t.process);
  for (const auto &[pid, name] : processes) {
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid},
                      {"tid", 0}, {"args", {{"name", name}}}});
    events.push_back({{"name", "process_sort_index"}, {"ph", "M"},
                      {"pid", pid}, {"tid", 0},
                      {"args", {{"sort_index", pid}}}});
  }
  for (const TraceTrack &t : trace.tracks) {
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", t.pid},
                      {"tid", t.tid}, {"args", {{"name", t.thread}}}});
    events.push_back({{"name", "thread_sort_index"}, {"ph", "M"},
                      {"pid", t.pid}, {"tid", t.tid},
                      {"args", {{"sort_index", t.tid}}}});
  }
  for (const TraceEvent &e : trace.events) {
    const TraceTrack &t = trace.tracks[size_t(e.track)];
    Json j = {{"name", e.name},
              {"cat", std::string(traceCategoryName(e.category))},
              {"ph", "X"},
              {"ts", us(e.startSeconds)},
              {"dur", us(e.durationSeconds)},
              {"pid", t.pid},
              {"tid", t.tid}};
    Json args = Json::object();
    if (e.stage >= 0)
      args["stage"] = e.stage;
    if (e.microBatch >= 0)
      args["micro_batch"] = e.microBatch;
    if (e.chunk >= 0)
      args["chunk"] = e.chunk;
    j["args"] = args;
    events.push_back(std::move(j));
  }
  Json other = {{"generator", "trident"},
                {"title", trace.title},
                {"pipeline_s", trace.pipelineSeconds},
                {"step_s", trace.stepSeconds}};
  // One event per line: small, and diffs read well.
  std::string out = "{\"traceEvents\": [\n";
  for (size_t i = 0; i < events.size(); ++i)
    out += events[i].dump() + (i + 1 < events.size() ? ",\n" : "\n");
  out += "],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": " + other.dump() +
         "\n}\n";
  return out;
}

} // namespace trident::report
