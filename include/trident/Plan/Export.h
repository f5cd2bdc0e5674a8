//===- Export.h - A plan as a training framework's configuration -*- C++
//-*-===//
//
// Turns a trident.plan/v1 plan into what Megatron-LM, DeepSpeed and
// torchtitan read: command-line arguments, a DeepSpeed config JSON, a
// torchtitan configuration module (Python). A plan the target cannot
// express (uneven stages, stages on different node groups, a schedule it
// lacks, a ZeRO stage it does not have) is an error naming what and why,
// never a silently changed plan.
// Every option name and its source are listed in docs/exporters.md.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_PLAN_EXPORT_H
#define TRIDENT_PLAN_EXPORT_H

#include "trident/Frontend/ModelConfig.h"
#include "trident/Plan/Plan.h"
#include "trident/Support/Status.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace trident::plan {

// ExportTarget is declared with the axis table (Parallel.h), whose rows say
// what each target can express.

/// "megatron", "megatron-bridge", "deepspeed" or "torchtitan".
Result<ExportTarget> parseExportTarget(std::string_view name);
std::string_view exportTargetName(ExportTarget target);
/// The framework's own name: "Megatron-LM", "Megatron-Bridge", "DeepSpeed",
/// "torchtitan" (messages, the report).
std::string_view exportTargetTitle(ExportTarget target);

/// How the export is wrapped: bare configuration, or a launch script
/// (Megatron-LM only): `torchrun` for one node, `slurm` an sbatch script
/// whose nodes and tasks come from the plan (docs/exporters.md).
enum class Launcher : uint8_t { None, Torchrun, Slurm };

/// "torchrun" or "slurm" ("" and "none": Launcher::None).
Result<Launcher> parseLauncher(std::string_view name);

struct Exported {
  /// The configuration: one Megatron-LM flag per line (comments start with
  /// '#'), a DeepSpeed JSON object, or a torchtitan configuration module.
  std::string text;
  /// What the target sets outside this text (DeepSpeed's pipeline stages
  /// live in PipelineModule(num_stages=...)), and how to launch it.
  std::vector<std::string> notes;
  /// The notes are also '#' comments in `text` (not so for JSON).
  bool notesInText = false;
};

/// A model torchtitan ships: its module under torchtitan/models, the
/// flavour its model_registry takes, the baseline config function of its
/// config_registry.py ("" when the flavour has none), and the sizes that
/// identify it (0: not a literal in the flavour's function).
struct TorchTitanFlavour {
  const char *module;
  const char *flavour;
  const char *config;
  int64_t layers, dim, heads, kvHeads, vocab, experts, topK;
};
/// torchtitan's decoder flavours at the pinned commit (b5bcd76c), as
/// scripts/distill-export-flags.sh distilled them into
/// test/data/export-flags/torchtitan-models.txt (a unit test holds the two
/// equal).
std::span<const TorchTitanFlavour> torchTitanFlavours();
/// The flavour whose sizes are `model`'s, or nullptr.
const TorchTitanFlavour *
torchTitanFlavourOf(const frontend::ModelConfig &model);

/// One row of the Megatron-LM -> Megatron-Bridge translation: the
/// Megatron-LM argument, the ConfigContainer key it sets ("" when the
/// transform names its keys) and how: value, true, false, swiglu,
/// squared_relu, seq_length, precision, layer_list, path or skip
/// (docs/exporters.md). A unit test holds the rows to Megatron-Bridge's
/// own map and fields (test/data/export-flags/megatron-bridge*.txt).
struct BridgeOverrideRule {
  std::string_view flag, key, how;
};
std::vector<BridgeOverrideRule> megatronBridgeRules();

/// Whether `target` has the model to run: torchtitan runs only the models
/// it ships (the error names the closest); the others build any decoder.
/// `modelName` and `source` name them in the message. exportPlan makes
/// this check when given the model; `trident plan --export` makes it
/// before searching.
Status checkExportModel(ExportTarget target, const frontend::ModelConfig &model,
                        std::string_view modelName,
                        std::string_view source = "plan");

/// The target's checks that read only the parallel axes, schedule,
/// recomputation, ZeRO stage and precision of `plan` (not its layer split,
/// node groups or data shares): what the planner can ask before it
/// evaluates a configuration. exportPlan makes them too.
Status checkExportAxes(const Plan &plan, ExportTarget target,
                       std::string_view source = "plan");

/// Why `target` cannot run a configuration, from its axes alone
/// (checkExportAxes on axesPlan(cfg)), or "": what `trident plan --export`
/// hands the search as search::SearchOptions::acceptAxes.
std::string axesRefusal(const ParallelConfig &cfg, ExportTarget target);

/// Why `target` cannot express the evaluated configuration as written
/// (exportPlan on makePlan), or "": search::SearchOptions::accept of
/// `trident plan --export`.
std::string planRefusal(const LayerProfile &profile, const Cluster &cluster,
                        const ParallelConfig &cfg, const Evaluation &eval,
                        ExportTarget target, double pricePerGpuHour = 0);

/// Exports `plan` for `target`. Errors name `source` and the part of the
/// plan the target cannot express.
/// With `model` (the plan's model as the frontend normalised it), the
/// Megatron-LM export also writes the architecture: sizes, heads and query
/// groups, positions and RoPE, activation, norm, biases, embeddings,
/// dropout, mixture of experts and latent attention, and placeholders for
/// the data, tokenizer and checkpoint paths (docs/exporters.md).
/// A `launcher` other than None wraps the Megatron-LM arguments in a bash
/// script that runs pretrain_gpt.py (it needs `model`, a decoder language
/// model); other targets refuse it. With `model`, torchtitan's export names
/// the torchtitan model and flavour it runs, and refuses a model torchtitan
/// does not have (naming the closest it has).
Result<Exported> exportPlan(const Plan &plan, ExportTarget target,
                            std::string_view source = "plan",
                            const frontend::ModelConfig *model = nullptr,
                            Launcher launcher = Launcher::None);

} // namespace trident::plan

#endif // TRIDENT_PLAN_EXPORT_H
