//===- Explore.h - Cluster sizing and batch co-tuning by time to train -*- C++
//-*-===//
//
// `trident explore` (docs/explore.md): for each GPU type, node count and
// global batch, the best plan as `trident plan` finds it, and what it
// means for a whole training run: steps and wall time to train a number of
// tokens, GPU-hours and cost. With an automatic batch, the batch is chosen
// per scenario by the gradient-noise-scale relation of McCandlish et al.
// 2018, "An Empirical Model of Large-Batch Training": training to the same
// loss needs E = E_min (1 + B / B_noise) tokens in S = S_min (1 + B_noise /
// B) steps. Plain C++ (no MLIR): sees the model as a LayerProfile.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_EXPLORE_EXPLORE_H
#define TRIDENT_EXPLORE_EXPLORE_H

#include "trident/Cost/Evaluate.h"
#include "trident/Cost/LayerProfile.h"
#include "trident/Plan/Plan.h"
#include "trident/Search/Search.h"
#include "trident/Support/Status.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trident::explore {

/// One GPU type's sweep: a cluster preset and its node counts.
struct ClusterSweep {
  std::string preset;         ///< e.g. "dgx-h100"
  std::vector<int64_t> nodes; ///< ascending
};

/// Parses `--clusters`: comma-separated PRESET:N or PRESET:A..B (A, 2A,
/// 4A, ... up to B). Errors name the item and what was expected.
Result<std::vector<ClusterSweep>> parseClusterSweeps(std::string_view text);

/// Parses `--price-per-gpu-hour`: comma-separated GPU=DOLLARS (a GPU name
/// or alias of the catalog, e.g. h100=2.5), or one bare number for every
/// GPU (key "*"). Keys are the catalog's canonical names.
Result<std::map<std::string, double>> parsePrices(std::string_view text);

/// Parses `--global-batch` for explore: "auto" (empty result) or
/// comma-separated positive sequence counts.
Result<std::vector<int64_t>> parseBatchList(std::string_view text);

/// A hardware what-if (`--vary KEY=V1,V2,...`): one property, each value
/// a scenario of its own. Keys and units: gpu.bf16_tflops and
/// gpu.fp8_tflops (dense TFLOP/s; bf16 sets the fp16 peak too),
/// gpu.hbm_bw (TB/s), gpu.hbm_bytes (GB, 1e9 bytes), node.nic_bw (Gb/s per
/// NIC and direction), node.nvlink_bw (GB/s of all-reduce bus bandwidth
/// per GPU inside a node; the all-to-all bandwidth scales with it),
/// node.gpus_per_node. A value ending in "x" multiplies the preset's.
struct VaryValue {
  double value = 0;
  bool multiplier = false;
  std::string text; ///< as written, e.g. "1.5x" or "400"
};
struct Vary {
  std::string key;
  std::vector<VaryValue> values;
};

/// Parses one `--vary`; errors name the key or value and list the keys.
Result<Vary> parseVary(std::string_view text);

/// Applies key = value to every node group of `cluster`.
Status applyVary(Cluster &cluster, const std::string &key,
                 const VaryValue &value);

/// The critical batch (B_noise, tokens) a published scaling law gives
/// for a model of `nonEmbeddingParams` trained on `tokens`: Kaplan et al.
/// 2020, "Scaling Laws for Neural Language Models", Eq. 1.5 for the loss
/// L(N, D) and Eq. 1.4 for B_crit(L) = B* / L^(1 / alpha_B).
double defaultCriticalBatchTokens(double nonEmbeddingParams, double tokens);

struct ExploreOptions {
  int64_t seqLen = 0;
  /// Tokens to train on at a small batch (E_min of the relation; with a
  /// batch B a run needs E_min (1 + B / B_noise)). Used as given when the
  /// batches are given and no critical batch is.
  double tokens = 0;
  std::vector<ClusterSweep> clusters;
  /// Sequences per step to try; empty = automatic (powers of two).
  std::vector<int64_t> globalBatches;
  /// B_noise in tokens; 0 = defaultCriticalBatchTokens. Applies the
  /// token-efficiency relation also to given batches when set.
  double criticalBatchTokens = 0;
  /// Hardware what-ifs: each value of each is a scenario besides the
  /// presets as they are.
  std::vector<Vary> varies;
  /// Dollars per GPU-hour by canonical GPU name ("*": any).
  std::map<std::string, double> prices;
  double deadlineDays = 0; ///< > 0: pick the cheapest meeting it
  double budgetUsd = 0;    ///< > 0: pick the fastest within it
  /// The planner's options (precision, threads, memory fraction, pins);
  /// globalBatch is set per scenario.
  search::SearchOptions search;
  EvalOptions eval;
  /// Called after each scenario with (done, total).
  std::function<void(int64_t, int64_t)> progress;
};

/// What bounds a plan's step: the largest of the busiest stage's compute,
/// its exposed communication (with the exposed DP sync), and the bubble.
enum class Bound : uint8_t { Compute, Network, Bubble };
std::string_view boundName(Bound b);

struct ExploreRow {
  std::string gpu;    ///< canonical GPU name
  std::string preset; ///< cluster preset
  int64_t nodes = 0, gpus = 0;
  int64_t globalBatch = 0; ///< sequences per step
  /// The what-if of the row (key empty: the preset as it is).
  std::string varyKey;
  VaryValue varyValue;
  bool fits = false;
  std::string why; ///< when nothing fits: the planner's reason
  plan::Plan plan; ///< the best plan (when it fits)
  double iterationSeconds = 0, lowSeconds = 0, highSeconds = 0;
  double tokensPerSecond = 0, mfu = 0;
  Bound bound = Bound::Compute;
  /// The parts `bound` compares: busiest stage's compute, exposed
  /// communication (with the exposed DP sync), bubble; seconds per step.
  double computeSeconds = 0, networkSeconds = 0, bubbleSeconds = 0;
  /// Tokens this batch needs to reach the target, over tokens given
  /// (1 without the relation; 1 + B / B_noise with it).
  double tokenFactor = 1;
  double steps = 0;
  double timeToTrainSeconds = 0, gpuHours = 0;
  double costUsd = 0; ///< 0 without a price for the GPU
  bool pareto = false;
};

struct ExploreResult {
  /// Every scenario tried (auto batch: only each scenario's chosen batch),
  /// in sweep order: GPU type, node count, batch.
  std::vector<ExploreRow> rows;
  bool autoBatch = false;
  double criticalBatchTokens = 0; ///< 0: relation not applied
  bool criticalBatchFromLaw = false;
  double nonEmbeddingParams = 0; ///< the scaling law's N (from the law)
  bool priced = false;           ///< every fitting row has a price
  std::optional<size_t> deadlineAnswer, budgetAnswer;
  int64_t scenariosSearched = 0; ///< searches run (auto: all batches)
};

Result<ExploreResult> exploreScenarios(const LayerProfile &profile,
                                       const ExploreOptions &options);

/// A plan in one line: "dp8 tp8 pp4 ep2 vpp2 mb1 z1 rc-full".
std::string planSummary(const plan::Plan &p);

/// The text answer: the answers, the frontier, then every row.
std::string renderExploreText(const ExploreResult &r,
                              const ExploreOptions &options);

/// {"schema": "trident.explore/v1", ...}.
std::string renderExploreJson(const ExploreResult &r,
                              const ExploreOptions &options);

} // namespace trident::explore

#endif // TRIDENT_EXPLORE_EXPLORE_H
