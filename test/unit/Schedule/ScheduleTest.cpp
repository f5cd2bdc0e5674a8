//===- ScheduleTest.cpp - Schedule lists, validation, cache ---------------===//

#include "trident/Schedule/Schedule.h"
#include "trident/Schedule/ScheduleCache.h"
#include "trident/Schedule/Simulator.h"

#include <catch2/catch.hpp>

#include <thread>

using namespace trident;

namespace {
ScheduleAction F(int mb, int c = 0) { return {ActionKind::Forward, mb, c}; }
ScheduleAction B(int mb, int c = 0) { return {ActionKind::Backward, mb, c}; }

Schedule built(ScheduleKind k, int p, int m, int v = 1) {
  auto s = buildSchedule(k, p, m, v);
  REQUIRE(s.isOk());
  return *s;
}
} // namespace

TEST_CASE("schedule kind names round trip", "[schedule]") {
  for (ScheduleKind k : {ScheduleKind::GPipe, ScheduleKind::OneFOneB,
                         ScheduleKind::Interleaved1F1B})
    CHECK(parseScheduleKind(scheduleKindName(k)) == k);
  CHECK_FALSE(parseScheduleKind("zero-bubble").has_value());
}

TEST_CASE("GPipe runs all forwards then all backwards", "[schedule]") {
  Schedule s = built(ScheduleKind::GPipe, 2, 3);
  std::vector<ScheduleAction> want = {F(0), F(1), F(2), B(0), B(1), B(2)};
  CHECK(s.perStage[0] == want);
  CHECK(s.perStage[1] == want);
  CHECK(validateSchedule(s).isOk());
}

TEST_CASE("1F1B has p-s-1 warm-up forwards then alternates", "[schedule]") {
  // Megatron-LM forward_backward_pipelining_without_interleaving, p=3, m=4.
  Schedule s = built(ScheduleKind::OneFOneB, 3, 4);
  CHECK(formatSchedule(s) == "s0: F0.0 F1.0 F2.0 B0.0 F3.0 B1.0 B2.0 B3.0\n"
                             "s1: F0.0 F1.0 B0.0 F2.0 B1.0 F3.0 B2.0 B3.0\n"
                             "s2: F0.0 B0.0 F1.0 B1.0 F2.0 B2.0 F3.0 B3.0\n");
  CHECK(validateSchedule(s).isOk());
  // Fewer micro-batches than stages: warm-up capped at m.
  Schedule few = built(ScheduleKind::OneFOneB, 4, 2);
  CHECK(few.perStage[0] == std::vector<ScheduleAction>{F(0), F(1), B(0), B(1)});
  CHECK(few.perStage[3] == std::vector<ScheduleAction>{F(0), B(0), F(1), B(1)});
}

TEST_CASE("interleaved 1F1B follows Megatron-LM's chunk order", "[schedule]") {
  // p=2, m=4, v=2: forwards walk micro-batches in groups of p through chunk
  // 0 then chunk 1; backwards through chunk 1 then chunk 0.
  Schedule s = built(ScheduleKind::Interleaved1F1B, 2, 4, 2);
  // Stage 0 warm-up (2-0-1)*2 + (2-1)*2 = 4; stage 1: 0*2 + 2 = 2.
  CHECK(formatSchedule(s) ==
        "s0: F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 "
        "B2.1 B3.1 B2.0 B3.0\n"
        "s1: F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 B1.0 F2.1 B2.1 "
        "F3.1 B3.1 B2.0 B3.0\n");
  CHECK(validateSchedule(s).isOk());
}

TEST_CASE("interleaved warm-up matches Megatron-LM's count", "[schedule]") {
  // (p - s - 1) * 2 + (v - 1) * p forwards before the first backward,
  // capped at m * v; the steady state then adds one more in-flight chunk.
  struct C {
    int p, m, v;
  };
  for (C c : {C{4, 8, 2}, C{4, 4, 3}, C{2, 2, 2}, C{8, 16, 4}, C{3, 6, 2}}) {
    auto e = ScheduleCache::global().get(ScheduleKind::Interleaved1F1B, c.p,
                                         c.m, c.v);
    REQUIRE(e.isOk());
    const CompiledSchedule &cs = **e;
    for (int s = 0; s < c.p; ++s) {
      int64_t formula = std::min<int64_t>((c.p - s - 1) * 2 + (c.v - 1) * c.p,
                                          int64_t(c.m) * c.v);
      INFO("p=" << c.p << " m=" << c.m << " v=" << c.v << " stage " << s);
      CHECK(interleavedWarmupForwards(c.p, c.m, c.v, s) == formula);
      // The list itself: `formula` warm-up forwards, then (unless they were
      // all of them) the steady state's forward and the first backward.
      const auto &list = cs.schedule().perStage[s];
      for (int64_t i = 0; i < formula; ++i)
        CHECK(list[i].kind == ActionKind::Forward);
      int64_t steadyStart =
          formula < int64_t(c.m) * c.v ? formula + 1 : formula;
      if (formula < int64_t(c.m) * c.v) {
        CHECK(list[formula].kind == ActionKind::Forward);
        CHECK(list[formula + 1].kind == ActionKind::Backward);
      }
      CHECK(cs.forwardsBeforeFirstBackward()[s] == steadyStart);
      CHECK(cs.peakInFlight()[s] == steadyStart);
    }
  }
  // Hand-checked: p=4, m=8, v=2, stage 0 warms up with 6 + 4 = 10 forwards,
  // opens the steady state with an 11th and holds 11 chunk activations at
  // its peak; stage 3 warms up with 4.
  auto e = ScheduleCache::global().get(ScheduleKind::Interleaved1F1B, 4, 8, 2);
  CHECK(interleavedWarmupForwards(4, 8, 2, 0) == 10);
  CHECK(interleavedWarmupForwards(4, 8, 2, 3) == 4);
  CHECK((*e)->forwardsBeforeFirstBackward()[0] == 11);
  CHECK((*e)->peakInFlight()[0] == 11);
  CHECK((*e)->peakInFlight()[3] == 5);
}

TEST_CASE("peak in-flight: 1F1B min(m, p - s), GPipe m", "[schedule]") {
  for (int p : {1, 2, 4, 8})
    for (int m : {1, 3, 4, 8, 17}) {
      auto one = ScheduleCache::global().get(ScheduleKind::OneFOneB, p, m);
      auto gp = ScheduleCache::global().get(ScheduleKind::GPipe, p, m);
      REQUIRE(one.isOk());
      REQUIRE(gp.isOk());
      for (int s = 0; s < p; ++s) {
        INFO("p=" << p << " m=" << m << " stage " << s);
        CHECK((*one)->peakInFlight()[s] == std::min(m, p - s));
        CHECK((*gp)->peakInFlight()[s] == m);
      }
    }
}

TEST_CASE("bad parameters are errors, not asserts", "[schedule]") {
  auto bad = [](ScheduleKind k, int64_t p, int64_t m, int64_t v,
                const char *needle) {
    auto r = buildSchedule(k, p, m, v);
    INFO("p=" << p << " m=" << m << " v=" << v);
    REQUIRE_FALSE(r.isOk());
    CHECK(r.message().find(needle) != std::string::npos);
    CHECK_FALSE(ScheduleCache::global().get(k, p, m, v).isOk());
  };
  bad(ScheduleKind::OneFOneB, 0, 4, 1, "p must be");
  bad(ScheduleKind::OneFOneB, -2, 4, 1, "p must be");
  bad(ScheduleKind::GPipe, 4, 0, 1, "m must be");
  bad(ScheduleKind::GPipe, 4, -1, 1, "m must be");
  bad(ScheduleKind::Interleaved1F1B, 4, 8, 0, "v must be");
  bad(ScheduleKind::Interleaved1F1B, 4, 8, -3, "v must be");
  bad(ScheduleKind::Interleaved1F1B, 4, 6, 2, "multiple of p");
  bad(ScheduleKind::Interleaved1F1B, 4, 8, 1, "v >= 2");
  bad(ScheduleKind::OneFOneB, 4, 8, 2, "v must be 1");
  bad(ScheduleKind::GPipe, 4, 8, 2, "v must be 1");
  bad(ScheduleKind::OneFOneB, 1 << 20, 8, 1, "exceeds");
  bad(ScheduleKind::OneFOneB, 8, int64_t(1) << 40, 1, "exceeds");
  bad(ScheduleKind::Interleaved1F1B, 8, 64, int64_t(1) << 40, "exceeds");
  bad(static_cast<ScheduleKind>(17), 2, 2, 1, "unknown");
}

TEST_CASE("validation rejects broken hand-written lists", "[schedule]") {
  Schedule s;
  s.kind = ScheduleKind::OneFOneB;
  s.p = 2;
  s.m = 2;
  s.v = 1;
  auto expectError = [&](const char *needle) {
    Status st = validateSchedule(s);
    INFO(formatSchedule(s));
    REQUIRE_FALSE(st.isOk());
    CHECK(st.message().find(needle) != std::string::npos);
    CHECK_FALSE(compileSchedule(s).isOk());
  };
  s.perStage = {{F(0), F(1), B(0), B(1)}};
  expectError("stage lists");
  s.perStage = {{F(0), F(1), B(0), B(1)}, {F(0), B(0), F(1)}};
  expectError("expected 2*m*v");
  s.perStage = {{F(0), F(0), B(0), B(1)}, {F(0), B(0), F(1), B(1)}};
  expectError("appears twice");
  s.perStage = {{F(0), B(1), F(1), B(0)}, {F(0), B(0), F(1), B(1)}};
  expectError("precedes its forward");
  s.perStage = {{F(0), F(2), B(0), B(1)}, {F(0), B(0), F(1), B(1)}};
  expectError("micro-batch out of range");
  s.perStage = {{F(0), F(1, 1), B(0), B(1)}, {F(0), B(0), F(1), B(1)}};
  expectError("chunk out of range");
  s.perStage = {{F(0), F(1), B(0), {ActionKind::BackwardWeight, 1, 0}},
                {F(0), B(0), F(1), B(1)}};
  expectError("reserved");
  // Stage 0 wants B(1) before F(1) is sent on, stage 1 wants F(1) before it
  // can produce B(1): a cycle.
  s.perStage = {{F(0), B(0), B(1), F(1)}, {F(0), B(0), F(1), B(1)}};
  expectError("precedes its forward");
  s.perStage = {{F(0), B(0), F(1), B(1)}, {F(1), B(1), F(0), B(0)}};
  expectError("deadlock");
  s.m = 0;
  expectError("at least 1");
  // And a valid hand-written order that no builder emits.
  s.m = 2;
  s.perStage = {{F(1), F(0), B(1), B(0)}, {F(1), B(1), F(0), B(0)}};
  CHECK(validateSchedule(s).isOk());
}

TEST_CASE("every built schedule validates", "[schedule]") {
  for (int p : {1, 2, 3, 4, 8})
    for (int m : {1, 2, 3, 4, 8, 16, 24}) {
      for (ScheduleKind k : {ScheduleKind::GPipe, ScheduleKind::OneFOneB}) {
        INFO(scheduleKindName(k) << " p=" << p << " m=" << m);
        CHECK(validateSchedule(built(k, p, m)).isOk());
      }
      if (m % p == 0)
        for (int v : {2, 3, 4}) {
          INFO("interleaved p=" << p << " m=" << m << " v=" << v);
          CHECK(validateSchedule(built(ScheduleKind::Interleaved1F1B, p, m, v))
                    .isOk());
        }
    }
}

TEST_CASE("schedule cache is shared, deterministic and thread-safe",
          "[schedule]") {
  ScheduleCache cache;
  auto a = cache.get(ScheduleKind::Interleaved1F1B, 4, 8, 2);
  auto b = cache.get(ScheduleKind::Interleaved1F1B, 4, 8, 2);
  REQUIRE(a.isOk());
  REQUIRE(b.isOk());
  CHECK(a->get() == b->get());
  CHECK(cache.size() == 1);
  CHECK((*a)->schedule().perStage ==
        built(ScheduleKind::Interleaved1F1B, 4, 8, 2).perStage);

  // Many threads asking for overlapping keys all see one entry per key with
  // the same content as a serial build.
  ScheduleCache shared;
  std::vector<std::thread> threads;
  std::vector<std::vector<const CompiledSchedule *>> seen(8);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int m = 4; m <= 32; m += 4) {
        auto e = shared.get(ScheduleKind::OneFOneB, 4, m);
        auto i = shared.get(ScheduleKind::Interleaved1F1B, 4, m, 2);
        seen[t].push_back(e.isOk() ? e->get() : nullptr);
        seen[t].push_back(i.isOk() ? i->get() : nullptr);
      }
    });
  for (auto &th : threads)
    th.join();
  CHECK(shared.size() == 16);
  for (int t = 1; t < 8; ++t)
    CHECK(seen[t] == seen[0]);
  for (const CompiledSchedule *c : seen[0]) {
    REQUIRE(c != nullptr);
    CHECK(c->schedule().perStage ==
          built(c->kind(), c->p(), c->m(), c->v()).perStage);
  }
  shared.clear();
  CHECK(shared.size() == 0);
}

TEST_CASE("the schedule cache stays within its byte budget and its "
          "entries do not change",
          "[schedule]") {
  ScheduleCache cache;
  auto first = cache.get(ScheduleKind::OneFOneB, 8, 64);
  REQUIRE(first.isOk());
  size_t one = cache.bytes();
  CHECK(one > 0);
  // Room for about three such entries.
  cache.setByteBudget(3 * one + one / 2);
  for (int64_t m = 64; m < 64 + 10; ++m) {
    auto e = cache.get(ScheduleKind::OneFOneB, 8, m);
    REQUIRE(e.isOk());
    CHECK(cache.bytes() <= 3 * one + one / 2 + one / 4);
  }
  CHECK(cache.size() <= 4);
  // An entry rebuilt after it was dropped equals the one still held.
  auto again = cache.get(ScheduleKind::OneFOneB, 8, 64);
  REQUIRE(again.isOk());
  CHECK((*again)->numActions() == (*first)->numActions());
  CHECK((*again)->peakInFlight() == (*first)->peakInFlight());
  CHECK((*again)->ops().size() == (*first)->ops().size());
  for (size_t i = 0; i < (*first)->ops().size(); ++i) {
    CHECK((*again)->ops()[i].dep == (*first)->ops()[i].dep);
    CHECK((*again)->ops()[i].cost == (*first)->ops()[i].cost);
  }
  cache.clear();
  CHECK(cache.bytes() == 0);
}
