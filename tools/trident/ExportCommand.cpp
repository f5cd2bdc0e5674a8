//===- ExportCommand.cpp - trident export ---------------------------------===//
//
// `trident export --plan plan.json --to
// megatron|megatron-bridge|deepspeed|torchtitan|shard
// [--model M] [--cluster C] [--launcher torchrun|slurm] [-o FILE]`: a
// trident.plan/v1 plan as a training framework's configuration (TridentPlan's
// Export.h, docs/exporters.md), or as upstream shard IR (docs/shard-export.md).
// With --model or --cluster the plan is first held to them (plan::verify): a
// plan for another model or GPU count is refused. Notes that the text cannot
// carry (DeepSpeed JSON has no comments) go to stderr.
//
// Exit codes: 0 written; 1 bad input or a plan the target cannot express;
// 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Conversion/Passes.h"
#include "trident/Frontend/ModelSource.h"
#include "trident/Plan/Export.h"
#include "trident/Support/FileIO.h"
#include "trident/Transforms/Passes.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <filesystem>

namespace cl = llvm::cl;

namespace trident::tool {

namespace {
cl::opt<std::string> planOpt("plan",
                             cl::desc("a trident.plan/v1 file (trident plan "
                                      "-o)"),
                             cl::value_desc("plan.json"), cl::sub(exportCmd),
                             cl::cat(category));
cl::opt<std::string> exportOutputOpt("o", cl::desc("write here (default: "
                                                   "stdout)"),
                                     cl::value_desc("file"),
                                     cl::sub(exportCmd), cl::cat(category));
cl::opt<std::string>
    exportToOpt("to",
                cl::desc("megatron, megatron-bridge, deepspeed, "
                         "torchtitan, or shard (upstream "
                         "MLIR)"),
                cl::value_desc("target"), cl::sub(exportCmd),
                cl::cat(category));
cl::opt<std::string> launcherOpt(
    "launcher",
    cl::desc("with --to megatron or megatron-bridge: a launch script, "
             "torchrun (one node) or slurm (an sbatch script with the "
             "plan's nodes)"),
    cl::value_desc("torchrun|slurm"), cl::sub(exportCmd), cl::cat(category));
} // namespace

int printExported(const plan::Plan &p, std::string_view target,
                  std::string_view source, const std::string &outPath,
                  const frontend::ModelConfig *model, plan::Launcher launcher) {
  auto t = plan::parseExportTarget(target);
  if (!t)
    return fail(t.message(), 2);
  auto e = plan::exportPlan(p, *t, source, model, launcher);
  if (!e)
    return fail(e.message());
  if (!e->notesInText)
    for (const std::string &n : e->notes)
      llvm::errs() << "trident: note: " << n << "\n";
  if (outPath.empty() || outPath == "-") {
    llvm::outs() << e->text;
    return 0;
  }
  if (Status s = writeFileAtomically(outPath, e->text); !s)
    return fail(s.message());
  if (launcher != plan::Launcher::None) {
    // A script the user runs as it is: rwxr-xr-x.
    std::error_code ec;
    std::filesystem::permissions(outPath,
                                 std::filesystem::perms::owner_all |
                                     std::filesystem::perms::group_read |
                                     std::filesystem::perms::group_exec |
                                     std::filesystem::perms::others_read |
                                     std::filesystem::perms::others_exec,
                                 ec);
    if (ec)
      return fail(outPath + ": cannot make it executable: " + ec.message());
  }
  return 0;
}

namespace {

/// `--to shard`: the model under the plan as upstream shard + linalg IR,
/// through the passes trident-opt runs
/// (`tgraph.model(trident-apply-plan{plan=P}),trident-export-shard`;
/// docs/shard-export.md).
int exportShard(mlir::MLIRContext &ctx, const plan::Plan &p) {
  auto loaded = loadPlanModel(ctx, p, planOpt);
  if (!loaded)
    return loaded.code;
  mlir::OwningOpRef<mlir::ModuleOp> module = std::move(loaded->module);
  {
    mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
      llvm::errs() << "trident: error: " << loaded.spec << " under " << planOpt
                   << ": " << d.str() << "\n";
      return mlir::success();
    });
    mlir::PassManager pm(&ctx);
    mlir::trident::ApplyPlanPassOptions apply;
    apply.planFile = planOpt;
    apply.cluster = clusterOpt;
    pm.nest<mlir::trident::graph::ModelOp>().addPass(
        mlir::trident::createApplyPlanPass(apply));
    pm.addPass(mlir::trident::createExportShardPass());
    if (mlir::failed(pm.run(*module)))
      return 1;
  }
  std::string ir;
  llvm::raw_string_ostream os(ir);
  module->print(os);
  if (Status s = writeFileAtomically(
          exportOutputOpt.empty() ? "-" : std::string(exportOutputOpt), ir);
      !s)
    return fail(s.message());
  return 0;
}

} // namespace

int runExport(mlir::MLIRContext &ctx) {
  if (planOpt.empty())
    return fail("--plan is required (a plan written by trident plan -o)", 2);
  if (exportToOpt.empty())
    return fail("--to is required: megatron, megatron-bridge, deepspeed, "
                "torchtitan or shard",
                2);
  auto text = readFile(planOpt);
  if (!text)
    return fail(text.message());
  auto p = plan::parsePlanJson(*text, planOpt);
  if (!p)
    return fail(p.message());
  auto launcher = plan::parseLauncher(launcherOpt);
  if (!launcher)
    return fail("--launcher: " + launcher.message(), 2);
  if (exportToOpt == "shard") {
    if (*launcher != plan::Launcher::None)
      return fail("--launcher writes Megatron-LM and Megatron-Bridge launch "
                  "scripts, not shard IR",
                  2);
    return exportShard(ctx, *p);
  }
  // What the plan will be launched on, when given.
  plan::PlanTarget target;
  std::optional<LayerProfile> profile;
  // The model: --model, or where the plan says it came from. Its
  // normalised description gives Megatron-LM's architecture flags.
  auto loaded = loadPlanModel(ctx, *p, planOpt, /*required=*/false);
  if (loaded.code)
    return loaded.code;
  const frontend::ModelConfig *config = nullptr;
  if (loaded) {
    for (const std::string &w : loaded->warnings)
      llvm::errs() << "trident: warning: " << w << "\n";
    profile = analysis::buildLayerProfile(loaded->model(), p->seqLen);
    target.model = &*profile;
    target.modelSource = loaded.how;
    target.sameFile = loaded.sameFile;
    if (loaded->config)
      config = &*loaded->config;
  }
  std::optional<Cluster> cluster;
  if (!clusterOpt.empty()) {
    auto hw = loadCluster(clusterOpt);
    if (!hw)
      return fail(hw.message());
    cluster = std::move(*hw);
    target.cluster = &*cluster;
    target.clusterSource = "--cluster " + clusterOpt;
  }
  if (Status s = plan::verify(*p, planOpt, target); !s)
    return fail(s.message());
  return printExported(*p, exportToOpt, planOpt, exportOutputOpt, config,
                       *launcher);
}

} // namespace trident::tool
