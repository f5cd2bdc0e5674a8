//===- ValidationRunner.cpp - Evaluating cases through the real pipeline --===//

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Frontend/GraphBuilder.h"
#include "trident/Frontend/ModelSource.h"
#include "trident/Validation/CaseProfile.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <map>

namespace trident::validation {

Result<LayerProfile> caseProfile(mlir::MLIRContext &context, const Case &c) {
  std::string source = "cases.json:" + c.id;
  std::vector<std::string> warnings;
  auto cfg = frontend::parseHFConfig(c.modelJson, source, &warnings);
  if (!cfg)
    return cfg.status();
  cfg->seqLen = c.seqLen;
  if (cfg->position == frontend::PositionKind::Learned &&
      cfg->maxPositions < c.seqLen)
    cfg->maxPositions = c.seqLen;
  if (Status s = frontend::validateModelConfig(*cfg, source); !s)
    return s;
  auto module = frontend::buildModel(context, *cfg);
  frontend::LoadedModel loaded;
  loaded.module = std::move(module);
  return analysis::buildLayerProfile(loaded.model(), c.seqLen);
}

Report runValidation(const std::vector<Case> &cases,
                     const EvalOptions &options,
                     std::optional<Runtime> forceRuntime) {
  mlir::DialectRegistry registry;
  frontend::registerFrontendDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();

  Report report;
  std::map<std::pair<std::string, int64_t>, Result<LayerProfile>> profiles;
  for (const Case &c : cases) {
    CaseResult r;
    r.c = &c;
    if (!c.evaluable) {
      r.outcome = CaseResult::Outcome::Skipped;
      r.reason = c.skipReason.empty() ? "marked not evaluable" : c.skipReason;
      report.results.push_back(r);
      continue;
    }
    auto key = std::make_pair(c.modelJson, c.seqLen);
    auto it = profiles.find(key);
    if (it == profiles.end())
      it = profiles.emplace(key, caseProfile(context, c)).first;
    auto fail = [&](const std::string &why) {
      r.outcome = CaseResult::Outcome::Failed;
      r.reason = why;
      report.results.push_back(r);
    };
    if (!it->second) {
      fail(it->second.message());
      continue;
    }
    auto cluster = loadCluster(c.cluster);
    if (!cluster) {
      fail(cluster.message());
      continue;
    }
    EvalOptions caseOptions = options;
    r.runtime = forceRuntime ? *forceRuntime : c.runtime;
    applyRuntime(caseOptions, r.runtime);
    auto eval = evaluate(*it->second, *cluster, c.config, caseOptions);
    if (!eval) {
      fail(eval.message());
      continue;
    }
    r.outcome = CaseResult::Outcome::Evaluated;
    r.predictedTokensPerSecPerGpu = eval->tokensPerSecondPerGpu;
    r.error = (r.predictedTokensPerSecPerGpu - c.measuredTokensPerSecPerGpu) /
              c.measuredTokensPerSecPerGpu;
    r.mfu = eval->mfu;
    r.fits = eval->fits;
    r.peakMemoryBytes = eval->peakMemoryBytes;
    r.capacityBytes = eval->memoryCapacityBytes;
    report.results.push_back(r);
  }
  summarize(report);
  return report;
}

} // namespace trident::validation
