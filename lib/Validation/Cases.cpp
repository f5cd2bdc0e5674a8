//===- Cases.cpp - cases.json parsing, error statistics, rendering --------===//

#include "trident/Validation/Validation.h"
#include "trident/Plan/ParallelJson.h"
#include "trident/Support/FileIO.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

namespace trident::validation {

using json = nlohmann::json;

namespace {

/// Reads an integer field; null and absence give `fallback`.
Result<int64_t> intField(const json &j, const char *key, int64_t fallback,
                         const std::string &where) {
  if (!j.contains(key) || j[key].is_null())
    return fallback;
  const json &v = j[key];
  if (!v.is_number_integer())
    return Status::error(where + ": field '" + key +
                         "': expected an integer, got " + v.dump());
  return v.get<int64_t>();
}

/// The settings a case states of how it ran (Case::moeDispatcher,
/// overlapEpComm, release), from a case object or an as-ran entry.
Status readRunSettings(const json &j, Case &c, const std::string &where) {
  if (j.contains("moe_dispatcher") && !j["moe_dispatcher"].is_null()) {
    std::optional<MoeDispatcher> d;
    if (j["moe_dispatcher"].is_string())
      d = parseMoeDispatcher(j["moe_dispatcher"].get<std::string>());
    if (!d)
      return Status::error(
          where + ": field 'moe_dispatcher': expected one of " +
          moeDispatcherNames() + ", got " + j["moe_dispatcher"].dump());
    c.moeDispatcher = *d;
  }
  if (j.contains("moe_overlap_ep_comm") &&
      !j["moe_overlap_ep_comm"].is_null()) {
    if (!j["moe_overlap_ep_comm"].is_boolean())
      return Status::error(where +
                           ": field 'moe_overlap_ep_comm': expected true or "
                           "false, got " +
                           j["moe_overlap_ep_comm"].dump());
    c.overlapEpComm = j["moe_overlap_ep_comm"].get<bool>();
  }
  if (j.contains("release") && !j["release"].is_null()) {
    if (!j["release"].is_string() || j["release"].get<std::string>().empty())
      return Status::error(where +
                           ": field 'release': expected a non-empty "
                           "string, got " +
                           j["release"].dump());
    c.release = j["release"].get<std::string>();
  }
  return Status::ok();
}

} // namespace

Result<std::string> caseModelConfig(const json &model,
                                    const std::string &where) {
  // shared/validation writes every MoE row as "mixtral" and states what
  // Mixtral's config has no key for in keys of its own: `qk_norm` (Qwen3's
  // per-head RMSNorm on q and k), `attention: "mla"` with the latent ranks,
  // `moe_shared_experts`, `first_k_dense_replace` and
  // `dense_intermediate_size` (DeepSeek-V3). Read as Mixtral, those keys
  // are ignored and the model is another one: the architecture whose
  // config has them is the one meant.
  if (!model.is_object() || !model.contains("model_type") ||
      model["model_type"] != "mixtral")
    return model.dump();
  auto has = [&](const char *key) {
    return model.contains(key) && !model[key].is_null();
  };
  auto fail = [&](const std::string &key, const std::string &what) {
    return Status::error(where + ": field 'model." + key + "': " + what);
  };
  bool mla = has("attention");
  if (mla && model["attention"] != "mla")
    return fail("attention", "expected \"mla\" (the only attention this "
                             "case format names), got " +
                                 model["attention"].dump());
  bool qkNorm = has("qk_norm") && model["qk_norm"] == true;
  bool deepseekKeys = has("moe_shared_experts") ||
                      has("first_k_dense_replace") ||
                      has("dense_intermediate_size");
  if (!mla && !qkNorm && !deepseekKeys)
    return model.dump();
  if (deepseekKeys && !mla)
    return fail("moe_shared_experts",
                "shared experts and dense layers are read with MLA "
                "attention (DeepSeek-V3); set \"attention\": \"mla\"");
  json out = model;
  auto move = [&](const char *from, const char *to) {
    if (out.contains(from)) {
      out[to] = out[from];
      out.erase(from);
    }
  };
  if (mla) {
    // DeepseekV3Config's keys (transformers).
    out["architectures"] = json::array({"DeepseekV3ForCausalLM"});
    out["model_type"] = "deepseek_v3";
    out.erase("attention");
    move("num_local_experts", "n_routed_experts");
    move("intermediate_size", "moe_intermediate_size");
    move("dense_intermediate_size", "intermediate_size");
    move("moe_shared_experts", "n_shared_experts");
    const json &dense = out.contains("first_k_dense_replace")
                            ? out["first_k_dense_replace"]
                            : json(0);
    if (!dense.is_number_integer())
      return fail("first_k_dense_replace",
                  "expected an integer, got " + dense.dump());
    if (dense.get<int64_t>() > 0 && !out.contains("intermediate_size"))
      return fail("dense_intermediate_size",
                  "expected the dense layers' FFN size when "
                  "first_k_dense_replace > 0");
  } else {
    // Qwen3MoeConfig's keys.
    out["architectures"] = json::array({"Qwen3MoeForCausalLM"});
    out["model_type"] = "qwen3_moe";
    out.erase("qk_norm");
    move("num_local_experts", "num_experts");
    // The rows' intermediate_size is the experts'; Qwen3MoeConfig's
    // intermediate_size (dense layers, mlp_only_layers) is unused here.
    out["moe_intermediate_size"] = out.value("intermediate_size", json());
  }
  return out.dump();
}

Runtime runtimeForSource(std::string_view sourceGroup) {
  // What each source of shared/validation ran (its README's convention
  // table and the rows' `framework` fields).
  struct Entry {
    std::string_view source;
    Runtime runtime;
  };
  static constexpr Entry kTable[] = {
      // Megatron-LM @6985e58 (NGC PyTorch 20.12); its ZeRO-3 rows run the
      // same model code under DeepSpeed.
      {"narayanan21", Runtime::MegatronLm},
      {"korthikanti22", Runtime::MegatronLm}, // Megatron-LM (2022)
      {"megatron_readme2020", Runtime::MegatronLm},
      {"mpt", Runtime::Fsdp},        // Composer / llm-foundry, FSDP, amp_bf16
      {"torchtitan", Runtime::Torchtitan},
      {"nemo", Runtime::MegatronCore}, // NeMo 24.03 / 24.07
      {"dgxc", Runtime::MegatronCore}, // NeMo DGX Cloud recipes
  };
  for (const Entry &e : kTable)
    if (e.source == sourceGroup)
      return e.runtime;
  return Runtime::MegatronCore;
}

std::optional<Runtime> runtimeForFramework(std::string_view framework,
                                           int64_t zeroStage) {
  // Most specific first: Megatron-Bridge runs Megatron-Core, NeMo 1.x
  // Megatron-Core under Apex's distributed Adam (the nemo preset), and
  // their texts may also say "Megatron".
  auto has = [&](std::string_view word) {
    return framework.find(word) != std::string_view::npos;
  };
  if (has("torchtitan"))
    return Runtime::Torchtitan;
  if (has("DeepSpeed") && (zeroStage >= 3 || !has("Megatron")))
    return Runtime::DeepSpeed;
  if (has("Megatron-Bridge") || has("Megatron-Core"))
    return Runtime::MegatronCore;
  if (has("NeMo"))
    return Runtime::Nemo;
  if (has("Megatron-LM"))
    return Runtime::MegatronLm;
  if (has("llm-foundry") || has("Composer") || has("FSDP"))
    return Runtime::Fsdp;
  return std::nullopt;
}

Result<std::vector<Case>> parseCases(std::string_view text,
                                     const std::string &source) {
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    return Status::error(source + ": malformed JSON");
  if (!root.is_array())
    return Status::error(source + ": expected an array of cases");
  std::vector<Case> cases;
  for (size_t i = 0; i < root.size(); ++i) {
    const json &j = root[i];
    std::string where = source + ": case " + std::to_string(i);
    if (!j.is_object() || !j.contains("id") || !j["id"].is_string())
      return Status::error(where + ": expected an object with a string 'id'");
    Case c;
    c.id = j["id"].get<std::string>();
    where = source + ": case '" + c.id + "'";
    c.sourceGroup = j.value("source_group", std::string("unknown"));
    c.evaluable = j.value("evaluable", false);
    if (j.contains("skip_reason") && j["skip_reason"].is_string())
      c.skipReason = j["skip_reason"].get<std::string>();
    if (!c.evaluable) {
      cases.push_back(std::move(c));
      continue;
    }
    if (!j.contains("model") || !j["model"].is_object())
      return Status::error(where + ": field 'model': expected an object");
    auto modelJson = caseModelConfig(j["model"], where);
    if (!modelJson)
      return modelJson.status();
    c.modelJson = std::move(*modelJson);
    if (!j.contains("cluster") || !j["cluster"].is_string())
      return Status::error(where + ": field 'cluster': expected a string");
    c.cluster = j["cluster"].get<std::string>();
    auto get = [&](const char *key, int64_t fallback, int64_t &out) -> Status {
      auto v = intField(j, key, fallback, where);
      if (!v)
        return v.status();
      out = *v;
      return Status::ok();
    };
    ParallelConfig &p = c.config;
    for (auto [key, fallback, out] :
         std::initializer_list<std::tuple<const char *, int64_t, int64_t *>>{
             {"gpus", 0, &c.gpus},
             {"seq_len", 0, &c.seqLen},
             {"global_batch", 0, &p.globalBatch}})
      if (Status s = get(key, fallback, *out); !s)
        return s;
    // The axes as the table names them (cases.json writes "micro_batch" and
    // "zero", the rows' aliases); absent or null: the record's default.
    if (Status s = readAxesJson(j, p, AxesLayout::Flat, where); !s)
      return s;
    c.fp8RecipeStated = j.contains("fp8_recipe");
    std::string precision = j.value("precision", std::string("bf16"));
    auto d = parseDType(precision);
    if (!d)
      return Status::error(where + ": field 'precision': unknown '" +
                           precision + "'");
    p.precision = *d;
    if (!j.contains("measured") || !j["measured"].is_object() ||
        !j["measured"].contains("tokens_per_s_per_gpu") ||
        !j["measured"]["tokens_per_s_per_gpu"].is_number())
      return Status::error(where +
                           ": field 'measured.tokens_per_s_per_gpu': "
                           "expected a number");
    c.measuredTokensPerSecPerGpu =
        j["measured"]["tokens_per_s_per_gpu"].get<double>();
    if (j.contains("notes") && j["notes"].is_array())
      for (const json &n : j["notes"])
        if (n.is_string() &&
            n.get<std::string>().find("force-balanced") != std::string::npos)
          c.forceBalanced = true;
    c.runtime = runtimeForSource(c.sourceGroup);
    c.runtimeOrigin = Case::RuntimeOrigin::SourceTable;
    if (j.contains("runtime")) {
      std::optional<Runtime> rt;
      if (j["runtime"].is_string())
        rt = parseRuntime(j["runtime"].get<std::string>());
      if (!rt)
        return Status::error(where + ": field 'runtime': expected one of " +
                             runtimeNames());
      c.runtime = *rt;
      c.runtimeOrigin = Case::RuntimeOrigin::CaseField;
    }
    if (Status s = readRunSettings(j, c, where); !s)
      return s;
    cases.push_back(std::move(c));
  }
  return cases;
}

Status applyFrameworks(std::vector<Case> &cases, std::string_view runsText,
                       const std::string &runsSource) {
  json root = json::parse(runsText, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_array())
    return Status::error(runsSource + ": expected a JSON array of runs");
  std::map<std::string, std::string, std::less<>> frameworks;
  std::map<std::string, Fp8Recipe, std::less<>> recipes;
  for (size_t i = 0; i < root.size(); ++i) {
    const json &r = root[i];
    if (!r.is_object() || !r.contains("id") || !r["id"].is_string())
      return Status::error(runsSource + ": run " + std::to_string(i) +
                           ": expected an object with a string 'id'");
    if (r.contains("framework") && r["framework"].is_string())
      frameworks[r["id"].get<std::string>()] =
          r["framework"].get<std::string>();
    if (r.contains("precision") && r["precision"].is_string())
      if (auto recipe =
              fp8RecipeForRunPrecision(r["precision"].get<std::string>()))
        recipes[r["id"].get<std::string>()] = *recipe;
  }
  for (Case &c : cases) {
    if (auto it = recipes.find(c.id); it != recipes.end() &&
                                      !c.fp8RecipeStated &&
                                      c.config.precision == DType::FP8)
      c.config.fp8Recipe = it->second;
    if (c.runtimeOrigin == Case::RuntimeOrigin::CaseField)
      continue;
    auto it = frameworks.find(c.id);
    if (it == frameworks.end())
      continue;
    if (auto rt = runtimeForFramework(it->second, c.config.zeroStage)) {
      c.runtime = *rt;
      c.runtimeOrigin = Case::RuntimeOrigin::Framework;
    }
  }
  return Status::ok();
}

std::optional<Fp8Recipe> fp8RecipeForRunPrecision(std::string_view precision) {
  for (auto [suffix, recipe] :
       std::initializer_list<std::pair<std::string_view, Fp8Recipe>>{
           {"FP8-CS", Fp8Recipe::Tensorwise},
           {"FP8-MX", Fp8Recipe::Mxfp8},
           {"FP8-SS", Fp8Recipe::Blockwise},
           {"FP8-DS", Fp8Recipe::Delayed}})
    if (precision == suffix)
      return recipe;
  return std::nullopt;
}

std::string runsFileFor(const std::string &casesPath) {
  namespace fs = std::filesystem;
  fs::path p(casesPath);
  std::string name = p.filename().string();
  std::string runs;
  if (name == "cases.json")
    runs = "published_runs.json";
  else if (name.ends_with("_cases.json"))
    runs = name.substr(0, name.size() - 11) + "_runs.json";
  else
    return "";
  fs::path candidate = p.parent_path() / runs;
  std::error_code ec;
  return fs::is_regular_file(candidate, ec) ? candidate.string() : "";
}

Result<std::vector<Case>> loadCases(const std::string &path) {
  auto text = readFile(path);
  if (!text)
    return text.status();
  auto cases = parseCases(*text, path);
  if (!cases)
    return cases;
  if (std::string runs = runsFileFor(path); !runs.empty()) {
    auto runsText = readFile(runs);
    if (!runsText)
      return runsText.status();
    if (Status s = applyFrameworks(*cases, *runsText, runs); !s)
      return s;
  }
  return cases;
}

Status applyAsRan(std::vector<Case> &cases, std::string_view text,
                  const std::string &source) {
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    return Status::error(source + ": malformed JSON");
  if (!root.is_object() || !root.contains("cases") ||
      !root["cases"].is_object())
    return Status::error(source + ": expected an object with a 'cases' "
                                  "object (case id -> settings)");
  for (const auto &[id, entry] : root["cases"].items()) {
    std::string where = source + ": case '" + id + "'";
    if (!entry.is_object())
      return Status::error(where + ": expected an object of settings");
    for (const auto &[key, value] : entry.items())
      if (key != "moe_dispatcher" && key != "moe_overlap_ep_comm" &&
          key != "release" && key != "source")
        return Status::error(where + ": unknown field '" + key +
                             "' (expected moe_dispatcher, "
                             "moe_overlap_ep_comm, release, source)");
    auto sameId = [&](const Case &c) { return c.id == id; };
    const auto count = std::count_if(cases.begin(), cases.end(), sameId);
    if (count == 0)
      return Status::error(where + ": no case has this id");
    if (count > 1)
      return Status::error(where + ": more than one case has this id (the "
                                   "cases files overlap?)");
    auto it = std::find_if(cases.begin(), cases.end(), sameId);
    if (Status s = readRunSettings(entry, *it, where); !s)
      return s;
  }
  return Status::ok();
}

Status applyAsRanFile(std::vector<Case> &cases, const std::string &path) {
  auto text = readFile(path);
  if (!text)
    return Status::error(text.message());
  return applyAsRan(cases, *text, path);
}

ErrorStats errorStats(const std::vector<double> &errors) {
  ErrorStats s;
  s.count = static_cast<int64_t>(errors.size());
  if (errors.empty())
    return s;
  std::vector<double> abs;
  double sum = 0;
  for (double e : errors) {
    abs.push_back(std::fabs(e));
    sum += e;
  }
  std::sort(abs.begin(), abs.end());
  auto quantile = [&](double q) {
    // Linear interpolation between order statistics.
    double pos = q * (abs.size() - 1);
    size_t lo = static_cast<size_t>(std::floor(pos));
    size_t hi = std::min(lo + 1, abs.size() - 1);
    return abs[lo] + (abs[hi] - abs[lo]) * (pos - lo);
  };
  s.median = quantile(0.5);
  s.p90 = quantile(0.9);
  s.worst = abs.back();
  s.meanSigned = sum / errors.size();
  return s;
}

void summarize(Report &report) {
  std::map<std::string, std::vector<double>> bySource;
  std::vector<double> all;
  report.evaluable = report.evaluated = 0;
  for (const CaseResult &r : report.results) {
    if (r.c->evaluable)
      ++report.evaluable;
    if (r.outcome != CaseResult::Outcome::Evaluated)
      continue;
    ++report.evaluated;
    bySource[r.c->sourceGroup].push_back(r.error);
    all.push_back(r.error);
  }
  report.bySource.clear();
  for (auto &[source, errors] : bySource)
    report.bySource[source] = errorStats(errors);
  report.overall = errorStats(all);
}

static std::string fitValueList(const FitValues &v) {
  std::string out;
  for (size_t i = 0; i < kNumFitted; ++i)
    out += fmt::format("{}{} {:.3g}", i ? ", " : "", kFittedConstants[i].key,
                       v.values[i]);
  return out;
}

static std::string pct(double x) { return fmt::format("{:+.1f}%", 100 * x); }
static std::string upct(double x) { return fmt::format("{:.1f}%", 100 * x); }

/// Every case here is a run that really ran: how many the memory model
/// lets fit, and the one with the least room (or the largest overshoot).
static std::string memorySummary(const Report &report) {
  int64_t evaluated = 0, fit = 0;
  const CaseResult *tightest = nullptr;
  auto room = [](const CaseResult &r) {
    return r.capacityBytes - r.peakMemoryBytes;
  };
  for (const CaseResult &r : report.results) {
    if (r.outcome != CaseResult::Outcome::Evaluated)
      continue;
    ++evaluated;
    fit += r.fits ? 1 : 0;
    if (!tightest || room(r) < room(*tightest))
      tightest = &r;
  }
  if (!tightest)
    return "";
  return fmt::format(
      "memory: {} of {} runs predicted to fit (all of them ran); least room: "
      "{} needs {:.1f} of {:.1f} GB ({:+.1f} GB)\n",
      fit, evaluated, tightest->c->id, tightest->peakMemoryBytes / 1e9,
      tightest->capacityBytes / 1e9, room(*tightest) / 1e9);
}

std::string renderText(const Report &report) {
  std::string out = fmt::format("{:<44} {:>10} {:>10} {:>8}  {}\n", "case",
                                "measured", "predicted", "error", "note");
  for (const CaseResult &r : report.results) {
    if (r.outcome == CaseResult::Outcome::Evaluated) {
      out += fmt::format("{:<44} {:>10.0f} {:>10.0f} {:>8}  {}\n", r.c->id,
                         r.c->measuredTokensPerSecPerGpu,
                         r.predictedTokensPerSecPerGpu, pct(r.error),
                         r.fits ? "" : "predicted out of memory");
    }
  }
  out += "\nnot evaluated:\n";
  for (const CaseResult &r : report.results)
    if (r.outcome != CaseResult::Outcome::Evaluated)
      out += fmt::format("  {:<42} {}: {}\n", r.c->id,
                         r.outcome == CaseResult::Outcome::Skipped ? "skipped"
                                                                   : "failed",
                         r.reason);
  out += fmt::format("\n{:<22} {:>6} {:>9} {:>9} {:>9} {:>12}\n", "source",
                     "cases", "median", "p90", "worst", "mean signed");
  for (const auto &[source, s] : report.bySource)
    out += fmt::format("{:<22} {:>6} {:>9} {:>9} {:>9} {:>12}\n", source,
                       s.count, upct(s.median), upct(s.p90), upct(s.worst),
                       pct(s.meanSigned));
  const ErrorStats &o = report.overall;
  out += fmt::format("{:<22} {:>6} {:>9} {:>9} {:>9} {:>12}\n", "all", o.count,
                     upct(o.median), upct(o.p90), upct(o.worst),
                     pct(o.meanSigned));
  out += fmt::format("\nevaluated {} of {} evaluable cases ({})\n",
                     report.evaluated, report.evaluable,
                     upct(report.evaluable ? double(report.evaluated) /
                                                 report.evaluable
                                           : 0));
  out += memorySummary(report);
  return out;
}

std::string renderMarkdown(const Report &report, const std::string &command,
                           const CrossValidation *cv) {
  std::string out = "# Validation: predicted against published training runs\n\n";
  out += "Generated by `" + command +
         "` from the cases files it names (shared/validation's "
         "`cases.json` and `moe_cases.json`: the published runs of "
         "`published_runs.json` and `moe_runs.json`, normalised). Each case "
         "runs through the "
         "whole pipeline: its config.json is imported into tgraph, analysed "
         "into a LayerProfile and evaluated for its exact parallel "
         "configuration on its cluster preset. The error is "
         "(predicted - measured) / measured tokens/s/GPU. Efficiency "
         "constants are per GPU type (docs/cost-model.md), never per case. "
         "Each case runs under the runtime its source used (the software: "
         "attention kernel, autocast, gradient-reduction overlap; "
         "docs/cost-model.md#runtimes), taken from the case's `runtime` "
         "field, else from the `framework` of its published run, else from "
         "the table of sources (lib/Validation/Cases.cpp, "
         "runtimeForSource). An `--as-ran` file adds what a run's own "
         "scripts say it ran with and its case does not (the token "
         "dispatcher, the exchange overlap, the release: "
         "test/data/validation/mbridge-moe-as-ran.json, distilled by "
         "scripts/distill-moe-as-ran.sh from Megatron-Bridge's performance "
         "scripts at each release's tag).\n\n";
  out +=
      "Published data this repository adds (never fitted on): "
      "`validation/serving.json`, serving measurements of the engines' "
      "benchmark pages and blogs, each case quoting its source, with "
      "their titles, addresses and the errors of `trident serve` in "
      "docs/validation-serving.md; and measurements that set constants, "
      "not fitted: DeepSpeed issue #1174 "
      "(https://github.com/deepspeedai/DeepSpeed/issues/1174, DeepSpeed "
      "v0.3.16 and PyTorch 1.8.0 on one p4d node of 8 A100s: a 5B-parameter "
      "BERT's ZeRO-3 forward 480 ms against ZeRO-2's 60 ms), which gives "
      "the `deepspeed` runtime's ZeRO-3 gather rate of 20.8 GB/s per GPU "
      "(docs/cost-model.md, Runtimes); Lee, Oh, Kim, Go, Park and Mahajan "
      "2025 (arXiv 2507.03114: compute beside overlapped communication "
      "18.9 % slower on average), the slowdown of compute beside hidden "
      "communication (docs/cost-model.md, section 4); and the forward "
      "FLOP/s of fused attention kernels on H100 that pytorch/benchmark "
      "PRs #2391 (https://github.com/pytorch/benchmark/pull/2391, commit "
      "ff65cb6: FlashAttention-3 and Triton's tutorial kernel, sequences "
      "512 to 16k) and #2296 (https://github.com/pytorch/benchmark/pull/2296, "
      "commit d5f0a12) publish, which give the attention's length "
      "efficiency keys / (keys + 240) (docs/cost-model.md, section 1).\n\n";
  const ErrorStats &o = report.overall;
  out += fmt::format("Evaluated {} of {} evaluable cases. Overall |error|: "
                     "median {}, 90th percentile {}, worst {}; mean signed "
                     "error {}.\n\n",
                     report.evaluated, report.evaluable, upct(o.median),
                     upct(o.p90), upct(o.worst), pct(o.meanSigned));
  if (std::string m = memorySummary(report); !m.empty())
    out += "Memory (docs/cost-model.md, Memory): " + m.substr(8) + "\n";
  // Out of sample only when its cases are this report's, in this order.
  if (cv && cv->outOfSample.results.size() != report.results.size())
    cv = nullptr;
  if (cv)
    out += renderCrossValidation(*cv) + "\n";
  out += "## By source\n\n| source | runtime | cases | median | p90 | worst "
         "| mean signed |\n|---|---|---|---|---|---|---|\n";
  for (const auto &[source, s] : report.bySource) {
    // The runtimes this source's evaluated cases ran under.
    std::string runtimes;
    for (const CaseResult &r : report.results) {
      if (r.outcome != CaseResult::Outcome::Evaluated ||
          r.c->sourceGroup != source)
        continue;
      std::string name(runtimeName(r.runtime));
      if (runtimes.find(name) == std::string::npos)
        runtimes += (runtimes.empty() ? "" : ", ") + name;
    }
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", source,
                       runtimes, s.count, upct(s.median), upct(s.p90),
                       upct(s.worst), pct(s.meanSigned));
  }
  out += "\n## Per case\n\n| case | runtime | measured tok/s/GPU | predicted "
         "| error |";
  out += cv ? " out of sample |" : "";
  out += " MFU | memory GB | note |\n|---|---|---|---|---|---|---|---|";
  out += cv ? "---|\n" : "\n";
  for (size_t i = 0; i < report.results.size(); ++i) {
    const CaseResult &r = report.results[i];
    if (r.outcome != CaseResult::Outcome::Evaluated)
      continue;
    std::string loso;
    if (cv) {
      const CaseResult &o = cv->outOfSample.results[i];
      loso = o.outcome == CaseResult::Outcome::Evaluated
                 ? " " + pct(o.error) + " |"
                 : " - |";
    }
    out += fmt::format(
        "| {} | {} | {:.0f} | {:.0f} | {} |{} {:.1f}% | {:.1f} / {:.1f} | {} "
        "|\n",
        r.c->id, runtimeName(r.runtime), r.c->measuredTokensPerSecPerGpu,
        r.predictedTokensPerSecPerGpu, pct(r.error), loso, 100 * r.mfu,
        r.peakMemoryBytes / 1e9, r.capacityBytes / 1e9,
        r.fits ? "" : "predicted out of memory");
  }
  out += "\n## Not evaluated\n\n| case | why |\n|---|---|\n";
  for (const CaseResult &r : report.results)
    if (r.outcome != CaseResult::Outcome::Evaluated)
      out += fmt::format("| {} | {} |\n", r.c->id, r.reason);
  return out;
}

std::string renderFit(const FitReport &fit) {
  std::string out = fmt::format("{:<20} {:>10} {:>10}  {}\n", "constant",
                                "published", "refit", "grid");
  FitValues published = FitValues::published();
  for (size_t i = 0; i < kNumFitted; ++i) {
    const FittedConstant &f = kFittedConstants[i];
    out += fmt::format(
        "{:<20} {:>10.3f} {:>10.3f}  {:.2f}..{:.2f} by {:.2f}{}\n", f.key,
        published.values[i], fit.values.values[i], f.lo, f.hi, f.step,
        fit.values.values[i] == published.values[i] ? "" : "  (differs)");
  }
  for (const GroupFit &g : fit.groups)
    out += fmt::format("{}: {} cases, {} grid points, median |error| "
                       "{:.2f}%\n",
                       fitGroupName(g.group), g.cases, g.gridPoints,
                       100 * g.objective);
  return out;
}

std::string renderCrossValidation(const CrossValidation &cv) {
  auto upct = [](double x) { return fmt::format("{:.1f}%", 100 * x); };
  const ErrorStats &in = cv.inSampleReport.overall;
  const ErrorStats &out = cv.outOfSample.overall;
  std::string s = "## Out of sample: leave one source out\n\n";
  s += fmt::format(
      "Generated by `trident validate --cross-validate`. For each source, "
      "every fitted constant (docs/cost-model.md section 8) is refit "
      "without that source's cases, by an exhaustive search of its grid, "
      "and the source's cases are predicted with the refit values. Over "
      "{} cases: median |error| {}, 90th percentile {}, worst {} out of "
      "sample; {}, {} and {} in sample (every constant fitted on every "
      "case).\n\n",
      out.count, upct(out.median), upct(out.p90), upct(out.worst),
      upct(in.median), upct(in.p90), upct(in.worst));
  s += "| held-out source | cases | median in sample | median out of sample "
       "| p90 in sample | p90 out of sample | constants fitted without it "
       "|\n|---|---|---|---|---|---|---|\n";
  // A fold's cases, in and out of sample (a fold is a source, or one
  // release of a source that publishes per release).
  auto foldStats = [&](const Report &r, const std::string &fold) {
    std::vector<double> errors;
    for (const CaseResult &c : r.results)
      if (c.outcome == CaseResult::Outcome::Evaluated && c.c->foldKey() == fold)
        errors.push_back(c.error);
    return errorStats(errors);
  };
  for (const Fold &f : cv.folds) {
    ErrorStats a = foldStats(cv.inSampleReport, f.heldOut);
    ErrorStats b = foldStats(cv.outOfSample, f.heldOut);
    if (a.count == 0 || b.count == 0)
      continue;
    s += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", f.heldOut,
                     b.count, upct(a.median), upct(b.median), upct(a.p90),
                     upct(b.p90), fitValueList(f.fit.values));
  }
  s += fmt::format("\nIn-sample fit: {}.\n", fitValueList(cv.inSample.values));
  if (cv.intervalCases > 0)
    s += fmt::format(
        "\n80 % intervals (docs/cost-model.md, Uncertainty), each built from "
        "the out-of-sample residuals of the other sources in the case's "
        "nearest regime, contain the measured step time of {} of {} cases "
        "({:.1f}%) as the quantiles give them, and of {} ({:.1f}%) widened "
        "by {:.1f} in log space about the regime's median, the calibration the "
        "shipped intervals "
        "use.\n",
        cv.unwidenedHits, cv.intervalCases,
        100.0 * double(cv.unwidenedHits) / double(cv.intervalCases),
        cv.intervalHits,
        100.0 * double(cv.intervalHits) / double(cv.intervalCases),
        cv.intervalWidening);
  return s;
}

} // namespace trident::validation
