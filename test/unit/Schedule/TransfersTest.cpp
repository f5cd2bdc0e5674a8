//===- TransfersTest.cpp - Pipeline transfer groups under NCCL's rules ----===//

#include "trident/Schedule/Schedule.h"

#include <catch2/catch.hpp>

using namespace trident;

namespace {
Schedule built(ScheduleKind k, int p, int m, int v = 1) {
  auto s = buildSchedule(k, p, m, v);
  REQUIRE(s.isOk());
  return *s;
}

/// Every action its own step: each action's sends go out with the next
/// action's receives (what suffices for GPipe and 1F1B).
std::vector<std::vector<int32_t>> oneByOne(const Schedule &s) {
  std::vector<std::vector<int32_t>> steps;
  for (const auto &list : s.perStage)
    steps.emplace_back(list.size(), 1);
  return steps;
}
} // namespace

TEST_CASE("transfer steps follow Megatron-LM's phases", "[transfers]") {
  // 1F1B: one action per step.
  Schedule f = built(ScheduleKind::OneFOneB, 4, 8);
  CHECK(transferSteps(f, 0) == std::vector<int32_t>(16, 1));
  // Interleaved p=2, m=4, v=2: stage 0 warms up with 4 forwards, pairs the
  // next 4 forwards with the first 4 backwards, and drains 4 backwards.
  Schedule s = built(ScheduleKind::Interleaved1F1B, 2, 4, 2);
  CHECK(transferSteps(s, 0) ==
        std::vector<int32_t>{1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1});
  // Stage 1 warms up with 2: 6 steady pairs, then 2 backwards.
  CHECK(transferSteps(s, 1) ==
        std::vector<int32_t>{1, 1, 2, 2, 2, 2, 2, 2, 1, 1});
  // Warm-up capped at m*v (p=4, m=4, v=2: stage 0 would need 10 of 8):
  // no steady state, every action alone.
  Schedule all = built(ScheduleKind::Interleaved1F1B, 4, 4, 2);
  CHECK(transferSteps(all, 0) == std::vector<int32_t>(16, 1));
}

TEST_CASE("every built schedule's transfers complete", "[transfers]") {
  for (int p : {1, 2, 3, 4, 5, 8})
    for (int m : {1, 2, 3, 4, 7, 8, 16, 24}) {
      for (ScheduleKind k : {ScheduleKind::GPipe, ScheduleKind::OneFOneB}) {
        Schedule s = built(k, p, m);
        INFO(scheduleKindName(k) << " p=" << p << " m=" << m);
        Status st = checkTransferGroups(s);
        CHECK(st.isOk());
        if (!st)
          FAIL(st.message());
      }
      if (p < 2 || m % p != 0)
        continue;
      for (int v : {2, 3, 4}) {
        Schedule s = built(ScheduleKind::Interleaved1F1B, p, m, v);
        INFO("interleaved p=" << p << " m=" << m << " v=" << v);
        Status st = checkTransferGroups(s);
        if (!st)
          FAIL(st.message());
      }
    }
}

TEST_CASE("interleaved transfers one action at a time deadlock",
          "[transfers]") {
  // The grouping the emitted programs used before (found hanging on
  // 2026-12-05): fine while m = p, stuck with more micro-batches.
  Schedule ok = built(ScheduleKind::Interleaved1F1B, 2, 2, 2);
  CHECK(checkTransferGroups(ok, oneByOne(ok)).isOk());
  for (auto [p, m] : {std::pair{2, 4}, {2, 8}, {4, 8}}) {
    Schedule s = built(ScheduleKind::Interleaved1F1B, p, m, 2);
    Status st = checkTransferGroups(s, oneByOne(s));
    REQUIRE_FALSE(st.isOk());
    CHECK_THAT(st.message(),
               Catch::Contains("its pipeline transfers deadlock"));
    CHECK(checkTransferGroups(s).isOk()); // Megatron-LM's steps
  }
  // The message names what a stuck stage waits for.
  Schedule s = built(ScheduleKind::Interleaved1F1B, 2, 4, 2);
  CHECK_THAT(checkTransferGroups(s, oneByOne(s)).message(),
             Catch::Contains("stage 0 sends the input gradient of "
                             "micro-batch 0 from model chunk 2 to stage 1"));
}

TEST_CASE("transfer steps that do not fit are refused", "[transfers]") {
  Schedule s = built(ScheduleKind::OneFOneB, 2, 2);
  auto steps = oneByOne(s);
  steps[1].pop_back();
  CHECK_THAT(checkTransferGroups(s, steps).message(),
             Catch::Contains("stage 1 cover 3 actions, not 4"));
  steps = oneByOne(s);
  steps[0][0] = 0;
  steps[0].push_back(1);
  CHECK_THAT(checkTransferGroups(s, steps).message(),
             Catch::Contains("a step of 0 actions"));
  // Receiving out of the sender's order: stage 1 swaps its two forwards.
  Schedule bad = built(ScheduleKind::GPipe, 2, 2);
  std::swap(bad.perStage[1][0], bad.perStage[1][1]);
  CHECK_THAT(checkTransferGroups(bad).message(),
             Catch::Contains("NCCL pairs in issue order"));
}
