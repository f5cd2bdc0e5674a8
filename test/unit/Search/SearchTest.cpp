//===- SearchTest.cpp - The planner's search, partitioner and pins --------===//

#include "AnalyticProfile.h"
#include "trident/Search/Search.h"

#include <catch2/catch.hpp>

#include <thread>

#include <functional>
#include <random>

using namespace trident;
using namespace trident::search;

namespace {

LayerProfile gpt(const char *name, int64_t layers, int64_t hidden,
                 int64_t heads, int64_t seq = 2048) {
  return test::gptProfile(name, layers, hidden, heads, seq);
}

LayerProfile mixtralLike() {
  TransformerShape s = llamaStyleShape("moe", 8, 2048, 16, 4, 5632, 32000, 2048, 8);
  Result<LayerProfile> p = buildTransformerProfile(s);
  REQUIRE(p.isOk());
  return *p;
}

Cluster cluster(const char *spec) {
  Result<Cluster> c = parseClusterSpec(spec);
  REQUIRE(c.isOk());
  return *c;
}

/// A stable text of everything the search returns, to compare runs.
std::string fingerprint(const SearchResult &r) {
  std::string s;
  char buf[128];
  for (const Candidate &c : r.top) {
    std::snprintf(
        buf, sizeof buf, "%lld/%lld/%lld/%lld/%lld/%lld/%lld/%d/%d/%d/%d|",
        (long long)c.config.dp, (long long)c.config.tp, (long long)c.config.pp,
        (long long)c.config.cp, (long long)c.config.ep, (long long)c.config.vpp,
        (long long)c.config.microBatch, int(c.config.sequenceParallel),
        int(c.config.tpCommOverlap), int(c.config.recompute),
        int(c.config.zeroStage));
    s += buf;
    for (int64_t l : c.config.layersPerChunk)
      s += std::to_string(l) + ",";
    std::snprintf(buf, sizeof buf, "|%.17g|%.17g\n", c.eval.iterationSeconds,
                  c.eval.peakMemoryBytes);
    s += buf;
  }
  return s;
}

} // namespace

//===----------------------------------------------------------------------===//
// Pins
//===----------------------------------------------------------------------===//

TEST_CASE("--fix parses every axis", "[search][pins]") {
  auto p = parsePins("tp=8, pp=16,dp=8,cp=1,ep=1,vpp=2,mb=1,sp=1,"
                     "recompute=full,zero=1,schedule=interleaved-1f1b");
  REQUIRE(p.isOk());
  CHECK(*(*p)[Axis::Tp] == 8);
  CHECK(*(*p)[Axis::Pp] == 16);
  CHECK(*(*p)[Axis::Vpp] == 2);
  CHECK(*p->as<bool>(Axis::Sp));
  CHECK(*p->as<Recompute>(Axis::Recompute) == Recompute::Full);
  CHECK(*(*p)[Axis::Zero] == 1);
  CHECK(formatPins(*p) == "dp=8,tp=8,pp=16,cp=1,ep=1,vpp=2,mb=1,sp=1,"
                          "recompute=full,zero=1,schedule=interleaved-1f1b");
  // Repeating a key with the same value is harmless.
  CHECK(parsePins("tp=4,tp=4").isOk());
}

TEST_CASE("--fix errors name the key and the problem", "[search][pins]") {
  auto msg = [](const char *spec) {
    auto p = parsePins(spec);
    REQUIRE_FALSE(p.isOk());
    return p.message();
  };
  CHECK_THAT(msg("tp"), Catch::Contains("'tp' is not KEY=VALUE"));
  CHECK_THAT(msg("tp=0"), Catch::Contains("'tp': expected an integer from 1 to 16777216"));
  CHECK_THAT(msg("tp=x"), Catch::Contains("'tp': expected an integer from 1 to 16777216"));
  CHECK_THAT(msg("foo=1"), Catch::Contains("unknown axis 'foo'"));
  CHECK_THAT(msg("zero=4"), Catch::Contains("'zero': expected an integer from 0 to 3"));
  CHECK_THAT(msg("recompute=some"), Catch::Contains("'recompute': expected none, selective or full"));
  CHECK_THAT(msg("tp=8,tp=4"), Catch::Contains("pinned twice"));
  CHECK_THAT(msg("sp=1,tp=1"), Catch::Contains("sp=1 contradicts tp=1"));
  CHECK_THAT(msg("pp=1,vpp=2"), Catch::Contains("contradicts pp=1"));
  CHECK_THAT(msg("vpp=2,schedule=1f1b"), Catch::Contains("contradicts vpp=2"));
  CHECK_THAT(msg(""), Catch::Contains("empty list"));
  CHECK_THAT(msg("tp=8,,pp=2"), Catch::Contains("empty item"));
}

//===----------------------------------------------------------------------===//
// Partitioner
//===----------------------------------------------------------------------===//

TEST_CASE("the DP split is the optimum of brute force, memory limits "
          "included", "[search][partition]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t N = 3 + trial % 8, p = 1 + trial % 4;
    if (N < p)
      continue;
    LayerCosts a, b; // two device types (heterogeneous stages)
    for (LayerCosts *c : {&a, &b}) {
      c->embeddingSeconds = u(rng);
      c->headSeconds = 2 * u(rng);
      c->embeddingStateBytes = u(rng);
      c->headStateBytes = u(rng);
      c->embeddingPeakActBytes = c->headPeakActBytes = 0;
      for (int64_t i = 0; i < N; ++i) {
        c->blockSeconds.push_back(u(rng));
        c->blockActBytes.push_back(u(rng));
        c->blockPeakActBytes.push_back(i % 3 == 0 ? u(rng) : 0.1);
        c->blockStateBytes.push_back(u(rng));
        c->blockGatherBytes.push_back(0);
      }
    }
    std::vector<StageDevice> devs(static_cast<size_t>(p));
    for (int64_t s = 0; s < p; ++s) {
      devs[size_t(s)].costs = s % 2 ? &b : &a;
      devs[size_t(s)].inFlight = p - s;
      devs[size_t(s)].fixedBytes = 0.5;
      devs[size_t(s)].memoryLimitBytes = 3.0 + double(trial % 5) * 2;
    }
    // Brute force over all compositions of N into p positive parts.
    double bestBrute = std::numeric_limits<double>::infinity();
    std::vector<int64_t> split(static_cast<size_t>(p));
    std::function<void(int64_t, int64_t)> rec = [&](int64_t s, int64_t at) {
      if (s == p - 1) {
        split[size_t(s)] = N - at;
        if (N - at < 1)
          return;
        double worst = 0;
        int64_t b0 = 0;
        for (int64_t t = 0; t < p; ++t) {
          int64_t e = b0 + split[size_t(t)];
          if (stageBytes(devs[size_t(t)], t == 0, t == p - 1, b0, e) >
              devs[size_t(t)].memoryLimitBytes)
            return;
          worst = std::max(worst,
                           stageSeconds(devs[size_t(t)], t == 0, t == p - 1, b0, e));
          b0 = e;
        }
        bestBrute = std::min(bestBrute, worst);
        return;
      }
      for (int64_t n = 1; at + n <= N - (p - 1 - s); ++n) {
        split[size_t(s)] = n;
        rec(s + 1, at + n);
      }
    };
    rec(0, 0);
    PartitionWorkspace ws;
    PartitionResult r = partitionLayers(devs, N, ws);
    INFO("trial " << trial << " N=" << N << " p=" << p);
    REQUIRE(r.feasible == std::isfinite(bestBrute));
    if (!r.feasible)
      continue;
    CHECK(r.maxStageSeconds == Approx(bestBrute).epsilon(1e-12));
    // The returned split achieves the value and fits.
    int64_t b0 = 0;
    double worst = 0;
    for (int64_t t = 0; t < p; ++t) {
      int64_t e = b0 + r.layersPerStage[size_t(t)];
      CHECK(r.layersPerStage[size_t(t)] >= 1);
      CHECK(stageBytes(devs[size_t(t)], t == 0, t == p - 1, b0, e) <=
            devs[size_t(t)].memoryLimitBytes);
      worst = std::max(worst,
                       stageSeconds(devs[size_t(t)], t == 0, t == p - 1, b0, e));
      b0 = e;
    }
    CHECK(b0 == N);
    CHECK(worst == Approx(r.maxStageSeconds).epsilon(1e-12));
  }
}

TEST_CASE("splits without memory limits are remembered by content, not "
          "by address",
          "[search][partition]") {
  // A thread's first call computes; later calls with the same seconds may
  // come from its memo. Each result must be what a fresh thread computes.
  auto fresh = [](const std::vector<StageDevice> &devs, int64_t N) {
    PartitionResult out;
    std::thread([&] {
      PartitionWorkspace ws;
      out = partitionLayers(devs, N, ws);
    }).join();
    return out;
  };
  auto same = [](const PartitionResult &a, const PartitionResult &b) {
    CHECK(a.feasible == b.feasible);
    CHECK(a.layersPerStage == b.layersPerStage);
    CHECK(a.maxStageSeconds == b.maxStageSeconds);
    CHECK(a.stageBytes == b.stageBytes);
  };
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  const int64_t N = 24, G = 8;
  LayerCosts c;
  c.embeddingSeconds = 1.5, c.headSeconds = 2.5;
  for (int64_t i = 0; i < N; ++i) {
    c.blockSeconds.push_back(u(rng));
    c.blockActBytes.push_back(u(rng));
    c.blockPeakActBytes.push_back(0.1);
    c.blockStateBytes.push_back(u(rng));
    c.blockGatherBytes.push_back(0);
  }
  std::vector<StageDevice> devs(static_cast<size_t>(G));
  for (StageDevice &d : devs) {
    d.costs = &c;
    d.inFlight = 2;
    d.fixedBytes = 0.5;
    d.memoryLimitBytes = std::numeric_limits<double>::infinity();
  }
  PartitionWorkspace ws;
  PartitionResult first = partitionLayers(devs, N, ws);
  REQUIRE(first.feasible);
  same(partitionLayers(devs, N, ws), first);
  same(first, fresh(devs, N));
  // Other memory, same seconds: the same split, its own stage bytes.
  for (StageDevice &d : devs)
    d.fixedBytes = 7.0, d.inFlight = 3;
  PartitionResult moreMemory = partitionLayers(devs, N, ws);
  same(moreMemory, fresh(devs, N));
  CHECK(moreMemory.layersPerStage == first.layersPerStage);
  CHECK(moreMemory.stageBytes != first.stageBytes);
  // New seconds at the same address: a new split.
  c.blockSeconds[0] = 20.0;
  PartitionResult heavy = partitionLayers(devs, N, ws);
  same(heavy, fresh(devs, N));
  CHECK(heavy.layersPerStage != first.layersPerStage);
  c.headSeconds = 30.0;
  same(partitionLayers(devs, N, ws), fresh(devs, N));
  // Fewer chunks over the same costs: a split of its own.
  std::vector<StageDevice> fewer(devs.begin(), devs.begin() + 5);
  PartitionResult five = partitionLayers(fewer, N, ws);
  same(five, fresh(fewer, N));
  CHECK(five.layersPerStage.size() == 5);
}

TEST_CASE("the partitioner's stage model is the Evaluator's", "[search][partition]") {
  // Time per micro-batch and memory of every stage, as the partitioner
  // adds them up from single-layer probes, must equal what the Evaluator
  // reports for the same split: otherwise the DP would optimise, and
  // prune by, numbers the ranking does not use.
  struct Case {
    LayerProfile profile;
    const char *cluster;
    ParallelConfig cfg;
  };
  std::vector<Case> cases;
  auto base = [](int64_t dp, int64_t tp, int64_t pp, int64_t mb, int64_t B) {
    ParallelConfig c;
    c.dp = dp, c.tp = tp, c.pp = pp, c.microBatch = mb, c.globalBatch = B;
    return c;
  };
  {
    ParallelConfig c = base(8, 8, 16, 1, 1536);
    c.recompute = Recompute::Full;
    c.layersPerChunk = {5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 7};
    cases.push_back({gpt("gpt3", 96, 12288, 96), "dgx-a100-80gb:128", c});
  }
  {
    ParallelConfig c = base(4, 4, 4, 2, 256);
    c.sequenceParallel = true;
    c.zeroStage = 3;
    cases.push_back({gpt("gpt-7b", 32, 4096, 32), "dgx-a100-80gb:8", c});
  }
  {
    ParallelConfig c = base(2, 2, 2, 1, 64);
    c.cp = 2;
    c.zeroStage = 1;
    c.recompute = Recompute::Selective;
    cases.push_back({gpt("gpt-1b", 24, 2048, 16, 4096), "dgx-h100:2", c});
  }
  {
    ParallelConfig c = base(8, 1, 2, 1, 64);
    c.ep = 4;
    c.zeroStage = 2;
    cases.push_back({mixtralLike(), "dgx-h100:2", c});
  }
  for (Case &k : cases) {
    Cluster cl = cluster(k.cluster);
    auto ev = Evaluator::create(k.profile, cl);
    REQUIRE(ev.isOk());
    Evaluation e;
    REQUIRE(ev->evaluate(k.cfg, e).isOk());
    auto model = stageModel(k.profile, cl, k.cfg);
    REQUIRE(model.isOk());
    std::vector<int64_t> split = k.cfg.layersPerChunk;
    if (split.empty())
      for (int64_t s = 0; s < k.cfg.pp; ++s)
        split.push_back(e.stages[size_t(s)].layers);
    int64_t at = 0;
    for (int64_t s = 0; s < k.cfg.pp; ++s) {
      const StageDevice &d = model->stages[size_t(s)];
      bool first = s == 0, last = s == k.cfg.pp - 1;
      int64_t end = at + split[size_t(s)];
      const StageBreakdown &st = e.stages[size_t(s)];
      INFO(k.profile.modelName << " stage " << s);
      if (k.cfg.zeroStage != 3) // ZeRO-3 adds exposed gathers the DP omits
        CHECK(stageSeconds(d, first, last, at, end) ==
              Approx(st.forwardSecondsPerMicroBatch +
                     st.backwardSecondsPerMicroBatch)
                  .epsilon(1e-9));
      CHECK(stageBytes(d, first, last, at, end) ==
            Approx(st.totalBytes).epsilon(1e-9));
      at = end;
    }
  }
}

TEST_CASE("a pipeline without interleaving takes at least its fill bound",
          "[search][bounds]") {
  // One stage runs its m micro-batches back to back; one micro-batch
  // passes every stage once; more micro-batches approach m W / pp.
  CHECK(pipelineFillBound(2.0, 5, 1) == Approx(10.0));
  CHECK(pipelineFillBound(2.0, 1, 4) == Approx(2.0));
  for (int64_t pp : {2, 4, 8})
    for (int64_t m : {2, 3, 8, 64}) {
      double b = pipelineFillBound(1.0, m, pp);
      CHECK(b >= double(m) / double(pp));
      CHECK(b <= double(m) / double(pp) + double(pp)); // fill <= pp stages
    }
  CHECK(pipelineFillBound(1.0, 1000, 4) == Approx(250.0).epsilon(0.01));
  // The Evaluator's schedules never beat it, whatever the split: the
  // search prunes by it (Worker::memberBound).
  LayerProfile prof = gpt("gpt-1b", 24, 2048, 16);
  Cluster cl = cluster("dgx-h100:1");
  auto ev = Evaluator::create(prof, cl);
  REQUIRE(ev.isOk());
  for (int64_t pp : {2, 4})
    for (int64_t m : {1, 2, 3, 8})
      for (int skew = 0; skew < 3; ++skew) {
        ParallelConfig c;
        c.pp = pp;
        c.dp = 8 / pp;
        c.microBatch = 1;
        c.globalBatch = c.dp * m;
        // Even, front-heavy (the bound's own shape) and back-heavy.
        std::vector<int64_t> split(size_t(pp), 24 / pp);
        if (skew == 1) {
          split.front() += 2;
          split.back() -= 2;
        } else if (skew == 2) {
          split.front() -= 2;
          split.back() += 2;
        }
        c.layersPerChunk = split;
        Evaluation e;
        REQUIRE(ev->evaluate(c, e).isOk());
        double work = 0;
        for (const StageBreakdown &st : e.stages)
          work +=
              st.forwardSecondsPerMicroBatch + st.backwardSecondsPerMicroBatch;
        INFO("pp " << pp << " m " << m << " skew " << skew);
        CHECK(e.pipelineSeconds >= pipelineFillBound(work, m, pp) * (1 - 1e-9));
      }
}

//===----------------------------------------------------------------------===//
// Search
//===----------------------------------------------------------------------===//

TEST_CASE("the search finds the best plan of exhaustive enumeration",
          "[search]") {
  // Every configuration (even split) the runtime can run evaluated by
  // brute force: the search's winner must be at least as good, so its
  // pruning never dropped a better plan.
  // Under every runtime: their presets change which choices dominate
  // (ZeRO-2 sums every micro-batch under trident; selective recompute is
  // dominated only under fused attention).
  // The overlap of the tensor-parallel collectives (megatron-core) is
  // weighed like any axis: on H100 it wins some shapes, on A100 the search
  // drops the families it only slows (dropDominatedOverlap), and neither
  // may cost the search a better plan.
  LayerProfile prof = gpt("gpt-1.3b", 24, 2048, 16);
  Cluster cl = cluster(GENERATE("dgx-a100-40gb:2", "l40s-8x:2", "dgx-h100:2"));
  Runtime runtime =
      GENERATE(Runtime::MegatronCore, Runtime::MegatronLm, Runtime::Fsdp,
               Runtime::Torchtitan, Runtime::Trident);
  INFO("cluster " << cl.name << ", runtime " << runtimeName(runtime));
  EvalOptions eo;
  applyRuntime(eo, runtime);
  SearchOptions so;
  so.globalBatch = 64;
  so.topK = 3;
  so.threads = 2;
  auto r = searchPlans(prof, cl, so, eo);
  REQUIRE(r.isOk());
  REQUIRE(!r->top.empty());
  auto ev = Evaluator::create(prof, cl, eo);
  REQUIRE(ev.isOk());
  double brute = std::numeric_limits<double>::infinity();
  Evaluation e;
  int64_t valid = 0;
  for (int64_t tp : {1, 2, 4, 8})
    for (int64_t pp : {1, 2, 4, 8, 16})
      for (int64_t cp : {1, 2})
        for (int64_t mb : {1, 2, 4, 8, 16, 32})
          for (int64_t vpp : {1, 2, 3, 4})
            for (int sp = 0; sp < 2; ++sp)
              for (int ov = 0; ov <= sp; ++ov)
                for (Recompute rc :
                     {Recompute::None, Recompute::Selective, Recompute::Full})
                  for (int zero = 0; zero < 4; ++zero) {
                    ParallelConfig c;
                    c.tp = tp, c.pp = pp, c.cp = cp, c.microBatch = mb;
                    c.dp = 16 / (tp * pp * cp);
                    if (c.dp < 1 || c.dp * tp * pp * cp != 16)
                      continue;
                    c.vpp = vpp, c.sequenceParallel = sp, c.recompute = rc;
                    c.tpCommOverlap = ov;
                    c.zeroStage = zero, c.globalBatch = 64;
                    // Only what the runtime can run (the axis table's
                    // runtime column) competes.
                    if (!ev->validate(c).isOk() ||
                        !runtimeAxisRefusal(c, runtime).empty())
                      continue;
                    ++valid;
                    REQUIRE(ev->evaluate(c, e).isOk());
                    if (e.fits)
                      brute = std::min(brute, e.iterationSeconds);
                  }
  REQUIRE(valid > (runtime == Runtime::Fsdp ? 10 : 100));
  CHECK(r->top[0].eval.iterationSeconds <= brute * (1 + 1e-12));
  // Nothing ranked that the runtime cannot run.
  for (const Candidate &c : r->top)
    CHECK(runtimeAxisRefusal(c.config, runtime).empty());
  // Ranked best first, all fit, and no configuration twice.
  for (size_t i = 0; i < r->top.size(); ++i) {
    CHECK(r->top[i].eval.fits);
    if (i > 0)
      CHECK(rankedBefore(r->top[i - 1], r->top[i]));
  }
  CHECK(r->stats.evaluations < valid); // pruning did prune
}

TEST_CASE("the search is deterministic for any thread count", "[search]") {
  LayerProfile prof = gpt("gpt-7b", 32, 4096, 32);
  Cluster cl = cluster("dgx-a100-80gb:4");
  std::string ref;
  for (int64_t threads : {1, 2, 8}) {
    SearchOptions so;
    so.globalBatch = 256;
    so.topK = 5;
    so.threads = threads;
    auto r = searchPlans(prof, cl, so);
    REQUIRE(r.isOk());
    REQUIRE(r->top.size() == 5);
    std::string f = fingerprint(*r);
    if (threads == 1)
      ref = f;
    else
      CHECK(f == ref);
  }
}

TEST_CASE("no plan is listed twice, per-stage recomputation included",
          "[search]") {
  // A recomputing family whose stages all fit without recomputation gives
  // the no-recompute plan again; it used to be listed a second time
  // (recompute full with every stage at none), so DeepSeek-V3's top two
  // plans were one. The plan a user reads: every stage's policy, the
  // layout and the split.
  auto stagePolicies = [](const ParallelConfig &c) {
    std::vector<Recompute> v;
    for (int64_t s = 0; s < c.pp; ++s)
      v.push_back(c.recomputeOf(s));
    return v;
  };
  for (int which = 0; which < 4; ++which) {
    LayerProfile prof =
        which % 2 == 0 ? gpt("gpt-7b", 32, 4096, 32) : mixtralLike();
    Cluster cl = cluster(which < 2 ? "dgx-a100-80gb:4" : "dgx-h100:32");
    SearchOptions so;
    so.globalBatch = which < 2 ? 256 : 64;
    so.topK = 40;
    so.threads = 2;
    auto r = searchPlans(prof, cl, so);
    REQUIRE(r.isOk());
    for (size_t i = 0; i < r->top.size(); ++i) {
      const ParallelConfig &a = r->top[i].config;
      // A per-stage list is only kept when it mixes levels.
      if (!a.stageRecompute.empty())
        CHECK(std::any_of(a.stageRecompute.begin(), a.stageRecompute.end(),
                          [&](Recompute x) {
                            return x != a.stageRecompute.front();
                          }));
      for (size_t j = i + 1; j < r->top.size(); ++j) {
        const ParallelConfig &b = r->top[j].config;
        ParallelConfig bb = b;
        bb.recompute = a.recompute;
        bb.stageRecompute = a.stageRecompute;
        INFO("plans " << i << " and " << j);
        CHECK_FALSE((compareConfigs(a, bb) == 0 &&
                     stagePolicies(a) == stagePolicies(b)));
      }
    }
  }
}

TEST_CASE("pins are respected and contradictions are errors", "[search]") {
  LayerProfile prof = gpt("gpt-7b", 32, 4096, 32);
  Cluster cl = cluster("dgx-a100-80gb:4");
  SearchOptions so;
  so.globalBatch = 256;
  so.threads = 1;
  auto pins = parsePins("tp=4,pp=2,recompute=full");
  REQUIRE(pins.isOk());
  so.pins = *pins;
  auto r = searchPlans(prof, cl, so);
  REQUIRE(r.isOk());
  REQUIRE(!r->top.empty());
  for (const Candidate &c : r->top) {
    CHECK(c.config.tp == 4);
    CHECK(c.config.pp == 2);
    CHECK(c.config.recompute == Recompute::Full);
  }
  auto err = [&](const char *spec) {
    auto p = parsePins(spec);
    REQUIRE(p.isOk());
    so.pins = *p;
    auto res = searchPlans(prof, cl, so);
    REQUIRE_FALSE(res.isOk());
    return res.message();
  };
  CHECK_THAT(err("tp=16"), Catch::Contains("tp=16 exceeds the 8 GPUs"));
  CHECK_THAT(err("dp=4,tp=4,pp=4,cp=4"),
             Catch::Contains("does not divide the 32 GPUs"));
  CHECK_THAT(err("dp=2,tp=2,pp=2,cp=2"),
             Catch::Contains("dp*tp*pp*cp = 16 but cluster"));
  CHECK_THAT(err("ep=2"), Catch::Contains("has no routed experts"));
  CHECK_THAT(err("dp=32,mb=3"), Catch::Contains("global_batch=256"));
}

TEST_CASE("nothing fits: what is short and what would help", "[search]") {
  LayerProfile prof = gpt("gpt3", 96, 12288, 96);
  Cluster cl = cluster("dgx-a100-80gb:1");
  SearchOptions so;
  so.globalBatch = 64;
  so.threads = 1;
  auto r = searchPlans(prof, cl, so);
  REQUIRE(r.isOk());
  CHECK(r->top.empty());
  REQUIRE(r->noFit.has_value());
  CHECK(r->noFit->shortBytes > 0);
  CHECK_THAT(r->noFit->message, Catch::Contains("is short by"));
  bool moreGpus = false;
  for (const std::string &s : r->noFit->suggestions)
    moreGpus = moreGpus || s.find("more GPUs") != std::string::npos;
  CHECK(moreGpus);
}

TEST_CASE("memory headroom and the cost objective", "[search]") {
  LayerProfile prof = gpt("gpt-7b", 32, 4096, 32);
  Cluster cl = cluster("dgx-a100-80gb:4");
  SearchOptions so;
  so.globalBatch = 256;
  so.threads = 2;
  so.maxMemoryFraction = 0.5;
  auto r = searchPlans(prof, cl, so);
  REQUIRE(r.isOk());
  REQUIRE(!r->top.empty());
  for (const Candidate &c : r->top)
    for (const StageBreakdown &s : c.eval.stages)
      CHECK(s.totalBytes <= 0.5 * s.capacityBytes);
  // Cost per token may use fewer nodes; it is never worse than the
  // cheapest plan on all nodes.
  so.maxMemoryFraction = 1;
  so.objective = Objective::CostPerToken;
  so.pricePerGpuHour = 2.0;
  auto c = searchPlans(prof, cl, so);
  REQUIRE(c.isOk());
  REQUIRE(!c->top.empty());
  CHECK(c->clusters.size() > 1);
  SearchOptions st = so;
  st.objective = Objective::StepTime;
  auto t = searchPlans(prof, cl, st);
  REQUIRE(t.isOk());
  CHECK(c->top[0].costPerToken <= t->top[0].costPerToken * (1 + 1e-12));
  CHECK(c->top[0].costPerToken > 0);
}

TEST_CASE("bad options are errors", "[search]") {
  LayerProfile prof = gpt("gpt-1.3b", 24, 2048, 16);
  Cluster cl = cluster("dgx-a100-40gb:1");
  SearchOptions so;
  auto r = searchPlans(prof, cl, so);
  REQUIRE_FALSE(r.isOk());
  CHECK_THAT(r.message(), Catch::Contains("--global-batch"));
  so.globalBatch = 8;
  so.maxMemoryFraction = 1.5;
  r = searchPlans(prof, cl, so);
  REQUIRE_FALSE(r.isOk());
  CHECK_THAT(r.message(), Catch::Contains("--max-memory-fraction"));
  so.maxMemoryFraction = 1;
  so.objective = Objective::CostPerToken;
  r = searchPlans(prof, cl, so);
  REQUIRE_FALSE(r.isOk());
  CHECK_THAT(r.message(), Catch::Contains("--price-per-gpu-hour"));
}

namespace {
/// Two DGX H100 and two DGX A100 nodes (the data-share tests' cluster).
Result<Cluster> twoNodesEach() {
  return parseClusterJson(R"({
    "groups": [{"preset": "dgx-h100", "nodes": 2},
               {"preset": "dgx-a100-80gb", "nodes": 2}]})");
}
/// Their search: a global batch of 512, the top 3, 2 threads.
SearchOptions mixedSearch() {
  SearchOptions so;
  so.globalBatch = 512;
  so.topK = 3;
  so.threads = 2;
  return so;
}
} // namespace

TEST_CASE("heterogeneous data shares and per-stage recompute", "[search]") {
  // H100 and A100 nodes: each GPU type runs whole replicas, and the H100
  // replicas take more micro-batches per step than the A100 ones.
  Result<Cluster> mixed = twoNodesEach();
  REQUIRE(mixed.isOk());
  LayerProfile prof = gpt("gpt-1.3b", 24, 2048, 16);
  SearchOptions so = mixedSearch();
  auto r = searchPlans(prof, *mixed, so);
  REQUIRE(r.isOk());
  REQUIRE(!r->top.empty());
  const Candidate &best = r->top[0];
  REQUIRE(best.config.dataShares.size() == 2);
  const DataShare &h100 = best.config.dataShares[0];
  const DataShare &a100 = best.config.dataShares[1];
  CHECK(h100.microBatches > a100.microBatches);
  CHECK(h100.dp * h100.microBatches * best.config.microBatch +
            a100.dp * a100.microBatches * best.config.microBatch ==
        512);
  // Without data shares the best plan is slower (stages must then be of
  // one GPU type each, so the two types pipeline instead).
  SearchOptions without = so;
  without.dataShares = false;
  auto w = searchPlans(prof, *mixed, without);
  REQUIRE(w.isOk());
  REQUIRE(!w->top.empty());
  CHECK(w->top[0].config.dataShares.empty());
  CHECK(best.eval.iterationSeconds < w->top[0].eval.iterationSeconds);
  // Deterministic whatever the thread count.
  so.threads = 1;
  auto one = searchPlans(prof, *mixed, so);
  REQUIRE(one.isOk());
  CHECK(compareConfigs(one->top[0].config, best.config) == 0);
  CHECK(one->top[0].eval.iterationSeconds == best.eval.iterationSeconds);
}

TEST_CASE("data shares with context parallelism under the trident runtime",
          "[search]") {
  // The trident programs all-gather K and V: the data-share configurations
  // carry that kind to the runtime check, as the homogeneous ones do
  // (a ring, which the runtime refuses, left them all out).
  Result<Cluster> mixed = twoNodesEach();
  REQUIRE(mixed.isOk());
  LayerProfile prof = gpt("gpt-1.3b", 24, 2048, 16);
  SearchOptions so = mixedSearch();
  so.pins[Axis::Cp] = 2;
  EvalOptions trident;
  applyRuntime(trident, Runtime::Trident);
  auto r = searchPlans(prof, *mixed, so, trident);
  INFO((r.isOk() ? "" : r.message()));
  REQUIRE(r.isOk());
  REQUIRE(!r->top.empty());
  const Candidate &best = r->top[0];
  CHECK(best.config.dataShares.size() == 2);
  CHECK(best.config.cp == 2);
  CHECK(best.config.cpCommType == CpCommType::AllGather);
}

TEST_CASE("recomputation is dropped on the stages that fit without it",
          "[search]") {
  // GPT-3 175B on 64 A100-80GB with pp and mb pinned: stage 0 holds pp
  // micro-batches in flight under 1F1B and the last stage one. Without
  // recomputation the stages need about 57 GB (stage 0) down to 48 GB (the
  // last); with 60 % of the 85.9 GB (80 GiB) allowed, the first stages
  // must recompute and the last ones need not.
  LayerProfile prof = gpt("gpt3-175b", 96, 12288, 96);
  Cluster cl = cluster("dgx-a100-80gb:8");
  SearchOptions so;
  so.globalBatch = 512;
  so.topK = 1;
  so.threads = 2;
  so.maxMemoryFraction = 0.60;
  auto pins = parsePins("tp=8,pp=8,mb=1,sp=1,zero=1");
  REQUIRE(pins.isOk());
  so.pins = *pins;
  auto r = searchPlans(prof, cl, so);
  REQUIRE(r.isOk());
  REQUIRE(!r->top.empty());
  const ParallelConfig &c = r->top[0].config;
  REQUIRE(c.stageRecompute.size() == 8);
  CHECK(c.stageRecompute.front() == Recompute::Full);
  CHECK(c.stageRecompute.back() == Recompute::None);
  // Faster than recomputing on every stage, and within memory.
  ParallelConfig uniform = c;
  uniform.stageRecompute.clear();
  uniform.recompute = Recompute::Full;
  Result<Evaluation> u = evaluate(prof, cl, uniform);
  REQUIRE(u.isOk());
  CHECK(r->top[0].eval.iterationSeconds < u->iterationSeconds);
  for (const StageBreakdown &st : r->top[0].eval.stages)
    CHECK(st.totalBytes <= 0.60 * st.capacityBytes);
  // Pinning the policy keeps it on every stage.
  pins = parsePins("tp=8,pp=8,mb=1,sp=1,zero=1,recompute=full");
  REQUIRE(pins.isOk());
  so.pins = *pins;
  auto p = searchPlans(prof, cl, so);
  REQUIRE(p.isOk());
  REQUIRE(!p->top.empty());
  CHECK(p->top[0].config.stageRecompute.empty());
}

TEST_CASE("ZeRO-1 is searched where ZeRO-2 sums every micro-batch",
          "[search]") {
  // Under the trident programs' runtime ZeRO-2 reduce-scatters each
  // micro-batch's gradients, m times ZeRO-1's bytes: on a slow network
  // ZeRO-1 wins, and the search must not drop it as dominated.
  LayerProfile prof = gpt("gpt-7.5b", 36, 4096, 32, 256);
  Cluster cl = cluster("l40s-8x:4");
  EvalOptions eo;
  applyRuntime(eo, Runtime::Trident);
  // Priced with bf16 in 2 bytes (the programs' fp32 tensors double the
  // bytes and move the balance).
  eo.bf16InFp32Storage = false;
  SearchOptions so;
  so.globalBatch = 128;
  so.topK = 1;
  so.threads = 2;
  for (Axis a : {Axis::Tp, Axis::Pp, Axis::Cp, Axis::MicroBatch})
    so.pins[a] = 1;
  auto r = searchPlans(prof, cl, so, eo);
  REQUIRE(r.isOk());
  REQUIRE(r->top.size() == 1);
  // The Evaluator's best over every ZeRO stage and recomputation.
  auto ev = Evaluator::create(prof, cl, eo);
  REQUIRE(ev.isOk());
  double best = std::numeric_limits<double>::infinity();
  int bestZero = -1;
  Evaluation e;
  for (int zero = 0; zero <= 3; ++zero)
    for (Recompute rc :
         {Recompute::None, Recompute::Selective, Recompute::Full}) {
      ParallelConfig c;
      c.dp = 32, c.tp = 1, c.pp = 1, c.cp = 1, c.microBatch = 1;
      c.globalBatch = 128, c.recompute = rc, c.zeroStage = zero;
      REQUIRE(ev->evaluate(c, e).isOk());
      if (e.fits && e.iterationSeconds < best)
        best = e.iterationSeconds, bestZero = zero;
    }
  CHECK(bestZero == 1);
  CHECK(r->top[0].config.zeroStage == 1);
  CHECK(r->top[0].eval.iterationSeconds == best);
}

TEST_CASE("the search finds the best expert layout (ep, etp) of exhaustive "
          "enumeration",
          "[search][experts]") {
  // Mixtral-shaped (8 experts, 8 layers) on one DGX H100. Under
  // megatron-core the experts fold over tp x cp x dp (etp any divisor of
  // tp, ep any divisor of the stage over etp); under trident ep divides dp
  // and etp is 1 or tp. The search's winner must match the brute-force
  // best over every layout its runtime accepts.
  LayerProfile prof = test::profileOf(
      llamaStyleShape("moe-8x", 8, 2048, 16, 8, 4096, 32000, 1024, 8));
  Cluster cl = cluster("dgx-h100:1");
  Runtime runtime = GENERATE(Runtime::MegatronCore, Runtime::Trident);
  INFO("runtime " << runtimeName(runtime));
  EvalOptions eo;
  applyRuntime(eo, runtime);
  SearchOptions so;
  so.globalBatch = 32;
  so.topK = 3;
  so.threads = 2;
  auto r = searchPlans(prof, cl, so, eo);
  REQUIRE(r.isOk());
  REQUIRE(!r->top.empty());
  auto ev = Evaluator::create(prof, cl, eo);
  REQUIRE(ev.isOk());
  double brute = std::numeric_limits<double>::infinity();
  int64_t folded = 0;
  Evaluation e;
  for (int64_t tp : {1, 2, 4, 8})
    for (int64_t pp : {1, 2, 4})
      for (int64_t ep : {1, 2, 4, 8})
        for (int64_t etp : {1, 2, 4, 8})
          for (int64_t mb : {1, 2, 4})
            for (int zero = 0; zero < 4; ++zero)
              for (Recompute rc : {Recompute::None, Recompute::Full}) {
                ParallelConfig c;
                c.tp = tp, c.pp = pp, c.ep = ep, c.microBatch = mb;
                c.etp = etp == tp ? 0 : etp;
                c.dp = 8 / (tp * pp);
                if (c.dp < 1 || c.dp * tp * pp != 8 || etp > tp)
                  continue;
                c.sequenceParallel = tp > 1;
                c.recompute = rc, c.zeroStage = zero, c.globalBatch = 32;
                if (!ev->validate(c).isOk() ||
                    !runtimeAxisRefusal(c, runtime).empty())
                  continue;
                folded += c.dp % ep != 0;
                REQUIRE(ev->evaluate(c, e).isOk());
                if (e.fits)
                  brute = std::min(brute, e.iterationSeconds);
              }
  // Folded layouts exist only where the runtime folds.
  CHECK((folded > 0) == (runtime == Runtime::MegatronCore));
  CHECK(r->top[0].eval.iterationSeconds <= brute * (1 + 1e-12));
  for (const Candidate &c : r->top)
    CHECK(ev->validate(c.config).isOk());
}

TEST_CASE("--fix etp pins the expert tensor-parallel size", "[search][experts]") {
  LayerProfile prof = test::profileOf(
      llamaStyleShape("moe-8x", 8, 2048, 16, 8, 4096, 32000, 1024, 8));
  Cluster cl = cluster("dgx-h100:1");
  SearchOptions so;
  so.globalBatch = 32;
  so.topK = 5;
  so.threads = 1;
  so.pins = *parsePins("tp=4,etp=1,ep=8");
  auto r = searchPlans(prof, cl, so);
  REQUIRE(r.isOk());
  REQUIRE(!r->top.empty());
  for (const Candidate &c : r->top) {
    CHECK(c.config.expertTp() == 1);
    CHECK(c.config.ep == 8);
    // ep 8 folded over tp 4 and the rest of the stage: dp is 2 or less.
    CHECK(c.config.dp * c.config.cp * c.config.tp == 8);
    CHECK(c.config.dp % 8 != 0);
  }
  // etp=0 pins "as tp".
  so.pins = *parsePins("tp=2,etp=0");
  auto s = searchPlans(prof, cl, so);
  REQUIRE(s.isOk());
  for (const Candidate &c : s->top)
    CHECK(c.config.expertTp() == 2);
  // A model without experts has no etp to pin.
  so.pins = *parsePins("etp=1");
  auto t = searchPlans(gpt("gpt-1.3b", 24, 2048, 16), cl, so);
  REQUIRE_FALSE(t.isOk());
  CHECK_THAT(t.message(), Catch::Contains("etp=1 but model"));
}
