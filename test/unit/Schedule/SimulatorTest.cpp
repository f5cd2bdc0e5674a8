//===- SimulatorTest.cpp - Schedule simulation against closed forms -------===//

#include "trident/Schedule/Simulator.h"
#include "trident/Schedule/ScheduleCache.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>
#include <thread>
#include <tuple>

using namespace trident;

namespace {

const CompiledSchedule &get(ScheduleKind k, int p, int m, int v = 1) {
  auto e = ScheduleCache::global().get(k, p, m, v);
  REQUIRE(e.isOk());
  return **e;
}

bool relEq(double got, double want, double rel = 1e-9) {
  return std::abs(got - want) <= rel * std::max(std::abs(want), 1e-300);
}

/// For dimensionless fractions that may be exactly 0 (p = 1), where the
/// makespan's last-bit rounding makes a relative test meaningless.
bool fracEq(double got, double want) {
  return std::abs(got - want) <= 1e-12 || relEq(got, want);
}

double p2pAt(const PipelineCosts &c, int64_t boundary) {
  return c.p2pSeconds.empty() ? 0.0 : c.p2pSeconds[boundary];
}

/// Reference simulator written from the rules in docs/schedules.md, sharing
/// no code with the library: relax "start = max(previous on my stage ends
/// (+ its send block), my input's producer ends + transfer)" over the lists
/// until nothing changes (Bellman-Ford on the longest-path problem).
std::map<std::tuple<int, int, int>, std::pair<double, double>>
referenceTimes(const Schedule &s, const PipelineCosts &c) {
  const int p = s.p, G = s.p * s.v;
  std::map<std::tuple<int, int, int>, std::pair<double, double>> t; // kind,mb,g
  for (int st = 0; st < p; ++st)
    for (const auto &a : s.perStage[st])
      t[{int(a.kind), a.microBatch, a.chunk * p + st}] = {0, 0};
  auto sendOf = [&](int kind, int g) -> double {
    if (c.overlapP2P || p == 1)
      return 0;
    if (kind == int(ActionKind::Forward))
      return g + 1 < G ? p2pAt(c, g % p) : 0;
    return g > 0 ? p2pAt(c, (g - 1) % p) : 0;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (int st = 0; st < p; ++st) {
      double freeAt = 0;
      for (const auto &a : s.perStage[st]) {
        int g = a.chunk * p + st;
        bool fwd = a.kind == ActionKind::Forward;
        double ready = 0;
        if (fwd && g > 0)
          ready = t[{0, a.microBatch, g - 1}].second +
                  (p > 1 ? p2pAt(c, (g - 1) % p) : 0);
        if (!fwd && g + 1 < G)
          ready = t[{1, a.microBatch, g + 1}].second +
                  (p > 1 ? p2pAt(c, g % p) : 0);
        if (!fwd && g + 1 == G)
          ready = t[{0, a.microBatch, g}].second;
        double start = std::max(freeAt, ready);
        double end = start + (fwd ? c.forwardSeconds[g] : c.backwardSeconds[g]);
        auto &slot = t[{int(a.kind), a.microBatch, g}];
        if (slot.first != start || slot.second != end) {
          slot = {start, end};
          changed = true;
        }
        freeAt = end + sendOf(int(a.kind), g);
      }
    }
  }
  return t;
}

PipelineCosts randomCosts(std::mt19937 &rng, int p, int v, bool overlap) {
  std::uniform_real_distribution<double> d(0.5, 2.0), l(0.0, 0.3);
  PipelineCosts c;
  for (int g = 0; g < p * v; ++g) {
    c.forwardSeconds.push_back(d(rng));
    c.backwardSeconds.push_back(2 * d(rng));
  }
  for (int b = 0; b < p; ++b)
    c.p2pSeconds.push_back(l(rng));
  c.overlapP2P = overlap;
  return c;
}

} // namespace

TEST_CASE("even stages: GPipe and 1F1B take (m + p - 1)(t_f + t_b)",
          "[schedule][sim]") {
  // GPipe (Huang et al. 2019) and PipeDream-Flush / 1F1B (Narayanan et al.
  // 2021): the pipeline bubble is (p - 1)(t_f + t_b), a fraction (p - 1)/m
  // of the ideal m(t_f + t_b).
  for (ScheduleKind k : {ScheduleKind::GPipe, ScheduleKind::OneFOneB})
    for (int p : {1, 2, 3, 4, 8})
      for (int m : {1, 2, 3, 4, 8, 16, 64})
        for (auto [tf, tb] : {std::pair{1.0, 2.0}, std::pair{1.0, 1.0},
                              std::pair{0.37e-3, 0.91e-3}}) {
          INFO(scheduleKindName(k)
               << " p=" << p << " m=" << m << " tf=" << tf << " tb=" << tb);
          const CompiledSchedule &s = get(k, p, m);
          auto r = simulateMakespan(s, PipelineCosts::uniform(p, 1, tf, tb));
          REQUIRE(r.isOk());
          CHECK(relEq(r->makespanSeconds, (m + p - 1) * (tf + tb)));
          CHECK(relEq(r->maxStageBusySeconds, m * (tf + tb)));
          CHECK(fracEq(r->bubbleFraction, double(p - 1) / m));
        }
}

TEST_CASE("even stages: interleaved 1F1B bubble is (p - 1)/(v m)",
          "[schedule][sim]") {
  // Narayanan et al. SC'21, Sec. 2.2: with v chunks per stage, each taking
  // t_f/v and t_b/v, the bubble shrinks to (p - 1)(t_f + t_b)/v, a fraction
  // (p - 1)/(v m) of the ideal.
  for (int p : {1, 2, 4, 8})
    for (int mult : {1, 2, 3, 8})
      for (int v : {2, 3, 4})
        for (auto [tf, tb] : {std::pair{1.0, 2.0}, std::pair{1.0, 1.0},
                              std::pair{0.37e-3, 0.91e-3}}) {
          int m = p * mult;
          INFO("p=" << p << " m=" << m << " v=" << v << " tf=" << tf
                    << " tb=" << tb);
          const CompiledSchedule &s =
              get(ScheduleKind::Interleaved1F1B, p, m, v);
          auto r =
              simulateMakespan(s, PipelineCosts::uniform(p, v, tf / v, tb / v));
          REQUIRE(r.isOk());
          CHECK(relEq(r->makespanSeconds,
                      m * (tf + tb) + (p - 1) * (tf + tb) / v));
          CHECK(fracEq(r->bubbleFraction, double(p - 1) / (v * m)));
        }
}

TEST_CASE("uneven stages: the slowest stage dominates", "[schedule][sim]") {
  // 1F1B, p=2, m=2. Lists: s0 F0 F1 B0 B1, s1 F0 B0 F1 B1.
  // Slow last stage (s0 1+2, s1 3+6), by hand:
  //   s0 F0 [0,1]  F1 [1,2]                 B0 [10,12]          B1 [19,21]
  //   s1     F0 [1,4] B0 [4,10] F1 [10,13] B1 [13,19]
  const CompiledSchedule &s = get(ScheduleKind::OneFOneB, 2, 2);
  PipelineCosts c;
  c.forwardSeconds = {1, 3};
  c.backwardSeconds = {2, 6};
  auto r = simulate(s, c);
  REQUIRE(r.isOk());
  CHECK(r->makespanSeconds == 21);
  auto at = [&](int st, int i) {
    return std::pair{r->timeline[st][i].startSeconds,
                     r->timeline[st][i].endSeconds};
  };
  CHECK(at(0, 0) == std::pair{0.0, 1.0});
  CHECK(at(0, 1) == std::pair{1.0, 2.0});
  CHECK(at(0, 2) == std::pair{10.0, 12.0});
  CHECK(at(0, 3) == std::pair{19.0, 21.0});
  CHECK(at(1, 0) == std::pair{1.0, 4.0});
  CHECK(at(1, 1) == std::pair{4.0, 10.0});
  CHECK(at(1, 2) == std::pair{10.0, 13.0});
  CHECK(at(1, 3) == std::pair{13.0, 19.0});
  CHECK(r->busySeconds == std::vector<double>{6, 18});
  CHECK(r->idleSeconds == std::vector<double>{15, 3});
  CHECK(relEq(r->bubbleFraction, 3.0 / 18.0));

  // Slow first stage: the fast stage's round trip hides behind it, so the
  // step is just the slow stage's work: s0 F0 [0,3] F1 [3,6] B0 [6,12]
  // B1 [12,18].
  c.forwardSeconds = {3, 1};
  c.backwardSeconds = {6, 2};
  CHECK(simulateMakespan(s, c)->makespanSeconds == 18);

  // Larger: p=4, m=8, stage 1 slow (3+6), others 1+2. The slow stage runs
  // back to back once the first micro-batch reaches it, so the step is its
  // m(3+6) plus stage 0's fill and drain (1+2): 75, not the even-stage
  // estimate (m+p-1)*max = 99.
  const CompiledSchedule &s4 = get(ScheduleKind::OneFOneB, 4, 8);
  PipelineCosts c4 = PipelineCosts::uniform(4, 1, 1, 2);
  c4.forwardSeconds[1] = 3;
  c4.backwardSeconds[1] = 6;
  std::vector<double> idle(4);
  auto r4 = simulateMakespan(s4, c4, *std::make_unique<SimWorkspace>(), idle);
  REQUIRE(r4.isOk());
  CHECK(r4->makespanSeconds == 75);
  CHECK(r4->maxStageBusySeconds == 72);
  CHECK(idle == std::vector<double>{51, 3, 51, 51});
}

TEST_CASE("p2p transfer time adds to the makespan", "[schedule][sim]") {
  // 1F1B, p=2, m=2, every stage t_f=1, t_b=2, 0.5 s per transfer.
  // Overlapped transfers, by hand:
  //   s0 F0 [0,1] F1 [1,2]                   B0 [5,7]            B1 [8,10]
  //   s1   F0 [1.5,2.5] B0 [2.5,4.5] F1 [4.5,5.5] B1 [5.5,7.5]
  // = 9 without transfers, + 0.5 forward and + 0.5 backward on the critical
  // path (the third transfer, F1's, hides behind s1's B0).
  const CompiledSchedule &s = get(ScheduleKind::OneFOneB, 2, 2);
  auto over = simulate(s, PipelineCosts::uniform(2, 1, 1, 2, 0.5, true));
  REQUIRE(over.isOk());
  CHECK(over->makespanSeconds == 10);
  CHECK(over->timeline[1][0].startSeconds == 1.5);
  CHECK(over->timeline[1][2].startSeconds == 4.5);
  CHECK(over->timeline[0][2].startSeconds == 5);
  CHECK(over->timeline[0][3].startSeconds == 8);
  CHECK(over->sendBlockedSeconds == std::vector<double>{0, 0});

  // Blocking sends: each sender also spends 0.5 s per send.
  //   s0 F0 [0,1]+0.5 F1 [1.5,2.5]+0.5          B0 [5,7]      B1 [8.5,10.5]
  //   s1   F0 [1.5,2.5] B0 [2.5,4.5]+0.5 F1 [5,6] B1 [6,8]+0.5
  auto block = simulate(s, PipelineCosts::uniform(2, 1, 1, 2, 0.5, false));
  REQUIRE(block.isOk());
  CHECK(block->makespanSeconds == 10.5);
  CHECK(block->timeline[0][1].startSeconds == 1.5);
  CHECK(block->timeline[1][2].startSeconds == 5);
  CHECK(block->timeline[0][3].startSeconds == 8.5);
  CHECK(block->sendBlockedSeconds == std::vector<double>{1, 1});
  CHECK(block->idleSeconds == std::vector<double>{4.5, 4.5});

  // GPipe with m=1 is a pure chain: 2(p-1) transfers on the critical path.
  for (int p : {2, 3, 5}) {
    auto r = simulateMakespan(get(ScheduleKind::GPipe, p, 1),
                              PipelineCosts::uniform(p, 1, 1, 2, 0.25, true));
    CHECK(relEq(r->makespanSeconds, p * 3.0 + 2 * (p - 1) * 0.25));
  }

  // Interleaving crosses the wrap boundary p-1 -> 0; 1F1B never does.
  PipelineCosts c = PipelineCosts::uniform(4, 1, 1, 2, 0.0, true);
  double base =
      simulateMakespan(get(ScheduleKind::OneFOneB, 4, 8), c)->makespanSeconds;
  c.p2pSeconds[3] = 1.0;
  CHECK(
      simulateMakespan(get(ScheduleKind::OneFOneB, 4, 8), c)->makespanSeconds ==
      base);
  c.p2pSeconds.pop_back();
  CHECK(
      simulateMakespan(get(ScheduleKind::OneFOneB, 4, 8), c)->makespanSeconds ==
      base);
  PipelineCosts ci = PipelineCosts::uniform(4, 2, 0.5, 1, 0.0, true);
  const CompiledSchedule &si = get(ScheduleKind::Interleaved1F1B, 4, 8, 2);
  double baseI = simulateMakespan(si, ci)->makespanSeconds;
  ci.p2pSeconds[3] = 1.0;
  CHECK(simulateMakespan(si, ci)->makespanSeconds > baseI);
}

TEST_CASE("simulation matches an independent reference on random costs",
          "[schedule][sim]") {
  std::mt19937 rng(12345);
  struct C {
    ScheduleKind k;
    int p, m, v;
  };
  for (C cs :
       {C{ScheduleKind::GPipe, 3, 5, 1}, C{ScheduleKind::OneFOneB, 4, 7, 1},
        C{ScheduleKind::OneFOneB, 5, 3, 1},
        C{ScheduleKind::Interleaved1F1B, 2, 4, 3},
        C{ScheduleKind::Interleaved1F1B, 4, 8, 2},
        C{ScheduleKind::Interleaved1F1B, 1, 3, 2}})
    for (bool overlap : {true, false}) {
      INFO(scheduleKindName(cs.k) << " p=" << cs.p << " m=" << cs.m
                                  << " v=" << cs.v << " overlap=" << overlap);
      const CompiledSchedule &s = get(cs.k, cs.p, cs.m, cs.v);
      PipelineCosts c = randomCosts(rng, cs.p, cs.v, overlap);
      auto full = simulate(s, c);
      REQUIRE(full.isOk());
      auto ref = referenceTimes(s.schedule(), c);
      double refMakespan = 0;
      for (int st = 0; st < cs.p; ++st) {
        REQUIRE(full->timeline[st].size() == s.schedule().perStage[st].size());
        for (size_t i = 0; i < full->timeline[st].size(); ++i) {
          const TimedAction &t = full->timeline[st][i];
          CHECK(t.action == s.schedule().perStage[st][i]);
          auto want = ref[{int(t.action.kind), t.action.microBatch,
                           int(globalChunk(t.action.chunk, st, cs.p))}];
          CHECK(t.startSeconds == want.first);
          CHECK(t.endSeconds == want.second);
          refMakespan = std::max(refMakespan, want.second);
          if (i > 0)
            CHECK(t.startSeconds >= full->timeline[st][i - 1].endSeconds);
        }
        CHECK(relEq(full->idleSeconds[st] + full->busySeconds[st],
                    full->makespanSeconds));
      }
      CHECK(full->makespanSeconds == refMakespan);
      // The lean pass agrees with the full one.
      SimWorkspace ws;
      std::vector<double> idle(cs.p);
      auto lean = simulateMakespan(s, c, ws, idle);
      REQUIRE(lean.isOk());
      CHECK(lean->makespanSeconds == full->makespanSeconds);
      CHECK(lean->bubbleFraction == full->bubbleFraction);
      CHECK(idle == full->idleSeconds);
    }
}

TEST_CASE("peak in-flight recounted from the timeline", "[schedule][sim]") {
  // The compiled per-stage peak (from list order) equals a count over time:
  // forwards ended minus backwards ended, sampled at every action end.
  std::mt19937 rng(7);
  for (auto [k, p, m, v] :
       {std::tuple{ScheduleKind::OneFOneB, 4, 9, 1},
        std::tuple{ScheduleKind::GPipe, 3, 4, 1},
        std::tuple{ScheduleKind::Interleaved1F1B, 4, 12, 3}}) {
    const CompiledSchedule &s = get(k, p, m, v);
    auto r = simulate(s, randomCosts(rng, p, v, false));
    REQUIRE(r.isOk());
    for (int st = 0; st < p; ++st) {
      int live = 0, peak = 0;
      for (const TimedAction &t : r->timeline[st]) {
        live += t.action.kind == ActionKind::Forward ? 1 : -1;
        peak = std::max(peak, live);
      }
      CHECK(live == 0);
      CHECK(r->peakInFlight[st] == peak);
    }
    auto lean = simulateMakespan(s, randomCosts(rng, p, v, true));
    CHECK(lean->maxPeakInFlight == r->peakInFlight[0]);
  }
}

TEST_CASE("single stage runs its list back to back", "[schedule][sim]") {
  for (auto [k, v] :
       {std::pair{ScheduleKind::GPipe, 1}, std::pair{ScheduleKind::OneFOneB, 1},
        std::pair{ScheduleKind::Interleaved1F1B, 3}}) {
    auto r = simulateMakespan(get(k, 1, 5, v),
                              PipelineCosts::uniform(1, v, 1, 2, 9.0, false));
    REQUIRE(r.isOk());
    CHECK(r->makespanSeconds == 15 * v);
    CHECK(r->bubbleFraction == 0);
  }
}

TEST_CASE("simulateInto reuses a result across shapes", "[schedule][sim]") {
  std::mt19937 rng(11);
  SimulationResult reused;
  for (auto [k, p, m, v] : {std::tuple{ScheduleKind::Interleaved1F1B, 4, 8, 2},
                            std::tuple{ScheduleKind::OneFOneB, 2, 3, 1},
                            std::tuple{ScheduleKind::GPipe, 5, 6, 1}}) {
    const CompiledSchedule &s = get(k, p, m, v);
    PipelineCosts c = randomCosts(rng, p, v, false);
    REQUIRE(simulateInto(s, c, reused).isOk());
    auto fresh = simulate(s, c);
    REQUIRE(fresh.isOk());
    CHECK(reused.makespanSeconds == fresh->makespanSeconds);
    CHECK(reused.busySeconds == fresh->busySeconds);
    CHECK(reused.idleSeconds == fresh->idleSeconds);
    CHECK(reused.sendBlockedSeconds == fresh->sendBlockedSeconds);
    CHECK(reused.peakInFlight == fresh->peakInFlight);
    REQUIRE(reused.timeline.size() == fresh->timeline.size());
    for (size_t st = 0; st < reused.timeline.size(); ++st) {
      REQUIRE(reused.timeline[st].size() == fresh->timeline[st].size());
      for (size_t i = 0; i < reused.timeline[st].size(); ++i) {
        CHECK(reused.timeline[st][i].action == fresh->timeline[st][i].action);
        CHECK(reused.timeline[st][i].startSeconds ==
              fresh->timeline[st][i].startSeconds);
      }
    }
  }
}

TEST_CASE("bad costs are errors", "[schedule][sim]") {
  const CompiledSchedule &s = get(ScheduleKind::Interleaved1F1B, 4, 8, 2);
  auto expectError = [&](const PipelineCosts &c, const char *needle) {
    auto r = simulateMakespan(s, c);
    REQUIRE_FALSE(r.isOk());
    CHECK(r.message().find(needle) != std::string::npos);
    CHECK_FALSE(simulate(s, c).isOk());
  };
  PipelineCosts ok = PipelineCosts::uniform(4, 2, 1, 2, 0.1);
  REQUIRE(simulateMakespan(s, ok).isOk());
  PipelineCosts c = ok;
  c.forwardSeconds.pop_back();
  expectError(c, "p*v = 8");
  c = ok;
  c.backwardSeconds.push_back(1);
  expectError(c, "p*v = 8");
  c = ok;
  c.p2pSeconds.pop_back(); // the wrap boundary is needed with v > 1
  expectError(c, "p2pSeconds");
  c = ok;
  c.p2pSeconds.push_back(0);
  expectError(c, "p2pSeconds");
  c = ok;
  c.forwardSeconds[3] = -1;
  expectError(c, "chunk 3");
  c = ok;
  c.backwardSeconds[5] = std::nan("");
  expectError(c, "chunk 5");
  c = ok;
  c.p2pSeconds[2] = INFINITY;
  expectError(c, "boundary 2");
  c = ok;
  c.p2pSeconds.clear(); // no transfer cost at all is fine
  CHECK(simulateMakespan(s, c).isOk());
  SimWorkspace ws;
  SimulationResult out;
  CHECK_FALSE(
      simulateInto(s, c = PipelineCosts::uniform(4, 1, 1, 2), out).isOk());
  std::vector<double> idle(3);
  auto r = simulateMakespan(s, ok, ws, idle);
  REQUIRE_FALSE(r.isOk());
  CHECK(r.message().find("stageIdleSeconds") != std::string::npos);
}

TEST_CASE("simulation is deterministic across threads", "[schedule][sim]") {
  const CompiledSchedule &s = get(ScheduleKind::Interleaved1F1B, 8, 64, 4);
  std::mt19937 rng(3);
  PipelineCosts c = randomCosts(rng, 8, 4, false);
  double want = simulateMakespan(s, c)->makespanSeconds;
  std::vector<double> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      double last = 0;
      for (int i = 0; i < 50; ++i)
        last = simulateMakespan(s, c)->makespanSeconds;
      got[t] = last;
    });
  for (auto &th : threads)
    th.join();
  for (double g : got)
    CHECK(g == want);
}

TEST_CASE("the steady state repeats one micro-batch of 1F1B, p of "
          "interleaved",
          "[schedule][sim]") {
  const CompiledSchedule &one = get(ScheduleKind::OneFOneB, 4, 64);
  const auto &ss = one.steadyState();
  CHECK(ss.ops == 2 * 4);
  CHECK(ss.microBatches == 1);
  // Everything but the warm-up and cool-down of about p micro-batches.
  CHECK(ss.end - ss.begin >= (64 - 2 * 4) * ss.ops);
  const auto &ops = one.ops();
  for (int64_t i = ss.begin; i + ss.ops < ss.end; ++i) {
    CHECK(ops[i + ss.ops].stage == ops[i].stage);
    CHECK(ops[i + ss.ops].cost == ops[i].cost);
  }
  const auto &il = get(ScheduleKind::Interleaved1F1B, 4, 64, 2).steadyState();
  CHECK(il.ops == 2 * 4 * 2 * 4);
  CHECK(il.microBatches == 4);
  CHECK(get(ScheduleKind::GPipe, 4, 64).steadyState().ops == 0);
  CHECK(get(ScheduleKind::OneFOneB, 4, 2).steadyState().ops == 0);
}

TEST_CASE("a long step is simulated from a short schedule's steady state",
          "[schedule][sim]") {
  std::mt19937 rng(2024);
  ScheduleCache cache;
  SimWorkspace ws;
  struct C {
    ScheduleKind k;
    int p, m, v;
  };
  int extended = 0;
  for (C cs : {C{ScheduleKind::OneFOneB, 1, 500, 1},
               C{ScheduleKind::OneFOneB, 2, 777, 1},
               C{ScheduleKind::OneFOneB, 5, 1001, 1},
               C{ScheduleKind::OneFOneB, 8, 4096, 1},
               C{ScheduleKind::OneFOneB, 16, 3000, 1},
               C{ScheduleKind::Interleaved1F1B, 2, 1000, 3},
               C{ScheduleKind::Interleaved1F1B, 4, 2048, 2},
               C{ScheduleKind::Interleaved1F1B, 8, 4096, 4},
               C{ScheduleKind::GPipe, 4, 600, 1}})
    for (int trial = 0; trial < 6; ++trial) {
      bool overlap = trial % 2 == 0;
      INFO(scheduleKindName(cs.k) << " p=" << cs.p << " m=" << cs.m
                                  << " v=" << cs.v << " trial=" << trial);
      PipelineCosts c = randomCosts(rng, cs.p, cs.v, overlap);
      if (trial >= 4) // even stages, where many cycles tie exactly
        c = PipelineCosts::uniform(cs.p, cs.v, 1.0, 2.0, 0.05, overlap);
      auto full = cache.get(cs.k, cs.p, cs.m, cs.v);
      REQUIRE(full.isOk());
      std::vector<double> idleFull(cs.p), idleShort(cs.p);
      auto want = simulateMakespan(**full, c, ws, idleFull);
      auto sim = cache.getSimulated(cs.k, cs.p, cs.m, cs.v);
      REQUIRE(sim.isOk());
      if (cs.k == ScheduleKind::GPipe) {
        CHECK(sim->extraPeriods == 0);
      } else {
        CHECK(sim->extraPeriods > 0);
        CHECK(sim->schedule->m() + sim->extraPeriods *
                                       sim->schedule->steadyState()
                                           .microBatches ==
              cs.m);
        CHECK(sim->schedule->numActions() < (*full)->numActions() / 2);
      }
      CHECK(sim->schedule->peakInFlight() == (*full)->peakInFlight());
      auto got = simulateMakespan(cache, *sim, c, ws, idleShort);
      REQUIRE(want.isOk());
      REQUIRE(got.isOk());
      CHECK(relEq(got->makespanSeconds, want->makespanSeconds, 1e-12));
      CHECK(relEq(got->maxStageBusySeconds, want->maxStageBusySeconds,
                  1e-12));
      CHECK(std::abs(got->bubbleFraction - want->bubbleFraction) <= 1e-10);
      CHECK(got->maxPeakInFlight == want->maxPeakInFlight);
      for (int s = 0; s < cs.p; ++s)
        CHECK(std::abs(idleShort[s] - idleFull[s]) <=
              1e-11 * want->makespanSeconds);
      extended += sim->extraPeriods > 0;
    }
  CHECK(extended == 8 * 6);
}

TEST_CASE("a steady state that does not settle falls back to a longer "
          "schedule",
          "[schedule][sim]") {
  ScheduleCache cache;
  SimWorkspace ws;
  std::mt19937 rng(99);
  PipelineCosts c = randomCosts(rng, 4, 1, false);
  // Even a schedule barely past its warm-up extends exactly: its later ops
  // are the longer schedule's, a period per extra micro-batch on.
  for (int m = 7; m <= 14; ++m) {
    INFO("m=" << m);
    bool ok = false;
    auto shortRun = simulateMakespan(**cache.get(ScheduleKind::OneFOneB, 4, m),
                                     c, ws, {}, 200, &ok);
    REQUIRE(shortRun.isOk());
    CHECK(ok);
    auto fullRun =
        simulateMakespan(**cache.get(ScheduleKind::OneFOneB, 4, m + 200), c, ws);
    CHECK(relEq(shortRun->makespanSeconds, fullRun->makespanSeconds, 1e-12));
  }
  // Too few periods to compare two of them: never settles.
  auto tiny = cache.get(ScheduleKind::OneFOneB, 4, 6);
  REQUIRE(tiny.isOk());
  bool settled = true;
  auto r = simulateMakespan(**tiny, c, ws, {}, 200, &settled);
  REQUIRE(r.isOk());
  CHECK_FALSE(settled);
  // Handed such a schedule, the cache's simulation goes on to longer ones
  // and gives the full schedule's makespan.
  ScheduleCache::Simulated s;
  s.schedule = *tiny;
  s.extraPeriods = 200;
  s.kind = ScheduleKind::OneFOneB, s.p = 4, s.m = 206, s.v = 1;
  auto got = simulateMakespan(cache, s, c, ws, {});
  auto full = cache.get(ScheduleKind::OneFOneB, 4, 206);
  REQUIRE(got.isOk());
  REQUIRE(full.isOk());
  CHECK(relEq(got->makespanSeconds,
              simulateMakespan(**full, c, ws)->makespanSeconds, 1e-12));
  // GPipe has no steady state to extend.
  auto gpipe = cache.get(ScheduleKind::GPipe, 4, 12);
  REQUIRE(gpipe.isOk());
  auto bad = simulateMakespan(**gpipe, c, ws, {}, 3, &settled);
  REQUIRE_FALSE(bad.isOk());
  CHECK(bad.message().find("steady state") != std::string::npos);
}
