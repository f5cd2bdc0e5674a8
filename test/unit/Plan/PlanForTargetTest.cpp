//===- PlanForTargetTest.cpp - The search restricted to an export target --===//
//
// `trident plan --export T` ranks only plans T can run: the search asks
// the exporter's axis checks before it evaluates a configuration and the
// whole exporter before it ranks a plan. These tests hold the restricted
// search against an exhaustive reference: every fitting plan of the
// unrestricted search (each ZeRO stage pinned in turn, so that ZeRO-1,
// otherwise dominated, is there too), kept when the exporter accepts it.
//
//===----------------------------------------------------------------------===//

#include "AnalyticProfile.h"
#include "trident/Plan/Export.h"
#include "trident/Plan/Plan.h"
#include "trident/Search/Search.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>

using namespace trident;
using namespace trident::search;

namespace {

Cluster clusterOf(const char *spec) {
  Result<Cluster> c = parseClusterSpec(spec);
  REQUIRE(c.isOk());
  return *c;
}

/// The hooks `trident plan --export` installs (tools/trident/PlanCommand).
void restrictTo(SearchOptions &so, const LayerProfile &profile,
                plan::ExportTarget target) {
  so.acceptAxes = [target](const ParallelConfig &cfg) {
    return plan::axesRefusal(cfg, target);
  };
  so.accept = [&profile, target](const ParallelConfig &cfg,
                                 const Evaluation &eval, const Cluster &cl) {
    return plan::planRefusal(profile, cl, cfg, eval, target);
  };
}

bool exports(const LayerProfile &profile, const SearchResult &r,
             const Candidate &c, plan::ExportTarget target) {
  return plan::planRefusal(profile, r.clusters[size_t(c.clusterIndex)],
                           c.config, c.eval, target)
      .empty();
}

/// Every fitting plan of the unrestricted search (ZeRO pinned to each
/// stage in turn) that `target` can run, best first.
std::vector<Candidate> reference(const LayerProfile &profile,
                                 const Cluster &cl, SearchOptions so,
                                 plan::ExportTarget target) {
  std::vector<Candidate> all;
  so.topK = 100000;
  for (int zero = 0; zero <= 3; ++zero) {
    so.pins[Axis::Zero] = zero;
    auto r = searchPlans(profile, cl, so);
    if (!r)
      continue; // no configuration with this ZeRO stage
    for (const Candidate &c : r->top) {
      // ZeRO-1 is listed where the target refuses ZeRO-2 only (elsewhere
      // the same plan with ZeRO-2 is as fast and needs less memory).
      ParallelConfig z2 = c.config;
      z2.zeroStage = 2;
      if (zero == 1 && plan::axesRefusal(z2, target).empty())
        continue;
      if (exports(profile, *r, c, target))
        all.push_back(c);
      // The even split of the same configuration, which the search also
      // weighs (the unrestricted search kept the faster of the two).
      if (c.config.pp > 1 && c.config.stageRecompute.empty()) {
        const Cluster &on = r->clusters[size_t(c.clusterIndex)];
        Candidate even = c;
        even.config.layersPerChunk.clear();
        auto ev = Evaluator::create(profile, on);
        REQUIRE(ev.isOk());
        REQUIRE(ev->evaluate(even.config, even.eval).isOk());
        even.config.layersPerChunk =
            plan::makePlan(profile, on, even.config, even.eval).layersPerChunk;
        even.objective = even.eval.iterationSeconds;
        if (even.config.layersPerChunk != c.config.layersPerChunk &&
            even.eval.fits && exports(profile, *r, even, target))
          all.push_back(even);
      }
    }
  }
  std::sort(all.begin(), all.end(), rankedBefore);
  return all;
}

std::string describe(const Candidate &c) {
  const ParallelConfig &b = c.config;
  std::string s = "dp" + std::to_string(b.dp) + " tp" + std::to_string(b.tp) +
                  " pp" + std::to_string(b.pp) + " cp" + std::to_string(b.cp) +
                  " mb" + std::to_string(b.microBatch) + " sp" +
                  std::to_string(int(b.sequenceParallel)) + " rc" +
                  std::to_string(int(b.recompute)) + " zero" +
                  std::to_string(b.zeroStage) + " vpp" + std::to_string(b.vpp) +
                  " [";
  for (int64_t l : b.layersPerChunk)
    s += std::to_string(l) + ",";
  return s + "] " + std::to_string(c.eval.iterationSeconds);
}

/// Global batch B on 2 threads, pp pinned when given.
SearchOptions options(int64_t globalBatch, std::optional<int64_t> pp = {}) {
  SearchOptions so;
  so.globalBatch = globalBatch;
  so.threads = 2;
  so.pins[Axis::Pp] = pp;
  return so;
}

constexpr plan::ExportTarget kTargets[] = {plan::ExportTarget::Megatron,
                                           plan::ExportTarget::DeepSpeed,
                                           plan::ExportTarget::TorchTitan};

} // namespace

TEST_CASE("one stage: the restricted search is the exhaustive reference",
          "[search][export]") {
  // pp pinned to 1: every configuration has one candidate plan, so the
  // restricted top K must be exactly the first K plans of the reference.
  LayerProfile prof = test::gptProfile("gpt-1.3b", 24, 2048, 16, 2048);
  Cluster cl = clusterOf("dgx-a100-40gb:2");
  for (plan::ExportTarget target : kTargets) {
    INFO("target " << plan::exportTargetName(target));
    SearchOptions so = options(64, 1);
    std::vector<Candidate> ref = reference(prof, cl, so, target);
    REQUIRE(ref.size() >= 5);
    so.topK = 5;
    restrictTo(so, prof, target);
    auto r = searchPlans(prof, cl, so);
    REQUIRE(r.isOk());
    REQUIRE(r->top.size() == 5);
    for (size_t i = 0; i < 5; ++i) {
      INFO("rank " << i << ": " << describe(r->top[i]) << " vs "
                   << describe(ref[i]));
      CHECK(compareConfigs(r->top[i].config, ref[i].config) == 0);
      CHECK(r->top[i].eval.iterationSeconds == ref[i].eval.iterationSeconds);
    }
  }
}

TEST_CASE("pipelines: the restricted search is at least the reference",
          "[search][export]") {
  // With pipeline stages a configuration has several candidate splits
  // (the DP's, the even one, per-stage recomputation); the unrestricted
  // search keeps one, the restricted one the best the target accepts. So
  // its plans all export, its best is at least as fast as the reference's
  // best, and it is the same for any thread count.
  LayerProfile prof = test::gptProfile("gpt-6.7b", 32, 4096, 32, 2048);
  Cluster cl = clusterOf("dgx-a100-40gb:4");
  for (plan::ExportTarget target : kTargets) {
    INFO("target " << plan::exportTargetName(target));
    SearchOptions so = options(256, 4);
    std::vector<Candidate> ref = reference(prof, cl, so, target);
    REQUIRE(!ref.empty());
    so.topK = 4;
    restrictTo(so, prof, target);
    std::string first;
    for (int64_t threads : {1, 3}) {
      so.threads = threads;
      auto r = searchPlans(prof, cl, so);
      REQUIRE(r.isOk());
      REQUIRE(!r->top.empty());
      std::string seen;
      for (const Candidate &c : r->top) {
        INFO(describe(c));
        CHECK(exports(prof, *r, c, target));
        seen += describe(c) + "\n";
      }
      INFO("restricted best " << describe(r->top[0]) << ", reference best "
                              << describe(ref[0]));
      CHECK(r->top[0].eval.iterationSeconds <=
            ref[0].eval.iterationSeconds * (1 + 1e-12));
      if (threads == 1)
        first = seen;
      else
        CHECK(seen == first);
    }
  }
}

TEST_CASE("DeepSpeed's pipeline engine gets ZeRO-1, which is otherwise "
          "dominated",
          "[search][export]") {
  // ZeRO-2 is refused with pp > 1 (PipelineEngine), so ZeRO-1 is no longer
  // dominated by an admissible plan: with dp > 1 and memory tight enough
  // to want optimizer sharding, the restricted search finds it.
  LayerProfile prof = test::gptProfile("gpt-13b", 40, 5120, 40, 2048);
  Cluster cl = clusterOf("dgx-a100-40gb:4");
  SearchOptions so = options(256, 4);
  so.topK = 10;
  so.pins[Axis::Tp] = 1; // DeepSpeed runs tp only without pp
  restrictTo(so, prof, plan::ExportTarget::DeepSpeed);
  auto r = searchPlans(prof, cl, so);
  REQUIRE(r.isOk());
  REQUIRE(!r->top.empty());
  bool zero1 = false;
  for (const Candidate &c : r->top) {
    CHECK(c.config.zeroStage <= 1);
    zero1 = zero1 || c.config.zeroStage == 1;
  }
  CHECK(zero1);
}

TEST_CASE("everything refused is an error that says why",
          "[search][export]") {
  LayerProfile prof = test::gptProfile("gpt-1.3b", 24, 2048, 16, 2048);
  Cluster cl = clusterOf("dgx-a100-40gb:2");
  SearchOptions so = options(64);
  // Refused before evaluation: no configuration at all.
  so.acceptAxes = [](const ParallelConfig &) {
    return std::string("refused for the test");
  };
  auto none = searchPlans(prof, cl, so);
  REQUIRE_FALSE(none.isOk());
  CHECK(none.message().find("no configuration is accepted") !=
        std::string::npos);
  CHECK(none.message().find("refused for the test") != std::string::npos);
  // Refused after evaluation: nothing ranked, and the best refused plan
  // with the reason.
  so.acceptAxes = nullptr;
  so.accept = [](const ParallelConfig &cfg, const Evaluation &,
                 const Cluster &) {
    return "tp " + std::to_string(cfg.tp) + " refused";
  };
  auto r = searchPlans(prof, cl, so);
  REQUIRE(r.isOk());
  CHECK(r->top.empty());
  REQUIRE(r->noFit.has_value());
  CHECK(r->noFit->message.find("no plan that fits is accepted") !=
        std::string::npos);
  CHECK(r->noFit->message.find("refused") != std::string::npos);
  REQUIRE(r->bestRejected.has_value());
  CHECK(r->bestRejected->reason ==
        "tp " + std::to_string(r->bestRejected->candidate.config.tp) +
            " refused");
  // The best refused plan is the unrestricted search's best.
  so.accept = nullptr;
  auto all = searchPlans(prof, cl, so);
  REQUIRE(all.isOk());
  CHECK(compareConfigs(all->top[0].config,
                       r->bestRejected->candidate.config) == 0);
}
