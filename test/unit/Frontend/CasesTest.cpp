//===- CasesTest.cpp - Every model of shared/validation/cases.json --------===//
//
// The evaluation cases describe their models as HF config objects with a few
// extra keys; the importer must take every one of them, silently.
//
//===----------------------------------------------------------------------===//

#include "../SharedData.h"
#include "FrontendTestUtil.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>

using namespace trident;
using namespace trident::frontend;
using json = nlohmann::json;

TEST_CASE("Every model of cases.json parses without warnings",
          "[frontend][cases]") {
  std::string path = sharedDataOrSkip("validation/cases.json");
  if (path.empty())
    return;
  std::ifstream in(path);
  json cases = json::parse(in);
  REQUIRE(cases.is_array());

  int parsed = 0;
  std::map<std::string, int> byArch;
  for (const json &row : cases) {
    if (!row.contains("model") || row["model"].is_null())
      continue;
    std::string source = "cases.json:" + row.value("id", std::string("?"));
    std::vector<std::string> warnings;
    Result<ModelConfig> r =
        parseHFConfig(row["model"].dump(), source, &warnings);
    INFO(source << ": " << (r ? std::string("ok") : r.message()));
    REQUIRE(r.isOk());
    CHECK(warnings.empty());
    CHECK(countParams(*r).total() > 0);
    ++byArch[r->architecture];
    ++parsed;

    // The extras change the shape as documented.
    const json &m = row["model"];
    if (m.contains("mlp_gated"))
      CHECK(r->gatedMlp == m["mlp_gated"].get<bool>());
    if (m.value("norm_type", std::string()) == "layernorm1p")
      CHECK(r->norm == NormKind::LayerNorm1p);
    if (m.contains("rotary_pct"))
      CHECK(r->rotaryPct == Approx(m["rotary_pct"].get<double>()));
  }
  // 233 models at the time of writing: 174 GPT-2, 50 Llama, 9 Mixtral.
  CHECK(parsed >= 233);
  CHECK(byArch["GPT2LMHeadModel"] >= 174);
  CHECK(byArch["LlamaForCausalLM"] >= 50);
  CHECK(byArch["MixtralForCausalLM"] >= 9);
}

TEST_CASE("A Narayanan et al. case matches its Table 1 size",
          "[frontend][cases]") {
  // narayanan21_t1_145.6B as written in cases.json.
  const char *text = R"({"architectures": ["GPT2LMHeadModel"],
    "model_type": "gpt2", "n_embd": 12288, "n_layer": 80, "n_head": 96,
    "n_positions": 2048, "n_inner": 49152, "vocab_size": 51200,
    "activation_function": "gelu", "tie_word_embeddings": true})";
  Result<ModelConfig> r = parseHFConfig(text, "cases.json:t1_145.6B", nullptr);
  REQUIRE(r.isOk());
  CHECK(r->name == "cases.json:t1_145.6B");
  CHECK(countParams(*r).total() == 145'622'261'760);
  // Equal to the zoo's gpt-145b.
  CHECK(countParams(*zooModel("gpt-145b")).total() == countParams(*r).total());
}
