//===- Options.cpp - Options shared by several trident commands -----------===//

#include "Commands.h"

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Frontend/ModelSource.h"
#include "trident/Hardware/Calibration.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/Support/raw_ostream.h"

#include <filesystem>

namespace cl = llvm::cl;

namespace trident::tool {

cl::OptionCategory category("Trident options");

cl::SubCommand inspectCmd("inspect", "Parameters, layers and FLOPs of a model");
cl::SubCommand importCmd("import", "Write a model as tgraph MLIR");
cl::SubCommand evaluateCmd(
    "evaluate", "Predict step time and memory of one parallel configuration");
cl::SubCommand planCmd("plan", "Search the plan space for the fastest plan "
                                "that fits");
cl::SubCommand exportCmd(
    "export", "Write a plan as Megatron-LM arguments, a DeepSpeed config or "
              "torchtitan settings");
cl::SubCommand
    exploreCmd("explore",
               "Size a cluster and a batch for a training run: time to "
               "train, GPU-hours and cost over GPU types and node counts");
cl::SubCommand
    serveCmd("serve",
             "Plan the serving of a model: tensor/pipeline/expert split, "
             "replicas, batch and chunk for latency targets and a load");
cl::SubCommand
    replanCmd("replan",
              "Re-plan a running job for a cluster that lost or gained GPUs: "
              "stay or move, the state each rank reads, the break-even");
cl::SubCommand validateCmd(
    "validate", "Predict every published run of a cases.json and report the "
                "error");

cl::opt<std::string> modelOpt("model",
                              cl::desc("zoo name, config.json or .mlir file"),
                              cl::value_desc("M"), cl::sub(inspectCmd),
                              cl::sub(importCmd), cl::sub(evaluateCmd),
                              cl::sub(planCmd), cl::sub(exportCmd),
                              cl::sub(exploreCmd), cl::sub(serveCmd),
                              cl::sub(replanCmd), cl::cat(category));
cl::opt<int64_t> seqLenOpt("seq-len", cl::desc("sequence length"),
                           cl::value_desc("S"), cl::init(0),
                           cl::sub(inspectCmd), cl::sub(importCmd),
                           cl::sub(evaluateCmd), cl::sub(planCmd),
                           cl::sub(exploreCmd), cl::cat(category));
cl::opt<bool> jsonOpt("json", cl::desc("print JSON"), cl::sub(inspectCmd),
                      cl::sub(evaluateCmd), cl::sub(planCmd),
                      cl::sub(exploreCmd), cl::sub(serveCmd),
                      cl::sub(replanCmd), cl::cat(category));
cl::opt<std::string>
    clusterOpt("cluster",
               cl::desc("PRESET:NODES (e.g. dgx-h100:32) or cluster.json"),
               cl::value_desc("C"), cl::sub(evaluateCmd), cl::sub(planCmd),
               cl::sub(exportCmd), cl::sub(serveCmd), cl::sub(replanCmd),
               cl::cat(category));
cl::opt<std::string>
    calibrationOpt("calibration",
                   cl::desc("calibration profile JSON measured on the GPUs"),
                   cl::value_desc("file"), cl::sub(evaluateCmd),
                   cl::sub(planCmd), cl::sub(serveCmd), cl::cat(category));
cl::opt<std::string>
    precisionOpt("precision", cl::desc("bf16, fp16, fp8 or fp32 (TF32 GEMMs)"),
                 cl::init("bf16"), cl::sub(evaluateCmd), cl::sub(planCmd),
                 cl::sub(exploreCmd), cl::sub(serveCmd), cl::cat(category));
// Built before runtimeOpt (same translation unit, in order), from the
// runtime table.
const std::string kRuntimeHelp = "training software: " + runtimeNames() +
                                 " (default megatron-core; "
                                 "docs/cost-model.md#runtimes)";
cl::opt<std::string> runtimeOpt("runtime", cl::desc(kRuntimeHelp),
                                cl::value_desc("R"), cl::sub(evaluateCmd),
                                cl::sub(planCmd), cl::sub(validateCmd),
                                cl::sub(exploreCmd), cl::cat(category));
cl::opt<int64_t> globalBatchOpt("global-batch",
                                cl::desc("sequences per optimizer step"),
                                cl::value_desc("B"), cl::init(0),
                                cl::sub(evaluateCmd), cl::sub(planCmd), cl::cat(category));

int fail(const std::string &message, int code) {
  llvm::errs() << "trident: error: " << message << "\n";
  return code;
}

std::optional<frontend::LoadedModel> loadModelOption(mlir::MLIRContext &ctx) {
  if (modelOpt.empty()) {
    fail("--model is required (a zoo name, a config.json or a .mlir file)");
    return std::nullopt;
  }
  if (seqLenOpt < 0) {
    fail("--seq-len must be positive, got " + std::to_string(seqLenOpt));
    return std::nullopt;
  }
  auto loaded = frontend::loadModel(ctx, modelOpt, seqLenOpt);
  if (!loaded) {
    fail(loaded.message());
    return std::nullopt;
  }
  for (const std::string &w : loaded->warnings)
    llvm::errs() << "trident: warning: " << w << "\n";
  return std::move(*loaded);
}

std::string zooNameOf(const plan::Plan &plan) {
  std::string found;
  for (const std::string &name : frontend::zooModelNames())
    if (frontend::modelSymbol(name) == frontend::modelSymbol(plan.model))
      found = name;
  return found;
}

plan::ModelSource modelSourceOf(const frontend::LoadedModel &model) {
  plan::ModelSource s;
  if (model.sha256.empty()) {
    s.zoo = model.source;
  } else {
    s.path = model.source;
    s.sha256 = model.sha256;
  }
  return s;
}

PlanModel loadPlanModel(mlir::MLIRContext &ctx, const plan::Plan &plan,
                        const std::string &planPath, bool required,
                        const std::string *modelArg) {
  PlanModel r;
  const std::string &modelOpt = modelArg ? *modelArg : tool::modelOpt;
  const plan::ModelSource &src = plan.modelSource;
  // The digest the plan recorded, in messages.
  auto recorded = [&] {
    return planPath + " was made from " + src.path + " (sha256 " +
           src.sha256.substr(0, 12) + "...)";
  };
  if (!modelOpt.empty()) {
    r.spec = modelOpt;
    r.how = "--model " + modelOpt;
  } else if (!src.zoo.empty()) {
    r.spec = src.zoo;
    r.how = "the zoo model " + src.zoo + " (" + planPath + ": model_source)";
  } else if (!src.path.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(src.path, ec)) {
      r.code = fail(recorded() + ", which is not there now: give --model "
                                 "with the file where it moved",
                    2);
      return r;
    }
    r.spec = src.path;
    r.how = src.path + " (" + planPath + ": model_source)";
  } else {
    r.spec = zooNameOf(plan);
    r.how = "the zoo model " + r.spec;
  }
  if (r.spec.empty()) {
    if (required)
      r.code = fail(planPath + " was made for '" + plan.model +
                        "', which is not a zoo model: give --model (its "
                        "config.json or .mlir)",
                    2);
    return r;
  }
  auto loaded = frontend::loadModel(ctx, r.spec, plan.seqLen);
  if (!loaded) {
    r.code = fail(loaded.message());
    return r;
  }
  // The recorded digest holds the file to what was planned: an edited file,
  // or another file given as --model, is refused.
  if (!src.sha256.empty() && !loaded->sha256.empty() &&
      loaded->sha256 != src.sha256) {
    std::string now =
        r.how + " has sha256 " + loaded->sha256.substr(0, 12) + "...";
    r.code = fail(recorded() + ", but " + now +
                  (modelOpt.empty()
                       ? ": the file changed since the plan was made; plan "
                         "again with it, or give --model with the file as "
                         "it was"
                       : ": another file than the plan's model; give the "
                         "file it was made from, or plan again"));
    return r;
  }
  r.sameFile = !src.sha256.empty() && loaded->sha256 == src.sha256;
  r.loaded = std::move(*loaded);
  return r;
}

std::optional<Cluster> loadClusterOption() {
  if (clusterOpt.empty()) {
    fail("--cluster is required (PRESET:NODES such as dgx-h100:4, or a "
         "cluster.json)");
    return std::nullopt;
  }
  auto cluster = loadCluster(clusterOpt);
  if (!cluster) {
    fail(cluster.message());
    return std::nullopt;
  }
  if (!calibrationOpt.empty()) {
    auto cal = loadCalibrationFile(calibrationOpt);
    if (!cal) {
      fail(cal.message());
      return std::nullopt;
    }
    if (Status s = applyCalibration(*cluster, *cal); !s) {
      fail(calibrationOpt + ": " + s.message());
      return std::nullopt;
    }
  }
  return std::move(*cluster);
}

std::optional<DType> precisionOption() {
  auto precision = parseDType(precisionOpt);
  if (!precision) {
    fail("--precision: expected bf16, fp16, fp8 or fp32, got '" +
         precisionOpt + "'");
    return std::nullopt;
  }
  return *precision;
}

std::optional<Runtime> runtimeOption() {
  if (runtimeOpt.empty())
    return Runtime::MegatronCore;
  auto r = parseRuntime(runtimeOpt);
  if (!r) {
    fail("--runtime: expected one of " + runtimeNames() + ", got '" +
         runtimeOpt + "'");
    return std::nullopt;
  }
  return *r;
}

std::optional<Workload> loadWorkload(mlir::MLIRContext &ctx) {
  if (seqLenOpt <= 0) {
    fail("--seq-len is required and must be positive");
    return std::nullopt;
  }
  if (globalBatchOpt <= 0) {
    fail("--global-batch is required and must be positive");
    return std::nullopt;
  }
  auto cluster = loadClusterOption();
  if (!cluster)
    return std::nullopt;
  auto loaded = loadModelOption(ctx);
  if (!loaded)
    return std::nullopt;
  Workload w{std::move(*cluster), std::move(*loaded), LayerProfile()};
  w.profile = analysis::buildLayerProfile(w.model.model(), seqLenOpt);
  return w;
}

} // namespace trident::tool
