//===- ScheduleBench.cpp - Simulations per second of the schedule model ---===//
//
// The planner's budget is ~100,000 full plan evaluations per second per core,
// the schedule simulation included; this prints what the simulator alone
// achieves on one core for typical shapes. Usage:
//   trident-bench-schedule [seconds-per-case]   (default 0.5)
//
//===----------------------------------------------------------------------===//

#include "trident/Schedule/ScheduleCache.h"
#include "trident/Schedule/Simulator.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace trident;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Runs `body` in batches until `budget` seconds pass; returns calls/second.
template <typename F> double rate(double budget, F &&body) {
  int64_t calls = 0;
  int64_t batch = 64;
  auto t0 = Clock::now();
  double elapsed = 0;
  do {
    for (int64_t i = 0; i < batch; ++i)
      body();
    calls += batch;
    elapsed = secondsSince(t0);
  } while (elapsed < budget);
  return calls / elapsed;
}

/// Uneven stages, as the search produces: per-chunk times vary by stage.
PipelineCosts unevenCosts(int64_t p, int64_t v) {
  PipelineCosts c = PipelineCosts::uniform(p, v, 0, 0, 20e-6, false);
  for (int64_t g = 0; g < p * v; ++g) {
    c.forwardSeconds[g] = (1.0 + 0.05 * (g % 3)) * 1e-3 / v;
    c.backwardSeconds[g] = 2.0 * c.forwardSeconds[g];
  }
  return c;
}

} // namespace

int main(int argc, char **argv) {
  double budget = argc > 1 ? std::atof(argv[1]) : 0.5;
  if (!(budget > 0)) {
    std::fprintf(stderr, "usage: %s [seconds-per-case > 0]\n", argv[0]);
    return 1;
  }
  struct Case {
    ScheduleKind kind;
    int64_t p, m, v;
  };
  const Case cases[] = {
      {ScheduleKind::OneFOneB, 8, 64, 1},
      {ScheduleKind::Interleaved1F1B, 8, 64, 4},
      {ScheduleKind::GPipe, 8, 64, 1},
      {ScheduleKind::OneFOneB, 4, 16, 1},
      {ScheduleKind::Interleaved1F1B, 16, 128, 2},
  };
  std::printf("%-17s %4s %5s %3s %8s %14s %9s %12s %12s %11s\n", "schedule",
              "p", "m", "v", "actions", "makespan/s", "ns/action",
              "lean sims/s", "full sims/s", "compile us");
  double sink = 0;
  for (const Case &c : cases) {
    auto t0 = Clock::now();
    ScheduleCache cache;
    auto entry = cache.get(c.kind, c.p, c.m, c.v);
    double compileUs = secondsSince(t0) * 1e6;
    if (!entry) {
      std::fprintf(stderr, "%s\n", entry.message().c_str());
      return 1;
    }
    const CompiledSchedule &sched = **entry;
    PipelineCosts costs = unevenCosts(c.p, c.v);
    SimWorkspace ws;
    double makespan = simulateMakespan(sched, costs, ws)->makespanSeconds;
    double lean = rate(budget, [&] {
      // Perturb one duration so nothing can be hoisted out of the loop.
      costs.forwardSeconds[0] += 1e-12;
      sink += simulateMakespan(sched, costs, ws)->makespanSeconds;
    });
    // The timeline pass, reusing one result's buffers as a report does.
    SimulationResult timeline;
    double full = rate(budget / 2, [&] {
      (void)simulateInto(sched, costs, timeline);
      sink += timeline.makespanSeconds;
    });
    std::printf("%-17s %4lld %5lld %3lld %8lld %14.6f %9.2f %12.0f %12.0f "
                "%11.1f\n",
                std::string(scheduleKindName(c.kind)).c_str(), (long long)c.p,
                (long long)c.m, (long long)c.v, (long long)sched.numActions(),
                makespan, 1e9 / (lean * sched.numActions()), lean, full,
                compileUs);
  }
  // A cache hit is what a search worker pays when it does not keep the
  // entry: shared lock + hash lookup + shared_ptr copy.
  ScheduleCache &cache = ScheduleCache::global();
  (void)cache.get(ScheduleKind::OneFOneB, 8, 64, 1);
  double hits = rate(budget / 2, [&] {
    sink += (*cache.get(ScheduleKind::OneFOneB, 8, 64, 1))->p();
  });
  std::printf("cache hit (1f1b p=8 m=64): %.0f lookups/s\n", hits);
  std::printf("(checksum %.3g)\n", sink);
  return 0;
}
