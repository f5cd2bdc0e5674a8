//===- ModelSource.h - Zoo and Hugging Face config frontends ---*- C++ -*-===//
//
// Plain C++ (no MLIR): turns a zoo name or a Hugging Face config.json into a
// validated ModelConfig. The tgraph builder (Frontend/GraphBuilder.h) turns
// that into IR.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_FRONTEND_MODELSOURCE_H
#define TRIDENT_FRONTEND_MODELSOURCE_H

#include "trident/Frontend/ModelConfig.h"
#include "trident/Support/Status.h"

#include <string>
#include <string_view>
#include <vector>

namespace trident::frontend {

/// Parses the text of a Hugging Face config.json. `source` names the input
/// in messages (a path, or "cases.json:<id>"). Keys that the importer does
/// not know are appended to `warnings` and ignored; an unsupported
/// architecture or an unsupported value of a known key is an error.
Result<ModelConfig> parseHFConfig(std::string_view jsonText,
                                  std::string_view source,
                                  std::vector<std::string> *warnings);

/// Reads and parses a config.json file.
Result<ModelConfig> loadHFConfigFile(const std::string &path,
                                     std::vector<std::string> *warnings);

/// The built-in zoo.
std::vector<std::string> zooModelNames();
Result<ModelConfig> zooModel(std::string_view name);

/// Checks every size is positive and consistent (heads divide, kv heads
/// divide heads, ...). `source` names the input in the message.
Status validateModelConfig(const ModelConfig &config, std::string_view source);

/// Exact parameter counts by kind, computed from the config alone (the
/// IR-derived count must agree; tests check both).
struct ParamCounts {
  int64_t embedding = 0; ///< token (+ position, + type) embeddings
  int64_t attention = 0; ///< all attention projections, q/k norms, sinks
  int64_t mlp = 0;       ///< dense MLPs and shared experts
  int64_t experts = 0;   ///< routed experts (all of them)
  int64_t router = 0;
  int64_t norm = 0;      ///< layer / RMS norms (incl. final)
  int64_t head = 0;      ///< untied LM head, pooler, classifier
  int64_t other = 0;     ///< convolution / patch embedding, DLRM MLPs
  int64_t total() const {
    return embedding + attention + mlp + experts + router + norm + head +
           other;
  }
  /// Parameters one token touches (top-k of the routed experts).
  int64_t active = 0;
};
ParamCounts countParams(const ModelConfig &config);

} // namespace trident::frontend

#endif // TRIDENT_FRONTEND_MODELSOURCE_H
