//===- ExploredTest.cpp - The explored points the search exposes ----------===//
//
// SearchResult::explored feeds the report's scatter plot. It must be the
// same list whatever the thread count (the search prunes by a threshold
// that threads lower in any order), sorted, bounded, and hold the winner.
//
//===----------------------------------------------------------------------===//

#include "AnalyticProfile.h"
#include "trident/Search/Search.h"

#include <catch2/catch.hpp>

using namespace trident;

namespace {

search::SearchResult run(int64_t threads, int64_t maxExplored,
                         const char *cluster = "dgx-a100-80gb:4") {
  LayerProfile profile = test::gptProfile("gpt-13b", 40, 5120, 40);
  Result<Cluster> cl = parseClusterSpec(cluster);
  REQUIRE(cl.isOk());
  search::SearchOptions so;
  so.globalBatch = 256;
  so.topK = 3;
  so.threads = threads;
  so.maxExplored = maxExplored;
  auto r = search::searchPlans(profile, *cl, so);
  REQUIRE(r.isOk());
  return std::move(*r);
}

bool samePoints(const std::vector<search::ExploredPoint> &a,
                const std::vector<search::ExploredPoint> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (search::compareConfigs(a[i].config, b[i].config) != 0 ||
        a[i].objective != b[i].objective ||
        a[i].peakMemoryBytes != b[i].peakMemoryBytes ||
        a[i].fits != b[i].fits || a[i].clusterIndex != b[i].clusterIndex)
      return false;
  return true;
}

} // namespace

TEST_CASE("explored points are off unless asked for", "[search][explored]") {
  CHECK(run(2, 0).explored.empty());
}

TEST_CASE("explored points do not depend on the thread count",
          "[search][explored]") {
  search::SearchResult one = run(1, 100000);
  REQUIRE(one.explored.size() > 10);
  CHECK(int64_t(one.explored.size()) <= one.stats.evaluations);
  CHECK(samePoints(run(2, 100000).explored, one.explored));
  CHECK(samePoints(run(8, 100000).explored, one.explored));
  // Best objective first, then memory.
  for (size_t i = 1; i < one.explored.size(); ++i) {
    const search::ExploredPoint &a = one.explored[i - 1], &b = one.explored[i];
    CHECK((a.objective < b.objective ||
           (a.objective == b.objective && a.peakMemoryBytes <= b.peakMemoryBytes)));
  }
  // The winner was evaluated, unless it is a per-stage recompute variant.
  const search::Candidate &best = one.top[0];
  if (best.config.stageRecompute.empty()) {
    bool found = false;
    for (const search::ExploredPoint &p : one.explored)
      found = found || (search::compareConfigs(p.config, best.config) == 0 &&
                        p.objective == best.objective && p.fits);
    CHECK(found);
  }
  // Every fitting point is at best as fast as the winner.
  for (const search::ExploredPoint &p : one.explored)
    if (p.fits)
      CHECK(p.objective >= best.objective);
}

TEST_CASE("explored points are bounded by maxExplored", "[search][explored]") {
  search::SearchResult all = run(2, 100000);
  search::SearchResult five = run(2, 5);
  REQUIRE(five.explored.size() == 5);
  std::vector<search::ExploredPoint> prefix(all.explored.begin(),
                                            all.explored.begin() + 5);
  CHECK(samePoints(five.explored, prefix));
}
