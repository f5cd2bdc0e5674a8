//===- StageJson.h - A pipeline stage's memory as JSON -----------*- C++
//-*-===//
//
// The "memory" object of one pipeline stage, written once for every JSON
// that carries it: plan files (trident.plan/v1 `stages[].memory`, from
// plan::StagePlan) and `trident evaluate --json` (`stages[].memory`, from
// the cost model's StageBreakdown). A template over the nlohmann JSON type
// and the stage record, which spell the fields alike.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_PLAN_STAGEJSON_H
#define TRIDENT_PLAN_STAGEJSON_H

namespace trident {

/// Bytes per GPU by kind, the capacity, the activations held at the peak,
/// and under ZeRO-3 the parameter elements held gathered (absent
/// otherwise).
template <typename Json, typename Stage> Json stageMemoryJson(const Stage &s) {
  Json m = {{"weights_bytes", s.weightBytes},
            {"gradients_bytes", s.gradientBytes},
            {"optimizer_bytes", s.optimizerBytes},
            {"activations_bytes", s.activationBytes},
            {"buffers_bytes", s.bufferBytes},
            {"total_bytes", s.totalBytes},
            {"capacity_bytes", s.capacityBytes},
            {"peak_in_flight", s.peakInFlight}};
  if (s.zero3GatherElements > 0)
    m["zero3_gather_elements"] = s.zero3GatherElements;
  return m;
}

} // namespace trident

#endif // TRIDENT_PLAN_STAGEJSON_H
