//===- ExportCommand.cpp - trident export ---------------------------------===//
//
// `trident export --plan plan.json --to megatron|deepspeed|torchtitan
// [--model M] [--cluster C] [-o FILE]`: a trident.plan/v1 plan as a
// training framework's configuration (TridentPlan's Export.h,
// docs/exporters.md). With --model or --cluster the plan is first held to
// them (plan::verify): a plan for another model or GPU count is refused.
// Notes that the text cannot carry (DeepSpeed JSON has no comments) go to
// stderr.
//
// Exit codes: 0 written; 1 bad input or a plan the target cannot express;
// 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Plan/Export.h"
#include "trident/Support/FileIO.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/Support/raw_ostream.h"

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
cl::opt<std::string> exportToOpt("to",
                                 cl::desc("megatron, deepspeed or torchtitan"),
                                 cl::value_desc("target"), cl::sub(exportCmd),
                                 cl::cat(category));
} // namespace

int printExported(const plan::Plan &p, std::string_view target,
                  std::string_view source, const std::string &outPath) {
  auto t = plan::parseExportTarget(target);
  if (!t)
    return fail(t.message(), 2);
  auto e = plan::exportPlan(p, *t, source);
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
  return 0;
}

int runExport(mlir::MLIRContext &ctx) {
  if (planOpt.empty())
    return fail("--plan is required (a plan written by trident plan -o)", 2);
  if (exportToOpt.empty())
    return fail("--to is required: megatron, deepspeed or torchtitan", 2);
  auto text = readFile(planOpt);
  if (!text)
    return fail(text.message());
  auto p = plan::parsePlanJson(*text, planOpt);
  if (!p)
    return fail(p.message());
  // What the plan will be launched on, when given.
  plan::PlanTarget target;
  std::optional<LayerProfile> profile;
  if (!modelOpt.empty()) {
    auto loaded = frontend::loadModel(ctx, modelOpt, p->seqLen);
    if (!loaded)
      return fail(loaded.message());
    profile = analysis::buildLayerProfile(loaded->model(), p->seqLen);
    target.model = &*profile;
    target.modelSource = "--model " + modelOpt;
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
  return printExported(*p, exportToOpt, planOpt, exportOutputOpt);
}

} // namespace trident::tool
