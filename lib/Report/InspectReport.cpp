//===- InspectReport.cpp - Rendering `trident inspect` --------------------===//

#include "trident/Report/InspectReport.h"

#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace trident::report {

using analysis::LayerSummary;
using analysis::ModelSummary;

std::string humanCount(double n) {
  const char *suffix[] = {"", " K", " M", " B", " T", " P", " E"};
  int i = 0;
  while (std::abs(n) >= 1000.0 && i < 6) {
    n /= 1000.0;
    ++i;
  }
  return i == 0 ? fmt::format("{:.0f}", n) : fmt::format("{:.2f}{}", n, suffix[i]);
}

/// "2.87 GB", "512 B".
static std::string humanBytes(double n) {
  const char *suffix[] = {" B", " KB", " MB", " GB", " TB", " PB"};
  int i = 0;
  while (std::abs(n) >= 1000.0 && i < 5) {
    n /= 1000.0;
    ++i;
  }
  return i == 0 ? fmt::format("{:.0f} B", n) : fmt::format("{:.2f}{}", n, suffix[i]);
}

static const char *kindName(LayerKind k) {
  switch (k) {
  case LayerKind::Embedding:
    return "embedding";
  case LayerKind::Block:
    return "block";
  case LayerKind::Head:
    return "head";
  case LayerKind::Other:
    return "other";
  }
  return "other";
}

std::string renderInspectText(const ModelSummary &s) {
  std::string out;
  out += fmt::format("model         {} ({})\n", s.name, s.architecture);
  out += fmt::format("sequence      {}\n", s.seqLen);
  out += fmt::format("parameters    {} ({})\n", s.params, humanCount(s.params));
  if (s.activeParams != s.params)
    out += fmt::format("  active      {} ({}) per token\n", s.activeParams,
                       humanCount(s.activeParams));
  for (const auto &[kind, n] : s.paramsByKind)
    out += fmt::format("  {:<11} {} ({})\n", kind, n, humanCount(n));
  out += fmt::format("layers        {}\n", s.layers);
  out += fmt::format("FLOPs/token   forward {}  train {}  (model FLOPs, no "
                     "recompute)\n",
                     humanCount(s.fwdFlopsPerToken),
                     humanCount(s.trainFlopsPerToken));
  out += fmt::format("FLOPs/seq     forward {}  train {}\n\n",
                     humanCount(s.fwdFlopsPerSequence),
                     humanCount(s.fwdFlopsPerSequence + s.bwdFlopsPerSequence));
  out += fmt::format("{:<22} {:>6} {:>12} {:>14} {:>14} {:>12} {:>12}\n",
                     "layer", "count", "params", "fwd FLOPs/seq",
                     "train FLOPs", "act (none)", "act (sel.)");
  for (const LayerSummary &r : s.rows) {
    out += fmt::format(
        "{:<22} {:>6} {:>12} {:>14} {:>14} {:>12} {:>12}\n",
        r.name.size() > 22 ? r.name.substr(0, 22) : r.name, r.count,
        humanCount(r.params), humanCount(r.fwdFlops),
        humanCount(r.fwdFlops + r.bwdFlops), humanBytes(r.savedBytes[0]), humanBytes(r.savedBytes[1]));
  }
  out += "(per iteration of a row; activations are bytes kept for the "
         "backward per sequence)\n";
  return out;
}

std::string renderInspectJson(const ModelSummary &s,
                              const LayerProfile &shape) {
  nlohmann::ordered_json j;
  j["model"] = s.name;
  j["architecture"] = s.architecture;
  j["seq_len"] = s.seqLen;
  j["params"] = s.params;
  j["active_params"] = s.activeParams;
  nlohmann::ordered_json kinds = nlohmann::ordered_json::object();
  for (const auto &[kind, n] : s.paramsByKind)
    kinds[kind] = n;
  j["params_by_kind"] = kinds;
  j["layers"] = s.layers;
  // The shape the IR shows (the cost model's LayerProfile reads the same).
  j["shape"] = {{"hidden", shape.hidden},  {"vocab", shape.vocabSize},
                {"heads", shape.numHeads}, {"kv_heads", shape.numKvHeads},
                {"experts", s.experts},    {"top_k", s.topK}};
  j["flops_per_token"] = {{"forward", s.fwdFlopsPerToken},
                          {"train", s.trainFlopsPerToken}};
  j["flops_per_sequence"] = {
      {"forward", s.fwdFlopsPerSequence},
      {"train", s.fwdFlopsPerSequence + s.bwdFlopsPerSequence}};
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const LayerSummary &r : s.rows) {
    nlohmann::ordered_json row;
    row["name"] = r.name;
    row["kind"] = kindName(r.kind);
    row["count"] = r.count;
    row["layers_per_iteration"] = r.layersPerIteration;
    row["params"] = r.params;
    row["fwd_flops"] = r.fwdFlops;
    row["bwd_flops"] = r.bwdFlops;
    row["activation_bytes"] = {{"none", r.savedBytes[0]},
                               {"selective", r.savedBytes[1]},
                               {"full", r.savedBytes[2]}};
    rows.push_back(row);
  }
  j["per_layer"] = rows;
  return j.dump(2) + "\n";
}

} // namespace trident::report
