//===- ReplanCommand.cpp - trident replan ---------------------------------===//
//
// Thin: reads the old plan, the model (--model, or the zoo model the plan
// names) and the new cluster, calls explore::replan (lib/Explore) and
// prints or writes its answer; -o writes the plan to move to.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Explore/Replan.h"
#include "trident/Frontend/ModelSource.h"
#include "trident/Support/FileIO.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace cl = llvm::cl;

namespace trident::tool {

namespace {

cl::opt<std::string> oldPlanOpt("plan",
                                cl::desc("the running job's plan "
                                         "(trident plan -o)"),
                                cl::value_desc("old.json"), cl::sub(replanCmd),
                                cl::cat(category));
cl::opt<double> storageOpt(
    "storage-gbps",
    cl::desc("aggregate read bandwidth of the checkpoint store, GB/s "
             "(default: not the bottleneck; the nodes' NICs are)"),
    cl::value_desc("G"), cl::init(0), cl::sub(replanCmd), cl::cat(category));
cl::opt<double> restartOpt("restart-s",
                           cl::desc("fixed restart cost, seconds (both sides)"),
                           cl::value_desc("S"), cl::init(0), cl::sub(replanCmd),
                           cl::cat(category));
cl::opt<int64_t> replanThreadsOpt("threads",
                                  cl::desc("search threads (0: all cores)"),
                                  cl::init(0), cl::sub(replanCmd),
                                  cl::cat(category));
cl::opt<std::string> replanOutOpt("o",
                                  cl::desc("write the plan to move to "
                                           "(trident.plan/v1)"),
                                  cl::value_desc("new.json"),
                                  cl::sub(replanCmd), cl::cat(category));

} // namespace

int runReplan(mlir::MLIRContext &ctx) {
  if (oldPlanOpt.empty())
    return fail("--plan is required (the running job's plan)", 2);
  if (!(storageOpt >= 0) || !(restartOpt >= 0) || !std::isfinite(storageOpt) ||
      !std::isfinite(restartOpt))
    return fail("--storage-gbps and --restart-s must be positive numbers");
  if (replanThreadsOpt < 0)
    return fail("--threads must be >= 0", 2);
  auto text = readFile(oldPlanOpt);
  if (!text)
    return fail(text.message());
  auto old = plan::parsePlanJson(*text, oldPlanOpt);
  if (!old)
    return fail(old.message());
  auto cluster = loadClusterOption();
  if (!cluster)
    return 1;
  auto loaded = loadPlanModel(ctx, *old, oldPlanOpt);
  if (!loaded)
    return loaded.code;
  LayerProfile profile =
      analysis::buildLayerProfile(loaded->model(), old->seqLen);
  plan::PlanTarget target;
  target.model = &profile;
  target.modelSource = loaded.how;
  target.sameFile = loaded.sameFile;
  if (Status s = plan::verify(*old, oldPlanOpt, target); !s)
    return fail(s.message());
  EvalOptions eo;
  auto runtime = parseRuntime(old->runtime);
  if (!runtime)
    return fail(std::string(oldPlanOpt) + ": field 'runtime': unknown '" +
                old->runtime + "'");
  applyRuntime(eo, *runtime);
  explore::ReplanOptions o;
  o.storageBytesPerS = storageOpt * 1e9;
  o.restartSeconds = restartOpt;
  o.threads = replanThreadsOpt;
  auto r = explore::replan(profile, *old, *cluster, o, eo);
  if (!r)
    return fail(r.message());
  // Both sides' plans name the model they were made from.
  r->move.plan.modelSource = r->stay.plan.modelSource =
      modelSourceOf(*loaded.loaded);
  if (!replanOutOpt.empty() && replanOutOpt != "-") {
    // The best plan for the new cluster (the old layout when none fits).
    const plan::Plan &best = r->move.possible ? r->move.plan : r->stay.plan;
    if (Status s = writeFileAtomically(replanOutOpt, plan::planToJson(best));
        !s)
      return fail(s.message());
  }
  if (jsonOpt)
    llvm::outs() << explore::renderReplanJson(*r, *old, *cluster);
  else
    llvm::outs() << explore::renderReplanText(*r, *old, *cluster);
  return 0;
}

} // namespace trident::tool
