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

#include <catch2/catch.hpp>

#include <filesystem>

using namespace trident;
using namespace trident::validation;

TEST_CASE("published runs are predicted within the recorded bounds",
          "[validation]") {
  std::string path = std::string(TRIDENT_SHARED_DIR) + "/validation/cases.json";
  if (!std::filesystem::exists(path)) {
    WARN("skipped: " << path << " not found");
    return;
  }
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
  CHECK(report.overall.median <= 0.07);
  CHECK(report.overall.p90 <= 0.15);
  CHECK(report.bySource.at("dgxc").median <= 0.07);
  CHECK(report.bySource.at("dgxc").p90 <= 0.12);
  CHECK(report.bySource.at("nemo").median <= 0.08);
  CHECK(report.bySource.at("korthikanti22").median <= 0.07);
  CHECK(report.bySource.at("mpt").median <= 0.05);
  CHECK(report.bySource.at("mpt").p90 <= 0.15);
  CHECK(report.bySource.at("torchtitan").median <= 0.09);
  CHECK(report.bySource.at("megatron_readme2020").median <= 0.10);
  // Narayanan's Megatron-LM rows (not the DeepSpeed ZeRO-3 ones).
  CHECK(report.bySource.at("narayanan21").median <= 0.06);
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
