//===- Schedule.h - Pipeline schedules as per-stage lists -------*- C++ -*-===//
//
// The single source of truth for pipeline-parallel schedules. A schedule is,
// for every pipeline stage, the ordered list of forward / backward actions
// that stage executes in one training step. The cost model's simulator
// (Simulator.h) and, later, the code generator both consume these lists, so
// what is predicted is what runs.
//
// Chunk numbering: with `v` virtual chunks per stage the model is cut into
// G = p*v model chunks in model order; model chunk g = c*p + s lives on stage
// s as its local chunk c (Narayanan et al., "Efficient Large-Scale Language
// Model Training on GPU Clusters Using Megatron-LM", SC'21, Sec. 2.2). An
// action names the local chunk; globalChunk() converts.
//
// See docs/schedules.md for the schedules and the simulation rules.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SCHEDULE_SCHEDULE_H
#define TRIDENT_SCHEDULE_SCHEDULE_H

#include "trident/Support/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trident {

/// The schedules Trident can build.
enum class ScheduleKind : uint8_t {
  GPipe,           ///< all forwards, then all backwards (Huang et al. 2019)
  OneFOneB,        ///< PipeDream-Flush / Megatron non-interleaved 1F1B
  Interleaved1F1B, ///< Megatron-LM interleaved 1F1B with v chunks per stage
};

/// Stable lower-case name: "gpipe", "1f1b", "interleaved-1f1b".
std::string_view scheduleKindName(ScheduleKind kind);
/// Inverse of scheduleKindName; nullopt for an unknown name.
std::optional<ScheduleKind> parseScheduleKind(std::string_view name);

/// What one action computes.
enum class ActionKind : uint8_t {
  Forward,
  Backward,
  /// Reserved for zero-bubble schedules (Qi et al. 2024), which split the
  /// backward into the input-gradient part (on the critical path) and the
  /// weight-gradient part (fills bubbles). No builder emits them yet and
  /// validateSchedule() rejects them until the simulator models them.
  BackwardInput,
  BackwardWeight,
};

/// Short name: "F", "B", "Bi", "W".
std::string_view actionKindName(ActionKind kind);

/// One unit of work on one stage: a forward or backward pass of one
/// micro-batch through one of the stage's local chunks.
struct ScheduleAction {
  ActionKind kind = ActionKind::Forward;
  int32_t microBatch = 0; ///< 0 .. m-1
  int32_t chunk = 0;      ///< local (virtual) chunk on the stage, 0 .. v-1

  bool operator==(const ScheduleAction &) const = default;
};

/// Model chunk index of local chunk `chunk` on `stage` (Megatron-LM SC'21,
/// Sec. 2.2: stage s holds model chunks s, s+p, s+2p, ...).
constexpr int64_t globalChunk(int64_t chunk, int64_t stage, int64_t p) {
  return chunk * p + stage;
}

/// A complete pipeline schedule for one training step.
struct Schedule {
  ScheduleKind kind = ScheduleKind::OneFOneB;
  int32_t p = 1; ///< pipeline stages
  int32_t m = 1; ///< micro-batches per step
  int32_t v = 1; ///< virtual chunks per stage (1 unless interleaved)
  /// perStage[s] is the order in which stage s executes its actions: each
  /// (micro-batch, chunk) appears once as Forward and later once as Backward.
  std::vector<std::vector<ScheduleAction>> perStage;

  int64_t numActions() const;
};

/// Largest p*m*v accepted, so action indices fit comfortably in 32 bits and
/// a typo ("m=1e9") is an error rather than an out-of-memory.
inline constexpr int64_t kMaxScheduleMicroBatchChunks = int64_t(1) << 24;
/// Largest stage count accepted (a stage index is stored in 16 bits).
inline constexpr int64_t kMaxPipelineStages = 4096;

/// Checks (kind, p, m, v) without building anything: p, m, v positive and in
/// range; v == 1 for GPipe and 1F1B; v >= 2 and m % p == 0 for interleaved.
Status checkScheduleParams(ScheduleKind kind, int64_t p, int64_t m, int64_t v);

/// Builds the schedule's per-stage action lists. Errors (never asserts) on
/// bad parameters; see checkScheduleParams().
Result<Schedule> buildSchedule(ScheduleKind kind, int64_t p, int64_t m,
                               int64_t v = 1);

/// Forwards stage `stage` runs before its first backward in Megatron-LM's
/// interleaved schedule: (p - s - 1) * 2 + (v - 1) * p, capped at m * v.
/// The steady state then begins with one more forward unless the cap hit.
int64_t interleavedWarmupForwards(int64_t p, int64_t m, int64_t v,
                                  int64_t stage);

/// Checks a schedule (built here or written by hand): sizes consistent,
/// every (micro-batch, chunk) forwarded exactly once and backwarded exactly
/// once per stage with the forward first, and the cross-stage dependencies
/// (see docs/schedules.md) acyclic together with each stage's order, i.e.
/// the schedule cannot deadlock.
Status validateSchedule(const Schedule &schedule);

/// How stage `stage` groups its point-to-point transfers, as the number of
/// actions in each of its communication steps, in list order. After a step
/// the stage issues the sends of the step's actions together with the
/// receives of the next step's actions as one group (NCCL's
/// ncclGroupStart..ncclGroupEnd), before step 0 the receives of step 0.
/// GPipe and 1F1B: one action per step (Megatron-LM's
/// send_forward_recv_backward / send_backward_recv_forward pairing).
/// Interleaved: the warm-up forwards one by one, each steady-state forward
/// and backward together, the cool-down backwards one by one (Megatron-LM
/// `forward_backward_pipelining_with_interleaving` and its
/// send_forward_backward_recv_forward_backward). Sizes sum to the stage's
/// action count.
std::vector<int32_t> transferSteps(const Schedule &schedule, int64_t stage);

/// Checks that the schedule's pipeline transfers, grouped by
/// transferSteps(), complete under NCCL's rules: a group ends only when each
/// of its sends met its receive and each receive its send, a rank pair's
/// messages pair in issue order (so each stage must receive a neighbour's
/// tensors in the order that neighbour sends them), and model chunk g
/// sends its forward output to chunk g+1 and its input gradient to g-1
/// (on stage (g +- 1) mod p). An error names the stages left waiting and
/// what each waits for. Validate the schedule first (validateSchedule).
Status checkTransferGroups(const Schedule &schedule);
/// Same with the steps given (stepSizes[s] for stage s, each summing to
/// the stage's action count) instead of transferSteps()'s.
Status checkTransferGroups(const Schedule &schedule,
                           const std::vector<std::vector<int32_t>> &stepSizes);

/// One line per stage ("s0: F0.0 F1.0 B0.0 ..."; mb.chunk), for tests and
/// debugging.
std::string formatSchedule(const Schedule &schedule);

} // namespace trident

#endif // TRIDENT_SCHEDULE_SCHEDULE_H
