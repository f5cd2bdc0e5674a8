//===- Validation.h - Predicting published training runs -------*- C++ -*-===//
//
// The cost model's ground truth: the normalised cases of
// shared/validation/cases.json. Each case's fields map one-to-one onto
// `trident evaluate`'s flags; its `model` is a Hugging Face config.json.
// This library parses the cases, evaluates each one through the real
// pipeline (config -> tgraph -> LayerProfile -> Evaluator), and reports the
// error per case and per source.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_VALIDATION_VALIDATION_H
#define TRIDENT_VALIDATION_VALIDATION_H

#include "trident/Cost/Envelope.h"
#include "trident/Cost/Evaluate.h"
#include "trident/Hardware/Fitted.h"
#include "trident/Support/Status.h"
#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trident::validation {

/// One normalised published run.
struct Case {
  std::string id;
  std::string sourceGroup;
  std::string modelJson; ///< the `model` object, as JSON text
  std::string cluster;   ///< "PRESET:NODES"
  int64_t gpus = 0;
  int64_t seqLen = 0;
  ParallelConfig config; ///< parallel sizes, batch, recompute, precision
  double measuredTokensPerSecPerGpu = 0;
  /// The software the run used: the case's optional `runtime` field, else
  /// the `framework` of its published run (runtimeForFramework), else
  /// runtimeForSource(sourceGroup), the documented fallback.
  Runtime runtime = Runtime::MegatronCore;
  enum class RuntimeOrigin { CaseField, Framework, SourceTable };
  RuntimeOrigin runtimeOrigin = RuntimeOrigin::SourceTable;
  bool evaluable = false;
  std::string skipReason;
  /// The run forced balanced expert routing (a benchmark, not training):
  /// a note of the case says "force-balanced", as shared/validation's
  /// Megatron-Bridge MoE rows do (their page's footnote). Evaluated with
  /// EvalOptions::expertLoadImbalance 1.
  bool forceBalanced = false;
  /// The FP8 recipe came from the case's `fp8_recipe` field; else
  /// applyFrameworks may read it from its published run's precision
  /// (fp8RecipeForRunPrecision).
  bool fp8RecipeStated = false;
  /// How the run exchanged its experts' tokens and whether it overlapped
  /// the exchange with another micro-batch, where known: the case's
  /// optional `moe_dispatcher` and `moe_overlap_ep_comm` fields, or an
  /// as-ran file's (applyAsRan). Unset: the runtime's.
  std::optional<MoeDispatcher> moeDispatcher;
  bool overlapEpComm = false;
  /// The software release of a source that published runs per release
  /// (`release`: Megatron-Bridge's tables per NeMo container): each is a
  /// measurement campaign of its own and a fold of leave-one-source-out.
  std::string release;
  /// The fold of leave-one-source-out: the source, and its release.
  std::string foldKey() const {
    return release.empty() ? sourceGroup : sourceGroup + " " + release;
  }
};

/// The FP8 recipe a published run's precision column names, as
/// Megatron-Bridge's performance tables write it: "FP8-CS" current
/// (tensorwise) scaling, "FP8-MX" MXFP8, "FP8-SS" sub-channel (blockwise)
/// scaling, "FP8-DS" delayed; none for any other text.
std::optional<Fp8Recipe> fp8RecipeForRunPrecision(std::string_view precision);

/// The runtime of a source's runs, from what the source says it used
/// (shared/validation/README.md; docs/validation.md lists the table).
/// Unknown sources: Megatron-Core.
Runtime runtimeForSource(std::string_view sourceGroup);

/// The runtime a published run's free-text `framework` names ("NeMo 24.07",
/// "Composer / llm-foundry (FSDP)", "torchtitan (2024)", ...); none when it
/// names no software this project models. A framework naming DeepSpeed
/// gives `deepspeed` for the run's ZeRO-3 configurations ("Megatron-LM
/// (+DeepSpeed ZeRO-3 for ZeRO rows)").
std::optional<Runtime> runtimeForFramework(std::string_view framework,
                                           int64_t zeroStage = 0);

/// The Hugging Face config a case's `model` object describes. The rows
/// write mixture-of-experts models as "mixtral" with keys Mixtral has no
/// use for: `qk_norm` (Qwen3-MoE), `attention: "mla"` with
/// `moe_shared_experts`, `first_k_dense_replace` and
/// `dense_intermediate_size` (DeepSeek-V3); those rows become the
/// architecture whose config has the keys (docs/validation.md). Other
/// models come back as they are.
Result<std::string> caseModelConfig(const nlohmann::json &model,
                                    const std::string &where);

/// Parses cases.json. Errors name the file and the case.
Result<std::vector<Case>> parseCases(std::string_view text,
                                     const std::string &source);

/// Sets the runtime of each case without its own `runtime` field from the
/// `framework` of the published run with the same id (published_runs.json's
/// rows). Errors name the file.
Status applyFrameworks(std::vector<Case> &cases, std::string_view runsText,
                       const std::string &runsSource);

/// The published runs beside a cases file: published_runs.json for
/// cases.json, X_runs.json for X_cases.json; empty when there is none.
std::string runsFileFor(const std::string &casesPath);

/// Reads a cases file and, when runsFileFor() names an existing file, the
/// frameworks of its runs.
Result<std::vector<Case>> loadCases(const std::string &path);

/// Sets what a file of settings read from the runs' own scripts says each
/// case ran with (test/data/validation/mbridge-moe-as-ran.json, written by
/// scripts/distill-moe-as-ran.sh): an object whose `cases` map case ids
/// to the case fields `moe_dispatcher`, `moe_overlap_ep_comm` and
/// `release` (and a `source` saying where they were read). Errors name
/// the file, the case and the field; an id no case has, or more than one
/// has, is an error.
Status applyAsRan(std::vector<Case> &cases, std::string_view text,
                  const std::string &source);
/// applyAsRan on the file at `path` (an unreadable file is an error too).
Status applyAsRanFile(std::vector<Case> &cases, const std::string &path);

/// What happened to one case.
struct CaseResult {
  const Case *c = nullptr;
  enum class Outcome { Evaluated, Skipped, Failed } outcome = Outcome::Skipped;
  std::string reason; ///< skip reason or failure message
  Runtime runtime = Runtime::MegatronCore; ///< the one it ran under
  double predictedTokensPerSecPerGpu = 0;
  double error = 0; ///< (predicted - measured) / measured
  double mfu = 0;
  double peakMemoryBytes = 0;
  double capacityBytes = 0;
  bool fits = true;
};

struct ErrorStats {
  int64_t count = 0;
  double median = 0, p90 = 0, worst = 0; ///< of |error|
  double meanSigned = 0;
};

/// Order statistics of |error| over `errors`.
ErrorStats errorStats(const std::vector<double> &errors);

struct Report {
  std::vector<CaseResult> results;
  std::map<std::string, ErrorStats> bySource;
  ErrorStats overall;
  int64_t evaluable = 0;  ///< cases marked evaluable in the file
  int64_t evaluated = 0;  ///< of those, evaluated here
};

/// Fills bySource / overall / counts from `results`.
void summarize(Report &report);

struct CrossValidation;

/// The table a terminal shows, and the markdown of docs/validation.md (with
/// the out-of-sample section and columns when `cv` is given).
std::string renderText(const Report &report);
std::string renderMarkdown(const Report &report, const std::string &command,
                           const CrossValidation *cv = nullptr);

/// Evaluates every case (MLIR-side; defined in ValidationRunner.cpp).
/// Each case runs under its own runtime (applyRuntime on a copy of
/// `options`) unless `forceRuntime` names one for all, and with its
/// runtime's token dispatcher unless `forceDispatcher` names one; the GPUs
/// carry the fitted constants `fit`.
Report
runValidation(const std::vector<Case> &cases, const EvalOptions &options = {},
              std::optional<Runtime> forceRuntime = std::nullopt,
              const FitValues &fit = FitValues::published(),
              std::optional<MoeDispatcher> forceDispatcher = std::nullopt);

/// The fit of each generation's constants, and how good it is.
/// One generation's fit, or (FitGroup::Pooled) the pooled constants'
/// over every generation's cases.
struct GroupFit {
  FitGroup group;
  int64_t cases = 0;      ///< evaluated cases on the generation's GPUs
  double objective = 0;   ///< median |error| at the optimum
  int64_t gridPoints = 0; ///< points of the group's own grid
};

struct FitReport {
  FitValues values;
  std::vector<GroupFit> groups;
};

/// One fold of leave-one-source-out: the constants fitted without
/// `heldOut`, and that source's cases predicted with them.
struct Fold {
  std::string heldOut;
  FitReport fit;
};

struct CrossValidation {
  FitReport inSample;    ///< fitted on every case
  Report inSampleReport; ///< every case predicted with inSample's values
  std::vector<Fold> folds;
  Report outOfSample; ///< each case predicted by its source's fold
  /// Per case, in order (empty gpu: not evaluated): its regime
  /// (Cost/Envelope.h) and what the envelope records of it.
  std::vector<RegimeKey> regimes;
  std::vector<std::string> gpuNames;
  std::vector<int64_t> seqLens;
  /// Of the evaluated cases, how many fall inside an 80 % interval built
  /// from the out-of-sample residuals of the other sources only: as the
  /// quantiles give it, and widened by `intervalWidening` (log space), the
  /// factor that brings the coverage to 80 %.
  int64_t intervalCases = 0, unwidenedHits = 0, intervalHits = 0;
  double intervalWidening = 1;
};

/// Refits kFittedConstants on the cases (MLIR-side, CrossValidate.cpp):
/// for each generation, the grid point of its constants that minimises
/// median + p90 of |error| over its evaluated cases; ties go to the first
/// point in grid order. `include` picks the training cases (all when
/// empty). `threads` only changes the speed, never the result.
FitReport fitConstants(const std::vector<Case> &cases,
                       const std::function<bool(const Case &)> &include = {},
                       int threads = 1);

/// Leave-one-source-out: the in-sample fit, then one fold per source.
/// A generation left without training cases in a fold keeps the published
/// value of its constants (the only prior there is) and says so.
CrossValidation crossValidate(const std::vector<Case> &cases, int threads = 1);

/// The markdown of the cross-validation section of docs/validation.md.
std::string renderCrossValidation(const CrossValidation &cv);

/// lib/Cost/ValidatedEnvelope.inc: the residual quantiles per regime, the
/// highest measured MFU per GPU and precision, the largest axis sizes.
std::string renderEnvelope(const CrossValidation &cv,
                           const std::string &command);

/// The refit constants beside the published ones (Fitted.h), as text.
std::string renderFit(const FitReport &fit);

} // namespace trident::validation

#endif // TRIDENT_VALIDATION_VALIDATION_H
