//===- Fitted.h - The constants fitted to published runs --------*- C++ -*-===//
//
// The few numbers of the cost model that no datasheet gives and that were
// fitted to the published training runs of shared/validation (cases.json
// and moe_cases.json), each run evaluated under the software it used: one
// per GPU generation, one for every generation (FitGroup::Pooled), or one
// of Megatron-Core's MoE layer (FitGroup::Moe). This table is their one
// home: the GPU catalog (lib/Hardware/GpuCatalog.cpp) builds its rows from
// it, `trident validate --fit` and `--cross-validate` refit it
// (lib/Validation/CrossValidate.cpp) over the grid each row states, and
// docs/cost-model.md lists it.
//
// A refit value reaches a GpuSpec through applyFit(), which rescales the
// quantities the constant multiplies: a sustained factor scales the GEMM
// efficiencies (MAMF x sustained), an attention constant the fused
// attention efficiencies (the FlashAttention-2 ratio kept), a memory
// constant the streaming efficiency.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_HARDWARE_FITTED_H
#define TRIDENT_HARDWARE_FITTED_H

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace trident {

struct GpuSpec;

/// The GPU generations with published runs to fit on; Pooled: one value
/// for all of them, fitted on their runs together; Moe: a constant of
/// Megatron-Core's mixture-of-experts layer, fitted on the runs of a model
/// with experts under a runtime that prices it (EvalOptions::
/// moeLayerHostSeconds), after the generations' constants.
enum class FitGroup { Ampere, Hopper, Pooled, Moe };

/// What a fitted constant multiplies.
enum class FitKind {
  Sustained, ///< sustained / best-shape (MAMF) GEMM throughput
  Attention, ///< fused attention: fraction of the 16-bit peak
  Memory,    ///< streaming (elementwise) fraction of the HBM peak
  MoeHost,   ///< host time of an MoE layer's forward, milliseconds
};

struct FittedConstant {
  std::string_view key; ///< "sustained.ampere", ...
  FitGroup group;
  FitKind kind;
  double value;        ///< the published (in-sample) value
  double lo, hi, step; ///< the grid the fit searches
  std::string_view what;
};

/// Fitted by `trident validate --cases ../shared/validation/cases.json
/// --cases ../shared/validation/moe_cases.json --as-ran
/// test/data/validation/mbridge-moe-as-ran.json --fit` (a grid search
/// minimising the median |error| over every evaluable case on the
/// generation's GPUs, for a pooled constant over every generation's cases,
/// for the MoE constant over the MoE runs; docs/cost-model.md section 8).
inline constexpr FittedConstant kFittedConstants[] = {
    {"sustained.ampere", FitGroup::Ampere, FitKind::Sustained, 0.95, 0.75, 1.00,
     0.01, "A100 GEMM throughput in training / best-shape MAMF"},
    {"sustained.hopper", FitGroup::Hopper, FitKind::Sustained, 0.95, 0.75, 1.00,
     0.01, "H100/H200 GEMM throughput in training / best-shape MAMF"},
    {"attention", FitGroup::Pooled, FitKind::Attention, 0.27, 0.16, 0.40, 0.01,
     "fused attention with the generation's best kernel (A100: "
     "FlashAttention-2; H100/H200: FlashAttention-3 or cuDNN), fraction of "
     "the 16-bit peak"},
    {"moe.host", FitGroup::Moe, FitKind::MoeHost, 3.15, 0.0, 6.0, 0.05,
     "milliseconds per MoE layer and micro-batch that the GPU waits for the "
     "host in Megatron-Core's eager MoE layer, beyond the expert GEMMs' "
     "forward (fitted on the MoE runs: dgxc's Grok-1 and moe_cases.json's, "
     "each with the dispatcher it ran)"},
};
inline constexpr size_t kNumFitted = std::size(kFittedConstants);

/// Whether `f` is the constant of `kind` that GPUs of `group` use: its
/// own generation's, or the one pooled over every generation.
constexpr bool appliesTo(const FittedConstant &f, FitGroup group,
                         FitKind kind) {
  return (f.group == group || f.group == FitGroup::Pooled) && f.kind == kind;
}

/// The published value of the constant of `group` and `kind`.
constexpr double fittedValue(FitGroup group, FitKind kind) {
  for (const FittedConstant &f : kFittedConstants)
    if (appliesTo(f, group, kind))
      return f.value;
  return 0;
}

/// One value per row of kFittedConstants, in its order.
struct FitValues {
  std::array<double, kNumFitted> values{};
  static FitValues published() {
    FitValues v;
    for (size_t i = 0; i < kNumFitted; ++i)
      v.values[i] = kFittedConstants[i].value;
    return v;
  }
  double get(FitGroup group, FitKind kind) const {
    for (size_t i = 0; i < kNumFitted; ++i)
      if (appliesTo(kFittedConstants[i], group, kind))
        return values[i];
    return 0;
  }
  bool operator==(const FitValues &) const = default;
};

std::string_view fitGroupName(FitGroup group);

/// The generation whose fitted constants a catalog GPU uses (A100 ->
/// Ampere; H100, H200 -> Hopper); none for other types.
std::optional<FitGroup> fitGroupOf(const GpuSpec &gpu);

/// Rescales `gpu`'s fitted quantities from the published values to `to`.
/// GPUs outside every fit group are left alone.
void applyFit(GpuSpec &gpu, const FitValues &to);

} // namespace trident

#endif // TRIDENT_HARDWARE_FITTED_H
