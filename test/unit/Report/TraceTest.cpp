//===- TraceTest.cpp - The simulated step as a Chrome trace ---------------===//
//
// The trace is held against the Evaluator it replays: per-stage work never
// overlaps, there is one forward and one backward per (stage, micro-batch,
// chunk), the stage tracks end at the predicted pipeline makespan and the
// step at the predicted iteration time, a stage's bubbles and blocked
// sends add up to the idle time the Evaluator reports, and every forward
// starts after its input arrived from the previous stage.
//
//===----------------------------------------------------------------------===//

#include "AnalyticProfile.h"
#include "TestClusters.h"
#include "trident/Report/Trace.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <tuple>

using namespace trident;

namespace {

LayerProfile gpt13b() { return test::gptProfile("gpt-13b", 40, 5120, 40); }
Cluster mixedCluster() { return test::h100A100Cluster(); }

struct Case {
  std::string name;
  Cluster cluster;
  ParallelConfig cfg;
  EvalOptions opt;
};

std::vector<Case> cases() {
  Result<Cluster> a100 = parseClusterSpec("dgx-a100-80gb:4");
  REQUIRE(a100.isOk());
  std::vector<Case> cs;
  ParallelConfig c;
  c.dp = 2, c.tp = 4, c.pp = 4, c.microBatch = 1, c.globalBatch = 16;
  c.layersPerChunk = {9, 10, 11, 10};
  cs.push_back({"1f1b, uneven stages", *a100, c, {}});
  ParallelConfig i = c;
  i.vpp = 2;
  i.layersPerChunk.clear();
  cs.push_back({"interleaved vpp=2", *a100, i, {}});
  ParallelConfig g = c;
  g.schedule = ScheduleKind::GPipe;
  EvalOptions overlap;
  overlap.overlapP2P = true;
  cs.push_back({"gpipe, overlapped p2p", *a100, g, overlap});
  ParallelConfig z = c;
  z.zeroStage = 1;
  z.recompute = Recompute::Full;
  cs.push_back({"zero-1, full recompute", *a100, z, {}});
  cs.push_back({"heterogeneous", mixedCluster(), c, {}});
  ParallelConfig one;
  one.dp = 4, one.tp = 8, one.globalBatch = 16, one.microBatch = 2;
  cs.push_back({"no pipeline", *a100, one, {}});
  return cs;
}

} // namespace

TEST_CASE("trace events replay the Evaluator's simulated step",
          "[report][trace]") {
  LayerProfile prof = gpt13b();
  for (const Case &k : cases()) {
    INFO(k.name);
    auto step = report::simulateStep(prof, k.cluster, k.cfg, k.opt);
    REQUIRE(step.isOk());
    const Evaluation &e = step->eval;
    report::Trace tr = report::buildTrace(*step);
    const int64_t p = k.cfg.pp, v = k.cfg.vpp, m = e.microBatches;
    REQUIRE(tr.numStages == p);

    // One forward and one backward per (stage, micro-batch, chunk).
    std::set<std::tuple<int, int, int, int>> seen;
    int64_t work = 0;
    for (const report::TraceEvent &ev : tr.events)
      if (ev.category == report::TraceCategory::Forward ||
          ev.category == report::TraceCategory::Backward) {
        ++work;
        CHECK(ev.track == ev.stage);
        seen.insert({int(ev.category), ev.stage, ev.microBatch, ev.chunk});
      }
    CHECK(work == p * m * 2 * v);
    CHECK(int64_t(seen.size()) == work);

    // Per stage: no overlap, ends at the makespan, idle time accounted.
    std::vector<double> end(size_t(p), 0), busy(size_t(p), 0),
        idle(size_t(p), 0);
    double last = 0;
    for (const report::TraceEvent &ev : tr.events) {
      last = std::max(last, ev.startSeconds + ev.durationSeconds);
      if (ev.track >= p)
        continue;
      size_t s = size_t(ev.track);
      CHECK(ev.startSeconds >= end[s] - 1e-12);
      CHECK(ev.durationSeconds >= 0);
      end[s] = ev.startSeconds + ev.durationSeconds;
      if (ev.category == report::TraceCategory::Bubble ||
          ev.category == report::TraceCategory::SendBlocked)
        idle[s] += ev.durationSeconds;
      else
        busy[s] += ev.durationSeconds;
    }
    double maxEnd = *std::max_element(end.begin(), end.end());
    CHECK(maxEnd == Approx(e.pipelineSeconds).epsilon(1e-12));
    CHECK(tr.pipelineSeconds == e.pipelineSeconds);
    CHECK(last == Approx(e.iterationSeconds).epsilon(1e-12));
    for (int64_t s = 0; s < p; ++s) {
      CHECK(end[size_t(s)] == Approx(e.pipelineSeconds).epsilon(1e-12));
      CHECK(idle[size_t(s)] ==
            Approx(e.stages[size_t(s)].bubbleSeconds).epsilon(1e-9).margin(1e-12));
      CHECK(busy[size_t(s)] + idle[size_t(s)] ==
            Approx(e.pipelineSeconds).epsilon(1e-9));
    }

    // Dependencies: F(mb, g) starts after F(mb, g-1) ended plus the
    // transfer (model chunk g = c*p + s).
    std::map<std::pair<int, int64_t>, std::pair<double, double>> fwd;
    for (const report::TraceEvent &ev : tr.events)
      if (ev.category == report::TraceCategory::Forward)
        fwd[{ev.microBatch, int64_t(ev.chunk) * p + ev.stage}] = {
            ev.startSeconds, ev.startSeconds + ev.durationSeconds};
    for (const auto &[key, se] : fwd) {
      if (key.second == 0)
        continue;
      const auto &prev = fwd.at({key.first, key.second - 1});
      int64_t b = (key.second - 1) % p;
      double link = step->costs.p2pSeconds.empty()
                        ? 0
                        : step->costs.p2pSeconds[size_t(b)];
      CHECK(se.first >= prev.second + link - 1e-12);
    }

    // The tail after the pipeline: exposed DP sync (with pipeline stages,
    // the tied embedding's sum last), then the optimizer.
    double dpTotal = 0, tiedEvent = 0;
    for (const report::TraceEvent &ev : tr.events)
      if (ev.category == report::TraceCategory::DataParallel) {
        dpTotal += ev.durationSeconds;
        if (ev.name.find("tied embedding") != std::string::npos) {
          tiedEvent += ev.durationSeconds;
          CHECK(ev.startSeconds + ev.durationSeconds ==
                Approx(e.pipelineSeconds + e.dpExposedSeconds)
                    .epsilon(1e-12));
        }
      }
    CHECK(dpTotal == Approx(e.dpExposedSeconds).epsilon(1e-12));
    CHECK(tiedEvent == e.tiedEmbeddingSeconds);
    CHECK((p > 1) == (e.tiedEmbeddingSeconds > 0));
    bool sawOptimizer = false;
    for (const report::TraceEvent &ev : tr.events)
      if (ev.category == report::TraceCategory::Optimizer) {
        sawOptimizer = true;
        CHECK(ev.startSeconds ==
              Approx(e.pipelineSeconds + e.dpExposedSeconds).epsilon(1e-12));
      }
    CHECK(sawOptimizer);
  }
}

TEST_CASE("sends block the sender only without p2p overlap",
          "[report][trace]") {
  LayerProfile prof = gpt13b();
  std::vector<Case> cs = cases();
  auto count = [&](const Case &k, report::TraceCategory c) {
    auto step = report::simulateStep(prof, k.cluster, k.cfg, k.opt);
    REQUIRE(step.isOk());
    report::Trace tr = report::buildTrace(*step);
    int64_t n = 0;
    for (const report::TraceEvent &ev : tr.events)
      n += ev.category == c;
    return n;
  };
  // 1F1B, p=4: every F but the last stage's and every B but the first's.
  const Case &base = cs[0];
  int64_t m = base.cfg.globalBatch / (base.cfg.dp * base.cfg.microBatch);
  CHECK(count(base, report::TraceCategory::P2P) == 2 * 3 * m);
  CHECK(count(base, report::TraceCategory::SendBlocked) == 2 * 3 * m);
  const Case &overlapped = cs[2];
  CHECK(count(overlapped, report::TraceCategory::P2P) == 2 * 3 * m);
  CHECK(count(overlapped, report::TraceCategory::SendBlocked) == 0);
}

TEST_CASE("heterogeneous stages get one process per node group",
          "[report][trace]") {
  LayerProfile prof = gpt13b();
  const Case k = cases()[4];
  auto step = report::simulateStep(prof, k.cluster, k.cfg, k.opt);
  REQUIRE(step.isOk());
  report::Trace tr = report::buildTrace(*step);
  std::set<int32_t> pids;
  for (int64_t s = 0; s < tr.numStages; ++s)
    pids.insert(tr.tracks[size_t(s)].pid);
  CHECK(pids.size() == 2);
  CHECK_THAT(tr.tracks[0].process, Catch::Contains("H100"));
  CHECK_THAT(tr.tracks[3].process, Catch::Contains("A100"));
}

TEST_CASE("the Chrome trace JSON is well formed and deterministic",
          "[report][trace]") {
  LayerProfile prof = gpt13b();
  const Case k = cases()[1];
  auto step = report::simulateStep(prof, k.cluster, k.cfg, k.opt);
  REQUIRE(step.isOk());
  report::Trace tr = report::buildTrace(*step);
  std::string text = report::traceToChromeJson(tr);
  CHECK(report::traceToChromeJson(report::buildTrace(*step)) == text);
  nlohmann::json j = nlohmann::json::parse(text);
  REQUIRE(j.contains("traceEvents"));
  std::set<std::pair<int, int>> named;
  int64_t complete = 0;
  double lastUs = 0;
  for (const nlohmann::json &ev : j["traceEvents"]) {
    REQUIRE(ev["ph"].is_string());
    REQUIRE(ev["pid"].is_number_integer());
    REQUIRE(ev["tid"].is_number_integer());
    REQUIRE(ev["name"].is_string());
    if (ev["ph"] == "M") {
      if (ev["name"] == "thread_name")
        named.insert({ev["pid"].get<int>(), ev["tid"].get<int>()});
      continue;
    }
    REQUIRE(ev["ph"] == "X");
    REQUIRE(ev["cat"].is_string());
    REQUIRE(ev["ts"].is_number());
    REQUIRE(ev["dur"].is_number());
    CHECK(ev["dur"].get<double>() >= 0);
    // Every event sits on a named track.
    CHECK(named.count({ev["pid"].get<int>(), ev["tid"].get<int>()}) == 1);
    lastUs = std::max(lastUs, ev["ts"].get<double>() + ev["dur"].get<double>());
    ++complete;
  }
  CHECK(complete == int64_t(tr.events.size()));
  CHECK(lastUs == Approx(step->eval.iterationSeconds * 1e6).epsilon(1e-6));
  CHECK(text.find("\"name\":\"F mb3 chunk1\"") != std::string::npos);
}

TEST_CASE("simulateStep reports a bad configuration", "[report][trace]") {
  LayerProfile prof = gpt13b();
  Result<Cluster> a100 = parseClusterSpec("dgx-a100-80gb:4");
  REQUIRE(a100.isOk());
  ParallelConfig c;
  c.dp = 3, c.tp = 4, c.pp = 4, c.globalBatch = 12;
  auto step = report::simulateStep(prof, *a100, c);
  REQUIRE_FALSE(step.isOk());
  CHECK_FALSE(step.message().empty());
}

TEST_CASE("communication inside the passes has its own tracks",
          "[report][trace]") {
  // Each exposed TP / CP / EP / ZeRO-3 part is drawn inside the pass that
  // includes it, on a track of its stage and kind, and per stage the parts
  // add up to the Evaluator's per-chunk breakdown times the micro-batches.
  LayerProfile prof = gpt13b();
  Result<Cluster> a100 = parseClusterSpec("dgx-a100-80gb:4");
  REQUIRE(a100.isOk());
  std::vector<Case> cs = cases();
  ParallelConfig z3;
  z3.dp = 2, z3.tp = 4, z3.pp = 2, z3.cp = 2, z3.microBatch = 1;
  z3.globalBatch = 16, z3.zeroStage = 3, z3.sequenceParallel = true;
  cs.push_back({"cp 2, ZeRO-3", *a100, z3, {}});
  for (const Case &k : cs) {
    INFO(k.name);
    auto step = report::simulateStep(prof, k.cluster, k.cfg, k.opt);
    REQUIRE(step.isOk());
    const PipelineCosts &pc = step->costs;
    const int64_t p = k.cfg.pp, G = p * k.cfg.vpp;
    REQUIRE(int64_t(pc.forwardComm.size()) == G);
    REQUIRE(int64_t(pc.backwardComm.size()) == G);
    for (int64_t g = 0; g < G; ++g) {
      double f = 0, b = 0;
      for (size_t kind = 0; kind < kPassCommKinds; ++kind) {
        CHECK(pc.forwardComm[size_t(g)][kind] >= 0);
        f += pc.forwardComm[size_t(g)][kind];
        b += pc.backwardComm[size_t(g)][kind];
      }
      CHECK(f <= pc.forwardSeconds[size_t(g)] * (1 + 1e-12));
      CHECK(b <= pc.backwardSeconds[size_t(g)] * (1 + 1e-12));
    }
    report::Trace tr = report::buildTrace(*step);
    // Expected per (stage, kind): the chunk parts times the micro-batches.
    std::map<std::pair<int64_t, size_t>, double> want, got;
    const int64_t m = step->eval.microBatches;
    for (int64_t g = 0; g < G; ++g)
      for (size_t kind = 0; kind < kPassCommKinds; ++kind) {
        double d =
            pc.forwardComm[size_t(g)][kind] + pc.backwardComm[size_t(g)][kind];
        if (d > 0)
          want[{g % p, kind}] += double(m) * d;
      }
    auto kindOf = [](report::TraceCategory c) -> int {
      switch (c) {
      case report::TraceCategory::TensorParallel:
        return int(PassComm::TensorParallel);
      case report::TraceCategory::ContextParallel:
        return int(PassComm::ContextParallel);
      case report::TraceCategory::ExpertParallel:
        return int(PassComm::ExpertParallel);
      default:
        return -1;
      }
    };
    for (const report::TraceEvent &ev : tr.events) {
      int kind = kindOf(ev.category);
      const bool zero3Pass =
          ev.category == report::TraceCategory::DataParallel && ev.stage >= 0;
      if (zero3Pass)
        kind = int(PassComm::DataParallel);
      if (kind < 0)
        continue;
      const report::TraceTrack &t = tr.tracks[size_t(ev.track)];
      CHECK(ev.track >= p);
      CHECK(t.process == "communication inside the passes (exposed)");
      got[{ev.stage, size_t(kind)}] += ev.durationSeconds;
      // Inside the stage's pass of the same micro-batch and chunk.
      bool inside = false;
      for (const report::TraceEvent &w : tr.events)
        if ((w.category == report::TraceCategory::Forward ||
             w.category == report::TraceCategory::Backward) &&
            w.stage == ev.stage && w.microBatch == ev.microBatch &&
            w.chunk == ev.chunk && ev.startSeconds >= w.startSeconds - 1e-12 &&
            ev.startSeconds + ev.durationSeconds <=
                w.startSeconds + w.durationSeconds + 1e-12)
          inside = true;
      CHECK(inside);
    }
    REQUIRE(got.size() == want.size());
    for (const auto &[key, d] : want)
      CHECK(got[key] == Approx(d).epsilon(1e-9));
  }
  // TP > 1 everywhere above: every stage has a tensor-parallel track.
  auto step = report::simulateStep(prof, *a100, cs.back().cfg, {});
  REQUIRE(step.isOk());
  report::Trace tr = report::buildTrace(*step);
  std::set<std::string> names;
  for (const report::TraceTrack &t : tr.tracks)
    names.insert(t.thread);
  CHECK(names.count("stage 0: tensor parallel"));
  CHECK(names.count("stage 1: tensor parallel"));
  CHECK(names.count("stage 0: ZeRO-3 (data parallel)"));
}
