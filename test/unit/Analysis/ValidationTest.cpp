//===- ValidationTest.cpp - the cost model against published runs ---------===//
//
// Runs every case of shared/validation/cases.json through the real
// pipeline, each under the runtime its source used, and holds the model to
// the issue's targets: median |error| <= 7 %, 90th percentile <= 15 %.
// Per-source bounds sit just above today's figures (docs/validation.md),
// so a regression in one source fails even when the totals still pass.
//
//===----------------------------------------------------------------------===//

#include "trident/Validation/Validation.h"
#include "trident/Hardware/Gpu.h"

#include "../SharedData.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <vector>

using namespace trident;
using namespace trident::validation;

TEST_CASE("published runs are predicted within the recorded bounds",
          "[validation]") {
  std::string path = sharedDataOrSkip("validation/cases.json");
  if (path.empty())
    return;
  auto cases = loadCases(path);
  REQUIRE(cases.isOk());
  Report report = runValidation(*cases);
  REQUIRE(report.evaluable > 0);
  // At least 90 % of the evaluable cases are evaluated.
  CHECK(double(report.evaluated) >= 0.9 * double(report.evaluable));
  for (const CaseResult &r : report.results)
    if (r.c->evaluable && r.outcome != CaseResult::Outcome::Evaluated)
      WARN(r.c->id << ": " << r.reason);
  INFO("overall median " << report.overall.median << " p90 "
                         << report.overall.p90);
  CHECK(report.overall.median <= 0.04);
  CHECK(report.overall.p90 <= 0.15);
  CHECK(report.bySource.at("dgxc").median <= 0.07);
  // The fused attention's rate by sequence length (flashLengthEfficiency)
  // and one attention constant for both generations moved dgxc's p90
  // 11.4 % -> 14.4 % and mpt's median 3.6 % -> 5.3 % in sample, while
  // their out-of-sample p90s fell (mpt 20.4 % -> 14.2 %).
  CHECK(report.bySource.at("dgxc").p90 <= 0.145);
  // NeMo 24.07's rows are all FP8: keeping the LM head and the router in
  // 16 bits (GemmCost::sixteenBit) moved their median from 7.5 % to 8.4 %
  // while their p90 fell from 14.3 % to 12.0 % (and dgxc's median from
  // 6.0 % to 4.5 %).
  // The least-median refit (lib/Validation/CrossValidate.cpp) moved
  // sustained.hopper 0.83 -> 0.86: nemo's p90 12.0 % -> 13.9 %,
  // torchtitan's median 9.2 % -> 10.2 % (A100, sustained.ampere 0.89 ->
  // 0.90), dgxc's median 4.5 % -> 3.5 %, mpt's 4.4 % -> 3.9 %.
  CHECK(report.bySource.at("nemo").median <= 0.09);
  CHECK(report.bySource.at("nemo").p90 <= 0.145);
  CHECK(report.bySource.at("korthikanti22").median <= 0.07);
  // Fitting on every visible run, the MoE runs with their MoE layer's
  // host time, moved sustained.hopper 0.94 -> 0.95: mpt's median 5.3 % ->
  // 5.5 % (its H100 runs).
  CHECK(report.bySource.at("mpt").median <= 0.056);
  CHECK(report.bySource.at("mpt").p90 <= 0.15);
  // DeepSpeed's ZeRO-3 gather rate (issue #1174) made the narayanan21
  // ZeRO-3 rows fit, and the A100 refit moved sustained.ampere 0.90 ->
  // 0.91: torchtitan's A100 runs, over-predicted, 10.2 % -> 11.3 %. The
  // slowdown of compute beside hidden collectives (Lee et al. 2025) moved
  // sustained.ampere 0.91 -> 0.95: torchtitan 11.3 % -> 13.1 % in sample
  // (14.3 % -> 13.1 % out of sample).
  CHECK(report.bySource.at("torchtitan").median <= 0.14);
  CHECK(report.bySource.at("megatron_readme2020").median <= 0.10);
  CHECK(report.bySource.at("narayanan21").median <= 0.06);
  // Narayanan et al.'s ZeRO-3 rows under the deepspeed runtime (issue 32:
  // each within 25 %; they were +32 % to +177 % before the gather rate).
  int zero3 = 0;
  for (const CaseResult &r : report.results) {
    if (r.c->id.find("ZeRO-3") == std::string::npos)
      continue;
    ++zero3;
    INFO(r.c->id << " error " << r.error);
    CHECK(r.outcome == CaseResult::Outcome::Evaluated);
    CHECK(r.runtime == Runtime::DeepSpeed);
    CHECK(std::abs(r.error) <= 0.25);
  }
  CHECK(zero3 == 6);
}

TEST_CASE("each source runs under the runtime it used", "[validation]") {
  CHECK(runtimeForSource("mpt") == Runtime::Fsdp);
  CHECK(runtimeForSource("torchtitan") == Runtime::Torchtitan);
  CHECK(runtimeForSource("narayanan21") == Runtime::MegatronLm);
  CHECK(runtimeForSource("dgxc") == Runtime::MegatronCore);
  CHECK(runtimeForSource("someone-else") == Runtime::MegatronCore);
  const char *one = R"([{"id": "c1", "source_group": "mpt", "evaluable": true,
      "model": {}, "cluster": "dgx-h100:1", "global_batch": 8, "seq_len": 2048,
      "dp": 8, "measured": {"tokens_per_s_per_gpu": 1}%s}])";
  auto withRuntime = [&](const std::string &extra) {
    std::string text = one;
    text.replace(text.find("%s"), 2, extra);
    return parseCases(text, "x.json");
  };
  auto inferred = withRuntime("");
  REQUIRE(inferred.isOk());
  CHECK((*inferred)[0].runtime == Runtime::Fsdp);
  auto given = withRuntime(R"(, "runtime": "megatron-lm")");
  REQUIRE(given.isOk());
  CHECK((*given)[0].runtime == Runtime::MegatronLm);
  auto bad = withRuntime(R"(, "runtime": "jax")");
  REQUIRE_FALSE(bad.isOk());
  CHECK(bad.message().find("case 'c1'") != std::string::npos);
  CHECK(bad.message().find("field 'runtime'") != std::string::npos);
  CHECK(bad.message().find("megatron-core") != std::string::npos);
}

TEST_CASE("a case's MoE model is the architecture its keys describe",
          "[validation]") {
  // shared/validation writes MoE rows as "mixtral" with keys of their own.
  nlohmann::json deepseek = {
      {"model_type", "mixtral"},    {"hidden_size", 7168},
      {"intermediate_size", 2048},  {"num_local_experts", 256},
      {"num_experts_per_tok", 8},   {"moe_shared_experts", 1},
      {"first_k_dense_replace", 3}, {"dense_intermediate_size", 18432},
      {"attention", "mla"},         {"kv_lora_rank", 512}};
  auto ds = caseModelConfig(deepseek, "x.json: case 'd'");
  REQUIRE(ds.isOk());
  auto d = nlohmann::json::parse(*ds);
  CHECK(d["model_type"] == "deepseek_v3");
  CHECK(d["n_routed_experts"] == 256);
  CHECK(d["n_shared_experts"] == 1);
  CHECK(d["moe_intermediate_size"] == 2048);
  CHECK(d["intermediate_size"] == 18432);
  CHECK(d["first_k_dense_replace"] == 3);
  CHECK_FALSE(d.contains("attention"));
  CHECK_FALSE(d.contains("num_local_experts"));

  nlohmann::json qwen = {{"model_type", "mixtral"},
                         {"intermediate_size", 768},
                         {"num_local_experts", 128},
                         {"qk_norm", true}};
  auto q = nlohmann::json::parse(*caseModelConfig(qwen, "x"));
  CHECK(q["model_type"] == "qwen3_moe");
  CHECK(q["num_experts"] == 128);
  CHECK(q["moe_intermediate_size"] == 768);
  CHECK_FALSE(q.contains("qk_norm"));

  // Plain Mixtral and other models come back unchanged.
  nlohmann::json mixtral = {{"model_type", "mixtral"},
                            {"num_local_experts", 8}};
  CHECK(*caseModelConfig(mixtral, "x") == mixtral.dump());

  // What the format cannot mean is refused, naming the case and the key.
  nlohmann::json shared = mixtral;
  shared["moe_shared_experts"] = 1;
  auto noMla = caseModelConfig(shared, "x.json: case 'm'");
  REQUIRE_FALSE(noMla.isOk());
  CHECK(noMla.message().find("case 'm'") != std::string::npos);
  CHECK(noMla.message().find("model.moe_shared_experts") != std::string::npos);
  nlohmann::json gqa = mixtral;
  gqa["attention"] = "gqa";
  auto badKind = caseModelConfig(gqa, "x");
  REQUIRE_FALSE(badKind.isOk());
  CHECK(badKind.message().find("model.attention") != std::string::npos);
  nlohmann::json noDense = deepseek;
  noDense.erase("dense_intermediate_size");
  CHECK_FALSE(caseModelConfig(noDense, "x").isOk());
  // Values of the wrong type are errors, not exceptions.
  nlohmann::json badDense = deepseek;
  badDense["first_k_dense_replace"] = "three";
  auto bd = caseModelConfig(badDense, "x");
  REQUIRE_FALSE(bd.isOk());
  CHECK(bd.message().find("model.first_k_dense_replace") != std::string::npos);
  nlohmann::json numericType = {{"model_type", 7}};
  CHECK(*caseModelConfig(numericType, "x") == numericType.dump());
}

TEST_CASE("a force-balanced case says so", "[validation]") {
  const char *text = R"([{"id": "m", "source_group": "mbridge",
      "evaluable": true, "model": {}, "cluster": "dgx-h100:2",
      "global_batch": 8, "seq_len": 2048, "dp": 16,
      "measured": {"tokens_per_s_per_gpu": 1}, "notes": [%s]}])";
  auto parse = [&](const std::string &notes) {
    std::string t = text;
    t.replace(t.find("%s"), 2, notes);
    auto cases = parseCases(t, "x.json");
    REQUIRE(cases.isOk());
    return (*cases)[0].forceBalanced;
  };
  CHECK(parse(R"("MoE rows are force-balanced, token-dropless")"));
  CHECK_FALSE(parse(R"("aux-loss balancing")"));
  CHECK_FALSE(parse(""));
}

TEST_CASE("error statistics", "[validation]") {
  ErrorStats s = errorStats({0.1, -0.2, 0.05, -0.05, 0.3});
  CHECK(s.count == 5);
  CHECK(s.median == Approx(0.1));
  CHECK(s.worst == Approx(0.3));
  CHECK(s.p90 == Approx(0.26)); // between 0.2 and 0.3 at rank 3.6
  CHECK(s.meanSigned == Approx(0.04));
}

TEST_CASE("bad cases files are refused with the case named",
          "[validation][errors]") {
  CHECK_FALSE(parseCases("{", "x.json").isOk());
  auto notArray = parseCases("{}", "x.json");
  REQUIRE_FALSE(notArray.isOk());
  CHECK(notArray.message().find("expected an array") != std::string::npos);
  auto badField = parseCases(
      R"([{"id": "c1", "evaluable": true, "model": {}, "cluster": "dgx-h100:1",
           "tp": "eight", "measured": {"tokens_per_s_per_gpu": 1}}])",
      "x.json");
  REQUIRE_FALSE(badField.isOk());
  CHECK(badField.message().find("case 'c1'") != std::string::npos);
  CHECK(badField.message().find("'tp'") != std::string::npos);
}

TEST_CASE("an FP8 case's recipe comes from its run's precision column",
          "[validation][fp8]") {
  CHECK(fp8RecipeForRunPrecision("FP8-CS") == Fp8Recipe::Tensorwise);
  CHECK(fp8RecipeForRunPrecision("FP8-MX") == Fp8Recipe::Mxfp8);
  CHECK(fp8RecipeForRunPrecision("FP8-SS") == Fp8Recipe::Blockwise);
  CHECK(fp8RecipeForRunPrecision("FP8-DS") == Fp8Recipe::Delayed);
  CHECK_FALSE(fp8RecipeForRunPrecision("FP8").has_value());
  CHECK_FALSE(fp8RecipeForRunPrecision("FP8 (Transformer Engine)").has_value());
  const char *one = R"({"id": "%s", "source_group": "x", "evaluable": true,
      "model": {}, "cluster": "dgx-h100:1", "dp": 8, "global_batch": 8,
      "precision": "%p", "measured": {"tokens_per_s_per_gpu": 1}%e})";
  auto caseText = [&](std::string id, std::string precision,
                      std::string extra) {
    std::string t = one;
    t.replace(t.find("%s"), 2, id);
    t.replace(t.find("%p"), 2, precision);
    t.replace(t.find("%e"), 2, extra);
    return t;
  };
  // The run names current scaling; a case's own field beats it; a bf16
  // case keeps the default whatever its run says.
  auto cases =
      parseCases("[" + caseText("cs", "fp8", "") + "," +
                     caseText("own", "fp8", R"(, "fp8_recipe": "blockwise")") +
                     "," + caseText("bf", "bf16", "") + "]",
                 "x.json");
  REQUIRE(cases.isOk());
  REQUIRE(applyFrameworks(*cases,
                          R"([{"id": "cs", "precision": "FP8-CS"},
                              {"id": "own", "precision": "FP8-CS"},
                              {"id": "bf", "precision": "FP8-CS"}])",
                          "runs.json")
              .isOk());
  CHECK((*cases)[0].config.fp8Recipe == Fp8Recipe::Tensorwise);
  CHECK((*cases)[1].config.fp8Recipe == Fp8Recipe::Blockwise);
  CHECK((*cases)[2].config.fp8Recipe == Fp8Recipe::Delayed);
}

TEST_CASE("a case's runtime comes from its run's framework", "[validation]") {
  // NeMo 1.x: Megatron-Core under Apex's distributed Adam; NeMo with
  // Megatron-Bridge: Megatron-Core's own optimizer.
  CHECK(runtimeForFramework("NeMo 24.07") == Runtime::Nemo);
  CHECK(runtimeForFramework("NeMo (NeMo-Framework-Launcher)") == Runtime::Nemo);
  CHECK(runtimeForFramework("NeMo 26.02 / Megatron-Bridge / Megatron-Core") ==
        Runtime::MegatronCore);
  CHECK(runtimeForFramework("Megatron-LM (2022)") == Runtime::MegatronLm);
  CHECK(runtimeForFramework("Composer / llm-foundry (FSDP)") == Runtime::Fsdp);
  CHECK(runtimeForFramework("torchtitan (2024)") == Runtime::Torchtitan);
  CHECK_FALSE(runtimeForFramework("JAX / MaxText").has_value());
  // Narayanan et al.'s rows: Megatron-LM, its ZeRO-3 rows under DeepSpeed.
  const char *narayanan = "Megatron-LM (+DeepSpeed ZeRO-3 for ZeRO rows)";
  CHECK(runtimeForFramework(narayanan, 1) == Runtime::MegatronLm);
  CHECK(runtimeForFramework(narayanan, 3) == Runtime::DeepSpeed);
  CHECK(runtimeForFramework("DeepSpeed 0.4") == Runtime::DeepSpeed);

  // The framework beats the source table; a case's own field beats both.
  auto cases = parseCases(
      R"([{"id": "a", "source_group": "mpt", "evaluable": true, "model": {},
           "cluster": "dgx-h100:1", "dp": 8, "global_batch": 8,
           "measured": {"tokens_per_s_per_gpu": 1}},
          {"id": "b", "source_group": "mpt", "evaluable": true, "model": {},
           "cluster": "dgx-h100:1", "dp": 8, "global_batch": 8,
           "runtime": "torchtitan",
           "measured": {"tokens_per_s_per_gpu": 1}},
          {"id": "c", "source_group": "mpt", "evaluable": true, "model": {},
           "cluster": "dgx-h100:1", "dp": 8, "global_batch": 8,
           "measured": {"tokens_per_s_per_gpu": 1}}])",
      "x.json");
  REQUIRE(cases.isOk());
  REQUIRE(applyFrameworks(*cases,
                          R"([{"id": "a", "framework": "NeMo 24.07"},
                              {"id": "b", "framework": "NeMo 24.07"}])",
                          "runs.json")
              .isOk());
  CHECK((*cases)[0].runtime == Runtime::Nemo);
  CHECK((*cases)[0].runtimeOrigin == Case::RuntimeOrigin::Framework);
  CHECK((*cases)[1].runtime == Runtime::Torchtitan);
  CHECK((*cases)[1].runtimeOrigin == Case::RuntimeOrigin::CaseField);
  CHECK((*cases)[2].runtime == Runtime::Fsdp); // no run: the source table
  CHECK((*cases)[2].runtimeOrigin == Case::RuntimeOrigin::SourceTable);
  Status bad = applyFrameworks(*cases, "{", "runs.json");
  REQUIRE_FALSE(bad);
  CHECK(bad.message().find("runs.json") != std::string::npos);

  std::string path = sharedDataOrSkip("validation/cases.json");
  if (path.empty())
    return;
  CHECK(runsFileFor(path).ends_with("published_runs.json"));
  auto all = loadCases(path);
  REQUIRE(all.isOk());
  int64_t fromFramework = 0;
  for (const Case &c : *all)
    fromFramework +=
        c.evaluable && c.runtimeOrigin == Case::RuntimeOrigin::Framework;
  CHECK(fromFramework >= 190); // all but the rows whose run names none
}

TEST_CASE("every published run, all of which ran, is predicted to fit",
          "[validation][memory]") {
  // Issue 32 item 4: a run that really ran may not be refused as not
  // fitting. Before the reported capacities, the nemo preset and
  // DeepSpeed's per-tensor gather, eight dense runs and two MoE runs were.
  for (const char *file :
       {"validation/cases.json", "validation/moe_cases.json"}) {
    std::string path = sharedDataOrSkip(file);
    if (path.empty())
      return;
    auto cases = loadCases(path);
    REQUIRE(cases.isOk());
    Report report = runValidation(*cases);
    REQUIRE(report.evaluated > 0);
    for (const CaseResult &r : report.results) {
      if (r.outcome != CaseResult::Outcome::Evaluated)
        continue;
      INFO(r.c->id << ": " << r.peakMemoryBytes / 1e9 << " of "
                   << r.capacityBytes / 1e9 << " GB");
      CHECK(r.fits);
      CHECK(r.peakMemoryBytes <= r.capacityBytes);
    }
  }
}

TEST_CASE("a refit constant rescales what it multiplies", "[validation]") {
  auto h100 = lookupGpu("h100");
  REQUIRE(h100.isOk());
  GpuSpec g = *h100;
  FitValues v = FitValues::published();
  applyFit(g, v);
  CHECK(g.gemmEfficiency16 == Approx(h100->gemmEfficiency16));
  for (size_t i = 0; i < kNumFitted; ++i)
    if (kFittedConstants[i].key == "sustained.hopper")
      v.values[i] *= 1.1;
    else if (kFittedConstants[i].key == "attention")
      v.values[i] *= 0.5;
  applyFit(g, v);
  CHECK(g.gemmEfficiency16 == Approx(1.1 * h100->gemmEfficiency16));
  CHECK(g.gemmEfficiency8 == Approx(1.1 * h100->gemmEfficiency8));
  CHECK(g.attentionEfficiency == Approx(0.5 * h100->attentionEfficiency));
  CHECK(g.attentionEfficiencyFa2 == Approx(0.5 * h100->attentionEfficiencyFa2));
  // Other generations are not touched.
  auto b200 = lookupGpu("B200");
  REQUIRE(b200.isOk());
  GpuSpec b = *b200;
  applyFit(b, v);
  CHECK(b.gemmEfficiency16 == b200->gemmEfficiency16);
  CHECK_FALSE(fitGroupOf(b).has_value());
}

TEST_CASE("the published constants are the fit, and leave-one-source-out "
          "holds its figures",
          "[validation][cross-validation]") {
  std::string path = sharedDataOrSkip("validation/cases.json");
  std::string moePath = sharedDataOrSkip("validation/moe_cases.json");
  if (path.empty() || moePath.empty())
    return;
  auto cases = loadCases(path);
  REQUIRE(cases.isOk());
  auto moe = loadCases(moePath);
  REQUIRE(moe.isOk());
  // Every visible case, the MoE runs with the settings they ran
  // (test/data/validation/mbridge-moe-as-ran.json), as the published fit.
  std::vector<Case> all = *cases;
  all.insert(all.end(), moe->begin(), moe->end());
#if TRIDENT_SANITIZED
  // The sanitizers make the refits several times slower: there, the same
  // code (the alternating fits, the MoE constant, the folds by release)
  // runs on the MoE runs and two small sources, and the figures below are
  // the normal build's to check.
  std::erase_if(all, [](const Case &c) {
    return c.sourceGroup != "mbridge" && c.sourceGroup != "nemo" &&
           c.sourceGroup != "korthikanti22";
  });
#endif
  std::string asRanPath = std::string(TRIDENT_SOURCE_DIR) +
                          "/test/data/validation/mbridge-moe-as-ran.json";
  REQUIRE(applyAsRanFile(all, asRanPath).isOk());
  // Fitted.h holds what --fit finds: a change to the cost model that moves
  // the optimum fails here until the table is refit.
  FitReport fit = fitConstants(all, {}, 2);
#if TRIDENT_SANITIZED
  CrossValidation small = crossValidate(all, 2);
  CHECK(small.folds.size() == 9); // nemo, korthikanti22, 7 releases
  CHECK(small.outOfSample.evaluated == small.outOfSample.evaluable);
  CHECK(fit.values == small.inSample.values);
  return;
#endif
  for (size_t i = 0; i < kNumFitted; ++i) {
    INFO(kFittedConstants[i].key);
    CHECK(fit.values.values[i] == Approx(kFittedConstants[i].value));
  }
  // The thread count changes nothing.
  auto noMpt = [](const Case &c) { return c.sourceGroup != "mpt"; };
  CHECK(fitConstants(all, noMpt, 1).values ==
        fitConstants(all, noMpt, 3).values);

  CrossValidation cv = crossValidate(all, 2);
  // Seven sources of cases.json, and Megatron-Bridge's releases one by one.
  CHECK(cv.folds.size() == 14);
  CHECK(cv.outOfSample.evaluated == cv.outOfSample.evaluable);
  INFO("out of sample: median " << cv.outOfSample.overall.median << " p90 "
                                << cv.outOfSample.overall.p90);
  // Today's figures (docs/validation.md: 6.0 %, 15.0 %; in sample
  // 3.9 %): the issue's targets, out of sample median <= 6 % and p90 <=
  // 15 %, in sample median <= 4 %, are met.
  CHECK(cv.outOfSample.overall.median <= 0.060);
  CHECK(cv.outOfSample.overall.p90 <= 0.150);
  CHECK(cv.inSampleReport.overall.median <= 0.040);
  // The MoE rows out of sample (each release predicted by a fit without
  // it): median <= 12 %.
  CHECK(cv.outOfSample.bySource.at("mbridge").median <= 0.12);
  // Out of sample is never better than in sample overall.
  CHECK(cv.outOfSample.overall.median >= cv.inSampleReport.overall.median);
  // A fold never sees its held-out source: refitting without mpt moves the
  // A100 constants (mpt holds most of the A100 attention evidence), and
  // without a release of Megatron-Bridge the MoE host time.
  for (const Fold &f : cv.folds) {
    if (f.heldOut == "mpt")
      CHECK_FALSE(f.fit.values == cv.inSample.values);
    if (f.heldOut == "mbridge 26.04")
      CHECK(f.fit.values.get(FitGroup::Moe, FitKind::MoeHost) !=
            cv.inSample.values.get(FitGroup::Moe, FitKind::MoeHost));
  }
}
