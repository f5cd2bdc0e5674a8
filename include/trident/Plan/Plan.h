//===- Plan.h - A training plan and its trident.plan/v1 JSON ---*- C++ -*-===//
//
// The plan is what the planner hands to runtimes: the parallel axes, the
// micro-batching, recomputation, ZeRO stage, the layers and devices of each
// pipeline stage, the schedule and the cost model's predictions. It is a
// plain value (operator== compares every field) so that a written plan
// reads back identical. The JSON schema is docs/plan-schema.md.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_PLAN_PLAN_H
#define TRIDENT_PLAN_PLAN_H

#include "trident/Cost/Evaluate.h"
#include "trident/Cost/LayerProfile.h"
#include "trident/Hardware/Cluster.h"
#include "trident/Plan/Parallel.h"
#include "trident/Support/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trident::plan {

/// The schema identifier written in every plan.
inline constexpr std::string_view kPlanSchema = "trident.plan/v1";

/// One pipeline stage (every GPU of the stage holds the same layers).
struct StagePlan {
  int64_t index = 0;
  int64_t layers = 0; ///< transformer blocks, all virtual chunks together
  /// Blocks of each local virtual chunk c (model chunk c*pp + index).
  std::vector<int64_t> chunkLayers;
  /// First and one-past-last block of each chunk, in model numbering.
  std::vector<std::pair<int64_t, int64_t>> chunkBlockRanges;
  bool hasEmbedding = false, hasHead = false;
  /// This stage's recomputation; the plan's top-level `recompute` is the
  /// heaviest of them.
  Recompute recompute = Recompute::None;
  // --- devices ---
  std::string deviceGroup; ///< node group name
  std::string gpu;         ///< GPU type
  int64_t firstGpu = 0;    ///< global index of its first GPU
  int64_t numGpus = 0;     ///< dp * tp * cp
  // --- memory per GPU, bytes ---
  double weightBytes = 0, gradientBytes = 0, optimizerBytes = 0;
  double activationBytes = 0, bufferBytes = 0, totalBytes = 0;
  double capacityBytes = 0;
  int64_t peakInFlight = 0;
  /// ZeRO-3: parameter elements of the stage's largest layer, gathered at
  /// once (two held: in use and prefetched); 0 otherwise or unrecorded.
  double zero3GatherElements = 0;
  // --- time per step, seconds ---
  double computeSeconds = 0, exposedCommSeconds = 0, bubbleSeconds = 0;

  bool operator==(const StagePlan &) const = default;
};

/// Heterogeneous data parallelism: the replicas of one node group.
struct DataSharePlan {
  std::string group;        ///< node group name
  int64_t dp = 1;           ///< replicas on that group
  int64_t microBatches = 1; ///< per replica per step
  bool operator==(const DataSharePlan &) const = default;
};

struct Predicted {
  double iterationSeconds = 0;
  double tokensPerSecond = 0;
  double tflopsPerGpu = 0;
  double mfu = 0;
  double peakMemoryBytes = 0;
  double bubbleFraction = 0;
  double exposedCommFraction = 0;
  /// Dollars per million tokens; 0 when no price was given.
  double costPerMillionTokens = 0;
  /// The step time's 80 % interval (Cost/Envelope.h: out-of-sample
  /// residuals of the nearest validated regime); both 0 in plans written
  /// before it.
  double iterationLowSeconds = 0, iterationHighSeconds = 0;

  bool operator==(const Predicted &) const = default;
};

/// What a plan records of its model's shape, so that it is not applied to
/// another model of the same name (verify()). Zero: unknown (plans written
/// before the field).
struct ModelShape {
  int64_t layers = 0; ///< blocks the pipeline split covers
  int64_t hidden = 0;
  int64_t vocab = 0;
  int64_t params = 0;
  bool known() const { return layers > 0 || hidden > 0 || params > 0; }
  bool operator==(const ModelShape &) const = default;
};

/// Where a plan's model came from, so that the commands that apply the plan
/// (export, replan, shard export) find it again without --model: a zoo
/// name, or the path of the config.json or .mlir file as it was given to
/// `trident plan` with the SHA-256 of its bytes, so that a file edited since
/// is refused. Empty in plans written before the field.
struct ModelSource {
  std::string zoo;    ///< zoo name ("llama-3-8b"), or ""
  std::string path;   ///< file path, or ""
  std::string sha256; ///< lowercase hex digest of the file (with `path`)
  bool known() const { return !zoo.empty() || !path.empty(); }
  bool operator==(const ModelSource &) const = default;
};

/// The shape of the model a profile describes.
ModelShape modelShapeOf(const LayerProfile &profile);

/// Blocks a plan splits into pipeline chunks: the profile's Block and Other
/// groups (a model without transformer blocks is one).
int64_t plannedBlocks(const LayerProfile &profile);

/// A plan: the parallel axes (ParallelAxes, the record every other file
/// reads through the axis table of Parallel.h; `schedule` is always set),
/// and what the planner adds to them.
struct Plan : ParallelAxes {
  std::string schema = std::string(kPlanSchema);
  std::string model;
  ModelShape modelShape;
  ModelSource modelSource;
  int64_t seqLen = 0;
  std::string cluster;   ///< cluster name
  int64_t gpus = 0;      ///< GPUs the plan uses
  /// GPUs of each node (what a launcher asks per node); 0 when the node
  /// groups differ or the plan predates the field.
  int64_t gpusPerNode = 0;
  std::string clusterNote; ///< "" or e.g. "4 of 8 nodes"
  std::string precision = "bf16";
  /// The training software the prediction assumes (runtimeName); plans
  /// written before it existed read as megatron-core.
  std::string runtime = "megatron-core";
  int64_t globalBatch = 0;
  int64_t numMicroBatches = 1;
  /// Blocks per model chunk in model order (size pp * vpp).
  std::vector<int64_t> layersPerChunk;
  /// Empty, or one entry per node group in the cluster's group order
  /// (`group` names it): each group runs whole replicas
  /// and its own micro-batch count; `stages` then lists the pp stages of
  /// each share in turn.
  std::vector<DataSharePlan> dataShares;
  std::vector<StagePlan> stages;
  Predicted predicted;
  /// Where the plan lies outside what was validated (Cost/Envelope.h:
  /// envelopeWarnings), one sentence each; empty when inside.
  std::vector<std::string> warnings;
  /// How the search split the layers: "dp", "balanced", "single", or
  /// "given" for a plan that was not searched.
  std::string partition = "given";

  bool operator==(const Plan &) const = default;
};

/// Share of the step spent on exposed communication: the busiest stage's
/// (compute + exposed communication) exposed communication over the step.
double exposedCommShare(const Evaluation &e);

/// The plan fields a configuration decides alone (parallel sizes, batch,
/// micro-batches, recomputation, ZeRO stage, schedule, precision), before
/// any evaluation; the rest is left empty.
Plan axesPlan(const ParallelConfig &cfg);

/// Builds a plan from an evaluated configuration. `layersPerChunk` of
/// `cfg` may be empty (the Evaluator's even split is then written out).
Plan makePlan(const LayerProfile &profile, const Cluster &cluster,
              const ParallelConfig &cfg, const Evaluation &eval,
              double pricePerGpuHour = 0);

/// The configuration a plan describes (for `trident evaluate`-style reuse).
Result<ParallelConfig> toParallelConfig(const Plan &plan);

/// What a plan is applied to: the model (its profile at the plan's
/// sequence length) and, when known, the cluster. Sources name them in
/// messages ("--model llama-3-8b", "cluster dgx-h100:4").
struct PlanTarget {
  const LayerProfile *model = nullptr;
  std::string modelSource;
  const Cluster *cluster = nullptr;
  std::string clusterSource;
  /// The model was read from a file with the digest the plan recorded
  /// (ModelSource): the same model under another file name, so its name
  /// is not compared (its shape still is).
  bool sameFile = false;
};

/// The one check of a plan before anything uses it (export, emit,
/// trident-apply-plan, the lowering): its own rules (every axis within its
/// row's bounds, global_batch = dp * micro_batch_size * num_micro_batches
/// without data shares, layers_per_chunk of pp * vpp entries, the schedule
/// matching vpp, GPUs = dp * tp * pp * cp), then what it is applied to: the
/// model's name, layers and recorded shape, and the cluster's GPU count.
/// Errors name `planSource` and the target, and both values.
Status verify(const Plan &plan, std::string_view planSource,
              const PlanTarget &target = {});

/// One plan as a JSON object (2-space indentation, fixed key order).
std::string planToJson(const Plan &plan);
/// Several plans as a JSON object {"schema": ..., "plans": [...]}.
std::string plansToJson(const std::vector<Plan> &plans);

/// Reads a plan written by planToJson (or by hand). Errors name `source`
/// and the field.
Result<Plan> parsePlanJson(std::string_view text,
                           std::string_view source = "plan.json");

} // namespace trident::plan

#endif // TRIDENT_PLAN_PLAN_H
