//===- ExploreTest.cpp - trident explore: sweeps, batch, answers ----------===//

#include "AnalyticProfile.h"

#include "trident/Explore/Explore.h"
#include "trident/Hardware/Cluster.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace trident;
using namespace trident::explore;

TEST_CASE("explore's inputs are parsed or refused with the item named",
          "[explore]") {
  auto s = parseClusterSweeps("dgx-h100:8..64, dgx-a100-80gb:4");
  REQUIRE(s.isOk());
  REQUIRE(s->size() == 2);
  CHECK((*s)[0].preset == "dgx-h100");
  CHECK((*s)[0].nodes == std::vector<int64_t>{8, 16, 32, 64});
  CHECK((*s)[1].nodes == std::vector<int64_t>{4});
  // Doubling stops at the bound.
  CHECK(parseClusterSweeps("dgx-h100:3..20")->at(0).nodes ==
        std::vector<int64_t>{3, 6, 12});
  auto reversed = parseClusterSweeps("dgx-h100:64..8");
  REQUIRE_FALSE(reversed.isOk());
  CHECK(reversed.message().find("'dgx-h100:64..8'") != std::string::npos);
  CHECK(reversed.message().find("reversed") != std::string::npos);
  CHECK_FALSE(parseClusterSweeps("dgx-h100:0..4").isOk());
  CHECK_FALSE(parseClusterSweeps("dgx-h100").isOk());
  CHECK_FALSE(parseClusterSweeps("").isOk());
  auto unknown = parseClusterSweeps("dgx-tpu:1..2");
  REQUIRE_FALSE(unknown.isOk());
  CHECK(unknown.message().find("dgx-tpu") != std::string::npos);

  auto p = parsePrices("h100=2.5, a100=1.3");
  REQUIRE(p.isOk());
  CHECK(p->at("H100-SXM5-80GB") == 2.5);
  CHECK(p->at("A100-SXM4-80GB") == 1.3);
  CHECK(parsePrices("2")->at("*") == 2);
  CHECK(parsePrices("")->empty());
  CHECK_FALSE(parsePrices("h100=-1").isOk());
  CHECK_FALSE(parsePrices("h100=cheap").isOk());
  CHECK_FALSE(parsePrices("tpu-v5=1").isOk());

  CHECK(parseBatchList("auto")->empty());
  CHECK(*parseBatchList("64,128") == std::vector<int64_t>{64, 128});
  CHECK_FALSE(parseBatchList("0").isOk());
  CHECK_FALSE(parseBatchList("64,x").isOk());
}

TEST_CASE("the default critical batch follows Kaplan et al. 2020",
          "[explore]") {
  // L(N, D) = ((8.8e13 / N)^(0.076 / 0.095) + 5.4e13 / D)^0.095 and
  // B_crit = 2e8 / L^(1 / 0.21): for N = 7e10, D = 1e12 by hand, L = 1.747
  // nats and B_crit = 1.40e7 tokens.
  CHECK(defaultCriticalBatchTokens(7e10, 1e12) == Approx(1.40e7).epsilon(0.01));
  // A larger model or more data reaches a lower loss: a larger batch.
  CHECK(defaultCriticalBatchTokens(7e11, 1e12) >
        defaultCriticalBatchTokens(7e10, 1e12));
  CHECK(defaultCriticalBatchTokens(7e10, 1e13) >
        defaultCriticalBatchTokens(7e10, 1e12));
}

namespace {
ExploreOptions smallSweep() {
  ExploreOptions o;
  o.seqLen = 2048;
  o.tokens = 1e10;
  o.clusters = *parseClusterSweeps("dgx-h100:1..2,dgx-a100-80gb:1..2");
  o.globalBatches = {64, 128};
  o.prices = *parsePrices("h100=2.5,a100=1.3");
  o.search.threads = 2;
  return o;
}
} // namespace

TEST_CASE("each row is the planner's best plan, priced by time to train",
          "[explore]") {
  LayerProfile prof = test::gptProfile("gpt-1.3b", 24, 2048, 16);
  ExploreOptions o = smallSweep();
  auto r = exploreScenarios(prof, o);
  REQUIRE(r.isOk());
  REQUIRE(r->rows.size() == 8);
  CHECK(r->priced);
  CHECK(r->criticalBatchTokens == 0); // given batches, no --critical-batch
  for (const ExploreRow &row : r->rows) {
    INFO(row.preset << " " << row.nodes << " batch " << row.globalBatch);
    REQUIRE(row.fits);
    // The same as `trident plan` on that cluster and batch.
    search::SearchOptions so = o.search;
    so.globalBatch = row.globalBatch;
    auto c = parseClusterSpec(row.preset + ":" + std::to_string(row.nodes));
    auto best = search::searchPlans(prof, *c, so, o.eval);
    REQUIRE(best.isOk());
    CHECK(row.iterationSeconds == best->top[0].eval.iterationSeconds);
    // Steps, wall time, GPU-hours and cost follow from it.
    CHECK(row.steps == std::ceil(o.tokens / (row.globalBatch * 2048.0)));
    CHECK(row.timeToTrainSeconds == Approx(row.steps * row.iterationSeconds));
    CHECK(row.gpuHours == Approx(row.timeToTrainSeconds / 3600 * row.gpus));
    double price = row.preset == "dgx-h100" ? 2.5 : 1.3;
    CHECK(row.costUsd == Approx(row.gpuHours * price));
  }
  // The frontier: no row both faster and cheaper than a frontier row.
  int64_t onFrontier = 0;
  for (const ExploreRow &a : r->rows) {
    onFrontier += a.pareto;
    for (const ExploreRow &b : r->rows)
      if (a.pareto)
        CHECK_FALSE((b.timeToTrainSeconds < a.timeToTrainSeconds &&
                     b.costUsd < a.costUsd));
  }
  CHECK(onFrontier >= 1);
  // The answers: the cheapest within a deadline, the fastest in a budget.
  double slowest = 0, cheapest = 1e300;
  for (const ExploreRow &a : r->rows) {
    slowest = std::max(slowest, a.timeToTrainSeconds);
    cheapest = std::min(cheapest, a.costUsd);
  }
  o.deadlineDays = slowest / 86400 * 1.01;
  o.budgetUsd = cheapest * 1.01;
  auto a = exploreScenarios(prof, o);
  REQUIRE(a.isOk());
  REQUIRE(a->deadlineAnswer);
  REQUIRE(a->budgetAnswer);
  CHECK(a->rows[*a->deadlineAnswer].costUsd == Approx(cheapest));
  for (const ExploreRow &x : a->rows)
    if (x.costUsd <= o.budgetUsd)
      CHECK(a->rows[*a->budgetAnswer].timeToTrainSeconds <=
            x.timeToTrainSeconds);
  // The same answer whatever the thread count.
  o.search.threads = 1;
  auto one = exploreScenarios(prof, o);
  REQUIRE(one.isOk());
  CHECK(renderExploreJson(*one, o) == renderExploreJson(*a, o));
}

TEST_CASE("an automatic batch minimises time to train under McCandlish's "
          "relation",
          "[explore]") {
  LayerProfile prof = test::gptProfile("gpt-1.3b", 24, 2048, 16);
  ExploreOptions o = smallSweep();
  o.clusters = *parseClusterSweeps("dgx-h100:2");
  o.prices = *parsePrices("h100=2.5");
  o.globalBatches.clear();
  o.criticalBatchTokens = 2048.0 * 256; // B_noise: 256 sequences
  auto r = exploreScenarios(prof, o);
  REQUIRE(r.isOk());
  REQUIRE(r->rows.size() == 1);
  const ExploreRow &pick = r->rows[0];
  REQUIRE(pick.fits);
  CHECK(pick.tokenFactor ==
        Approx(1 + pick.globalBatch * 2048.0 / o.criticalBatchTokens));
  // No power-of-two batch the scan tried trains faster.
  ExploreOptions all = o;
  for (int64_t b = 4; b <= 2048; b *= 2)
    all.globalBatches.push_back(b);
  auto every = exploreScenarios(prof, all);
  REQUIRE(every.isOk());
  for (const ExploreRow &x : every->rows)
    if (x.fits)
      CHECK(pick.timeToTrainSeconds <= x.timeToTrainSeconds * (1 + 1e-12));
  // Larger batches cost tokens: the pick is not the largest tried.
  CHECK(pick.globalBatch < 2048);
}

TEST_CASE("explore refuses what it cannot answer", "[explore]") {
  LayerProfile prof = test::gptProfile("gpt-1.3b", 24, 2048, 16);
  ExploreOptions o = smallSweep();
  o.tokens = 0;
  CHECK_FALSE(exploreScenarios(prof, o).isOk());
  o = smallSweep();
  o.prices = *parsePrices("h200=3");
  auto r = exploreScenarios(prof, o);
  REQUIRE_FALSE(r.isOk());
  CHECK(r.message().find("H200") != std::string::npos);
  o = smallSweep();
  o.prices = *parsePrices("h100=2.5");
  o.budgetUsd = 1000;
  r = exploreScenarios(prof, o);
  REQUIRE_FALSE(r.isOk());
  CHECK(r.message().find("--budget") != std::string::npos);
}

TEST_CASE("hardware what-ifs: each value a scenario", "[explore]") {
  auto v = parseVary("node.nic_bw=200,400,2x");
  REQUIRE(v.isOk());
  CHECK(v->key == "node.nic_bw");
  REQUIRE(v->values.size() == 3);
  CHECK(v->values[2].multiplier);
  CHECK(v->values[2].value == 2);
  auto bad = parseVary("gpu.colour=1");
  REQUIRE_FALSE(bad.isOk());
  CHECK(bad.message().find("gpu.hbm_bw") != std::string::npos);
  CHECK_FALSE(parseVary("gpu.hbm_bw=-1").isOk());
  CHECK_FALSE(parseVary("gpu.hbm_bw").isOk());
  CHECK_FALSE(parseVary("node.gpus_per_node=4.5").isOk());

  Cluster base = *parseClusterSpec("dgx-h100:2");
  Cluster c = base;
  REQUIRE(applyVary(c, "node.nic_bw", {400, false, "400"}).isOk());
  CHECK(c.groups[0].nic.bandwidthBytesPerS == 400e9 / 8);
  c = base;
  REQUIRE(applyVary(c, "gpu.hbm_bw", {1.5, true, "1.5x"}).isOk());
  CHECK(c.groups[0].gpu.hbmBandwidthBytesPerS ==
        Approx(1.5 * base.groups[0].gpu.hbmBandwidthBytesPerS));
  c = base;
  REQUIRE(applyVary(c, "node.gpus_per_node", {4, false, "4"}).isOk());
  CHECK(c.totalGpus() == 8);
  c = base;
  REQUIRE(applyVary(c, "gpu.bf16_tflops", {2, true, "2x"}).isOk());
  CHECK(c.groups[0].gpu.peakFp16FlopsPerS ==
        Approx(2 * base.groups[0].gpu.peakBf16FlopsPerS));

  // A faster network never slows the best plan; the rows say which value.
  LayerProfile prof = test::gptProfile("gpt-1.3b", 24, 2048, 16);
  ExploreOptions o = smallSweep();
  o.clusters = *parseClusterSweeps("dgx-h100:4");
  o.prices.clear();
  o.globalBatches = {64};
  o.varies = {*parseVary("node.nic_bw=100,3200")};
  auto r = exploreScenarios(prof, o);
  REQUIRE(r.isOk());
  REQUIRE(r->rows.size() == 3);
  CHECK(r->rows[0].varyKey.empty());
  CHECK(r->rows[1].varyValue.text == "100");
  CHECK(r->rows[2].varyValue.text == "3200");
  CHECK(r->rows[2].iterationSeconds <= r->rows[0].iterationSeconds);
  CHECK(r->rows[0].iterationSeconds <= r->rows[1].iterationSeconds);
  CHECK(renderExploreJson(*r, o).find("\"key\": \"node.nic_bw\"") !=
        std::string::npos);
}
