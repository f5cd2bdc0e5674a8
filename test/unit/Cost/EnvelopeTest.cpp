//===- EnvelopeTest.cpp - Prediction intervals and envelope warnings ------===//

#include "GptProfile.h"

#include "trident/Cost/Envelope.h"

#include <catch2/catch.hpp>

#include <string>

using namespace trident;

namespace {

ParallelConfig config(int64_t dp, int64_t tp, int64_t pp, int64_t mb,
                      int64_t gb, int zero = 1) {
  ParallelConfig c = test::cfgOf(dp, tp, pp, mb, gb);
  c.zeroStage = zero;
  return c;
}

bool anyContains(const std::vector<std::string> &v, const std::string &s) {
  for (const std::string &x : v)
    if (x.find(s) != std::string::npos)
      return true;
  return false;
}

} // namespace

TEST_CASE("a configuration's regime names its attributes", "[envelope]") {
  LayerProfile gpt = test::gpt3_175B();
  Cluster a100 = *parseClusterSpec("dgx-a100-80gb:8");
  CHECK_FALSE(hasExperts(gpt));
  RegimeKey k = regimeOf(gpt, a100, config(4, 8, 2, 1, 64));
  CHECK(k.name() == "ampere/16-bit/dense/pp/tp/no-zero3");
  CHECK(k.name(2) == "ampere/16-bit/*/*/*/*");
  CHECK(k.name(0) == "*/*/*/*/*/*");
  ParallelConfig fp8 = config(64, 1, 1, 1, 64, 3);
  fp8.precision = DType::FP8;
  Cluster h100 = *parseClusterSpec("dgx-h100:8");
  CHECK(regimeOf(gpt, h100, fp8).name() ==
        "hopper/fp8/dense/no-pp/no-tp/zero3");
  Cluster b200 = *parseClusterSpec("dgx-b200:1");
  CHECK(regimeOf(gpt, b200, config(8, 1, 1, 1, 8)).gpu == "B200");
  LayerProfile mixtral = test::profileOf(llamaStyleShape(
      "mixtral", 4, 1024, 8, 2, 3584, 32000, 2048, /*experts=*/8));
  CHECK(hasExperts(mixtral));
  CHECK(regimeOf(mixtral, h100, fp8).name() ==
        "hopper/fp8/moe/no-pp/no-tp/zero3");
}

TEST_CASE("the interval comes from the deepest regime with enough runs",
          "[envelope]") {
  LayerProfile gpt = test::gpt3_175B();
  Cluster a100 = *parseClusterSpec("dgx-a100-80gb:8");
  TimeRange r = timeRange(regimeOf(gpt, a100, config(4, 8, 2, 1, 64)), 10.0);
  CHECK(r.cases >= kMinRegimeCases);
  CHECK(r.lowSeconds < 10.0);
  CHECK(r.highSeconds > r.lowSeconds);
  CHECK(r.lowSeconds == Approx(10.0 * r.lowFactor));
  CHECK(r.highSeconds == Approx(10.0 * r.highFactor));
  CHECK(r.regime.starts_with("ampere/16-bit/dense/pp/"));
  // A GPU no run used falls back to every run.
  Cluster b200 = *parseClusterSpec("dgx-b200:1");
  TimeRange all = timeRange(regimeOf(gpt, b200, config(8, 1, 1, 1, 8)), 1.0);
  CHECK(all.regime == "*/*/*/*/*/*");
  CHECK(all.cases >= 100);
  CHECK(minHighFactor() <= all.highFactor);
  CHECK(minHighFactor() <= r.highFactor);
}

TEST_CASE("warnings say where a plan leaves the validated envelope",
          "[envelope]") {
  LayerProfile gpt = test::gpt3_175B();
  Cluster a100 = *parseClusterSpec("dgx-a100-80gb:8");
  ParallelConfig c = config(4, 8, 2, 1, 64);
  Evaluation e;
  e.mfu = 0.40;
  CHECK(envelopeWarnings(gpt, a100, c, e).empty());
  e.mfu = 0.95;
  auto w = envelopeWarnings(gpt, a100, c, e);
  REQUIRE(w.size() == 1);
  CHECK(w[0].find("MFU 95.0% is above the highest measured on "
                  "A100-SXM4-80GB in 16-bit") != std::string::npos);
  // An axis no validated run reached.
  e.mfu = 0.40;
  ParallelConfig wide = config(1, 1, 1, 1, 64);
  wide.cp = 64;
  CHECK(anyContains(envelopeWarnings(gpt, a100, wide, e),
                    "cp 64 is beyond every validated run"));
  // A GPU type none used.
  Cluster b200 = *parseClusterSpec("dgx-b200:1");
  CHECK(anyContains(envelopeWarnings(gpt, b200, config(8, 1, 1, 1, 8), e),
                    "no validated run used B200 GPUs"));
  // FP8 on an A100: no run trained so.
  ParallelConfig fp8 = c;
  fp8.precision = DType::FP8;
  CHECK(anyContains(envelopeWarnings(gpt, a100, fp8, e),
                    "no validated run trained in fp8 on A100-SXM4-80GB"));
}
