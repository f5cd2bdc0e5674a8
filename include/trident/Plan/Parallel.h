//===- Parallel.h - The plan record: parallel axes and their table -*- C++ -*-===//
//
// One place says what a parallel plan is made of. `ParallelAxes` holds the
// axes (data, tensor, pipeline, context, expert and expert-tensor
// parallelism, virtual stages, sequence parallelism, micro-batch size,
// recomputation, ZeRO stage, schedule); `ParallelConfig` (what the cost
// model evaluates) and `plan::Plan` (what the planner hands over) both
// derive from it. `kAxes` is the table of those axes: the name people
// type, the JSON key every file spells it with, the `trident evaluate`
// flag, the bounds, whether `--fix` can pin it, which runtimes can run a
// value other than its default and which exporters can express it. Flags,
// pins, plan JSON, the evaluation report, the validation cases and the
// exporters' single-axis checks are loops over this table
// (docs/architecture.md, "The plan record"). A new axis is a row here plus
// the code that gives it meaning (cost, search, lowering, runtime).
//
// MLIR-free and dependency-light: Cost, Search and Plan include it.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_PLAN_PARALLEL_H
#define TRIDENT_PLAN_PARALLEL_H

#include "trident/Schedule/Schedule.h"
#include "trident/Support/DType.h"
#include "trident/Support/Status.h"

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace trident {

//===----------------------------------------------------------------------===//
// The choices some axes take, and the software that runs a plan
//===----------------------------------------------------------------------===//

/// Activation recomputation policy (ordered: heavier policies compare
/// greater).
enum class Recompute : uint8_t { None, Selective, Full };
std::string_view recomputeName(Recompute r);
/// "none", "selective", "full" (also "no", "off", "block").
std::optional<Recompute> parseRecompute(std::string_view name);

/// How context parallelism exchanges keys and values (Megatron-Core's
/// --cp-comm-type): a ring of point-to-point steps overlapped with the
/// attention blocks (p2p, the default), one all-gather of K and V before
/// the attention (allgather; "The Llama 3 Herd of Models"), or all-to-alls
/// that turn the sequence split into a head split around the attention
/// (a2a; DeepSpeed-Ulysses).
enum class CpCommType : uint8_t { P2p, AllGather, A2a };

/// How FP8 training scales its tensors (Megatron-Core's --fp8-recipe,
/// Transformer Engine's recipes): one scale per tensor from the amax
/// history of earlier steps (delayed, the default: DelayedScaling), one
/// per tensor from the tensor's own amax (tensorwise:
/// Float8CurrentScaling), one per 1x128 tile of activations and gradients
/// and per 128x128 block of weights (blockwise: Float8BlockScaling, the
/// DeepSeek-V3 scheme), or one per 32 elements in hardware (mxfp8:
/// MXFP8BlockScaling, Blackwell only). Matters only under --precision fp8.
enum class Fp8Recipe : uint8_t { Delayed, Tensorwise, Blockwise, Mxfp8 };

/// The training software that runs a plan. The same plan runs at
/// different speeds under different runtimes: which attention kernel they
/// call, whether elementwise work runs in fp32, whether the gradient
/// reduction overlaps the backward. Each runtime is a preset of the cost
/// model's switches (EvalOptions, applyRuntime); docs/cost-model.md#runtimes
/// gives the sources.
enum class Runtime : uint8_t {
  MegatronCore, ///< Megatron-Core / NeMo with Transformer Engine (default)
  MegatronLm,   ///< Megatron-LM before Megatron-Core (2020-2022)
  Fsdp,         ///< PyTorch FSDP with AMP autocast (llm-foundry, HF)
  Torchtitan,   ///< PyTorch FSDP2 with bf16 parameters (torchtitan)
  Trident,      ///< the programs `trident emit` writes (lib/Runtime)
  DeepSpeed,    ///< DeepSpeed ZeRO of 2021 (v0.3.12-v0.4.2) + Megatron-LM
  Nemo,         ///< NeMo 1.x: Megatron-Core + Apex distributed Adam
};
inline constexpr size_t kRuntimeCount = 7;
std::string_view runtimeName(Runtime r);
/// Inverse of runtimeName; nullopt for an unknown name.
std::optional<Runtime> parseRuntime(std::string_view name);
/// Every runtime name, for help texts and error messages.
std::string runtimeNames();

namespace plan {
/// The training frameworks a plan exports to (Plan/Export.h).
enum class ExportTarget : uint8_t {
  Megatron,
  DeepSpeed,
  TorchTitan,
  MegatronBridge
};
inline constexpr size_t kExportTargetCount = 4;
/// The axis table's support columns: Megatron-Bridge runs Megatron-Core,
/// so it reads Megatron-LM's column (what one expresses the other does).
inline constexpr size_t kExportColumnCount = 3;
constexpr size_t exportColumn(ExportTarget target) {
  return target == ExportTarget::MegatronBridge ? size_t(ExportTarget::Megatron)
                                                : size_t(target);
}
} // namespace plan

//===----------------------------------------------------------------------===//
// The record
//===----------------------------------------------------------------------===//

/// The parallel axes of one plan. Ranks are ordered tp (innermost), cp,
/// dp, pp (Megatron-LM); expert parallelism is carved out of dp x cp x tp.
struct ParallelAxes {
  int64_t dp = 1, tp = 1, pp = 1, cp = 1;
  int64_t ep = 1;  ///< expert parallel (divides dp)
  int64_t etp = 0; ///< expert tensor parallel; 0 = same as tp
  int64_t vpp = 1; ///< virtual chunks per pipeline stage
  bool sequenceParallel = false;
  int64_t microBatch = 1; ///< sequences per micro-batch
  Recompute recompute = Recompute::None;
  int64_t zeroStage = 0; ///< 0..3 (distributed optimizer = 1, FSDP = 3)
  /// Default: interleaved 1F1B when vpp > 1, else 1F1B.
  std::optional<ScheduleKind> schedule;
  /// Tensor-parallel collectives overlapped with the GEMMs around them
  /// (Megatron-Core's --tp-comm-overlap: Transformer Engine's userbuffers);
  /// needs tp > 1 and sequence parallelism.
  bool tpCommOverlap = false;
  /// Matters only with cp > 1 (AxisSpec::applies).
  CpCommType cpCommType = CpCommType::P2p;
  /// Matters only under FP8 precision; another recipe than the default
  /// needs it (Evaluator::validate).
  Fp8Recipe fp8Recipe = Fp8Recipe::Delayed;

  /// The expert tensor-parallel size in effect (etp, or tp when 0).
  constexpr int64_t expertTp() const { return etp == 0 ? tp : etp; }
  /// The schedule: the given one, else interleaved 1F1B when vpp > 1,
  /// else 1F1B.
  constexpr ScheduleKind scheduleKind() const {
    return schedule.value_or(vpp > 1 ? ScheduleKind::Interleaved1F1B
                                     : ScheduleKind::OneFOneB);
  }
  /// The plan tables' sp cell: "-", "on", or "ov" (kSpOverlapLegend).
  constexpr const char *spCell() const {
    return tpCommOverlap ? "ov" : sequenceParallel ? "on" : "-";
  }
  bool operator==(const ParallelAxes &) const = default;
};

/// What the plan tables' "ov" in the sp column means (ParallelAxes::spCell).
inline constexpr const char *kSpOverlapLegend =
    "sequence parallelism with the tensor-parallel collectives overlapped "
    "with the GEMMs (tp_comm_overlap)";

/// Heterogeneous clusters: the data-parallel replicas of one node group
/// and the micro-batches each of them runs per step. With data shares
/// every group runs whole replicas of the same (tp, cp, pp) shape, and the
/// faster GPU type takes more micro-batches (docs/planner.md).
struct DataShare {
  int64_t group = 0;        ///< index into Cluster::groups
  int64_t dp = 1;           ///< replicas on that group
  int64_t microBatches = 1; ///< per replica per step
  bool operator==(const DataShare &) const = default;
  auto operator<=>(const DataShare &) const = default;
};

/// One parallel configuration as the cost model evaluates it: the axes,
/// and what a configuration adds to them (batch, precision, per-stage
/// recomputation, data shares, layer split).
struct ParallelConfig : ParallelAxes {
  int64_t globalBatch = 1; ///< sequences per step
  /// Per pipeline stage recomputation (size pp), overriding `recompute`
  /// stage by stage; empty: every stage uses `recompute`. Lets the stages
  /// that hold the most in-flight micro-batches (the first ones under 1F1B)
  /// recompute while the others do not.
  std::vector<Recompute> stageRecompute;
  /// One entry per node group (heterogeneous clusters), or empty: every
  /// stage's dp ranks then sit in one group and run m = B/(dp mb)
  /// micro-batches each. With shares, dp is their sum and the global batch
  /// is sum(dp_g * microBatch * m_g).
  std::vector<DataShare> dataShares;
  DType precision = DType::BF16;
  /// Transformer blocks per model chunk, in model order (chunk g = c*pp+s
  /// of stage s); size pp*vpp, or pp when vpp == 1. Empty: balanced.
  std::vector<int64_t> layersPerChunk;

  int64_t gpus() const { return dp * tp * pp * cp; }
  /// The recomputation policy of pipeline stage `stage`.
  Recompute recomputeOf(int64_t stage) const {
    return stageRecompute.empty() ? recompute
                                  : stageRecompute[size_t(stage)];
  }
};

//===----------------------------------------------------------------------===//
// The axis table
//===----------------------------------------------------------------------===//

/// The axes, in table order (which is also the order of the plan JSON's
/// "parallel" object and of its top-level axis keys).
// clang-format off
enum class Axis : uint8_t {
  Dp, Tp, Pp, Cp, Ep, Etp, Vpp, MicroBatch, Sp, Recompute, Zero, Schedule,
  TpCommOverlap, CpCommType, Fp8Recipe,
};
// clang-format on
inline constexpr size_t kAxisCount = 15;

/// How an axis's value is written and parsed. Every value is carried as an
/// int64_t: a size, 0/1, or the index of a choice.
enum class AxisType : uint8_t {
  Size,   ///< a positive (etp: non-negative) integer
  Bool,   ///< 0 or 1; JSON true/false
  Stage,  ///< a small integer with its own meaning per value (ZeRO 0..3)
  Choice, ///< one of `choices`, written by name
};

/// Which values of an axis a runtime or exporter handles. Bit k of `mask`
/// covers "value class" k (axisValueClass): for a Size axis class 0 is the
/// default and class 1 any other value; for the others, the value itself.
/// `why` explains a refusal; "{}" in it stands for the value's text.
struct AxisSupport {
  uint32_t mask = ~0u;
  std::string_view why = {};
};

struct AxisSpec {
  Axis axis;
  /// The short name of tables, `--fix` and messages: "tp", "mb", "zero".
  std::string_view name;
  /// The key every JSON Trident writes spells it with.
  std::string_view jsonKey;
  /// Plan JSON: inside the "parallel" object (else a top-level key).
  bool inParallelObject;
  /// Other keys readers and `--fix` accept (comma-separated), so that
  /// files and habits from before the table keep working.
  std::string_view aliases;
  /// `trident evaluate --<flag>`, its value name and help.
  std::string_view flag, flagValue, help;
  AxisType type;
  int64_t minValue, maxValue, defaultValue;
  /// Choice axes: the names, by value.
  std::span<const std::string_view> choices;
  /// `trident plan --fix KEY=VALUE` accepts it.
  bool pinnable;
  /// Per Runtime (by enumerator), which values it can run.
  std::array<AxisSupport, kRuntimeCount> runtimes;
  /// Per plan::ExportTarget, which values it can express.
  std::array<AxisSupport, plan::kExportColumnCount> exporters;
  int64_t (*get)(const ParallelAxes &);
  void (*set)(ParallelAxes &, int64_t);
  /// An axis added after plans were first written: a plan states it only
  /// when it differs from the default, and a plan without it reads as the
  /// default (so plans written before and after read alike).
  bool optionalInPlan = false;
  /// Whether the value means anything for `axes` (null: always). The
  /// runtime and exporter checks skip an axis that does not apply.
  bool (*applies)(const ParallelAxes &) = nullptr;
};

/// The largest parallel size, micro-batch or layer count a plan may name:
/// the limit the cluster and model readers use (2^24 GPUs), so that
/// products of two sizes fit in 64 bits.
inline constexpr int64_t kMaxAxisSize = int64_t(1) << 24;

namespace detail {
inline constexpr std::string_view kRecomputeChoices[] = {"none", "selective",
                                                         "full"};
inline constexpr std::string_view kCpCommChoices[] = {"p2p", "allgather",
                                                      "a2a"};
inline constexpr std::string_view kFp8RecipeChoices[] = {
    "delayed", "tensorwise", "blockwise", "mxfp8"};
inline constexpr std::string_view kScheduleChoices[] = {"gpipe", "1f1b",
                                                        "interleaved-1f1b"};
inline constexpr AxisSupport kAll{};
/// A Size axis that runs only at its default value.
constexpr AxisSupport defaultOnly(std::string_view why) { return {1u, why}; }
} // namespace detail

/// The table. Sources of the support columns: the runtimes' presets
/// (docs/cost-model.md, Runtimes) and the exporters' checks against the
/// frameworks' sources (docs/exporters.md).
// clang-format off
inline constexpr std::array<AxisSpec, kAxisCount> kAxes = {{
    {Axis::Dp, "dp", "dp", true, "", "dp", "N", "data-parallel size",
     AxisType::Size, 1, kMaxAxisSize, 1, {}, true,
     {{detail::kAll, detail::kAll, detail::kAll, detail::kAll, detail::kAll,
      detail::kAll, detail::kAll}},
     {{detail::kAll, detail::kAll, detail::kAll}},
     [](const ParallelAxes &a) { return a.dp; },
     [](ParallelAxes &a, int64_t v) { a.dp = v; }},
    {Axis::Tp, "tp", "tp", true, "", "tp", "N", "tensor-parallel size",
     AxisType::Size, 1, kMaxAxisSize, 1, {}, true,
     {{detail::kAll, detail::kAll,
      detail::defaultOnly("PyTorch FSDP shards data parallelism only (no "
                          "tensor parallelism)"),
      detail::kAll, detail::kAll,
      detail::kAll, detail::kAll}},
     {{detail::kAll, detail::kAll, detail::kAll}},
     [](const ParallelAxes &a) { return a.tp; },
     [](ParallelAxes &a, int64_t v) { a.tp = v; }},
    {Axis::Pp, "pp", "pp", true, "", "pp", "N", "pipeline-parallel size",
     AxisType::Size, 1, kMaxAxisSize, 1, {}, true,
     {{detail::kAll, detail::kAll,
      detail::defaultOnly("PyTorch FSDP shards data parallelism only (no "
                          "pipeline stages)"),
      detail::kAll, detail::kAll,
      detail::kAll, detail::kAll}},
     {{detail::kAll, detail::kAll, detail::kAll}},
     [](const ParallelAxes &a) { return a.pp; },
     [](ParallelAxes &a, int64_t v) { a.pp = v; }},
    {Axis::Cp, "cp", "cp", true, "", "cp", "N", "context-parallel size",
     AxisType::Size, 1, kMaxAxisSize, 1, {}, true,
     {{detail::kAll,
      detail::defaultOnly("Megatron-LM before Megatron-Core has no context "
                          "parallelism"),
      detail::defaultOnly("PyTorch FSDP has no context parallelism"),
      detail::kAll, detail::kAll,
      detail::defaultOnly("DeepSpeed of 2021 has no context parallelism"), detail::kAll}},
     {{detail::kAll,
      detail::defaultOnly("context parallelism (cp {}): Trident writes no "
                          "DeepSpeed sequence parallelism (DeepSpeed-Ulysses, "
                          "the all-to-all over heads that cp_comm_type a2a "
                          "prices, is the model code's DistributedAttention, "
                          "not a config key; the ring and all-gather kinds "
                          "have no DeepSpeed form)"),
      detail::kAll}},
     [](const ParallelAxes &a) { return a.cp; },
     [](ParallelAxes &a, int64_t v) { a.cp = v; }},
    {Axis::Ep, "ep", "ep", true, "", "ep", "N",
     "expert-parallel size (carved out of dp)",
     AxisType::Size, 1, kMaxAxisSize, 1, {}, true,
     {{detail::kAll,
      detail::defaultOnly("Megatron-LM before Megatron-Core has no expert "
                          "parallelism"),
      detail::defaultOnly("PyTorch FSDP has no expert parallelism"),
      detail::kAll, detail::kAll,
      detail::defaultOnly("DeepSpeed of 2021 has no expert parallelism "
                          "(DeepSpeed-MoE came in 2022)"), detail::kAll}},
     {{detail::kAll, detail::kAll, detail::kAll}},
     [](const ParallelAxes &a) { return a.ep; },
     [](ParallelAxes &a, int64_t v) { a.ep = v; }},
    // Written resolved (the expert tensor-parallel size in effect, tp
    // unless set); read back, a value equal to tp is stored as 0 ("follows
    // tp"), so a plan round-trips. It matters only with ep > 1, whose row
    // refuses the runtimes without experts; the exporters' refusals of
    // etp > 1 with ep > 1 are cross-axis (Export.cpp).
    {Axis::Etp, "etp", "etp", true, "", "etp", "N",
     "expert tensor-parallel size (0: = tp)",
     AxisType::Size, 0, kMaxAxisSize, 1, {}, true,
     {{detail::kAll, detail::kAll, detail::kAll, detail::kAll, detail::kAll,
      detail::kAll, detail::kAll}},
     {{detail::kAll, detail::kAll, detail::kAll}},
     [](const ParallelAxes &a) { return a.expertTp(); },
     [](ParallelAxes &a, int64_t v) { a.etp = v == a.tp ? 0 : v; }},
    {Axis::Vpp, "vpp", "vpp", true, "", "vpp", "N",
     "virtual pipeline stages per rank",
     AxisType::Size, 1, kMaxAxisSize, 1, {}, true,
     {{detail::kAll, detail::kAll,
      detail::defaultOnly("PyTorch FSDP has no pipeline stages"),
      detail::kAll, detail::kAll,
      detail::defaultOnly("DeepSpeed's PipelineEngine runs no interleaved "
                          "stages"), detail::kAll}},
     {{detail::kAll,
      detail::defaultOnly("virtual pipeline stages (vpp {}): DeepSpeed's "
                          "PipelineEngine runs only its 1F1B TrainSchedule, "
                          "without interleaving"),
      detail::kAll}},
     [](const ParallelAxes &a) { return a.vpp; },
     [](ParallelAxes &a, int64_t v) { a.vpp = v; }},
    {Axis::MicroBatch, "mb", "micro_batch_size", false,
     "micro_batch,micro-batch,micro_batch_size", "micro-batch", "N",
     "sequences per micro-batch",
     AxisType::Size, 1, kMaxAxisSize, 1, {}, true,
     {{detail::kAll, detail::kAll, detail::kAll, detail::kAll, detail::kAll,
      detail::kAll, detail::kAll}},
     {{detail::kAll, detail::kAll, detail::kAll}},
     [](const ParallelAxes &a) { return a.microBatch; },
     [](ParallelAxes &a, int64_t v) { a.microBatch = v; }},
    {Axis::Sp, "sp", "sequence_parallel", true,
     "sequence_parallel,sequence-parallel", "sequence-parallel", "",
     "Megatron sequence parallelism",
     AxisType::Bool, 0, 1, 0, {}, true,
     {{detail::kAll, detail::kAll,
      {1u, "PyTorch FSDP has no sequence parallelism"},
      detail::kAll, detail::kAll,
      {1u, "DeepSpeed of 2021 has no Megatron sequence parallelism"}, detail::kAll}},
     {{detail::kAll,
      {1u, "Megatron sequence parallelism: DeepSpeed AutoTP does not shard "
           "the norm and dropout activations over the tensor-parallel group"},
      detail::kAll}},
     [](const ParallelAxes &a) { return int64_t(a.sequenceParallel); },
     [](ParallelAxes &a, int64_t v) { a.sequenceParallel = v != 0; }},
    {Axis::Recompute, "recompute", "recompute", false, "", "recompute",
     "POLICY[,POLICY...]",
     "none, selective or full; or one per pipeline stage, comma-separated "
     "(full,full,none,none)",
     AxisType::Choice, 0, 2, 0, detail::kRecomputeChoices, true,
     {{detail::kAll, detail::kAll,
      {0b101u, "PyTorch FSDP checkpoints whole blocks (activation "
               "checkpointing), not the attention core alone"},
      detail::kAll, detail::kAll,
      {0b101u, "DeepSpeed checkpoints whole layers, not only the "
               "attention core"}, detail::kAll}},
     {{detail::kAll,
      {0b101u, "selective recomputation: DeepSpeed checkpoints whole layers "
               "(activation_checkpoint_interval), not only attention"},
      detail::kAll}},
     [](const ParallelAxes &a) { return int64_t(a.recompute); },
     [](ParallelAxes &a, int64_t v) { a.recompute = Recompute(v); }},
    {Axis::Zero, "zero", "zero_stage", false, "zero_stage", "zero", "N",
     "ZeRO stage 0..3 (1 = distributed optimizer)",
     AxisType::Stage, 0, 3, 0, {}, true,
     {{detail::kAll,
      {0b0011u, "Megatron-LM before Megatron-Core shards the optimizer "
                "(ZeRO 1) at most"},
      {0b1101u, "PyTorch FSDP has no optimizer-only sharding (ZeRO {})"},
      {0b1101u, "torchtitan has no optimizer-only sharding (ZeRO {})"},
      detail::kAll,
      detail::kAll, detail::kAll}},
     {{detail::kAll, detail::kAll,
      {0b1101u, "ZeRO stage 1: torchtitan shards with FSDP2 (parameters, "
                "gradients and optimizer states) or replicates; it has no "
                "optimizer-only sharding"}}},
     [](const ParallelAxes &a) { return a.zeroStage; },
     [](ParallelAxes &a, int64_t v) { a.zeroStage = v; }},
    {Axis::Schedule, "schedule", "schedule", false, "", "schedule", "KIND",
     "gpipe, 1f1b or interleaved-1f1b",
     AxisType::Choice, 0, 2, 1, detail::kScheduleChoices, true,
     {{detail::kAll,
      {0b110u, "Megatron-LM trains with 1F1B (interleaved when vpp > 1) "
               "only"},
      detail::kAll, detail::kAll, detail::kAll,
      {0b010u, "DeepSpeed's PipelineEngine runs only its 1F1B "
               "TrainSchedule"}, detail::kAll}},
     {{{0b110u, "schedule 'gpipe': Megatron-LM trains with 1F1B (interleaved "
               "when vpp > 1) only"},
      {0b010u, "schedule '{}': DeepSpeed's PipelineEngine runs only its 1F1B "
               "TrainSchedule"},
      detail::kAll}},
     [](const ParallelAxes &a) { return int64_t(a.scheduleKind()); },
     [](ParallelAxes &a, int64_t v) { a.schedule = ScheduleKind(v); }},
    // Megatron-LM asserts sequence parallelism with it (arguments.py at
    // d98e8a64); the cross-axis rule is Evaluator::validate's.
    {Axis::TpCommOverlap, "tp_comm_overlap", "tp_comm_overlap", true,
     "tp-comm-overlap", "tp-comm-overlap", "",
     "overlap the tensor-parallel collectives with the GEMMs (Megatron-Core "
     "--tp-comm-overlap; needs --sequence-parallel)",
     AxisType::Bool, 0, 1, 0, {}, true,
     {{detail::kAll,
      {1u, "Megatron-LM before Megatron-Core has no tensor-parallel "
           "communication overlap"},
      {1u, "PyTorch FSDP has no tensor parallelism"},
      {1u, "torchtitan's async tensor parallelism needs torch.compile, whose "
           "fused kernels the torchtitan runtime does not price"},
      {1u, "the programs trident emit writes run each tensor-parallel "
           "collective after its GEMM"},
      {1u, "DeepSpeed of 2021 has no tensor-parallel communication "
           "overlap"}, detail::kAll}},
     {{detail::kAll,
      {1u, "tensor-parallel communication overlap: DeepSpeed has no "
           "setting for it"},
      {1u, "tensor-parallel communication overlap: torchtitan's async TP "
           "needs torch.compile, which the export leaves off (the "
           "prediction prices eager kernels)"}}},
     [](const ParallelAxes &a) { return int64_t(a.tpCommOverlap); },
     [](ParallelAxes &a, int64_t v) { a.tpCommOverlap = v != 0; },
     /*optionalInPlan=*/true},
    // Megatron-Core's --cp-comm-type (arguments.py at d98e8a64: p2p, a2a,
    // allgather, a2a+p2p; the hierarchical a2a+p2p is not priced).
    {Axis::CpCommType, "cp_comm_type", "cp_comm_type", true,
     "cp-comm-type", "cp-comm-type", "KIND",
     "how context parallelism exchanges K and V: p2p (a ring), allgather or "
     "a2a (Ulysses); the runtime's when not given",
     AxisType::Choice, 0, 2, 0, detail::kCpCommChoices, true,
     {{detail::kAll,
      {1u, "Megatron-LM before Megatron-Core has no context parallelism"},
      {1u, "PyTorch FSDP has no context parallelism"},
      {1u, "torchtitan's context parallelism (PyTorch's context_parallel) "
           "rotates K/V shards; it has no cp_comm_type '{}'"},
      {0b010u, "the programs trident emit writes all-gather K and V over cp "
               "(docs/emit.md)"},
      {1u, "DeepSpeed of 2021 has no context parallelism"}, detail::kAll}},
     {{detail::kAll, {1u, "context parallelism: DeepSpeed has no "
                          "cp_comm_type '{}'"},
      {1u, "cp_comm_type '{}': torchtitan's context parallelism rotates "
           "K/V shards and has no such setting"}}},
     [](const ParallelAxes &a) { return int64_t(a.cpCommType); },
     [](ParallelAxes &a, int64_t v) { a.cpCommType = CpCommType(v); },
     /*optionalInPlan=*/true, [](const ParallelAxes &a) { return a.cp > 1; }},
    // Megatron-Core's --fp8-recipe (transformer_config.py at d98e8a64:
    // delayed by default; 'custom' takes user code and is not priced).
    // The GPU's check (mxfp8 on Blackwell) and the precision's are
    // Evaluator::validate's. Not searched: the recipe is a numerics choice
    // the user makes, which the planner prices.
    {Axis::Fp8Recipe, "fp8_recipe", "fp8_recipe", false,
     "fp8-recipe", "fp8-recipe", "KIND",
     "how FP8 scales its tensors under --precision fp8: delayed (the "
     "default), tensorwise (current scaling), blockwise or mxfp8",
     AxisType::Choice, 0, 3, 0, detail::kFp8RecipeChoices, true,
     {{detail::kAll,
      {1u, "Megatron-LM before Megatron-Core has no FP8 recipes"},
      {0b011u, "PyTorch FSDP with torchao float8 scales per tensor or per "
               "row; it has no fp8_recipe '{}'"},
      {0b011u, "torchtitan's float8 (torchao) scales per tensor or per "
               "row; it has no fp8_recipe '{}'"},
      {1u, "the programs trident emit writes train in fp32 or bf16"},
      {1u, "DeepSpeed of 2021 has no FP8"}, detail::kAll}},
     {{detail::kAll,
      {1u, "fp8_recipe '{}': the DeepSpeed config has no FP8 training"},
      {1u, "fp8_recipe '{}': the torchtitan export trains in bfloat16 or "
           "float32 (float8 is a model converter)"}}},
     [](const ParallelAxes &a) { return int64_t(a.fp8Recipe); },
     [](ParallelAxes &a, int64_t v) { a.fp8Recipe = Fp8Recipe(v); },
     /*optionalInPlan=*/true},
}};
// clang-format on

static_assert(kAxes.size() == kAxisCount);

constexpr const AxisSpec &axisSpec(Axis a) { return kAxes[size_t(a)]; }

/// The row whose name, JSON key or alias is `key`; nullptr for none.
const AxisSpec *findAxis(std::string_view key);

/// The names of the pinnable axes, for messages ("dp, tp, pp, ...").
std::string pinnableAxisNames();

/// The text of value `v` of `axis`: "8", "true", "full", "interleaved-1f1b".
std::string axisValueText(const AxisSpec &axis, int64_t v);

/// Parses `text` as a value of `axis` (sizes, 0/1/true/false/on/off/yes/no,
/// a choice's name); errors say what was expected, not where (the caller
/// prefixes the flag, key or file).
Result<int64_t> parseAxisValue(const AxisSpec &axis, std::string_view text);

/// Checks `v` against the axis's bounds: "'dp' must be in [1, 16777216],
/// got 0" style messages naming `key`.
Status checkAxisBounds(const AxisSpec &axis, int64_t v, std::string_view key);

/// The value class AxisSupport::mask indexes (see there).
inline uint32_t axisValueClass(const AxisSpec &axis, int64_t v) {
  if (axis.type == AxisType::Size)
    return v == axis.defaultValue ? 0u : 1u;
  return uint32_t(v);
}

/// Whether `support` accepts value `v` of `axis`.
inline bool axisAccepts(const AxisSpec &axis, const AxisSupport &support,
                        int64_t v) {
  uint32_t cls = axisValueClass(axis, v);
  return cls < 32 && ((support.mask >> cls) & 1u);
}

/// Why `support` refuses value `v` of `axis`, or "" when it accepts it.
std::string axisRefusal(const AxisSpec &axis, const AxisSupport &support,
                        int64_t v);

/// The first axis of `axes` that `runtime` cannot run, as a message ("cp 2:
/// PyTorch FSDP has no context parallelism"), or "".
std::string runtimeAxisRefusal(const ParallelAxes &axes, Runtime runtime);

/// "fp8_recipe R needs precision fp8 (got P)" when `recipe` is not the
/// default and `precision` is not fp8, else "": a recipe scales FP8
/// tensors and means nothing in another precision. The evaluator, the
/// search's pins and the plan reader all refuse with it.
std::string fp8RecipePrecisionRefusal(Fp8Recipe recipe, DType precision);
/// Whether `runtime` runs every axis of `axes` (runtimeAxisRefusal() is
/// ""), without building a message: the search asks it per configuration.
bool runtimeAccepts(const ParallelAxes &axes, Runtime runtime);

/// The first axis of `axes` that `target` cannot express, as its reason
/// with the value filled in, or "".
std::string exportAxisRefusal(const ParallelAxes &axes,
                              plan::ExportTarget target);

} // namespace trident

#endif // TRIDENT_PLAN_PARALLEL_H
