//===- ServeValidation.cpp - Serving predictions vs published runs --------===//

#include "trident/Serve/ServeValidation.h"

#include "trident/Support/FileIO.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace trident::serve {

namespace {

using json = nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double number(const json &j, const char *key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number())
    return kNaN;
  return it->get<double>();
}

std::string text(const json &j, const char *key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>()
                                          : std::string();
}

double median(std::vector<double> v) {
  if (v.empty())
    return kNaN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string pct(double e) {
  return std::isnan(e) ? "" : fmt::format("{:+.1f}%", e * 100);
}

/// |errors| of one metric over `results` (skipping the unmeasured).
std::vector<double> absErrors(const std::vector<const ServeCaseResult *> &rs,
                              double ServeCaseResult::*metric) {
  std::vector<double> v;
  for (const ServeCaseResult *r : rs)
    if (r->error.empty() && !std::isnan(r->*metric))
      v.push_back(std::abs(r->*metric));
  return v;
}

std::string medianCell(const std::vector<double> &v) {
  if (v.empty())
    return "-";
  return fmt::format("{:.1f}% ({})", median(v) * 100, v.size());
}

/// The predicted figure a case's throughput is compared with: prompt
/// tokens/s for a prefill pool measured alone, else output tokens/s.
double predictedThroughput(const ServeCase &c, const ServePlan &p) {
  return c.inputThroughput ? p.inputTokensPerSecondPerGpu
                           : p.outputTokensPerSecondPerGpu;
}

/// `attention_dp`: true (TensorRT-LLM's enable_attention_dp: one
/// attention rank per GPU of tp) or a number (SGLang's --dp-size: ranks of
/// tp / dp GPUs); absent: none.
Status readAttentionDp(const json &j, const std::string &where,
                       ReplicaShape &shape) {
  auto a = j.find("attention_dp");
  if (a == j.end())
    return Status::ok();
  int64_t gpusPerReplica = shape.tp;
  if (a->is_boolean() && a->get<bool>()) {
    shape.dp = shape.tp;
  } else if (a->is_number_integer() && a->get<int64_t>() >= 1) {
    shape.dp = a->get<int64_t>();
    gpusPerReplica = std::max(shape.dp, shape.tp);
  } else {
    return Status::error(where + ": field 'attention_dp': expected true or "
                                 "a positive number of ranks");
  }
  if (gpusPerReplica % shape.dp != 0)
    return Status::error(
        where + ": field 'attention_dp': " + std::to_string(shape.dp) +
        " ranks do not divide tp " + std::to_string(gpusPerReplica));
  shape.tp = gpusPerReplica / shape.dp;
  return Status::ok();
}

} // namespace

Result<ServeCaseFile> loadServeCases(const std::string &path) {
  auto body = readFile(path);
  if (!body)
    return body.status();
  json doc;
  try {
    doc = json::parse(*body);
  } catch (const json::exception &e) {
    return Status::error(path + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object() || text(doc, "schema") != "trident.serving-cases/v1" ||
      !doc.contains("cases") || !doc["cases"].is_array())
    return Status::error(path + ": expected {\"schema\": "
                                "\"trident.serving-cases/v1\", \"cases\": "
                                "[...]}");
  ServeCaseFile f;
  if (doc.contains("sources") && doc["sources"].is_object())
    for (auto &[id, s] : doc["sources"].items())
      f.sources.push_back(
          {id, s.is_object() ? text(s, "title") + ", " + text(s, "url") : ""});
  size_t index = 0;
  for (const json &j : doc["cases"]) {
    std::string where = fmt::format("{}: cases[{}]", path, index++);
    if (!j.is_object())
      return Status::error(where + ": expected an object");
    ServeCase c;
    c.id = text(j, "id");
    if (c.id.empty())
      return Status::error(where + ": field 'id': expected a string");
    where += " (" + c.id + ")";
    c.source = text(j, "source");
    c.engineName = text(j, "engine");
    c.model = text(j, "model");
    c.gpu = text(j, "gpu");
    c.tridentModel = text(j, "trident_model");
    c.tridentCluster = text(j, "trident_cluster");
    c.moe = j.value("moe", false);
    auto count = [&](const char *key, int64_t fallback,
                     int64_t &out) -> Status {
      double v = number(j, key);
      if (std::isnan(v)) {
        out = fallback;
        return Status::ok();
      }
      if (v < 1 || v != std::floor(v) || v > 1e6)
        return Status::error(where + ": field '" + key +
                             "': expected a positive integer");
      out = int64_t(v);
      return Status::ok();
    };
    if (Status s = count("gpus", 0, c.gpus); !s)
      return s;
    if (Status s = count("tp", 1, c.shape.tp); !s)
      return s;
    if (Status s = count("pp", 1, c.shape.pp); !s)
      return s;
    if (Status s = count("ep", 1, c.shape.ep); !s)
      return s;
    if (Status s = count("input_len", 0, c.options.inputLen); !s)
      return s;
    if (Status s = count("output_len", 0, c.options.outputLen); !s)
      return s;
    // One pool of a disaggregated deployment measured alone has no
    // output length (prefill) or a context of input_len (decode).
    const std::string phase = text(j, "phase");
    if (!phase.empty() && phase != "prefill_only" && phase != "decode_only")
      return Status::error(where +
                           ": field 'phase': expected prefill_only "
                           "or decode_only, got '" +
                           phase + "'");
    if (!phase.empty() && c.options.outputLen < 1)
      c.options.outputLen = 1;
    if (c.gpus < 1 || c.options.inputLen < 1 || c.options.outputLen < 1)
      return Status::error(where + ": fields 'gpus', 'input_len' and "
                                   "'output_len' are required");
    if (Status st = readAttentionDp(j, where, c.shape); !st)
      return st;
    c.shape.replicas =
        std::max<int64_t>(1, c.gpus / (c.shape.tp * c.shape.pp * c.shape.dp));
    if (number(j, "ep") != number(j, "ep") && c.moe)
      c.assumption = "ep not stated: experts split by tp";
    // An unstated cache precision is taken as the weights' (the FP8
    // checkpoints of these sources quantise the cache too).
    auto precision = [&](const char *key, DType &out) -> Status {
      std::string p = text(j, key);
      if (p.empty()) {
        out = c.options.precision;
        if (!c.assumption.empty())
          c.assumption += "; ";
        c.assumption +=
            std::string(key) + " not stated: " + std::string(dtypeName(out));
        return Status::ok();
      }
      if (p == "bf16" || p == "fp16")
        out = DType::BF16; // the same bytes and tensor-core rate
      else if (p == "fp8")
        out = DType::FP8;
      else
        return Status::error(where + ": field '" + key +
                             "': expected bf16, "
                             "fp16 or fp8, got '" +
                             p + "'");
      return Status::ok();
    };
    if (Status s = precision("precision", c.options.precision); !s)
      return s;
    if (Status s = precision("kv_precision", c.options.kvPrecision); !s)
      return s;
    if (c.engineName == "sglang")
      c.options.engine = Engine::Sglang;
    else if (c.engineName == "trtllm")
      c.options.engine = Engine::Trtllm;
    else
      c.options.engine = Engine::Vllm;
    const json load = j.value("load", json::object());
    std::string kind = load.is_object() ? text(load, "kind") : "";
    double value = load.is_object() ? number(load, "value") : kNaN;
    if (kind == "max_throughput")
      c.load = {LoadKind::MaxThroughput, 0};
    else if (kind == "request_rate")
      c.load = {LoadKind::RequestRate, value};
    else if (kind == "concurrency")
      c.load = {LoadKind::Concurrency, value};
    else if (kind == "batch")
      c.load = {LoadKind::StaticBatch, value};
    else if (kind == "prefill_only")
      c.load = {LoadKind::PrefillOnly, value};
    else if (kind == "decode_only")
      c.load = {LoadKind::DecodeOnly, value};
    else
      return Status::error(where +
                           ": field 'load.kind': expected "
                           "max_throughput, request_rate, "
                           "concurrency, batch, prefill_only or "
                           "decode_only, got '" +
                           kind + "'");
    if ((c.load.kind == LoadKind::PrefillOnly) != (phase == "prefill_only") ||
        (c.load.kind == LoadKind::DecodeOnly) != (phase == "decode_only"))
      return Status::error(where + ": field 'load.kind': '" + kind +
                           "' does not match the case's phase '" + phase + "'");
    if (c.load.kind != LoadKind::MaxThroughput && !(value > 0))
      return Status::error(where + ": field 'load.value': expected a "
                                   "positive number");
    const json m = j.value("measured", json::object());
    c.tokensPerSecondPerGpu = number(m, "output_tokens_per_s_per_gpu");
    if (std::isnan(c.tokensPerSecondPerGpu))
      c.tokensPerSecondPerGpu =
          number(m, "output_tokens_per_s") / double(c.gpus);
    // SGLang's figures are per node of 8 GPUs (the file's conventions);
    // a prefill pool's are prompt tokens.
    if (std::isnan(c.tokensPerSecondPerGpu))
      c.tokensPerSecondPerGpu = number(m, "output_tokens_per_s_per_node") / 8;
    if (std::isnan(c.tokensPerSecondPerGpu)) {
      c.tokensPerSecondPerGpu = number(m, "input_tokens_per_s_per_node") / 8;
      c.inputThroughput = !std::isnan(c.tokensPerSecondPerGpu);
    }
    c.ttftSeconds = number(m, "ttft_ms") / 1e3;
    c.tpotSeconds = number(m, "tpot_ms") / 1e3;
    if (std::isnan(c.tpotSeconds))
      c.tpotSeconds = number(m, "itl_ms") / 1e3;
    // What the cost model does not cover is left out, with the reason.
    if (c.tridentModel.empty())
      c.skip = "model not importable (" + c.model + ")";
    else if (c.tridentCluster.empty())
      c.skip = "no cluster preset for " + c.gpu;
    else if (j.contains("speculative_decoding"))
      c.skip = "speculative decoding is not modelled";
    else if (std::isnan(c.tokensPerSecondPerGpu) && std::isnan(c.ttftSeconds) &&
             std::isnan(c.tpotSeconds))
      c.skip = "no throughput or latency measured";
    f.cases.push_back(std::move(c));
  }
  return f;
}

ServeValidationReport validateServeCases(const ServeCaseFile &file,
                                         const ProfileBuilder &profileOf) {
  ServeValidationReport rep;
  rep.sources = file.sources;
  std::map<std::pair<std::string, int64_t>, Result<LayerProfile>> profiles;
  for (const ServeCase &c : file.cases) {
    ServeCaseResult r;
    r.c = &c;
    r.throughputError = r.ttftError = r.tpotError = kNaN;
    if (!c.skip.empty()) {
      rep.results.push_back(r);
      continue;
    }
    auto key = std::make_pair(c.tridentModel, c.options.inputLen);
    auto it = profiles.find(key);
    if (it == profiles.end())
      it = profiles.emplace(key, profileOf(c.tridentModel, c.options.inputLen))
               .first;
    int64_t nodes = (c.gpus + 7) / 8;
    auto cluster = loadCluster(c.tridentCluster + ":" + std::to_string(nodes));
    if (!it->second) {
      r.error = it->second.message();
    } else if (!cluster) {
      r.error = cluster.message();
    } else {
      auto p = evaluateServe(*it->second, *cluster, c.shape, c.options, c.load);
      if (!p) {
        r.error = p.message();
      } else {
        r.predicted = *p;
        auto err = [](double pred, double meas) {
          return std::isnan(meas) || !(meas > 0) ? kNaN : (pred - meas) / meas;
        };
        r.throughputError =
            err(predictedThroughput(c, *p), c.tokensPerSecondPerGpu);
        r.ttftError = err(p->ttftSeconds, c.ttftSeconds);
        r.tpotError = err(p->tpotSeconds, c.tpotSeconds);
      }
    }
    rep.results.push_back(r);
  }
  return rep;
}

namespace {

struct Summary {
  std::vector<double> tput, tpot, ttft;
  int64_t predicted = 0, skipped = 0, failed = 0;
};

Summary summarize(const std::vector<const ServeCaseResult *> &rs) {
  Summary s;
  s.tput = absErrors(rs, &ServeCaseResult::throughputError);
  s.tpot = absErrors(rs, &ServeCaseResult::tpotError);
  s.ttft = absErrors(rs, &ServeCaseResult::ttftError);
  for (const ServeCaseResult *r : rs) {
    if (!r->c->skip.empty())
      ++s.skipped;
    else if (!r->error.empty())
      ++s.failed;
    else
      ++s.predicted;
  }
  return s;
}

std::vector<const ServeCaseResult *> all(const ServeValidationReport &r) {
  std::vector<const ServeCaseResult *> v;
  for (const ServeCaseResult &x : r.results)
    v.push_back(&x);
  return v;
}

std::string overallLine(const Summary &s) {
  return fmt::format(
      "{} cases predicted, {} skipped, {} failed. Median |error|: output "
      "tokens/s per GPU (input for prefill pools) {} , TPOT {} , TTFT {} "
      "(cases in brackets)",
      s.predicted, s.skipped, s.failed, medianCell(s.tput), medianCell(s.tpot),
      medianCell(s.ttft));
}

std::string layout(const ServeCase &c) {
  std::string s = fmt::format("tp{}", c.shape.tp);
  if (c.shape.dp > 1)
    s += fmt::format(" dp{}", c.shape.dp);
  if (c.shape.pp > 1)
    s += fmt::format(" pp{}", c.shape.pp);
  if (c.shape.ep > 1)
    s += fmt::format(" ep{}", c.shape.ep);
  if (c.shape.replicas > 1)
    s += fmt::format(" x{}", c.shape.replicas);
  return s;
}

std::string loadText(const FixedLoad &l) {
  switch (l.kind) {
  case LoadKind::MaxThroughput:
    return "max throughput";
  case LoadKind::RequestRate:
    return fmt::format("{:g} req/s", l.value);
  case LoadKind::Concurrency:
    return fmt::format("{:g} in flight", l.value);
  case LoadKind::StaticBatch:
    return fmt::format("batch {:g}", l.value);
  case LoadKind::PrefillOnly:
    return fmt::format("prefill pool, {:g} tokens/GPU", l.value);
  case LoadKind::DecodeOnly:
    return fmt::format("decode pool, {:g} seqs/GPU", l.value);
  }
  return "";
}

} // namespace

std::string renderServeValidationText(const ServeValidationReport &r) {
  std::string out;
  for (const ServeCaseResult &x : r.results) {
    const ServeCase &c = *x.c;
    if (!c.skip.empty()) {
      out += fmt::format("{}: skipped: {}\n", c.id, c.skip);
      continue;
    }
    if (!x.error.empty()) {
      out += fmt::format("{}: failed: {}\n", c.id, x.error);
      continue;
    }
    out +=
        fmt::format("{}: {}tok/s/GPU {:.0f} ({}), TPOT {:.2f} ms ({}), "
                    "TTFT {:.1f} ms ({})\n",
                    c.id, c.inputThroughput ? "input " : "",
                    predictedThroughput(c, x.predicted), pct(x.throughputError),
                    x.predicted.tpotSeconds * 1e3, pct(x.tpotError),
                    x.predicted.ttftSeconds * 1e3, pct(x.ttftError));
  }
  out += overallLine(summarize(all(r))) + "\n";
  return out;
}

std::string renderServeValidationMarkdown(const ServeValidationReport &r,
                                          const std::string &command) {
  std::string out =
      "# Validation: serving predictions against published measurements\n\n"
      "Generated by `" +
      command +
      "` from `validation/serving.json`: published serving measurements "
      "(engines' benchmark pages and blogs; the sources below), collected "
      "to check `trident serve` and never fitted on. Each case is predicted "
      "by `serve::evaluateServe` for its exact layout (tp, pp, ep, "
      "data-parallel attention ranks, replicas), precision, lengths and "
      "load, with the engine's default chunk and batch limit "
      "(docs/serving.md). The error is (predicted - measured) / measured. "
      "The throughput of a prefill pool measured alone (load 'prefill "
      "pool') is prompt tokens/s per GPU; every other is output tokens/s "
      "per GPU.\n\n";
  Summary s = summarize(all(r));
  out += overallLine(s) + ".\n\n";
  out += "## By source\n\n| source | predicted | skipped | tok/s/GPU "
         "median |error| | TPOT | TTFT |\n|---|---|---|---|---|---|\n";
  for (const auto &[id, title] : r.sources) {
    std::vector<const ServeCaseResult *> rs;
    for (const ServeCaseResult &x : r.results)
      if (x.c->source == id)
        rs.push_back(&x);
    if (rs.empty())
      continue;
    Summary t = summarize(rs);
    out += fmt::format("| {} ({}) | {} | {} | {} | {} | {} |\n", id, title,
                       t.predicted, t.skipped, medianCell(t.tput),
                       medianCell(t.tpot), medianCell(t.ttft));
  }
  out += "\n## Per case\n\n| case | model | GPU | layout | precision | in/out "
         "| load | tok/s/GPU predicted | measured | error | TPOT ms "
         "predicted | measured | error | TTFT ms predicted | measured | "
         "error | note |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
         "---|\n";
  auto num = [](double v, const char *f) {
    return std::isnan(v) ? std::string("") : fmt::format(fmt::runtime(f), v);
  };
  for (const ServeCaseResult &x : r.results) {
    const ServeCase &c = *x.c;
    std::string prec = std::string(dtypeName(c.options.precision)) + "/" +
                       std::string(dtypeName(c.options.kvPrecision));
    std::string note = !c.skip.empty()    ? "skipped: " + c.skip
                       : !x.error.empty() ? "failed: " + x.error
                                          : c.assumption;
    bool ok = c.skip.empty() && x.error.empty();
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {}/{} | {} | {} | {} | {} | {} | {} | {} "
        "| {} | {} | {} | {} |\n",
        c.id, c.model, c.gpu, layout(c), prec, c.options.inputLen,
        c.options.outputLen, loadText(c.load),
        ok ? num(predictedThroughput(c, x.predicted), "{:.0f}") : "",
        num(c.tokensPerSecondPerGpu, "{:.0f}"),
        ok ? pct(x.throughputError) : "",
        ok ? num(x.predicted.tpotSeconds * 1e3, "{:.2f}") : "",
        num(c.tpotSeconds * 1e3, "{:.2f}"), ok ? pct(x.tpotError) : "",
        ok ? num(x.predicted.ttftSeconds * 1e3, "{:.1f}") : "",
        num(c.ttftSeconds * 1e3, "{:.1f}"), ok ? pct(x.ttftError) : "", note);
  }
  return out;
}

} // namespace trident::serve
