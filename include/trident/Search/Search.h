//===- Search.h - The planner: enumerate, partition, prune, rank -*- C++ -*-===//
//
// Finds the best parallel plans of one model (a LayerProfile) for one
// cluster and global batch. The search space is every combination of
// data / tensor / pipeline / context / expert parallel sizes, virtual
// stages, sequence parallelism, micro-batch size, recomputation policy and
// ZeRO stage that the Evaluator accepts, and for each the layer-to-stage
// split found by dynamic programming (Partition.h). Every plan that can be
// in the top K is ranked by the Evaluator's full evaluation (schedule
// simulation included); the others are pruned by exact lower bounds.
//
// Deterministic: the result is a pure function of the inputs, whatever the
// thread count (see docs/planner.md, "Determinism").
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SEARCH_SEARCH_H
#define TRIDENT_SEARCH_SEARCH_H

#include "trident/Cost/Evaluate.h"
#include "trident/Cost/LayerProfile.h"
#include "trident/Hardware/Cluster.h"
#include "trident/Search/Partition.h"
#include "trident/Search/Pins.h"
#include "trident/Support/Status.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace trident::search {

/// What the search minimises.
enum class Objective : uint8_t {
  StepTime,     ///< seconds per optimizer step (default)
  CostPerToken, ///< dollars per token; needs a price per GPU-hour
};

struct SearchOptions {
  int64_t globalBatch = 0; ///< sequences per optimizer step (required)
  DType precision = DType::BF16;
  int64_t topK = 5;
  /// Worker threads; 0 = std::thread::hardware_concurrency().
  int64_t threads = 0;
  Objective objective = Objective::StepTime;
  /// Rank by the high end of each plan's 80 % step-time interval
  /// (Cost/Envelope.h) rather than by the prediction itself: a plan in a
  /// regime the published runs were predicted less well in ranks lower.
  bool robust = false;
  /// Dollars per GPU-hour; > 0 enables CostPerToken and the cost columns.
  double pricePerGpuHour = 0;
  /// A plan fits when every GPU needs at most this fraction of its memory.
  double maxMemoryFraction = 1.0;
  /// Axes the user pinned (--fix).
  Pins pins;
  /// With CostPerToken on a homogeneous cluster, also try using only
  /// nodes/2, nodes/4, ... of the nodes (a smaller job may cost less per
  /// token). Ignored for StepTime, which always uses every GPU.
  bool considerFewerNodes = true;
  /// Heterogeneous clusters: also try every order of the node groups
  /// (which GPU type serves the first pipeline stages), up to 4 groups.
  bool permuteGroups = true;
  /// Heterogeneous clusters: also try plans in which each node group runs
  /// whole data-parallel replicas, with micro-batches per replica in
  /// proportion to the group's speed (ParallelConfig::dataShares).
  bool dataShares = true;
  /// Called now and then from worker threads with the fraction done.
  std::function<void(double)> progress;
  /// Keep up to this many fully evaluated configurations in
  /// SearchResult::explored (0: keep none), for plots of the space.
  int64_t maxExplored = 0;
  /// When set, only plans it accepts are ranked: it returns "" to accept
  /// a fitting, fully evaluated configuration on `cluster` (the variant it
  /// runs on), or why not. `trident plan --export T` refuses what T cannot
  /// express, so the best plan is the best T can run. Called from worker
  /// threads: it must be thread-safe and depend on its arguments only.
  std::function<std::string(const ParallelConfig &cfg, const Evaluation &eval,
                            const Cluster &cluster)>
      accept;
  /// When set, asked before a configuration is evaluated (its layer split
  /// still empty): "" to go on, or why it is skipped. For the checks of
  /// `accept` that need the parallel axes only; ZeRO-1, otherwise
  /// dominated by ZeRO-2, is tried where this refuses ZeRO-2. Same thread
  /// rules as `accept`.
  std::function<std::string(const ParallelConfig &cfg)> acceptAxes;
};

/// One ranked plan.
struct Candidate {
  ParallelConfig config;
  Evaluation eval;
  /// Index into SearchResult::clusters: the cluster this plan runs on (a
  /// subset of the nodes, or the node groups reordered).
  int64_t clusterIndex = 0;
  double objective = 0;  ///< seconds, or dollars per token
  double costPerToken = 0; ///< dollars; 0 without a price
  /// How the layers were split: "dp" (dynamic programming), "balanced"
  /// (the Evaluator's even split) or "single" (one stage).
  std::string partition;
};

/// One configuration (with its layer split) the full Evaluator evaluated.
struct ExploredPoint {
  ParallelConfig config;
  int64_t clusterIndex = 0; ///< into SearchResult::clusters
  double objective = 0;     ///< as Candidate::objective
  double iterationSeconds = 0;
  double peakMemoryBytes = 0;
  double memoryCapacityBytes = 0; ///< of the GPU of the peak stage
  bool fits = false; ///< within SearchOptions::maxMemoryFraction everywhere
};

struct SearchStats {
  int64_t configurations = 0; ///< valid axis combinations enumerated
  int64_t prunedByBound = 0;  ///< skipped: step-time lower bound too high
  int64_t prunedByMemory = 0; ///< skipped: no layer split fits
  int64_t partitions = 0;     ///< dynamic programs solved
  int64_t evaluations = 0;    ///< full Evaluator evaluations
  int64_t probes = 0;         ///< single-layer cost probes
  int64_t fitting = 0;        ///< configurations with a plan that fits
  double seconds = 0;         ///< wall time
  int64_t threads = 1;
  /// Fitting plans SearchOptions::accept refused (only those that could
  /// still enter the top K are asked; depends on the threads' timing).
  int64_t rejected = 0;
};

/// A fitting plan SearchOptions::accept refused, and its reason.
struct Rejected {
  Candidate candidate;
  std::string reason;
};

/// Why nothing fits, and what would.
struct NoFit {
  /// The configuration that came closest (smallest peak memory relative
  /// to the limit) and its evaluation.
  ParallelConfig closest;
  Evaluation eval;
  int64_t clusterIndex = 0;
  double limitBytes = 0;    ///< per GPU of the stage that overflows
  double shortBytes = 0;    ///< peak minus limit
  std::vector<std::string> suggestions;
  std::string message;      ///< one paragraph for the user
};

struct SearchResult {
  /// Best first; empty when nothing fits (then noFit is set).
  std::vector<Candidate> top;
  std::optional<NoFit> noFit;
  /// clusters[0] is the input cluster; others are the variants tried.
  std::vector<Cluster> clusters;
  std::vector<std::string> clusterNotes; ///< "", "4 of 8 nodes", ...
  SearchStats stats;
  /// With SearchOptions::maxExplored > 0: the evaluations whose step-time
  /// lower bound is within the final K-th best objective (those every
  /// thread count evaluates, so the list is deterministic), best objective
  /// first, then peak memory; at most maxExplored.
  std::vector<ExploredPoint> explored;
  /// With SearchOptions::accept: the best plan it refused, when that plan
  /// ranks before top.back() or top holds fewer than K plans (nothing was
  /// pruned then), so that it is the same whatever the thread count.
  /// Empty otherwise.
  std::optional<Rejected> bestRejected;
};

/// Runs the search. Errors: bad options (the message names the option),
/// pins that contradict the cluster or the model, or no valid
/// configuration at all (the message says which constraint fails).
Result<SearchResult> searchPlans(const LayerProfile &profile,
                                 const Cluster &cluster,
                                 const SearchOptions &options,
                                 const EvalOptions &evalOptions = {});

/// Total order used for ranking ties: true when `a` is listed before `b`.
/// Objective first, then peak memory, then the configuration itself.
bool rankedBefore(const Candidate &a, const Candidate &b);

/// Lexicographic order of configurations (tp, cp, pp, dp, ep, vpp, micro
/// batch, sp, recompute, zero, schedule, layers per chunk): the tie-break
/// that makes the search deterministic.
int compareConfigs(const ParallelConfig &a, const ParallelConfig &b);

/// The per-stage time and memory model the partitioner uses for `cfg`
/// (vpp must be 1): probed layer costs and one StageDevice per stage.
/// Exposed so tests can hold it against the Evaluator's own numbers.
struct StageModel {
  std::vector<LayerCosts> costs; ///< per node group of the cluster
  std::vector<StageDevice> stages; ///< point into `costs`
  int64_t numBlocks = 0;
  StageModel() = default;
  StageModel(const StageModel &) = delete;
  StageModel &operator=(const StageModel &) = delete;
  StageModel(StageModel &&) = default;
  StageModel &operator=(StageModel &&) = default;
};
Result<StageModel> stageModel(const LayerProfile &profile,
                              const Cluster &cluster, const ParallelConfig &cfg,
                              const EvalOptions &evalOptions = {},
                              double maxMemoryFraction = 1.0);

/// A few lines on why the winner beats each runner-up: where the step time
/// difference comes from (bubble, exposed communication, recompute,
/// stage imbalance, DP sync) and memory headroom.
std::string explainWinner(const SearchResult &result);

} // namespace trident::search

#endif // TRIDENT_SEARCH_SEARCH_H
