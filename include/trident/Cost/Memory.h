//===- Memory.h - Closed-form memory formulas from the papers ---*- C++ -*-===//
//
// The reference formulas the evaluator's memory model reproduces (and the
// unit tests check it against):
//  - Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
//    Transformer Models", Sec. 4: activation bytes of one transformer layer
//    with 16-bit activations and 1-byte dropout masks.
//  - Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training
//    Trillion Parameter Models", Sec. 5 / Fig. 1: model-state bytes per GPU
//    under mixed-precision Adam, (2 + 2 + K) * Psi with K = 12.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_COST_MEMORY_H
#define TRIDENT_COST_MEMORY_H

#include "trident/Plan/Parallel.h" // Recompute

#include <cstdint>
#include <optional>
#include <string_view>

namespace trident {

/// Korthikanti et al. 2022 per-layer activation bytes for sequence s,
/// micro-batch b, hidden h, heads a, tensor-parallel t:
///   no TP:          s b h (34 + 5 a s / h)
///   TP:             s b h (10 + 24/t + 5 a s / (h t))
///   TP + SP:        s b h / t (34 + 5 a s / h)
///   selective:      the 5as/h term dropped
///   full recompute: 2 s b h (/ t with SP): the layer input only.
double korthikantiLayerActivationBytes(double s, double b, double h, double a,
                                       double t, bool sequenceParallel,
                                       Recompute recompute);

/// Model states per GPU.
struct ModelStateBytes {
  double weights = 0, gradients = 0, optimizer = 0;
  double total() const { return weights + gradients + optimizer; }
};

/// ZeRO stage 0..3 model states of `params` parameters over `dp` ranks:
/// stage 1 (P_os) shards the optimizer states, 2 (P_os+g) also the
/// gradients, 3 (P_os+g+p) also the weights. Defaults: ZeRO's
/// mixed-precision Adam, 2 + 2 + 12 bytes per parameter.
ModelStateBytes zeroModelStateBytes(double params, int64_t dp, int zeroStage,
                                    double weightBytes = 2,
                                    double gradBytes = 2,
                                    double optimizerBytes = 12);

} // namespace trident

#endif // TRIDENT_COST_MEMORY_H
