//===- Simulator.h - Discrete-event simulation of a schedule ----*- C++ -*-===//
//
// Predicts one training step of a pipeline schedule from per-chunk compute
// times and per-boundary transfer times. The rules (docs/schedules.md):
//
//  - each stage executes its list in order, one action at a time;
//  - F(mb, g) needs F(mb, g-1) finished on its stage plus the transfer
//    over the boundary between the two stages;
//  - B(mb, g) needs B(mb, g+1) finished plus the transfer back, and its own
//    F(mb, g) (guaranteed by the list order); B(mb, G-1) needs only
//    F(mb, G-1);
//  - without p2p/compute overlap a sending stage is blocked for the
//    transfer time after the action that produced the data; with overlap
//    the transfer runs beside compute and only the receiver waits.
//
// Because the dependency graph depends only on (kind, p, m, v), it is
// compiled once (CompiledSchedule: topological order, dependency indices,
// peak in-flight counts) and every evaluation is one linear pass over
// flat arrays: simulateMakespan() allocates nothing once its workspace has
// grown. simulate() additionally records the full timeline for reports.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SCHEDULE_SIMULATOR_H
#define TRIDENT_SCHEDULE_SIMULATOR_H

#include "trident/Schedule/Schedule.h"
#include "trident/Support/Status.h"

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace trident {

/// A validated schedule plus everything about it that does not depend on
/// durations. Immutable after compileSchedule(); share it between threads.
class CompiledSchedule {
public:
  const Schedule &schedule() const { return schedule_; }
  ScheduleKind kind() const { return schedule_.kind; }
  int32_t p() const { return schedule_.p; }
  int32_t m() const { return schedule_.m; }
  int32_t v() const { return schedule_.v; }
  int64_t numActions() const { return static_cast<int64_t>(ops_.size()); }

  /// Peak number of (micro-batch, chunk) pairs whose forward has finished
  /// and whose backward has not, per stage: the activations the stage holds
  /// at its worst moment. It is fixed by the list order alone (a stage runs
  /// one action at a time), so it is computed here, not per simulation.
  const std::vector<int32_t> &peakInFlight() const { return peakInFlight_; }
  /// Forwards a stage runs before its first backward: the warm-up plus the
  /// forward that opens the steady state (all m*v if there is none).
  const std::vector<int32_t> &forwardsBeforeFirstBackward() const {
    return forwardsBeforeFirstBackward_;
  }

  /// One action in simulation (topological) order. Indices instead of
  /// pointers so the array is compact and position independent.
  struct Op {
    int32_t dep;   ///< topological index of the action whose output this
                   ///< one consumes, or numActions() (a slot that reads 0 s)
    int32_t cost;  ///< cost index: g for F of model chunk g, G + g for B
    int32_t stage; ///< stage that runs it
  };
  const std::vector<Op> &ops() const { return ops_; }
  /// For each cost index (see Op::cost), the stage boundary its output is
  /// sent over, or -1 when it stays on the stage (last chunk's forward,
  /// first chunk's backward, or p == 1). The transfer time depends only on
  /// the cost index, which lets the simulator fold it into one table.
  const std::vector<int32_t> &sendBoundary() const { return sendBoundary_; }
  /// For each op in topological order, its position in its stage's list.
  const std::vector<int32_t> &listPosition() const { return listPosition_; }
  /// Topological index of the last action of each stage.
  const std::vector<int32_t> &lastOpOfStage() const { return lastOp_; }

  /// The steady state of a 1F1B or interleaved schedule: ops [begin, end)
  /// repeat with a period of `ops` ops, i.e. for begin <= i < end - ops,
  /// ops[i + ops] is ops[i] one period later (same stage and cost index,
  /// its dependency `ops` further on, or none for both). A period is
  /// `microBatches` micro-batches (1F1B: 1, interleaved: p) of every
  /// stage's forward and backward. `lookback` is the largest distance from
  /// an op at or after `begin` back to its dependency, at least `ops`.
  /// ops == 0: no steady state (GPipe, or too few micro-batches).
  struct SteadyState {
    int64_t begin = 0, end = 0;
    int32_t ops = 0, microBatches = 0, lookback = 0;
  };
  const SteadyState &steadyState() const { return steady_; }

private:
  friend Result<CompiledSchedule> compileSchedule(Schedule schedule);
  Schedule schedule_;
  std::vector<Op> ops_;
  std::vector<int32_t> listPosition_;
  std::vector<int32_t> sendBoundary_;
  std::vector<int32_t> lastOp_;
  std::vector<int32_t> peakInFlight_;
  std::vector<int32_t> forwardsBeforeFirstBackward_;
  SteadyState steady_;
};

/// Validates `schedule` (validateSchedule) and precomputes its simulation
/// order and dependency indices.
Result<CompiledSchedule> compileSchedule(Schedule schedule);

/// Communication a pass's duration includes (the exposed part; what
/// overlaps compute is not in the pass's time).
enum class PassComm : uint8_t {
  TensorParallel,  ///< TP collectives (sequence-parallel included)
  ContextParallel, ///< the ring attention's KV exchange
  ExpertParallel,  ///< the experts' token all-to-all
  DataParallel,    ///< ZeRO-3's parameter gathers and gradient scatters
};
inline constexpr size_t kPassCommKinds = 4;

/// Durations of one step's work. Chunk-indexed vectors use the model chunk
/// g = c*p + s (globalChunk()), size p*v; stages may be uneven.
struct PipelineCosts {
  std::vector<double> forwardSeconds;  ///< one micro-batch through chunk g
  std::vector<double> backwardSeconds; ///< its backward (recompute included)
  /// Transfer time (latency + bytes / bandwidth) over boundary b, which
  /// joins stage b and stage (b + 1) % p, used in both directions. Size 0
  /// (no transfer cost), p - 1, or p; the wrap boundary p-1 -> 0 is crossed
  /// only when v > 1, so then an explicit list must have size p.
  std::vector<double> p2pSeconds;
  /// True: transfers run beside compute (the sender is not blocked).
  /// False: the sender is busy for the transfer after producing the data.
  bool overlapP2P = false;
  /// Of forwardSeconds[g] and backwardSeconds[g], the exposed
  /// communication by PassComm kind (the Evaluator fills them; the trace
  /// draws them, the simulator reads only the totals). Empty: unknown.
  std::vector<std::array<double, kPassCommKinds>> forwardComm, backwardComm;

  /// Every chunk of every stage the same (per-chunk times), every boundary
  /// the same transfer time.
  static PipelineCosts uniform(int64_t p, int64_t v, double forwardSeconds,
                               double backwardSeconds, double p2pSeconds = 0,
                               bool overlapP2P = false);
};

/// Checks sizes and values (finite, non-negative) of `costs` for `sched`.
Status checkPipelineCosts(const CompiledSchedule &sched,
                          const PipelineCosts &costs);

/// What simulateMakespan() returns: no per-action data.
struct MakespanResult {
  double makespanSeconds = 0;
  /// Compute time of the busiest stage (its forwards and backwards).
  double maxStageBusySeconds = 0;
  /// (makespan - busiest stage's compute) / busiest stage's compute: the
  /// bubble time fraction of Narayanan et al. SC'21 (t_pb / t_id), which for
  /// even stages is the fraction of the ideal step lost to pipelining.
  double bubbleFraction = 0;
  /// Largest per-stage peak in-flight count (CompiledSchedule::peakInFlight
  /// has the per-stage values).
  int32_t maxPeakInFlight = 0;
};

/// Buffers reused across simulateMakespan() calls; one per thread.
class SimWorkspace {
public:
  /// Per cost index: compute time; transfer of the output to its consumer
  /// after the compute ends; how long the sender stays blocked after the
  /// compute ends (the transfer without overlap, else 0).
  struct CostEntry {
    double computeSeconds, transferSeconds, blockSeconds;
  };
  std::vector<double> available;  ///< per op: output usable by consumer
  std::vector<double> stageFree;  ///< per stage: when it can start next
  std::vector<CostEntry> cost;    ///< per cost index
  std::vector<double> busy;       ///< compute seconds per stage
  std::vector<double> start, end; ///< per op, filled by simulate() only
  /// Extending a steady state: the stages' free times a period before,
  /// and the increments of the state over that period.
  std::vector<double> prevFree, delta;
};

/// Makespan, bubble fraction and peak in-flight of one step, without a
/// timeline. Allocation-free once `ws` has grown to the schedule's size.
/// If `stageIdleSeconds` is non-empty it must have p entries and receives
/// each stage's idle time (makespan minus its compute).
Result<MakespanResult>
simulateMakespan(const CompiledSchedule &sched, const PipelineCosts &costs,
                 SimWorkspace &ws, std::span<double> stageIdleSeconds = {});

/// Same, with a thread-local workspace.
Result<MakespanResult> simulateMakespan(const CompiledSchedule &sched,
                                        const PipelineCosts &costs);

/// simulateMakespan() of the schedule `sched` would be with
/// `extraPeriods` more periods of its steady state (steadyState(): the
/// schedule of m + extraPeriods * microBatches micro-batches), in the time
/// of `sched` alone: once a period moves the simulation's state by the
/// same amount in every component (to 1e-12 of the makespan over all the
/// periods skipped), the state is moved ahead by the skipped periods
/// (Simulator.cpp, runExtendedPass, has the argument). Sets `*settled` to
/// false, and returns nothing useful, when the state did not settle inside
/// `sched`'s steady state: simulate a longer schedule then.
Result<MakespanResult> simulateMakespan(const CompiledSchedule &sched,
                                        const PipelineCosts &costs,
                                        SimWorkspace &ws,
                                        std::span<double> stageIdleSeconds,
                                        int64_t extraPeriods, bool *settled);

/// One executed action.
struct TimedAction {
  ScheduleAction action;
  double startSeconds = 0;
  double endSeconds = 0;
};

/// Full simulation output, for reports and traces.
struct SimulationResult {
  double makespanSeconds = 0;
  double bubbleFraction = 0;       ///< as in MakespanResult
  std::vector<double> busySeconds; ///< compute per stage
  /// makespan - busySeconds: waiting, plus blocked sends without overlap.
  std::vector<double> idleSeconds;
  /// Seconds each stage spent blocked sending (0 with overlapP2P).
  std::vector<double> sendBlockedSeconds;
  std::vector<int32_t> peakInFlight; ///< per stage
  /// timeline[s] lists stage s's actions in its execution order.
  std::vector<std::vector<TimedAction>> timeline;
};

/// Simulates one step and records every action's start and end.
Result<SimulationResult> simulate(const CompiledSchedule &sched,
                                  const PipelineCosts &costs);

/// Same, overwriting `out` and reusing its buffers (for callers that draw
/// many timelines). `out` is unspecified after an error.
Status simulateInto(const CompiledSchedule &sched, const PipelineCosts &costs,
                    SimulationResult &out);

} // namespace trident

#endif // TRIDENT_SCHEDULE_SIMULATOR_H
