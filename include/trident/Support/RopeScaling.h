//===- RopeScaling.h - RoPE frequency scaling parameters ------*- C++ -*-===//
//
// The long-context RoPE scalings of Hugging Face's `rope_scaling`, as one
// plain struct shared by the model config (frontend), the tgraph / texec
// attribute (Support/RopeScalingAttr.h) and the runtime (rt::ropeFrequencies
// applies the formulas). Header-only and free of MLIR, so that emitted
// programs can include it through Runtime.h.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SUPPORT_ROPESCALING_H
#define TRIDENT_SUPPORT_ROPESCALING_H

#include <cmath>
#include <cstdint>
#include <string>

namespace trident {

/// The plain frequency of pair i is f_i = theta^(-2i/d) (d = rotaryDim);
/// the kinds change it as follows.
struct RopeScaling {
  enum class Kind : uint8_t {
    None,   ///< f_i
    Linear, ///< position interpolation (Chen et al. 2023, "Extending
            ///< Context Window of Large Language Models via Positional
            ///< Interpolation"): f_i / factor
    /// Llama 3.1 ("The Llama 3 Herd of Models", 2024; Meta's
    /// apply_scaling): with wavelength w_i = 2 pi / f_i, L =
    /// originalMaxPositions: f_i where w_i < L / highFreqFactor, f_i /
    /// factor where w_i > L / lowFreqFactor, else (1 - a) f_i / factor + a
    /// f_i with a = (L / w_i - lowFreqFactor) / (highFreqFactor -
    /// lowFreqFactor).
    Llama3,
    /// YaRN (Peng et al. 2023, "YaRN: Efficient Context Window Extension
    /// of Large Language Models"): pairs turning more than betaFast times
    /// over L keep f_i, those turning fewer than betaSlow times get f_i /
    /// factor, with a linear ramp between (pair bounds floored / ceiled
    /// when truncate); cos and sin are multiplied by attentionFactor.
    Yarn
  };
  Kind kind = Kind::None;
  double factor = 1.0;
  double lowFreqFactor = 1.0, highFreqFactor = 4.0; ///< Llama3
  int64_t originalMaxPositions = 0;                 ///< Llama3, Yarn
  double betaFast = 32.0, betaSlow = 1.0;           ///< Yarn
  bool truncate = true;                             ///< Yarn
  double attentionFactor = 1.0; ///< Yarn: multiplies cos and sin
};

/// "" when the fields that `s.kind` uses are in range, else what is wrong,
/// naming the field: in camelCase as the struct and the model config
/// spell it, or, with `snakeCase`, as the tgraph / texec dictionary does
/// ("'factor' must be at least 1, got 0.5"). Every level that receives a
/// scaling (model config, tgraph / texec verifiers, the runtime) checks it
/// here.
inline std::string checkRopeScaling(const RopeScaling &s,
                                    bool snakeCase = false) {
  using Kind = RopeScaling::Kind;
  if (s.kind == Kind::None)
    return "";
  auto name = [&](const char *camel, const char *snake) {
    return std::string("'") + (snakeCase ? snake : camel) + "'";
  };
  auto num = [](double v) {
    std::string t = std::to_string(v);
    while (t.size() > 1 && t.back() == '0' && t[t.size() - 2] != '.')
      t.pop_back();
    return t;
  };
  auto positive = [](double v) { return std::isfinite(v) && v > 0; };
  if (!std::isfinite(s.factor) || s.factor < 1.0)
    return name("factor", "factor") + " must be at least 1, got " +
           num(s.factor);
  if (s.kind != Kind::Linear && s.originalMaxPositions <= 0)
    return name("originalMaxPositions", "original_max_positions") +
           " must be positive, got " + std::to_string(s.originalMaxPositions);
  if (s.kind == Kind::Llama3) {
    if (!positive(s.lowFreqFactor))
      return name("lowFreqFactor", "low_freq_factor") +
             " must be positive, got " + num(s.lowFreqFactor);
    if (!std::isfinite(s.highFreqFactor) ||
        s.highFreqFactor <= s.lowFreqFactor)
      return name("highFreqFactor", "high_freq_factor") + " (" +
             num(s.highFreqFactor) + ") must exceed " +
             name("lowFreqFactor", "low_freq_factor") + " (" +
             num(s.lowFreqFactor) + ")";
  }
  if (s.kind == Kind::Yarn) {
    if (!positive(s.betaFast))
      return name("betaFast", "beta_fast") + " must be positive, got " +
             num(s.betaFast);
    if (!positive(s.betaSlow))
      return name("betaSlow", "beta_slow") + " must be positive, got " +
             num(s.betaSlow);
    if (!positive(s.attentionFactor))
      return name("attentionFactor", "attention_factor") +
             " must be positive, got " + num(s.attentionFactor);
  }
  return "";
}

} // namespace trident

#endif // TRIDENT_SUPPORT_ROPESCALING_H
