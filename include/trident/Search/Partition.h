//===- Partition.h - Layer-to-stage split by dynamic programming -*- C++ -*-===//
//
// Splits the transformer blocks of a model into contiguous pipeline stages
// so that the slowest stage is as fast as possible while every stage fits
// in its GPU's memory. Stage 0 also holds the embedding and the last stage
// the LM head (and final norm and loss), so an even split overloads them;
// the split may be uneven. This is the planner of PipeDream (Narayanan et
// al., "PipeDream: Generalized Pipeline Parallelism for DNN Training",
// SOSP'19, Sec. 3.1: dynamic programming over contiguous layer ranges,
// minimising the slowest stage) with the per-stage memory limit and
// per-stage device types of Metis (Um et al., "Metis: Fast Automatic
// Distributed Training on Heterogeneous GPUs", USENIX ATC'24, Sec. 4:
// heterogeneity-aware layer partitioning under memory limits).
//
// The costs come from the Evaluator itself (one single-layer probe per
// layer group and parallel axes: LayerCosts), so the split optimises what
// the final ranking measures.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SEARCH_PARTITION_H
#define TRIDENT_SEARCH_PARTITION_H

#include "trident/Support/Status.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace trident::search {

/// Per-micro-batch cost and memory of each layer of the model on one GPU
/// type under fixed (tp, cp, ep, micro-batch, sp, recompute, precision):
/// what one pipeline stage adds up.
struct LayerCosts {
  /// Forward + backward seconds of one micro-batch (exposed TP/CP/EP
  /// communication and recompute included; ZeRO-3 gathers and p2p not).
  double embeddingSeconds = 0, headSeconds = 0;
  std::vector<double> blockSeconds; ///< per block, in model order
  /// Activation bytes one in-flight micro-batch keeps, per layer.
  double embeddingActBytes = 0, headActBytes = 0;
  std::vector<double> blockActBytes;
  /// Under full recompute a stage also holds one layer's complete
  /// activations during its backward (once per stage, not per micro-batch
  /// in flight): the largest such layer counts.
  double embeddingPeakActBytes = 0, headPeakActBytes = 0;
  std::vector<double> blockPeakActBytes;
  /// Model-state bytes (weights + gradients + optimizer after ZeRO
  /// sharding) per layer on one GPU.
  double embeddingStateBytes = 0, headStateBytes = 0;
  std::vector<double> blockStateBytes;
  /// ZeRO-3 gathers a whole layer: the largest layer's parameter bytes,
  /// counted twice (prefetch), is a buffer. 0 unless ZeRO-3.
  double embeddingGatherBytes = 0, headGatherBytes = 0;
  std::vector<double> blockGatherBytes;
};

/// One pipeline stage's device: its costs and its memory budget.
struct StageDevice {
  const LayerCosts *costs = nullptr;
  double memoryLimitBytes = 0;  ///< capacity x max fraction
  double fixedBytes = 0;        ///< reserved + p2p buffers (with cache)
  /// Bytes held per byte of activations and gather buffers: 1 + the
  /// caching allocator's share (EvalOptions::allocatorCacheFraction).
  double dynamicScale = 1;
  int64_t inFlight = 1;         ///< micro-batches whose activations it holds
};

struct PartitionResult {
  bool feasible = false;
  /// Blocks per stage (stage order), each >= 1.
  std::vector<int64_t> layersPerStage;
  double maxStageSeconds = std::numeric_limits<double>::infinity();
  /// Memory of each stage as the model above computes it.
  std::vector<double> stageBytes;
};

/// Reusable buffers so a search loop does not allocate.
struct PartitionWorkspace {
  std::vector<double> best, prefixSec, prefixAct, prefixState;
  std::vector<int32_t> choice;
};

/// Memory of stage `s` holding blocks [begin, end) (plus the embedding if
/// s == 0 and the head if s == last).
double stageBytes(const StageDevice &dev, bool first, bool last, int64_t begin,
                  int64_t end);
/// Seconds of one micro-batch's forward + backward on that stage.
double stageSeconds(const StageDevice &dev, bool first, bool last,
                    int64_t begin, int64_t end);

/// The least makespan of a pipeline of `pp` stages without interleaving,
/// on one GPU type, that does `work` seconds per micro-batch over all its
/// stages, for `m` micro-batches. Stage s cannot start before the first
/// micro-batch has passed the stages before it, nor end its last backward
/// before the stages after it have done theirs and then the stages before
/// it: T >= sum_{j<s} x_j + m x_s for every s (x_j: stage j's work per
/// micro-batch). Over all splits of `work` the least such T is
/// work / (1 - (1 - 1/m)^pp) (each x_s at its largest, T/m (1 - 1/m)^s,
/// sums to `work`), at least m work / pp; m work for pp = 1.
double pipelineFillBound(double work, int64_t m, int64_t pp);

/// Splits the blocks over `stages.size()` stages (each >= 1 block),
/// minimising the slowest stage subject to every stage's memory limit.
/// Ties go to the split whose stages end earliest (deterministic).
/// O(p * N * w) where w is the number of split points tried per state
/// (bounded by an exact early exit: a longer stage is never faster).
PartitionResult partitionLayers(const std::vector<StageDevice> &stages,
                                int64_t numBlocks, PartitionWorkspace &ws);

} // namespace trident::search

#endif // TRIDENT_SEARCH_PARTITION_H
