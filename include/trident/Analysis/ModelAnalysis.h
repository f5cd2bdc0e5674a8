//===- ModelAnalysis.h - tgraph to LayerProfile and summaries --*- C++ -*-===//
//
// Walks a tgraph.model through its op interfaces. Produces the MLIR-free
// LayerProfile that Cost and Search evaluate, and the summary that
// `trident inspect` prints.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_ANALYSIS_MODELANALYSIS_H
#define TRIDENT_ANALYSIS_MODELANALYSIS_H

#include "trident/Cost/LayerProfile.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mlir::trident::graph {
class ModelOp;
} // namespace mlir::trident::graph

namespace trident::analysis {

/// One row of the per-layer table: a top-level segment or a repeat.
struct LayerSummary {
  std::string name;
  LayerKind kind = LayerKind::Other;
  int64_t count = 1;              ///< repeat count (1 for segments)
  int64_t layersPerIteration = 1; ///< transformer layers in one iteration
  int64_t params = 0;             ///< per iteration
  double fwdFlops = 0;            ///< per iteration, per sequence
  double bwdFlops = 0;
  double savedBytes[3] = {0, 0, 0}; ///< per iteration, per sequence
};

/// What `trident inspect` reports, for micro-batch 1 at `seqLen`.
struct ModelSummary {
  std::string name;
  std::string architecture;
  int64_t seqLen = 0;
  int64_t params = 0;       ///< each tgraph.param once, times its repeats
  int64_t activeParams = 0; ///< routed experts counted top-k / experts
  std::map<std::string, int64_t> paramsByKind;
  int64_t layers = 0; ///< transformer layers
  /// Routed experts and top-k of the first expert layer (0 without one).
  int64_t experts = 0, topK = 0;
  double fwdFlopsPerSequence = 0;
  double bwdFlopsPerSequence = 0;
  double fwdFlopsPerToken = 0;
  double trainFlopsPerToken = 0;
  std::vector<LayerSummary> rows;
};

/// Summarises `model` at sequence length `seqLen` (0: the model's own).
ModelSummary summarizeModel(mlir::trident::graph::ModelOp model,
                            int64_t seqLen = 0);

/// Builds the cost table of `model` at `seqLen` (0: the model's own).
LayerProfile buildLayerProfile(mlir::trident::graph::ModelOp model,
                               int64_t seqLen = 0);

} // namespace trident::analysis

#endif // TRIDENT_ANALYSIS_MODELANALYSIS_H
