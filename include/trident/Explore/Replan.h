//===- Replan.h - Re-planning a running job for another cluster -*- C++ -*-===//
//
// When a job loses or gains GPUs, `trident replan` weighs two ways on:
// stay on the old layout (the data-parallel degree shrunk to the GPUs
// left, or unchanged when GPUs were added), or move to the best plan for
// the new cluster. Each side is priced by its step time (the Evaluator)
// and by the state each rank must read before it can go on: its shard of
// the weights and optimizer state (the plan's memory model), read from the
// checkpoint store or from the surviving ranks over the nodes' NICs. The
// break-even is the number of steps after which moving has paid for its
// longer resharding. docs/elastic.md.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_EXPLORE_REPLAN_H
#define TRIDENT_EXPLORE_REPLAN_H

#include "trident/Cost/Evaluate.h"
#include "trident/Plan/Plan.h"
#include "trident/Search/Search.h"

#include <optional>
#include <string>

namespace trident::explore {

struct ReplanOptions {
  /// Aggregate read bandwidth of the checkpoint store, bytes/s; 0: the
  /// store is not the bottleneck (the nodes' NICs are).
  double storageBytesPerS = 0;
  /// Fixed cost of a restart (scheduling, process start, NCCL init),
  /// seconds, paid by both sides; 0 by default.
  double restartSeconds = 0;
  int64_t threads = 0;
};

/// What a side must read before its first step.
struct StateMove {
  double bytesTotal = 0;      ///< over all ranks
  double bytesPerRankMax = 0; ///< the rank that reads the most
  double storeBytes = 0;      ///< read from the checkpoint store
  double seconds = 0;         ///< resharding time (with the restart)
};

/// One way on: a plan on the new cluster and what getting there costs.
struct ReplanSide {
  bool possible = false;
  std::string why; ///< when not possible
  plan::Plan plan;
  StateMove move;
};

struct ReplanResult {
  ReplanSide stay; ///< the old layout, dp shrunk to the GPUs left
  ReplanSide move; ///< the best plan for the new cluster
  /// Steps after which moving beats staying: 0 when staying is not
  /// possible, empty when moving never pays (it is not faster).
  std::optional<int64_t> breakEvenSteps;
};

/// Re-plans `old` (a plan of the model `profile`, at its sequence length)
/// for `cluster`. Errors name the plan field or the option at fault.
Result<ReplanResult> replan(const LayerProfile &profile, const plan::Plan &old,
                            const Cluster &cluster, const ReplanOptions &o,
                            const EvalOptions &evalOptions);

std::string renderReplanText(const ReplanResult &r, const plan::Plan &old,
                             const Cluster &cluster);
/// {"schema": "trident.replan/v1", "old": plan, "stay": {...}, "move":
/// {...}, "break_even_steps": N | null}.
std::string renderReplanJson(const ReplanResult &r, const plan::Plan &old,
                             const Cluster &cluster);

} // namespace trident::explore

#endif // TRIDENT_EXPLORE_REPLAN_H
