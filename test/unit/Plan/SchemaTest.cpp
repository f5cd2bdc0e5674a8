//===- SchemaTest.cpp - docs/plan-schema.json against real plans ----------===//
//
// The schema is held against plans the real search writes for GPT-,
// Llama- and Mixtral-shaped models (homogeneous and heterogeneous
// clusters), written plans read back and re-write byte-identically, and
// the validator rejects mutated plans naming the JSON path at fault.
//
//===----------------------------------------------------------------------===//

#include "AnalyticProfile.h"
#include "TestClusters.h"
#include "trident/Plan/Plan.h"
#include "trident/Plan/SchemaValidator.h"
#include "trident/Search/Search.h"
#include "trident/Support/FileIO.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

using namespace trident;

namespace {

const plan::JsonSchema &docsSchema() {
  static Result<plan::JsonSchema> schema = [] {
    Result<std::string> text =
        readFile(std::string(TRIDENT_SOURCE_DIR) + "/docs/plan-schema.json");
    REQUIRE(text.isOk());
    // The compiled-in copy is the same file.
    CHECK(*text == plan::planSchemaText());
    return plan::JsonSchema::parse(*text, "docs/plan-schema.json");
  }();
  REQUIRE(schema.isOk());
  return *schema;
}

std::vector<std::string> violations(const std::string &text) {
  auto r = docsSchema().validate(text, "plan.json");
  REQUIRE(r.isOk());
  return *r;
}

LayerProfile gpt13b() { return test::gptProfile("gpt-13b", 40, 5120, 40); }
Cluster mixedCluster() { return test::h100A100Cluster(); }

/// The top plans of a real search.
std::vector<plan::Plan> searchPlans(const LayerProfile &prof,
                                    const Cluster &cluster, int64_t batch) {
  search::SearchOptions so;
  so.globalBatch = batch;
  so.topK = 3;
  so.threads = 2;
  auto r = search::searchPlans(prof, cluster, so);
  REQUIRE(r.isOk());
  REQUIRE_FALSE(r->top.empty());
  std::vector<plan::Plan> plans;
  for (const search::Candidate &c : r->top) {
    plan::Plan p = plan::makePlan(prof, r->clusters[size_t(c.clusterIndex)],
                                  c.config, c.eval);
    p.clusterNote = r->clusterNotes[size_t(c.clusterIndex)];
    p.partition = c.partition;
    plans.push_back(std::move(p));
  }
  return plans;
}

struct ZooCase {
  std::string name;
  LayerProfile profile;
  Cluster cluster;
  int64_t batch;
};

std::vector<ZooCase> zooCases() {
  std::vector<ZooCase> cases;
  Result<Cluster> a100x4 = parseClusterSpec("dgx-a100-80gb:4");
  Result<Cluster> h100x2 = parseClusterSpec("dgx-h100:2");
  REQUIRE(a100x4.isOk());
  REQUIRE(h100x2.isOk());
  cases.push_back({"gpt-13b on 32 A100", gpt13b(), *a100x4, 256});
  cases.push_back(
      {"llama-8b on 16 H100",
       test::profileOf(llamaStyleShape("llama-3-8b", 32, 4096, 32, 8, 14336, 128256,
                                 8192)),
       *h100x2, 64});
  cases.push_back(
      {"mixtral-8x7b on 32 A100",
       test::profileOf(llamaStyleShape("mixtral-8x7b", 32, 4096, 32, 8, 14336,
                                 32000, 4096, 8)),
       *a100x4, 128});
  cases.push_back({"gpt-13b on H100 + A100", gpt13b(), mixedCluster(), 128});
  return cases;
}

} // namespace

TEST_CASE("the plan schema loads and uses only supported keywords",
          "[plan][schema]") {
  (void)docsSchema();
  auto bad = plan::JsonSchema::parse(R"({"type": "string", "pattern": "a+"})",
                                     "s.json");
  REQUIRE_FALSE(bad.isOk());
  CHECK_THAT(bad.message(),
             Catch::Contains("s.json: schema at '#': keyword 'pattern' is not "
                             "supported"));
  auto ref = plan::JsonSchema::parse(R"({"$ref": "#/$defs/nope"})", "s.json");
  REQUIRE_FALSE(ref.isOk());
  CHECK_THAT(ref.message(), Catch::Contains("'#/$defs/nope' does not resolve"));
  auto type = plan::JsonSchema::parse(
      R"({"properties": {"a": {"type": "int"}}})", "s.json");
  REQUIRE_FALSE(type.isOk());
  CHECK_THAT(type.message(), Catch::Contains("schema at '#/properties/a'"));
}

TEST_CASE("plans of the real search match the schema and round-trip",
          "[plan][schema]") {
  for (const ZooCase &zc : zooCases()) {
    INFO(zc.name);
    std::vector<plan::Plan> plans =
        searchPlans(zc.profile, zc.cluster, zc.batch);
    // The list `trident plan --json` prints.
    std::string list = plan::plansToJson(plans);
    CHECK(violations(list).empty());
    CHECK(plan::validatePlanAgainstSchema(list).isOk());
    for (const plan::Plan &p : plans) {
      std::string text = plan::planToJson(p);
      std::vector<std::string> v = violations(text);
      std::string all;
      for (const std::string &e : v)
        all += e + "\n";
      INFO(all);
      CHECK(v.empty());
      // write -> read -> write is byte-identical.
      auto back = plan::parsePlanJson(text, "plan.json");
      REQUIRE(back.isOk());
      CHECK(*back == p);
      CHECK(plan::planToJson(*back) == text);
    }
  }
}

TEST_CASE("a heterogeneous plan names both GPU types", "[plan][schema]") {
  std::vector<plan::Plan> plans = searchPlans(gpt13b(), mixedCluster(), 128);
  std::set<std::string> gpus;
  for (const plan::StagePlan &s : plans[0].stages)
    gpus.insert(s.gpu);
  // The search may leave one group out only if it loses; with pp > 1 over
  // 32 GPUs of two kinds the best plan uses both.
  if (plans[0].pp > 1)
    CHECK(gpus.size() == 2);
}

TEST_CASE("mutated plans are rejected naming the JSON path",
          "[plan][schema]") {
  Result<Cluster> cl = parseClusterSpec("dgx-a100-80gb:4");
  REQUIRE(cl.isOk());
  std::vector<plan::Plan> plans = searchPlans(gpt13b(), *cl, 256);
  const std::string text = plan::planToJson(plans[0]);
  REQUIRE(violations(text).empty());
  auto mutate = [&](const std::string &from, const std::string &to) {
    std::string t = text;
    size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    t.replace(at, from.size(), to);
    std::vector<std::string> v = violations(t);
    REQUIRE_FALSE(v.empty());
    return v.front();
  };
  // Missing field.
  CHECK(mutate("\"zero_stage\"", "\"zero_stagex\"") ==
        "$.zero_stage: required field is missing");
  // ... and the misspelt one is not allowed either.
  {
    std::string t = text;
    t.replace(t.find("\"zero_stage\""), 12, "\"zero_stagex\"");
    std::vector<std::string> v = violations(t);
    CHECK(std::find(v.begin(), v.end(),
                    "$.zero_stagex: unexpected field (the schema does not "
                    "allow it)") != v.end());
  }
  // Wrong type.
  CHECK(mutate("\"seq_len\": 2048", "\"seq_len\": \"2048\"") ==
        "$.seq_len: expected integer, got string \"2048\"");
  CHECK(mutate("\"has_embedding\": true", "\"has_embedding\": 1") ==
        "$.stages[0].has_embedding: expected boolean, got integer 1");
  // Bad enum.
  CHECK(mutate("\"schedule\": \"", "\"schedule\": \"zb-") ==
        "$.schedule: \"zb-" +
            std::string(scheduleKindName(plans[0].scheduleKind())) +
            "\" is not one of \"1f1b\", \"interleaved-1f1b\", \"gpipe\"");
  // Negative size, deep inside a stage.
  {
    std::string key = "\"weights_bytes\": ";
    std::string t = text;
    size_t at = t.find(key);
    REQUIRE(at != std::string::npos);
    t.insert(at + key.size(), "-");
    std::vector<std::string> v = violations(t);
    REQUIRE(v.size() == 1);
    CHECK_THAT(v[0], Catch::StartsWith("$.stages[0].memory.weights_bytes: -"));
    CHECK_THAT(v[0], Catch::EndsWith("is below the minimum 0"));
  }
  // A zero parallel size and a wrong schema version.
  CHECK(mutate("\"tp\": ", "\"tp\": 0, \"tq\": ") ==
        "$.parallel.tp: 0 is below the minimum 1");
  CHECK(mutate("trident.plan/v1", "trident.plan/v2") ==
        "$.schema: expected \"trident.plan/v1\", got \"trident.plan/v2\"");
  // Not an object at all.
  CHECK(violations("[1, 2]").front() == "$: expected object, got array [1,2]");
  // The built-in check carries the file name and every violation.
  Status s = plan::validatePlanAgainstSchema("{\"schema\": 1}", "x.json");
  REQUIRE_FALSE(s.isOk());
  CHECK_THAT(s.message(), Catch::StartsWith("x.json does not match the "
                                            "trident.plan/v1 schema:"));
  CHECK_THAT(s.message(), Catch::Contains("$.model: required field is missing"));
  auto notJson = docsSchema().validate("{", "y.json");
  REQUIRE_FALSE(notJson.isOk());
  CHECK(notJson.message() == "y.json: not valid JSON");
}

TEST_CASE("validator keywords behave as JSON Schema 2020-12 says",
          "[plan][schema]") {
  auto schema = plan::JsonSchema::parse(R"({
    "$defs": {"pos": {"type": "number", "exclusiveMinimum": 0}},
    "type": "object",
    "properties": {
      "n": {"type": "integer", "maximum": 3},
      "x": {"$ref": "#/$defs/pos"},
      "s": {"type": "string", "minLength": 2, "maxLength": 3},
      "a": {"type": "array", "maxItems": 2, "items": {"type": ["string", "null"]}},
      "o": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
      "u": {"anyOf": [{"const": 1}, {"const": "one"}]}
    },
    "additionalProperties": {"type": "boolean"}
  })", "t.json");
  REQUIRE(schema.isOk());
  auto errs = [&](const std::string &t) {
    auto r = schema->validate(t, "i.json");
    REQUIRE(r.isOk());
    return *r;
  };
  CHECK(errs(R"({"n": 3, "x": 0.5, "s": "ab", "a": ["q", null], "o": 1.5,
                 "u": "one", "flag": true})")
            .empty());
  // 2.0 is an integer in JSON Schema.
  CHECK(errs(R"({"n": 2.0})").empty());
  CHECK(errs(R"({"n": 4})") ==
        std::vector<std::string>{"$.n: 4 is above the maximum 3"});
  CHECK(errs(R"({"x": 0})") ==
        std::vector<std::string>{"$.x: 0 must be greater than 0"});
  CHECK(errs(R"({"s": "abcd"})") ==
        std::vector<std::string>{"$.s: string is longer than 3 characters"});
  CHECK(errs(R"({"a": ["q", 1, 2]})") ==
        std::vector<std::string>{
            "$.a: has 3 items, expected at most 2",
            "$.a[1]: expected string or null, got integer 1",
            "$.a[2]: expected string or null, got integer 2"});
  // An integer is also a number: two alternatives match.
  CHECK(errs(R"({"o": 1})") ==
        std::vector<std::string>{"$.o: matches 2 of the 2 alternatives of "
                                 "oneOf, expected exactly one"});
  CHECK(errs(R"({"u": 2})").front() ==
        "$.u: matches none of the 2 alternatives of anyOf; the first says:");
  CHECK(errs(R"({"flag": "yes", "odd key": 1})") ==
        std::vector<std::string>{
            "$.flag: expected boolean, got string \"yes\"",
            "$[\"odd key\"]: expected boolean, got integer 1"});
  // A $ref cycle is an error, not a hang.
  auto loop = plan::JsonSchema::parse(R"({"$defs": {"a": {"$ref": "#/$defs/a"}},
                                          "$ref": "#/$defs/a"})");
  REQUIRE(loop.isOk());
  auto r = loop->validate("1");
  REQUIRE(r.isOk());
  REQUIRE_FALSE(r->empty());
  CHECK_THAT(r->front(), Catch::Contains("a $ref cycle?"));
}
