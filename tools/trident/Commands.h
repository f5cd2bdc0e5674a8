//===- Commands.h - Subcommands of the trident tool -------------*- C++ -*-===//
//
// Each subcommand lives in its own file and declares its options with
// cl::sub(itsCommand); options several commands share are declared once in
// Options.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_TOOLS_TRIDENT_COMMANDS_H
#define TRIDENT_TOOLS_TRIDENT_COMMANDS_H

#include "trident/Cost/Evaluate.h"
#include "trident/Cost/LayerProfile.h"
#include "trident/Frontend/GraphBuilder.h"
#include "trident/Hardware/Cluster.h"
#include "trident/Plan/Export.h"
#include "trident/Plan/Plan.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"

#include <optional>
#include <string>

namespace trident::tool {

extern llvm::cl::OptionCategory category;
extern llvm::cl::SubCommand inspectCmd, importCmd, evaluateCmd, validateCmd,
    planCmd, exportCmd, emitCmd, validatePlanCmd, exploreCmd, serveCmd,
    replanCmd;

// Shared options (Options.cpp).
extern llvm::cl::opt<std::string> modelOpt;
extern llvm::cl::opt<int64_t> seqLenOpt;
extern llvm::cl::opt<bool> jsonOpt;
extern llvm::cl::opt<std::string> clusterOpt;
extern llvm::cl::opt<std::string> calibrationOpt;
extern llvm::cl::opt<std::string> precisionOpt;
extern llvm::cl::opt<int64_t> globalBatchOpt;
extern llvm::cl::opt<std::string> runtimeOpt;

/// Prints "trident: error: MESSAGE" and returns `code`.
int fail(const std::string &message, int code = 1);

/// Loads --model (printing warnings); nullopt after printing an error.
std::optional<frontend::LoadedModel> loadModelOption(mlir::MLIRContext &ctx);

/// Loads --cluster (and --calibration); nullopt after printing an error.
std::optional<Cluster> loadClusterOption();

/// --precision as a training dtype (bf16, fp16, fp8); nullopt after
/// printing an error.
std::optional<DType> precisionOption();
/// --runtime (default megatron-core); prints the error and returns nullopt
/// on an unknown name.
std::optional<Runtime> runtimeOption();

/// What evaluate and plan start from: the cluster, the model and its
/// LayerProfile at --seq-len (required, with --global-batch).
struct Workload {
  Cluster cluster;
  frontend::LoadedModel model;
  LayerProfile profile;
};
/// Checks --seq-len and --global-batch, then loads --cluster and --model;
/// nullopt after printing an error.
std::optional<Workload> loadWorkload(mlir::MLIRContext &ctx);

/// The model a plan is applied to, loaded at the plan's sequence length:
/// --model; else the plan's model_source (a zoo name, or its file, which
/// must still be there with the digest the plan recorded); else the zoo
/// model the plan names (plans written before model_source). A --model
/// file with another digest than the recorded one is refused. Without any
/// of these, an error when `required`, else nothing loaded and code 0. On
/// failure the message is printed and `code` is the exit code to return.
struct PlanModel {
  std::optional<frontend::LoadedModel> loaded;
  std::string spec; ///< what was loaded ("llama-3-8b", a path)
  std::string how;  ///< where it came from, for messages ("--model X")
  /// Read from a file with the digest the plan recorded (PlanTarget).
  bool sameFile = false;
  int code = 0;
  explicit operator bool() const { return loaded.has_value(); }
  frontend::LoadedModel *operator->() { return &*loaded; }
};
/// `modelArg`: the subcommand's own --model (trident emit's), else the
/// shared one.
PlanModel loadPlanModel(mlir::MLIRContext &ctx, const plan::Plan &plan,
                        const std::string &planPath, bool required = true,
                        const std::string *modelArg = nullptr);
/// What a plan records of where `model` came from (plan::ModelSource).
plan::ModelSource modelSourceOf(const frontend::LoadedModel &model);
/// The zoo name of the model a plan names ("" if it is not a zoo model).
std::string zooNameOf(const plan::Plan &plan);

int runInspect(mlir::MLIRContext &ctx);
int runImport(mlir::MLIRContext &ctx);
int runEvaluate(mlir::MLIRContext &ctx);
int runValidate(mlir::MLIRContext &ctx);
int runPlan(mlir::MLIRContext &ctx);
int runExport(mlir::MLIRContext &ctx);
int runEmit(mlir::MLIRContext &ctx);
int runValidatePlan(); // ValidatePlanCommand.cpp
int runExplore(mlir::MLIRContext &ctx); // ExploreCommand.cpp
int runServe(mlir::MLIRContext &ctx);   // ServeCommand.cpp
int runReplan(mlir::MLIRContext &ctx);  // ReplanCommand.cpp
/// `trident validate --serve` (ServeCommand.cpp); empty `cases`: the
/// repository's validation/serving.json.
int runValidateServe(mlir::MLIRContext &ctx, const std::string &cases,
                     const std::string &writeDoc);

/// Exports `p` to `target` (megatron, megatron-bridge, deepspeed,
/// torchtitan) and prints it, or writes it to `outPath` ("" or "-":
/// stdout); notes the text cannot
/// hold go to stderr. `model` (when known) adds Megatron-LM's architecture
/// flags. Returns the exit code (ExportCommand.cpp).
/// `launcher` wraps a Megatron-LM export in a launch script (written
/// executable).
int printExported(const plan::Plan &p, std::string_view target,
                  std::string_view source, const std::string &outPath,
                  const frontend::ModelConfig *model = nullptr,
                  plan::Launcher launcher = plan::Launcher::None);

} // namespace trident::tool

#endif // TRIDENT_TOOLS_TRIDENT_COMMANDS_H
