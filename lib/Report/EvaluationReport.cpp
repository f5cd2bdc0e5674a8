//===- EvaluationReport.cpp - Rendering one evaluated plan ----------------===//

#include "trident/Report/EvaluationReport.h"
#include "trident/Cost/Envelope.h"
#include "trident/Plan/ParallelJson.h"
#include "trident/Plan/StageJson.h"
#include "trident/Report/InspectReport.h"

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace trident::report {

namespace {

std::string gb(double bytes) { return fmt::format("{:.1f} GB", bytes / 1e9); }
/// Milliseconds; rounding noise below zero prints as 0.
std::string ms(double s) {
  return fmt::format("{:.1f} ms", std::max(0.0, s) * 1e3);
}

std::string configLine(const ParallelConfig &c) {
  std::string s = fmt::format("dp={} tp={} pp={} cp={}", c.dp, c.tp, c.pp, c.cp);
  if (c.ep > 1)
    s += fmt::format(" ep={}", c.ep);
  if (c.vpp > 1)
    s += fmt::format(" vpp={}", c.vpp);
  s += fmt::format(" micro-batch={} global-batch={}", c.microBatch,
                   c.globalBatch);
  if (c.sequenceParallel)
    s += " sp";
  if (c.tpCommOverlap)
    s += " tp-comm-overlap";
  if (c.cp > 1 && c.cpCommType != CpCommType::P2p)
    s += " cp-comm=" +
         axisValueText(axisSpec(Axis::CpCommType), int64_t(c.cpCommType));
  std::string rc(recomputeName(c.recompute));
  if (!c.stageRecompute.empty()) {
    rc.clear();
    for (size_t i = 0; i < c.stageRecompute.size(); ++i)
      rc += (i ? "," : "") + std::string(recomputeName(c.stageRecompute[i]));
  }
  s += fmt::format(" recompute={} zero={} {}", rc, c.zeroStage,
                   dtypeName(c.precision));
  if (c.precision == DType::FP8 && c.fp8Recipe != Fp8Recipe::Delayed)
    s += " " + axisValueText(axisSpec(Axis::Fp8Recipe), int64_t(c.fp8Recipe));
  return s;
}

} // namespace

std::string renderEvaluationText(const LayerProfile &profile,
                                 const Cluster &cluster,
                                 const ParallelConfig &cfg,
                                 const Evaluation &e) {
  std::string out;
  out += fmt::format("model       {} ({} params, seq {})\n", profile.modelName,
                     humanCount(profile.totalParams), profile.seqLen);
  out += fmt::format("cluster     {} GPUs\n", cluster.totalGpus());
  out += fmt::format("plan        {}\n", configLine(cfg));
  out += fmt::format("runtime     {}\n", runtimeName(e.runtime));
  if (hasExperts(profile))
    out += fmt::format("experts     token dispatcher {}{}, busiest expert "
                       "{:g}x the mean load\n",
                       moeDispatcherName(e.moeDispatcher),
                       e.overlapEpComm ? " (overlapped with another "
                                         "micro-batch's compute)"
                                       : "",
                       e.expertLoadImbalance);
  out += fmt::format("schedule    {}, {} micro-batches, bubble {:.1f}%\n\n",
                     scheduleKindName(e.schedule), e.microBatches,
                     100 * std::max(0.0, e.bubbleFraction));
  out += fmt::format("step time   {:.3f} s  (pipeline {:.3f} s + exposed DP "
                     "{:.3f} s + optimizer {:.3f} s)\n",
                     e.iterationSeconds, e.pipelineSeconds, e.dpExposedSeconds,
                     e.optimizerSeconds);
  TimeRange range =
      timeRange(regimeOf(profile, cluster, cfg), e.iterationSeconds);
  out += fmt::format("80% range   {:.3f} - {:.3f} s  (runs like this one, "
                     "{}, {} published, predicted out of sample)\n",
                     range.lowSeconds, range.highSeconds, range.regime,
                     range.cases);
  if (e.tiedEmbeddingSeconds > 0)
    out += fmt::format("            (exposed DP includes {:.1f} ms summing the "
                       "tied embedding's gradient over the first and last "
                       "stage)\n",
                       1e3 * e.tiedEmbeddingSeconds);
  out += fmt::format("throughput  {:.0f} tokens/s ({:.0f} per GPU)\n",
                     e.tokensPerSecond, e.tokensPerSecondPerGpu);
  out += fmt::format("compute     {:.1f} TFLOP/s per GPU, MFU {:.1f}%, HFU "
                     "{:.1f}%\n",
                     e.tflopsPerGpu, 100 * e.mfu, 100 * e.hfu);
  out += fmt::format("memory      {}\n", describeFit(e));
  for (const std::string &w : envelopeWarnings(profile, cluster, cfg, e))
    out += fmt::format("warning     {}\n", w);
  out += "\n";
  out += fmt::format("{:>5} {:>6} {:>10} {:>10} {:>10} {:>10} | {:>8} {:>8} "
                     "{:>8} {:>8} {:>8} {:>9}\n",
                     "stage", "layers", "compute", "exp.comm", "bubble",
                     "DP+opt", "weights", "grads", "optim", "activ", "buffers",
                     "total");
  for (size_t i = 0; i < e.stages.size(); ++i) {
    const StageBreakdown &s = e.stages[i];
    out += fmt::format(
        "{:>5} {:>6} {:>10} {:>10} {:>10} {:>10} | {:>8} {:>8} {:>8} {:>8} "
        "{:>8} {:>9}\n",
        i, s.layers, ms(s.computeSeconds), ms(s.exposedCommSeconds),
        ms(s.bubbleSeconds), ms(s.dpCommSeconds + s.optimizerSeconds),
        gb(s.weightBytes), gb(s.gradientBytes), gb(s.optimizerBytes),
        gb(s.activationBytes), gb(s.bufferBytes), gb(s.totalBytes));
  }
  return out;
}

std::string renderEvaluationJson(const LayerProfile &profile,
                                 const Cluster &cluster,
                                 const ParallelConfig &cfg,
                                 const Evaluation &e) {
  using json = nlohmann::ordered_json;
  json j;
  j["model"] = profile.modelName;
  j["seq_len"] = profile.seqLen;
  j["gpus"] = cluster.totalGpus();
  j["global_batch"] = cfg.globalBatch;
  // The axes as a plan file writes them (kAxes; etp included).
  writeAxesJson(j, cfg, [&](Axis a, json &out) {
    if (a == Axis::MicroBatch)
      out["num_micro_batches"] = e.microBatches;
  });
  j["precision"] = std::string(dtypeName(cfg.precision));
  j["runtime"] = std::string(runtimeName(e.runtime));
  if (hasExperts(profile))
    j["experts"] = {
        {"dispatcher", std::string(moeDispatcherName(e.moeDispatcher))},
        {"overlap_ep_comm", e.overlapEpComm},
        {"load_imbalance", e.expertLoadImbalance}};
  j["iteration_time_s"] = e.iterationSeconds;
  TimeRange range =
      timeRange(regimeOf(profile, cluster, cfg), e.iterationSeconds);
  j["iteration_time_range_s"] = {range.lowSeconds, range.highSeconds};
  j["interval"] = {{"coverage", kIntervalHighQuantile - kIntervalLowQuantile},
                   {"regime", range.regime},
                   {"published_runs", range.cases}};
  j["warnings"] = envelopeWarnings(profile, cluster, cfg, e);
  j["tokens_per_s"] = e.tokensPerSecond;
  j["tokens_per_s_per_gpu"] = e.tokensPerSecondPerGpu;
  j["tflops_per_gpu"] = e.tflopsPerGpu;
  j["mfu"] = e.mfu;
  j["hfu"] = e.hfu;
  j["pipeline_s"] = e.pipelineSeconds;
  j["bubble_fraction"] = e.bubbleFraction;
  j["dp_exposed_s"] = e.dpExposedSeconds;
  j["tied_embedding_s"] = e.tiedEmbeddingSeconds;
  j["optimizer_s"] = e.optimizerSeconds;
  j["memory"] = {{"peak_bytes", e.peakMemoryBytes},
                 {"peak_stage", e.peakMemoryStage},
                 {"capacity_bytes", e.memoryCapacityBytes},
                 {"fits", e.fits}};
  json stages = json::array();
  for (size_t i = 0; i < e.stages.size(); ++i) {
    const StageBreakdown &s = e.stages[i];
    json st;
    st["stage"] = i;
    st["layers"] = s.layers;
    st["has_embedding"] = s.hasEmbedding;
    st["has_head"] = s.hasHead;
    st["recompute"] = std::string(recomputeName(s.recompute));
    st["time"] = {{"compute_s", s.computeSeconds},
                  {"exposed_comm_s", s.exposedCommSeconds},
                  {"hidden_comm_s", s.hiddenCommSeconds},
                  {"bubble_s", s.bubbleSeconds},
                  {"dp_comm_s", s.dpCommSeconds},
                  {"optimizer_s", s.optimizerSeconds}};
    st["memory"] = stageMemoryJson<json>(s);
    stages.push_back(st);
  }
  j["stages"] = stages;
  return j.dump(2) + "\n";
}

} // namespace trident::report
