//===- EvaluationReport.h - Rendering one evaluated plan --------*- C++ -*-===//

#ifndef TRIDENT_REPORT_EVALUATIONREPORT_H
#define TRIDENT_REPORT_EVALUATIONREPORT_H

#include "trident/Cost/Evaluate.h"

#include <string>

namespace trident::report {

/// A readable breakdown: throughput, MFU, time and memory per stage.
std::string renderEvaluationText(const LayerProfile &profile,
                                 const Cluster &cluster,
                                 const ParallelConfig &cfg,
                                 const Evaluation &eval);

/// One JSON object: iteration_time_s, tokens_per_s, tflops_per_gpu, mfu,
/// hfu, memory.peak_bytes, and per-stage time and memory.
std::string renderEvaluationJson(const LayerProfile &profile,
                                 const Cluster &cluster,
                                 const ParallelConfig &cfg,
                                 const Evaluation &eval);

} // namespace trident::report

#endif // TRIDENT_REPORT_EVALUATIONREPORT_H
