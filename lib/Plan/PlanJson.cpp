//===- PlanJson.cpp - trident.plan/v1 writer and reader -------------------===//
//
// nlohmann::json with ordered keys, so the text is stable (byte-identical
// for identical plans) and diffs read well. Doubles are written in the
// shortest form that reads back to the same value, so parse(write(p)) == p.
//
//===----------------------------------------------------------------------===//

#include "trident/Plan/ParallelJson.h"
#include "trident/Plan/Plan.h"
#include "trident/Plan/StageJson.h"
#include "trident/Support/DType.h"

#include <cstdint>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace trident::plan {

using Json = nlohmann::ordered_json;

namespace {

Json stageJson(const StagePlan &s) {
  Json j;
  j["index"] = s.index;
  j["layers"] = s.layers;
  j["chunk_layers"] = s.chunkLayers;
  Json ranges = Json::array();
  for (auto [b, e] : s.chunkBlockRanges)
    ranges.push_back(Json::array({b, e}));
  j["chunk_block_ranges"] = ranges;
  j["has_embedding"] = s.hasEmbedding;
  j["has_head"] = s.hasHead;
  j["recompute"] = std::string(recomputeName(s.recompute));
  j["devices"] = {{"group", s.deviceGroup},
                  {"gpu", s.gpu},
                  {"first_gpu", s.firstGpu},
                  {"num_gpus", s.numGpus}};
  j["memory"] = stageMemoryJson<Json>(s);
  j["time"] = {{"compute_s", s.computeSeconds},
               {"exposed_comm_s", s.exposedCommSeconds},
               {"bubble_s", s.bubbleSeconds}};
  return j;
}

Json planJson(const Plan &p) {
  Json j;
  j["schema"] = p.schema;
  j["model"] = p.model;
  if (p.modelShape.known())
    j["model_shape"] = {{"layers", p.modelShape.layers},
                        {"hidden", p.modelShape.hidden},
                        {"vocab", p.modelShape.vocab},
                        {"params", p.modelShape.params}};
  if (!p.modelSource.zoo.empty())
    j["model_source"] = {{"zoo", p.modelSource.zoo}};
  else if (!p.modelSource.path.empty())
    j["model_source"] = {{"path", p.modelSource.path},
                         {"sha256", p.modelSource.sha256}};
  j["seq_len"] = p.seqLen;
  j["cluster"] = {{"name", p.cluster}, {"gpus", p.gpus}};
  if (p.gpusPerNode > 0)
    j["cluster"]["gpus_per_node"] = p.gpusPerNode;
  j["cluster"]["note"] = p.clusterNote;
  j["precision"] = p.precision;
  j["runtime"] = p.runtime;
  j["global_batch"] = p.globalBatch;
  // The axes as the table spells them; the micro-batch count follows the
  // micro-batch size.
  writeAxesJson(j, p, [&](Axis a, Json &out) {
    if (a == Axis::MicroBatch)
      out["num_micro_batches"] = p.numMicroBatches;
  });
  j["partition"] = p.partition;
  j["layers_per_chunk"] = p.layersPerChunk;
  if (!p.dataShares.empty()) {
    Json shares = Json::array();
    for (const DataSharePlan &d : p.dataShares)
      shares.push_back(
          {{"group", d.group}, {"dp", d.dp}, {"micro_batches", d.microBatches}});
    j["data_shares"] = shares;
  }
  Json stages = Json::array();
  for (const StagePlan &s : p.stages)
    stages.push_back(stageJson(s));
  j["stages"] = stages;
  j["predicted"] = {{"iteration_time_s", p.predicted.iterationSeconds},
                    {"tokens_per_s", p.predicted.tokensPerSecond},
                    {"tflops_per_gpu", p.predicted.tflopsPerGpu},
                    {"mfu", p.predicted.mfu},
                    {"peak_memory_bytes", p.predicted.peakMemoryBytes},
                    {"bubble_fraction", p.predicted.bubbleFraction},
                    {"exposed_comm_fraction", p.predicted.exposedCommFraction},
                    {"cost_per_million_tokens",
                     p.predicted.costPerMillionTokens}};
  if (p.predicted.iterationHighSeconds > 0)
    j["predicted"]["iteration_time_range_s"] = {
        p.predicted.iterationLowSeconds, p.predicted.iterationHighSeconds};
  j["warnings"] = p.warnings;
  return j;
}

/// Typed field access with errors that name the field's path.
struct Reader {
  std::string source;
  std::string error;

  const Json *field(const Json &obj, const char *key, const std::string &path) {
    if (!error.empty())
      return nullptr;
    if (!obj.is_object()) {
      error = source + ": '" + path + "' must be an object";
      return nullptr;
    }
    auto it = obj.find(key);
    if (it == obj.end()) {
      error = source + ": missing field '" + path + (path.empty() ? "" : ".") +
              key + "'";
      return nullptr;
    }
    return &*it;
  }
  std::string name(const std::string &path, const char *key) {
    return path.empty() ? std::string(key) : path + "." + key;
  }
  void get(const Json &obj, const char *key, const std::string &path,
           int64_t &out) {
    const Json *v = field(obj, key, path);
    if (!v)
      return;
    if (!v->is_number_integer())
      error = source + ": '" + name(path, key) + "' must be an integer";
    else if (v->is_number_unsigned() &&
             v->get<uint64_t>() > uint64_t(INT64_MAX))
      error = source + ": '" + name(path, key) +
              "' is too large for a 64-bit integer";
    else
      out = v->get<int64_t>();
  }
  void get(const Json &obj, const char *key, const std::string &path,
           double &out) {
    const Json *v = field(obj, key, path);
    if (!v)
      return;
    if (!v->is_number())
      error = source + ": '" + name(path, key) + "' must be a number";
    else
      out = v->get<double>();
  }
  void get(const Json &obj, const char *key, const std::string &path,
           bool &out) {
    const Json *v = field(obj, key, path);
    if (!v)
      return;
    if (!v->is_boolean())
      error = source + ": '" + name(path, key) + "' must be true or false";
    else
      out = v->get<bool>();
  }
  void get(const Json &obj, const char *key, const std::string &path,
           std::string &out) {
    const Json *v = field(obj, key, path);
    if (!v)
      return;
    if (!v->is_string())
      error = source + ": '" + name(path, key) + "' must be a string";
    else
      out = v->get<std::string>();
  }
  void get(const Json &obj, const char *key, const std::string &path,
           std::vector<int64_t> &out) {
    const Json *v = field(obj, key, path);
    if (!v)
      return;
    if (!v->is_array()) {
      error = source + ": '" + name(path, key) + "' must be an array";
      return;
    }
    out.clear();
    for (const Json &e : *v) {
      if (!e.is_number_integer()) {
        error = source + ": '" + name(path, key) +
                "' must hold integers only";
        return;
      }
      out.push_back(e.get<int64_t>());
    }
  }
};

/// Deepest bracket nesting of a JSON text (brackets inside strings do not
/// count). A plan nests five levels. Deeper input is refused before
/// parsing: nlohmann's ordered_json copies nested values recursively when an
/// object's storage grows, so a plan nested 50 000 deep overflowed the stack
/// (found by the plan-json fuzz target under AddressSanitizer;
/// docs/robustness.md).
size_t jsonNestingDepth(std::string_view text) {
  size_t depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      ++depth;
      deepest = depth > deepest ? depth : deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}
constexpr size_t kMaxPlanNesting = 64;

/// Largest parallel size, micro-batch or layer count a plan may name.
constexpr int64_t kMaxPlanSize = kMaxAxisSize;

/// Optional (plans written before it carry no shape).
void readModelShape(Reader &r, const Json &j, ModelShape &m) {
  if (!r.error.empty() || !j.contains("model_shape"))
    return;
  if (const Json *ms = r.field(j, "model_shape", "")) {
    r.get(*ms, "layers", "model_shape", m.layers);
    r.get(*ms, "hidden", "model_shape", m.hidden);
    r.get(*ms, "vocab", "model_shape", m.vocab);
    r.get(*ms, "params", "model_shape", m.params);
    for (int64_t v : {m.layers, m.hidden, m.vocab, m.params})
      if (r.error.empty() && v < 0)
        r.error = r.source + ": 'model_shape' entries must not be negative";
  }
}

/// Optional (plans written before it name no source): a zoo name, or a file
/// path with the SHA-256 of its bytes.
void readModelSource(Reader &r, const Json &j, ModelSource &m) {
  if (!r.error.empty() || !j.contains("model_source"))
    return;
  const Json *ms = r.field(j, "model_source", "");
  if (!ms)
    return;
  if (ms->is_object() && ms->contains("zoo") && ms->size() == 1) {
    r.get(*ms, "zoo", "model_source", m.zoo);
    if (r.error.empty() && m.zoo.empty())
      r.error = r.source + ": 'model_source.zoo' must not be empty";
    return;
  }
  if (!ms->is_object() || !ms->contains("path") || !ms->contains("sha256") ||
      ms->size() != 2) {
    r.error = r.source + ": 'model_source' must be {\"zoo\": NAME} or "
                         "{\"path\": FILE, \"sha256\": HEX}";
    return;
  }
  r.get(*ms, "path", "model_source", m.path);
  r.get(*ms, "sha256", "model_source", m.sha256);
  if (!r.error.empty())
    return;
  bool hex = m.sha256.size() == 64;
  for (char c : m.sha256)
    hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (m.path.empty())
    r.error = r.source + ": 'model_source.path' must not be empty";
  else if (!hex)
    r.error = r.source +
              ": 'model_source.sha256' must be 64 lowercase hex "
              "digits, got '" +
              m.sha256 + "'";
}

/// Optional: heterogeneous data parallelism.
void readDataShares(Reader &r, const Json &j,
                    std::vector<DataSharePlan> &out) {
  const std::string &src = r.source;
  if (r.error.empty() && j.contains("data_shares")) {
    const Json &shares = j["data_shares"];
    if (!shares.is_array() || shares.size() > 1024) {
      r.error = src + ": 'data_shares' must be an array of at most 1024 "
                      "entries (one per node group)";
    } else {
      for (size_t i = 0; i < shares.size() && r.error.empty(); ++i) {
        std::string path = "data_shares[" + std::to_string(i) + "]";
        DataSharePlan d;
        r.get(shares[i], "group", path, d.group);
        r.get(shares[i], "dp", path, d.dp);
        r.get(shares[i], "micro_batches", path, d.microBatches);
        if (r.error.empty() && (d.dp < 1 || d.dp > kMaxPlanSize ||
                                d.microBatches < 1 ||
                                d.microBatches > kMaxPlanSize))
          r.error = src + ": '" + path +
                    "': dp and micro_batches must be in [1, 2^24]";
        out.push_back(d);
      }
    }
  }
}

/// One entry of "stages"; its recomputation defaults to the plan's.
void readStage(Reader &r, const Json &sj, const std::string &path,
               Recompute planRecompute, StagePlan &s) {
  const std::string &src = r.source;
  r.get(sj, "index", path, s.index);
  r.get(sj, "layers", path, s.layers);
  r.get(sj, "chunk_layers", path, s.chunkLayers);
  if (const Json *rg = r.field(sj, "chunk_block_ranges", path)) {
    if (!rg->is_array()) {
      r.error = src + ": '" + path + ".chunk_block_ranges' must be an array";
    } else {
      for (const Json &e : *rg) {
        if (!e.is_array() || e.size() != 2 || !e[0].is_number_integer() ||
            !e[1].is_number_integer()) {
          r.error = src + ": '" + path +
                    ".chunk_block_ranges' must hold [begin, end] pairs";
          break;
        }
        s.chunkBlockRanges.emplace_back(e[0].get<int64_t>(),
                                        e[1].get<int64_t>());
      }
    }
  }
  r.get(sj, "has_embedding", path, s.hasEmbedding);
  r.get(sj, "has_head", path, s.hasHead);
  // Optional (plans written before per-stage recompute): the plan's.
  s.recompute = planRecompute;
  if (r.error.empty() && sj.is_object() && sj.contains("recompute")) {
    std::string name;
    r.get(sj, "recompute", path, name);
    auto rc = parseRecompute(name);
    if (r.error.empty() && !rc)
      r.error = src + ": '" + path + ".recompute' is '" + name +
                "'; expected none, selective or full";
    s.recompute = rc.value_or(planRecompute);
  }
  if (const Json *d = r.field(sj, "devices", path)) {
    std::string dp = path + ".devices";
    r.get(*d, "group", dp, s.deviceGroup);
    r.get(*d, "gpu", dp, s.gpu);
    r.get(*d, "first_gpu", dp, s.firstGpu);
    r.get(*d, "num_gpus", dp, s.numGpus);
  }
  if (const Json *m = r.field(sj, "memory", path)) {
    std::string mp = path + ".memory";
    r.get(*m, "weights_bytes", mp, s.weightBytes);
    r.get(*m, "gradients_bytes", mp, s.gradientBytes);
    r.get(*m, "optimizer_bytes", mp, s.optimizerBytes);
    r.get(*m, "activations_bytes", mp, s.activationBytes);
    r.get(*m, "buffers_bytes", mp, s.bufferBytes);
    r.get(*m, "total_bytes", mp, s.totalBytes);
    r.get(*m, "capacity_bytes", mp, s.capacityBytes);
    r.get(*m, "peak_in_flight", mp, s.peakInFlight);
    // Optional (ZeRO-3 plans from before it; absent for other stages).
    if (r.error.empty() && m->contains("zero3_gather_elements")) {
      r.get(*m, "zero3_gather_elements", mp, s.zero3GatherElements);
      if (r.error.empty() &&
          !(s.zero3GatherElements > 0 && s.zero3GatherElements < 1e18))
        r.error = src + ": '" + mp +
                  ".zero3_gather_elements' must be a positive number of "
                  "parameter elements";
    }
  }
  if (const Json *t = r.field(sj, "time", path)) {
    std::string tp = path + ".time";
    r.get(*t, "compute_s", tp, s.computeSeconds);
    r.get(*t, "exposed_comm_s", tp, s.exposedCommSeconds);
    r.get(*t, "bubble_s", tp, s.bubbleSeconds);
  }
}

void readPredicted(Reader &r, const Json &j, Predicted &out) {
  if (const Json *pr = r.field(j, "predicted", "")) {
    r.get(*pr, "iteration_time_s", "predicted", out.iterationSeconds);
    r.get(*pr, "tokens_per_s", "predicted", out.tokensPerSecond);
    r.get(*pr, "tflops_per_gpu", "predicted", out.tflopsPerGpu);
    r.get(*pr, "mfu", "predicted", out.mfu);
    r.get(*pr, "peak_memory_bytes", "predicted", out.peakMemoryBytes);
    r.get(*pr, "bubble_fraction", "predicted", out.bubbleFraction);
    r.get(*pr, "exposed_comm_fraction", "predicted",
          out.exposedCommFraction);
    r.get(*pr, "cost_per_million_tokens", "predicted",
          out.costPerMillionTokens);
    // Optional: plans written before the interval lack it.
    if (r.error.empty() && pr->is_object() &&
        pr->contains("iteration_time_range_s")) {
      const Json &range = (*pr)["iteration_time_range_s"];
      if (!range.is_array() || range.size() != 2 || !range[0].is_number() ||
          !range[1].is_number() ||
          range[0].get<double>() > range[1].get<double>())
        r.error = r.source + ": 'predicted.iteration_time_range_s' must be "
                             "[low, high], two numbers with low <= high";
      else {
        out.iterationLowSeconds = range[0].get<double>();
        out.iterationHighSeconds = range[1].get<double>();
      }
    }
  }
}

/// The optional plan-level warnings: an array of strings.
void readWarnings(Reader &r, const Json &j, std::vector<std::string> &out) {
  if (!r.error.empty() || !j.is_object() || !j.contains("warnings"))
    return;
  const Json &w = j["warnings"];
  if (!w.is_array()) {
    r.error = r.source + ": 'warnings' must be an array of strings";
    return;
  }
  for (const Json &e : w) {
    if (!e.is_string()) {
      r.error = r.source + ": 'warnings' must hold strings only";
      return;
    }
    out.push_back(e.get<std::string>());
  }
}

/// The rules a runtime relies on that the fields alone do not state.
Status checkPlanShape(const Plan &p, const std::string &src) {
  // The axes' bounds were checked as they were read (readAxesJson); the
  // schema's rules for the other fields the readers use follow
  // (hand-written plans need not carry a prediction, so the schema itself
  // is not applied).
  if (!parseDType(p.precision))
    return Status::error(src + ": 'precision' is '" + p.precision +
                         "'; expected fp32, bf16, fp16 or fp8");
  // Every consumer would ignore such a recipe (the writer states it only
  // with fp8).
  if (std::string why =
          fp8RecipePrecisionRefusal(p.fp8Recipe, *parseDType(p.precision));
      !why.empty())
    return Status::error(src + ": " + why);
  for (int64_t n : p.layersPerChunk)
    if (n < 0 || n > kMaxPlanSize)
      return Status::error(src + ": 'layers_per_chunk' entries must be in "
                           "[0, " + std::to_string(kMaxPlanSize) + "], got " +
                           std::to_string(n));
  if (p.pp * p.vpp > kMaxPlanSize)
    return Status::error(src + ": pp*vpp = " + std::to_string(p.pp * p.vpp) +
                         " is above the supported limit " +
                         std::to_string(kMaxPlanSize));
  if (int64_t(p.layersPerChunk.size()) != p.pp * p.vpp)
    return Status::error(src + ": 'layers_per_chunk' has " +
                         std::to_string(p.layersPerChunk.size()) +
                         " entries; expected pp*vpp = " +
                         std::to_string(p.pp * p.vpp));
  // A stage's chunk_layers restate layers_per_chunk (chunk c of stage s
  // is model chunk c * pp + s); an edit of one but not the other would
  // leave the plan saying two things.
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const StagePlan &st = p.stages[i];
    if (st.chunkLayers.empty())
      continue;
    const int64_t s = int64_t(i) % p.pp;
    bool same = int64_t(st.chunkLayers.size()) == p.vpp;
    for (int64_t c = 0; same && c < p.vpp; ++c)
      same = st.chunkLayers[size_t(c)] ==
             p.layersPerChunk[size_t(c * p.pp + s)];
    if (!same) {
      std::string want;
      for (int64_t c = 0; c < p.vpp; ++c)
        want += (c ? ", " : "") +
                std::to_string(p.layersPerChunk[size_t(c * p.pp + s)]);
      return Status::error(src + ": 'stages[" + std::to_string(i) +
                           "].chunk_layers' does not match "
                           "'layers_per_chunk' (expected [" + want +
                           "] for stage " + std::to_string(s) + ")");
    }
  }
  const int64_t shareCount =
      std::max<int64_t>(1, int64_t(p.dataShares.size()));
  if (int64_t(p.stages.size()) != p.pp * shareCount)
    return Status::error(
        src + ": 'stages' has " + std::to_string(p.stages.size()) +
        " entries; expected " +
        (p.dataShares.empty()
             ? "pp = " + std::to_string(p.pp)
             : "pp * data shares = " + std::to_string(p.pp * shareCount)));
  if (!p.dataShares.empty()) {
    int64_t dpSum = 0;
    for (const DataSharePlan &d : p.dataShares)
      dpSum += d.dp;
    if (dpSum != p.dp)
      return Status::error(src + ": 'parallel.dp' is " + std::to_string(p.dp) +
                           " but 'data_shares' add up to " +
                           std::to_string(dpSum) + " replicas");
  }
  return Status::ok();
}

} // namespace

std::string planToJson(const Plan &plan) {
  return planJson(plan).dump(2) + "\n";
}

std::string plansToJson(const std::vector<Plan> &plans) {
  Json j;
  j["schema"] = std::string(kPlanSchema);
  Json arr = Json::array();
  for (const Plan &p : plans)
    arr.push_back(planJson(p));
  j["plans"] = arr;
  return j.dump(2) + "\n";
}

Result<Plan> parsePlanJson(std::string_view text, std::string_view source) {
  if (size_t depth = jsonNestingDepth(text); depth > kMaxPlanNesting)
    return Status::error(std::string(source) + ": JSON nested " +
                         std::to_string(depth) +
                         " levels deep, above the supported limit of " +
                         std::to_string(kMaxPlanNesting));
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::string src(source);
  if (j.is_discarded())
    return Status::error(src + ": not valid JSON");
  if (!j.is_object())
    return Status::error(src + ": a plan must be a JSON object");
  Reader r{src, ""};
  Plan p;
  r.get(j, "schema", "", p.schema);
  if (r.error.empty() && p.schema != kPlanSchema)
    return Status::error(src + ": 'schema' is '" + p.schema + "', expected '" +
                         std::string(kPlanSchema) + "'");
  r.get(j, "model", "", p.model);
  readModelShape(r, j, p.modelShape);
  readModelSource(r, j, p.modelSource);
  r.get(j, "seq_len", "", p.seqLen);
  if (const Json *c = r.field(j, "cluster", "")) {
    r.get(*c, "name", "cluster", p.cluster);
    r.get(*c, "gpus", "cluster", p.gpus);
    if (c->contains("gpus_per_node")) {
      r.get(*c, "gpus_per_node", "cluster", p.gpusPerNode);
      if (r.error.empty() && (p.gpusPerNode < 1 || p.gpusPerNode > p.gpus))
        r.error = src + ": 'cluster.gpus_per_node' must be in [1, " +
                  std::to_string(p.gpus) + "] (the plan's GPUs), got " +
                  std::to_string(p.gpusPerNode);
    }
    r.get(*c, "note", "cluster", p.clusterNote);
  }
  r.get(j, "precision", "", p.precision);
  if (r.error.empty() && j.contains("runtime")) {
    r.get(j, "runtime", "", p.runtime);
    if (r.error.empty() && !parseRuntime(p.runtime))
      r.error = src + ": field 'runtime': expected one of " + runtimeNames() +
                ", got '" + p.runtime + "'";
  }
  r.get(j, "global_batch", "", p.globalBatch);
  if (r.error.empty()) {
    if (Status s = readAxesJson(j, p, AxesLayout::Plan, src); !s)
      r.error = s.message();
  }
  r.get(j, "num_micro_batches", "", p.numMicroBatches);
  r.get(j, "partition", "", p.partition);
  r.get(j, "layers_per_chunk", "", p.layersPerChunk);
  readDataShares(r, j, p.dataShares);
  if (const Json *stages = r.field(j, "stages", "")) {
    if (!stages->is_array())
      return Status::error(src + ": 'stages' must be an array");
    for (size_t i = 0; i < stages->size() && r.error.empty(); ++i) {
      const Json &sj = (*stages)[i];
      std::string path = "stages[" + std::to_string(i) + "]";
      StagePlan s;
      readStage(r, sj, path, p.recompute, s);
      p.stages.push_back(std::move(s));
    }
  }
  readPredicted(r, j, p.predicted);
  readWarnings(r, j, p.warnings);
  if (!r.error.empty())
    return Status::error(r.error);
  if (Status st = checkPlanShape(p, src); !st)
    return st;
  return p;
}

} // namespace trident::plan
