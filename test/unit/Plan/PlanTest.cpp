//===- PlanTest.cpp - Plan data model and trident.plan/v1 JSON ------------===//

#include "AnalyticProfile.h"
#include "trident/Plan/Plan.h"
#include "trident/Search/Search.h"

#include <catch2/catch.hpp>

using namespace trident;

namespace {

LayerProfile gpt7b() { return test::gptProfile("gpt-7b", 32, 4096, 32); }

/// The JSON of the top plans of one search (what `trident plan --json`
/// prints).
std::string searchJson(int64_t threads) {
  LayerProfile prof = gpt7b();
  Result<Cluster> cl = parseClusterSpec("dgx-a100-80gb:4");
  REQUIRE(cl.isOk());
  search::SearchOptions so;
  so.globalBatch = 256;
  so.topK = 5;
  so.threads = threads;
  auto r = search::searchPlans(prof, *cl, so);
  REQUIRE(r.isOk());
  std::vector<plan::Plan> plans;
  for (const search::Candidate &c : r->top) {
    plan::Plan p = plan::makePlan(prof, r->clusters[size_t(c.clusterIndex)],
                                  c.config, c.eval);
    p.partition = c.partition;
    plans.push_back(p);
  }
  return plan::plansToJson(plans);
}

} // namespace

TEST_CASE("plan JSON is byte-identical with 1, 2 and 8 threads", "[plan]") {
  std::string one = searchJson(1);
  CHECK(one.find("\"schema\": \"trident.plan/v1\"") != std::string::npos);
  CHECK(searchJson(2) == one);
  CHECK(searchJson(8) == one);
}

TEST_CASE("a written plan reads back identical", "[plan]") {
  LayerProfile prof = gpt7b();
  Result<Cluster> cl = parseClusterSpec("dgx-a100-80gb:4");
  REQUIRE(cl.isOk());
  ParallelConfig c;
  c.dp = 2, c.tp = 4, c.pp = 4, c.vpp = 2, c.microBatch = 2;
  c.globalBatch = 256;
  c.sequenceParallel = true;
  c.recompute = Recompute::Selective;
  c.zeroStage = 1;
  c.layersPerChunk = {3, 4, 4, 5, 4, 4, 4, 4};
  auto e = evaluate(prof, *cl, c);
  REQUIRE(e.isOk());
  plan::Plan p = plan::makePlan(prof, *cl, c, *e, 2.5);
  p.partition = "dp";
  CHECK(p.stages.size() == 4);
  CHECK(p.stages[1].chunkLayers == std::vector<int64_t>{4, 4});
  CHECK(p.stages[1].chunkBlockRanges[1] == std::pair<int64_t, int64_t>{20, 24});
  CHECK(p.numMicroBatches == 64);
  CHECK(p.schedule == ScheduleKind::Interleaved1F1B);
  CHECK(p.predicted.costPerMillionTokens > 0);
  // The 80 % interval and the envelope warnings travel with the plan.
  CHECK(p.predicted.iterationLowSeconds > 0);
  CHECK(p.predicted.iterationLowSeconds < p.predicted.iterationSeconds);
  CHECK(p.predicted.iterationHighSeconds > p.predicted.iterationLowSeconds);
  p.warnings = {"first warning", "second warning"};
  CHECK(p.gpusPerNode == 8); // dgx-a100-80gb
  p.modelSource.path = "models/gpt-7b.json";
  p.modelSource.sha256 = std::string(64, 'a');
  std::string text = plan::planToJson(p);
  CHECK(text.find("\"model_source\": {\n    \"path\": "
                  "\"models/gpt-7b.json\",") != std::string::npos);
  CHECK(text.find("\"gpus_per_node\": 8,") != std::string::npos);
  CHECK(text.find("\"iteration_time_range_s\": [") != std::string::npos);
  auto back = plan::parsePlanJson(text);
  REQUIRE(back.isOk());
  CHECK(*back == p);
  CHECK(plan::planToJson(*back) == text);
  // And it describes the same configuration.
  auto cfg = plan::toParallelConfig(*back);
  REQUIRE(cfg.isOk());
  auto e2 = evaluate(prof, *cl, *cfg);
  REQUIRE(e2.isOk());
  CHECK(e2->iterationSeconds == e->iterationSeconds);
}

TEST_CASE("ZeRO-3 plans record and read back their gather size", "[plan]") {
  LayerProfile prof = gpt7b();
  Result<Cluster> cl = parseClusterSpec("dgx-a100-80gb:1");
  REQUIRE(cl.isOk());
  ParallelConfig c;
  c.dp = 8, c.globalBatch = 64, c.zeroStage = 3;
  auto e = evaluate(prof, *cl, c);
  REQUIRE(e.isOk());
  plan::Plan p = plan::makePlan(prof, *cl, c, *e);
  // The largest layer's gathered parameters, two of them in the buffers.
  REQUIRE(p.stages[0].zero3GatherElements > 0);
  CHECK(e->stages[0].bufferBytes >=
        2 * p.stages[0].zero3GatherElements * 2 /* bf16 */);
  std::string text = plan::planToJson(p);
  CHECK(text.find("\"zero3_gather_elements\": ") != std::string::npos);
  auto back = plan::parsePlanJson(text, "p.json");
  REQUIRE(back.isOk());
  CHECK(back->stages[0].zero3GatherElements == p.stages[0].zero3GatherElements);
  CHECK(plan::planToJson(*back) == text);
  std::string neg = text;
  size_t at = neg.find("\"zero3_gather_elements\": ");
  neg.insert(at + std::string("\"zero3_gather_elements\": ").size(), "-");
  auto r = plan::parsePlanJson(neg, "p.json");
  REQUIRE_FALSE(r.isOk());
  CHECK_THAT(r.message(),
             Catch::Contains("p.json: 'stages[0].memory.zero3_gather_elements' "
                             "must be a positive number"));
  // Other ZeRO stages record none.
  c.zeroStage = 1;
  auto e1 = evaluate(prof, *cl, c);
  REQUIRE(e1.isOk());
  plan::Plan p1 = plan::makePlan(prof, *cl, c, *e1);
  CHECK(p1.stages[0].zero3GatherElements == 0);
  CHECK(plan::planToJson(p1).find("zero3_gather_elements") ==
        std::string::npos);
}

TEST_CASE("per-stage recompute and data shares read back identical",
          "[plan]") {
  LayerProfile prof = gpt7b();
  Result<Cluster> cl = parseClusterJson(R"({
    "groups": [{"preset": "dgx-h100", "nodes": 1},
               {"preset": "dgx-a100-80gb", "nodes": 1}]})");
  REQUIRE(cl.isOk());
  ParallelConfig c;
  c.dp = 4, c.tp = 2, c.pp = 2, c.microBatch = 1;
  c.globalBatch = 2 * 12 + 2 * 4;
  c.recompute = Recompute::Full;
  c.stageRecompute = {Recompute::Full, Recompute::None};
  c.dataShares = {{0, 2, 12}, {1, 2, 4}};
  auto e = evaluate(prof, *cl, c);
  REQUIRE(e.isOk());
  plan::Plan p = plan::makePlan(prof, *cl, c, *e);
  REQUIRE(p.dataShares.size() == 2);
  CHECK(p.dataShares[0].group == cl->groups[0].name);
  CHECK(p.dataShares[1].microBatches == 4);
  // pp stages per share, each on its own group's GPUs.
  REQUIRE(p.stages.size() == 4);
  CHECK(p.stages[2].index == 0);
  CHECK(p.stages[2].firstGpu == 8);
  CHECK(p.stages[3].firstGpu == 12);
  CHECK(p.stages[0].recompute == Recompute::Full);
  CHECK(p.stages[1].recompute == Recompute::None);
  CHECK(p.recompute == Recompute::Full);
  std::string text = plan::planToJson(p);
  auto back = plan::parsePlanJson(text);
  REQUIRE(back.isOk());
  CHECK(*back == p);
  CHECK(plan::planToJson(*back) == text);
  auto cfg = plan::toParallelConfig(*back);
  REQUIRE(cfg.isOk());
  CHECK(cfg->stageRecompute == c.stageRecompute);
  CHECK(cfg->dataShares == c.dataShares);
  auto e2 = evaluate(prof, *cl, *cfg);
  REQUIRE(e2.isOk());
  CHECK(e2->iterationSeconds == e->iterationSeconds);
  // Shares that do not add up to dp are refused, naming the field.
  std::string bad = text;
  size_t at = bad.find("\"dp\": 2,\n      \"micro_batches\": 12");
  REQUIRE(at != std::string::npos);
  bad.replace(at, 9, "\"dp\": 3,");
  auto r = plan::parsePlanJson(bad, "p.json");
  REQUIRE_FALSE(r.isOk());
  CHECK_THAT(r.message(), Catch::Contains("'data_shares' add up to 5"));
}

TEST_CASE("plan JSON errors name the field", "[plan]") {
  LayerProfile prof = gpt7b();
  Result<Cluster> cl = parseClusterSpec("dgx-a100-80gb:1");
  REQUIRE(cl.isOk());
  ParallelConfig c;
  c.dp = 2, c.tp = 4, c.globalBatch = 8;
  auto e = evaluate(prof, *cl, c);
  REQUIRE(e.isOk());
  std::string text = plan::planToJson(plan::makePlan(prof, *cl, c, *e));
  auto bad = [&](const std::string &from, const std::string &to) {
    std::string t = text;
    size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    t.replace(at, from.size(), to);
    auto r = plan::parsePlanJson(t, "p.json");
    REQUIRE_FALSE(r.isOk());
    return r.message();
  };
  CHECK_THAT(bad("\"tp\": 4", "\"tp\": \"4\""),
             Catch::Contains("p.json: 'parallel.tp' must be an integer"));
  CHECK_THAT(bad("\"tp\": 4", "\"tq\": 4"),
             Catch::Contains("missing field 'parallel.tp'"));
  CHECK_THAT(bad("trident.plan/v1", "trident.plan/v9"),
             Catch::Contains("'schema' is 'trident.plan/v9'"));
  CHECK_THAT(bad("\"dp\": 2", "\"dp\": 0"),
             Catch::Contains("'parallel.dp' must be in [1, 16777216], got 0"));
  CHECK_THAT(bad("\"dp\": 2", "\"dp\": 9223372036854775808"),
             Catch::Contains("'parallel.dp' is too large for a 64-bit integer"));
  CHECK_THAT(bad("\"etp\": 4", "\"etp\": -1"),
             Catch::Contains("p.json: 'parallel.etp' must be in [0, "));
  CHECK_THAT(bad("\"precision\": \"bf16\"", "\"precision\": \"int4\""),
             Catch::Contains("p.json: 'precision' is 'int4'; expected fp32, "
                             "bf16, fp16 or fp8"));
  CHECK_THAT(bad("\"layers_per_chunk\": [\n    32", "\"layers_per_chunk\": [\n    31"),
             Catch::Contains("p.json: 'stages[0].chunk_layers' does not "
                             "match 'layers_per_chunk' (expected [31] for "
                             "stage 0)"));
  CHECK_THAT(bad("\"mfu\": ", "\"mfu\": \"x\", \"y\": "),
             Catch::Contains("'predicted.mfu' must be a number"));
  CHECK_THAT(bad("\"iteration_time_range_s\": [",
                 "\"iteration_time_range_s\": [1e9, "),
             Catch::Contains("'predicted.iteration_time_range_s' must be "
                             "[low, high]"));
  CHECK_THAT(bad("\"warnings\": []", "\"warnings\": [1]"),
             Catch::Contains("'warnings' must hold strings only"));
  // The model's source: a zoo name, or a path with a SHA-256.
  CHECK_THAT(
      bad("\"seq_len\"", "\"model_source\": {\"zoo\": \"\"}, \"seq_len\""),
      Catch::Contains("p.json: 'model_source.zoo' must not be empty"));
  CHECK_THAT(bad("\"seq_len\"",
                 "\"model_source\": {\"path\": \"m.json\", \"sha256\": "
                 "\"ABC\"}, \"seq_len\""),
             Catch::Contains("p.json: 'model_source.sha256' must be 64 "
                             "lowercase hex digits, got 'ABC'"));
  CHECK_THAT(bad("\"seq_len\"", "\"model_source\": {\"path\": \"m.json\"}, "
                                "\"seq_len\""),
             Catch::Contains("p.json: 'model_source' must be {\"zoo\": NAME} "
                             "or {\"path\": FILE, \"sha256\": HEX}"));
  CHECK_THAT(bad("\"gpus_per_node\": 8", "\"gpus_per_node\": 16"),
             Catch::Contains("p.json: 'cluster.gpus_per_node' must be in [1, "
                             "8] (the plan's GPUs), got 16"));
  // Plans written before the interval and the warnings still read.
  {
    std::string t = text;
    size_t at = t.find(",\n    \"iteration_time_range_s\"");
    REQUIRE(at != std::string::npos);
    t.erase(at, t.find("]", at) + 1 - at);
    at = t.find(",\n  \"warnings\"");
    REQUIRE(at != std::string::npos);
    t.erase(at, t.find("]", at) + 1 - at);
    auto old = plan::parsePlanJson(t, "old.json");
    REQUIRE(old.isOk());
    CHECK(old->predicted.iterationHighSeconds == 0);
    CHECK(old->warnings.empty());
  }
  auto r = plan::parsePlanJson("{", "p.json");
  REQUIRE_FALSE(r.isOk());
  CHECK_THAT(r.message(), Catch::Contains("not valid JSON"));
}

TEST_CASE("plan::verify holds a plan to its own rules, the model and the "
          "cluster",
          "[plan][verify]") {
  LayerProfile prof = gpt7b();
  Cluster cl = *parseClusterSpec("dgx-a100-80gb:4");
  ParallelConfig c;
  c.dp = 4, c.tp = 4, c.pp = 2, c.microBatch = 2, c.globalBatch = 256;
  auto e = evaluate(prof, cl, c);
  REQUIRE(e.isOk());
  plan::Plan p = plan::makePlan(prof, cl, c, *e);
  CHECK(p.modelShape == plan::modelShapeOf(prof));
  CHECK(p.modelShape.layers == 32);
  plan::PlanTarget both{&prof, "--model gpt-7b", &cl, "--cluster a100x4"};
  CHECK(plan::verify(p, "p.json", both).isOk());
  auto err = [&](const plan::Plan &q, const plan::PlanTarget &t) {
    Status s = plan::verify(q, "p.json", t);
    REQUIRE_FALSE(s.isOk());
    return s.message();
  };
  // Another model: name, then layers, then the recorded shape.
  LayerProfile other = test::gptProfile("gpt-13b", 40, 5120, 40);
  CHECK(err(p, {&other, "--model gpt-13b"}) ==
        "p.json: the plan is for model 'gpt-7b' but --model gpt-13b is "
        "'gpt-13b'");
  other.modelName = "GPT_7B"; // names compare as symbols, in any case
  CHECK(err(p, {&other, "--model gpt-13b"}) ==
        "p.json: the plan splits 32 layers into stages but --model gpt-13b "
        "has 40: the plan was made for another model");
  LayerProfile wide = test::gptProfile("gpt-7b", 32, 5120, 40);
  CHECK(err(p, {&wide, "--model wide"}).find(
            "the plan's model has hidden size 4096 but --model wide has "
            "5120") != std::string::npos);
  // A plan written before model_shape: name and layers only.
  plan::Plan old = p;
  old.modelShape = {};
  CHECK(plan::verify(old, "old.json", {&wide, "--model wide"}).isOk());
  // Sequence length.
  LayerProfile longer = prof;
  longer.seqLen = prof.seqLen * 2;
  CHECK(err(p, {&longer, "--model gpt-7b"}).find(
            "the plan is for sequence length") != std::string::npos);
  // GPUs: another cluster size, or a plan whose axes do not multiply to
  // its GPU count.
  Cluster big = *parseClusterSpec("dgx-a100-80gb:8");
  CHECK(err(p, {nullptr, "", &big, "--cluster a100x8"}) ==
        "p.json: the plan uses 32 GPUs but --cluster a100x8 has 64");
  plan::Plan part = p;
  part.clusterNote = "4 of 8 nodes"; // a plan for part of the cluster
  CHECK(plan::verify(part, "p.json", {nullptr, "", &big, "c"}).isOk());
  plan::Plan skew = p;
  skew.dp = 2;
  CHECK(err(skew, {}) == "p.json: global_batch 256 is not dp * "
                         "micro_batch_size * num_micro_batches = 128");
  skew = p;
  skew.gpus = 16;
  CHECK(err(skew, {}) ==
        "p.json: cluster.gpus is 16 but dp * tp * pp * cp = 32");
  // The shape survives the JSON.
  auto back = plan::parsePlanJson(plan::planToJson(p));
  REQUIRE(back.isOk());
  CHECK(back->modelShape == p.modelShape);
}
