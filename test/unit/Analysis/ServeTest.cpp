//===- ServeTest.cpp - the inference cost model and serve search ----------===//
//
// Profiles come from the real analysis (zoo models and config.json files),
// so the K/V cache facts are those of the tgraph the planner sees.

#include "trident/Serve/Serve.h"
#include "Context.h"

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Hardware/Cluster.h"
#include "trident/Serve/ServeValidation.h"

#include "dialects/Graph/IR/GraphOps.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

using namespace trident;
using namespace trident::serve;

namespace {

LayerProfile profileOf(const std::string &spec, int64_t seq) {
  return analysis::buildLayerProfile(test::load(spec, seq).model(), seq);
}

Cluster cluster(const std::string &spec) {
  auto c = loadCluster(spec);
  REQUIRE(c.isOk());
  return *c;
}

ServeOptions options(int64_t in, int64_t out) {
  ServeOptions o;
  o.inputLen = in;
  o.outputLen = out;
  return o;
}

} // namespace

TEST_CASE("the K/V cache per token is 2 x layers x kv-heads x head-dim x "
          "bytes, and MLA caches its latent",
          "[serve]") {
  LayerProfile llama = profileOf("llama-3-70b", 512);
  CHECK(kvBytesPerToken(llama, DType::BF16) == 2.0 * 80 * 8 * 128 * 2);
  CHECK(kvBytesPerToken(llama, DType::FP8) == 2.0 * 80 * 8 * 128 * 1);
  LayerProfile mixtral = profileOf("mixtral-8x7b", 512);
  CHECK(kvBytesPerToken(mixtral, DType::BF16) == 2.0 * 32 * 8 * 128 * 2);
  // DeepSeek-V3: kv_lora_rank 512 plus the 64-wide rotary key, per layer.
  LayerProfile ds = profileOf(std::string(TRIDENT_SOURCE_DIR) +
                                  "/test/data/models/deepseek-v3.json",
                              512);
  CHECK(kvBytesPerToken(ds, DType::BF16) == 61.0 * (512 + 64) * 2);
}

TEST_CASE("a decode step is no faster than reading the weights and the "
          "cache once at peak bandwidth",
          "[serve]") {
  LayerProfile p = profileOf("llama-3-70b", 2048);
  ServeOptions o = options(2048, 256);
  o.tpotTargetSeconds = 0.05;
  auto r = searchServePlans(p, cluster("dgx-h100:1"), o);
  REQUIRE(r.isOk());
  REQUIRE_FALSE(r->plans.empty());
  for (const ServePlan &plan : r->plans) {
    INFO(plan.pool.shape.tp << " " << plan.pool.shape.pp);
    CHECK(plan.tpotFloorSeconds > 0);
    CHECK(plan.tpotSeconds >= plan.tpotFloorSeconds);
    CHECK(plan.kvBytesPerToken == 2.0 * 80 * 8 * 128 * 2);
    CHECK(plan.pool.kvCapacityTokens > 0);
    CHECK(plan.pool.memoryPerGpuBytes <=
          cluster("dgx-h100:1").groups[0].gpu.hbmBytes);
  }
  const ServePlan &best = r->plans.front();
  CHECK(best.meetsTargets);
  CHECK(best.tpotP90Seconds <= 0.05);
  // Sorted by output tokens/s per GPU among the plans that meet targets.
  for (size_t i = 1; i < r->plans.size(); ++i)
    if (r->plans[i].meetsTargets)
      CHECK(r->plans[i - 1].outputTokensPerSecondPerGpu >=
            r->plans[i].outputTokensPerSecondPerGpu);
}

TEST_CASE("more load, longer steps; a rate too high is refused", "[serve]") {
  LayerProfile p = profileOf("llama-3-8b", 1024);
  Cluster c = cluster("dgx-h100:1");
  ServeOptions o = options(1024, 256);
  ReplicaShape one{1, 1, 1, 1};
  auto light = evaluateServe(p, c, one, o, {LoadKind::RequestRate, 1});
  auto heavy = evaluateServe(p, c, one, o, {LoadKind::RequestRate, 8});
  REQUIRE(light.isOk());
  REQUIRE(heavy.isOk());
  CHECK(heavy->tpotSeconds > light->tpotSeconds);
  CHECK(heavy->pool.meanBatch > light->pool.meanBatch);
  CHECK(heavy->tpotP90Seconds >= heavy->tpotSeconds);
  CHECK(heavy->ttftP90Seconds >= heavy->ttftSeconds);
  auto max = evaluateServe(p, c, one, o, {LoadKind::MaxThroughput, 0});
  REQUIRE(max.isOk());
  CHECK(max->requestsPerSecond > heavy->requestsPerSecond);
  auto over = evaluateServe(
      p, c, one, o, {LoadKind::RequestRate, 2 * max->requestsPerSecond});
  REQUIRE_FALSE(over.isOk());
  CHECK(over.message().find("overload") != std::string::npos);
  // A batch of one: TTFT is the prompt's forward pass, TPOT a step.
  auto single = evaluateServe(p, c, one, o, {LoadKind::StaticBatch, 1});
  REQUIRE(single.isOk());
  CHECK(single->tpotSeconds < light->tpotSeconds * 1.01);
  CHECK(single->ttftSeconds > 0);
}

TEST_CASE("fp8 weights and cache raise throughput and capacity", "[serve]") {
  LayerProfile p = profileOf("llama-3-70b", 2048);
  Cluster c = cluster("dgx-h100:1");
  ServeOptions bf = options(2048, 512), f8 = bf;
  f8.precision = DType::FP8;
  f8.kvPrecision = DType::FP8;
  ReplicaShape tp4{4, 1, 1, 2};
  auto a = evaluateServe(p, c, tp4, bf, {LoadKind::MaxThroughput, 0});
  auto b = evaluateServe(p, c, tp4, f8, {LoadKind::MaxThroughput, 0});
  REQUIRE(a.isOk());
  REQUIRE(b.isOk());
  CHECK(b->pool.kvCapacityTokens > 2 * a->pool.kvCapacityTokens);
  CHECK(b->outputTokensPerSecondPerGpu > a->outputTokensPerSecondPerGpu);
  CHECK(b->pool.weightBytesPerGpu < 0.6 * a->pool.weightBytesPerGpu);
}

TEST_CASE("MoE layouts spread experts; disaggregation splits the GPUs",
          "[serve]") {
  LayerProfile p = profileOf("mixtral-8x7b", 1024);
  ServeOptions o = options(1024, 256);
  auto r = searchServePlans(p, cluster("dgx-h100:1"), o);
  REQUIRE(r.isOk());
  bool sawEp = false;
  for (const ServePlan &plan : r->plans)
    sawEp = sawEp || plan.pool.shape.ep > 1;
  o.top = 50;
  auto all = searchServePlans(p, cluster("dgx-h100:1"), o);
  REQUIRE(all.isOk());
  for (const ServePlan &plan : all->plans)
    sawEp = sawEp || plan.pool.shape.ep > 1;
  CHECK(sawEp);
  o.disaggregate = true;
  o.ttftTargetSeconds = 0.5;
  o.tpotTargetSeconds = 0.05;
  auto d = searchServePlans(p, cluster("dgx-h100:2"), o);
  REQUIRE(d.isOk());
  REQUIRE_FALSE(d->plans.empty());
  const ServePlan &best = d->plans.front();
  CHECK(best.disaggregated);
  CHECK(best.prefill.shape.replicas >= 1);
  CHECK(best.gpus == best.prefill.shape.gpus() + best.pool.shape.gpus());
  CHECK(best.gpus <= 16);
  auto launch = launchCommand(best, o, "mistralai/Mixtral-8x7B-v0.1", true);
  CHECK(std::find(launch.begin(), launch.end(), "--kv-transfer-config") !=
        launch.end());
}

TEST_CASE("targets no plan meets name the closest one", "[serve]") {
  LayerProfile p = profileOf("llama-3-70b", 2048);
  ServeOptions o = options(2048, 256);
  o.tpotTargetSeconds = 0.001; // below any HBM floor
  auto r = searchServePlans(p, cluster("dgx-h100:1"), o);
  REQUIRE(r.isOk());
  REQUIRE_FALSE(r->plans.empty());
  CHECK_FALSE(r->plans.front().meetsTargets);
  CHECK(r->closest.find("TPOT p90") != std::string::npos);
  CHECK(r->closest.find("against 1.0 ms") != std::string::npos);
}

TEST_CASE("bad serving options are refused with the option named", "[serve]") {
  LayerProfile p = profileOf("llama-3-8b", 128);
  Cluster c = cluster("dgx-h100:1");
  ServeOptions o = options(128, 0);
  auto r = searchServePlans(p, c, o);
  REQUIRE_FALSE(r.isOk());
  CHECK(r.message().find("--output-len") != std::string::npos);
  o = options(128, 16);
  o.precision = DType::F32;
  CHECK(searchServePlans(p, c, o).message().find("--precision") !=
        std::string::npos);
  o = options(128, 16);
  o.memoryFraction = 1.5;
  CHECK_FALSE(searchServePlans(p, c, o).isOk());
  CHECK_FALSE(parseEngine("tgi").isOk());
  CHECK(parseEngine("tgi").message().find("vllm, sglang or trtllm") !=
        std::string::npos);
  // The weights of 405B in bf16 do not fit one GPU: no layout of one.
  LayerProfile big = profileOf("llama-3.1-405b", 128);
  auto none = evaluateServe(big, c, {1, 1, 1, 1}, options(128, 16),
                            {LoadKind::MaxThroughput, 0});
  REQUIRE_FALSE(none.isOk());
  CHECK(none.message().find("no room") != std::string::npos);
}

TEST_CASE("serving cases: a bad field is named with its case", "[serve]") {
  std::string path = "serve-cases-bad.json";
  {
    std::ofstream f(path);
    f << R"({"schema": "trident.serving-cases/v1", "cases": [
      {"id": "x", "gpus": 8, "tp": 3.5, "input_len": 1, "output_len": 1,
       "load": {"kind": "batch", "value": 1}}]})";
  }
  auto r = loadServeCases(path);
  REQUIRE_FALSE(r.isOk());
  CHECK(r.message().find("cases[0] (x)") != std::string::npos);
  CHECK(r.message().find("'tp'") != std::string::npos);
  {
    std::ofstream f(path);
    f << R"({"schema": "trident.serving-cases/v1", "cases": [
      {"id": "y", "gpus": 8, "input_len": 1, "output_len": 1,
       "load": {"kind": "poisson"}}]})";
  }
  r = loadServeCases(path);
  REQUIRE_FALSE(r.isOk());
  CHECK(r.message().find("'load.kind'") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("data-parallel attention: each rank caches its own sequences, the "
          "experts answer by all-to-all, and the launch commands say so",
          "[serve]") {
  LayerProfile ds = profileOf(std::string(TRIDENT_SOURCE_DIR) +
                                  "/test/data/models/deepseek-v3.json",
                              1024);
  Cluster c = cluster("hgx-h200:1");
  ServeOptions o = options(1024, 2048);
  o.precision = o.kvPrecision = DType::FP8;
  // MLA's latent cache is whole on every GPU of a tp group: tp 8 holds
  // one GPU's worth of sequences, dp 8 eight ranks' worth.
  ReplicaShape tp8{8, 1, 8, 1};
  ReplicaShape dp8{1, 1, 8, 1, 8};
  CHECK(dp8.gpus() == 8);
  auto a = evaluateServe(ds, c, tp8, o, {LoadKind::Concurrency, 256});
  auto b = evaluateServe(ds, c, dp8, o, {LoadKind::Concurrency, 256});
  REQUIRE(a.isOk());
  REQUIRE(b.isOk());
  CHECK(b->pool.kvCapacityTokens > 4 * a->pool.kvCapacityTokens);
  CHECK(b->pool.shape.dp == 8);
  CHECK(b->tpotSeconds >= b->tpotFloorSeconds);
  // Across two nodes (dp 16) twice the ranks hold twice the cache and
  // more (the experts take half the memory per GPU).
  Cluster two = cluster("hgx-h200:2");
  ReplicaShape dp16{1, 1, 16, 1, 16};
  auto d = evaluateServe(ds, two, dp16, o, {LoadKind::Concurrency, 512});
  REQUIRE(d.isOk());
  CHECK(d->pool.kvCapacityTokens > 2 * b->pool.kvCapacityTokens);
  CHECK(d->gpus == 16);
  // Bad layouts are refused.
  ReplicaShape bad{1, 1, 4, 1, 8};
  auto e = evaluateServe(ds, c, bad, o, {LoadKind::MaxThroughput, 0});
  REQUIRE_FALSE(e.isOk());
  CHECK(e.message().find("ep must equal dp x tp") != std::string::npos);

  // One pool alone: a decode pool at 64 sequences per GPU and a prefill
  // pool of 8192 prompt tokens per GPU per pass.
  auto dec = evaluateServe(ds, c, dp8, o, {LoadKind::DecodeOnly, 64});
  REQUIRE(dec.isOk());
  CHECK(dec->pool.meanBatch == 64 * 8);
  CHECK(dec->outputTokensPerSecond ==
        Approx(64.0 * 8 / dec->tpotSeconds).epsilon(1e-12));
  auto pre = evaluateServe(ds, c, dp8, o, {LoadKind::PrefillOnly, 8192});
  REQUIRE(pre.isOk());
  CHECK(pre->inputTokensPerSecondPerGpu ==
        Approx(8192.0 / pre->ttftSeconds).epsilon(1e-12));
  CHECK(pre->outputTokensPerSecondPerGpu == 0);

  // The search finds it for an MoE model, and each engine's command.
  auto r = searchServePlans(ds, c, o);
  REQUIRE(r.isOk());
  REQUIRE_FALSE(r->plans.empty());
  const ServePlan &best = r->plans.front();
  REQUIRE(best.pool.shape.dp == 8);
  auto argv = [&](Engine eng) {
    ServeOptions oe = o;
    oe.engine = eng;
    std::string s;
    for (const std::string &a : launchCommand(best, oe, "m"))
      s += a + " ";
    return s;
  };
  std::string v = argv(Engine::Vllm), g = argv(Engine::Sglang),
              t = argv(Engine::Trtllm);
  CHECK(v.find("--tensor-parallel-size 1 ") != std::string::npos);
  CHECK(v.find("--data-parallel-size 8 --enable-expert-parallel") !=
        std::string::npos);
  CHECK(v.find("--max-num-seqs " + std::to_string(best.pool.maxBatch / 8) +
               " ") != std::string::npos);
  CHECK(g.find("--tp-size 8 --dp-size 8 --enable-dp-attention --ep-size 8") !=
        std::string::npos);
  CHECK(g.find("--max-running-requests " + std::to_string(best.pool.maxBatch) +
               " ") != std::string::npos);
  CHECK(t.find("--tp_size 8 --pp_size 1 --ep_size 8") != std::string::npos);
  CHECK(t.find("--extra_llm_api_options") != std::string::npos);
  ServeOptions ot = o;
  ot.engine = Engine::Trtllm;
  std::string notes;
  for (const std::string &n : launchNotes(best, ot))
    notes += n;
  CHECK(notes.find("enable_attention_dp: true") != std::string::npos);
}
