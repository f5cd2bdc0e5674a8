//===- Trace.h - The simulated training step as a timeline -----*- C++ -*-===//
//
// Replays one evaluated plan through the schedule simulator with the very
// per-chunk durations and transfer times the Evaluator used, and lays the
// result out as tracks of events: one track per pipeline stage (grouped by
// the node group serving it, so the stages of a heterogeneous cluster
// appear per GPU type), forward and backward passes per micro-batch and
// virtual chunk, the idle bubbles between them, blocked sends, the
// point-to-point transfers on their own tracks, then the exposed
// data-parallel synchronisation and the optimizer step, and last the
// communication exposed inside the passes (PipelineCosts::forwardComm):
// per stage, one track each for tensor-, context- and expert-parallel
// collectives and ZeRO-3's gathers, drawn at the end of the pass that
// includes them.
//
// traceToChromeJson() writes it in the Chrome trace-event format (complete
// events, microseconds), which chrome://tracing and Perfetto open; the
// HTML report draws the same events. docs/report-and-trace.md.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_REPORT_TRACE_H
#define TRIDENT_REPORT_TRACE_H

#include "trident/Cost/Evaluate.h"
#include "trident/Cost/LayerProfile.h"
#include "trident/Hardware/Cluster.h"
#include "trident/Schedule/Simulator.h"
#include "trident/Support/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace trident::report {

/// One simulated step of one plan.
struct StepTimeline {
  std::string model;
  std::string cluster;
  ParallelConfig config;
  Evaluation eval;
  PipelineCosts costs; ///< the Evaluator's, per model chunk / boundary
  std::shared_ptr<const CompiledSchedule> schedule;
  SimulationResult sim;
  /// Per stage: node group name and GPU type, GPUs of the stage.
  std::vector<std::string> stageGroup, stageGpu;
  int64_t gpusPerStage = 0;
};

/// Evaluates `cfg` and simulates its schedule with the Evaluator's costs.
/// Errors: the Evaluator's (invalid configuration) or the simulator's.
Result<StepTimeline> simulateStep(const LayerProfile &profile,
                                  const Cluster &cluster,
                                  const ParallelConfig &cfg,
                                  const EvalOptions &options = {});

enum class TraceCategory : uint8_t {
  Forward,
  Backward,
  Bubble,       ///< a stage idle, waiting for its input
  SendBlocked,  ///< a stage busy sending (no p2p/compute overlap)
  P2P,          ///< an activation or gradient in flight between stages
  DataParallel, ///< exposed gradient synchronisation / parameter gather
  Optimizer,
  TensorParallel,  ///< exposed TP collectives inside a pass
  ContextParallel, ///< exposed ring-attention exchange inside a pass
  ExpertParallel,  ///< exposed expert all-to-all inside a pass
};

/// "forward", "backward", "bubble", "send", "p2p", "data-parallel",
/// "optimizer", "tensor-parallel", "context-parallel", "expert-parallel":
/// the `cat` of the Chrome trace.
std::string_view traceCategoryName(TraceCategory c);

struct TraceTrack {
  int32_t pid = 0, tid = 0;
  std::string process, thread;
};

struct TraceEvent {
  std::string name; ///< "F mb3 chunk1", "bubble", ...
  TraceCategory category = TraceCategory::Forward;
  int32_t track = 0; ///< index into Trace::tracks
  double startSeconds = 0, durationSeconds = 0;
  /// For stage work and transfers; -1 otherwise.
  int32_t stage = -1, microBatch = -1, chunk = -1;
};

struct Trace {
  std::string title; ///< "gpt3_175b on dgx-a100-80gb:128: dp=8 tp=8 ..."
  /// tracks[s] is pipeline stage s (s < numStages); communication and the
  /// optimizer follow.
  std::vector<TraceTrack> tracks;
  std::vector<TraceEvent> events; ///< by track, then start time
  int64_t numStages = 0;
  double pipelineSeconds = 0; ///< the simulated makespan
  double stepSeconds = 0;     ///< the Evaluator's iteration time
};

/// Lays out a simulated step as tracks of events.
Trace buildTrace(const StepTimeline &step);

/// The Chrome trace-event JSON of `trace` (deterministic text).
std::string traceToChromeJson(const Trace &trace);

} // namespace trident::report

#endif // TRIDENT_REPORT_TRACE_H
