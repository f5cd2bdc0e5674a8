//===- Rope.cpp - RoPE frequencies and their long-context scalings --------===//
//
// Shared by both backends, so that a CPU and a CUDA run turn every pair by
// the same angle. The formulas follow the papers named in Runtime.h
// (RopeScaling) as Hugging Face transformers applies them.
//
//===----------------------------------------------------------------------===//

#include "../Internal.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace trident::rt {

using detail::check;

namespace {
/// YaRN's pair index at which a frequency turns `rotations` times over
/// `positions` (YaRN paper, equation 17, on pairs of a rotaryDim-wide
/// head).
double yarnCorrectionDim(double rotations, double rotaryDim, double theta,
                         double positions) {
  return rotaryDim *
         std::log(positions / (rotations * 2.0 * std::numbers::pi)) /
         (2.0 * std::log(theta));
}
} // namespace

std::vector<double> ropeFrequencies(int64_t rotaryDim, double theta,
                                    const RopeScaling &s) {
  const char *fn = "ropeFrequencies";
  check(rotaryDim > 0 && rotaryDim % 2 == 0 &&
            rotaryDim <= 2 * kMaxRopePairs,
        fn,
        "rotaryDim " + std::to_string(rotaryDim) +
            " must be even, positive and at most " +
            std::to_string(2 * kMaxRopePairs));
  check(std::isfinite(theta) && theta > 1, fn, "theta must exceed 1");
  const int64_t pairs = rotaryDim / 2;
  std::vector<double> f(pairs);
  for (int64_t i = 0; i < pairs; ++i)
    f[i] = std::pow(theta, -2.0 * double(i) / double(rotaryDim));
  if (s.kind == RopeScaling::Kind::None)
    return f;
  const std::string why = checkRopeScaling(s);
  check(why.empty(), fn, "RoPE scaling: " + why);
  switch (s.kind) {
  case RopeScaling::Kind::None:
    break;
  case RopeScaling::Kind::Linear:
    for (double &x : f)
      x /= s.factor;
    break;
  case RopeScaling::Kind::Llama3: {
    const double L = double(s.originalMaxPositions);
    const double lowWavelen = L / s.lowFreqFactor;   // longer: scaled
    const double highWavelen = L / s.highFreqFactor; // shorter: kept
    for (double &x : f) {
      const double wavelen = 2.0 * std::numbers::pi / x;
      if (wavelen < highWavelen)
        continue;
      if (wavelen > lowWavelen) {
        x /= s.factor;
        continue;
      }
      const double a = (L / wavelen - s.lowFreqFactor) /
                       (s.highFreqFactor - s.lowFreqFactor);
      x = (1.0 - a) * x / s.factor + a * x;
    }
    break;
  }
  case RopeScaling::Kind::Yarn: {
    const double L = double(s.originalMaxPositions), d = double(rotaryDim);
    double low = yarnCorrectionDim(s.betaFast, d, theta, L);
    double high = yarnCorrectionDim(s.betaSlow, d, theta, L);
    if (s.truncate) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, d - 1.0);
    if (low == high)
      high += 0.001; // the ramp's width must not be 0
    for (int64_t i = 0; i < pairs; ++i) {
      // ramp 0: extrapolate (keep f_i); 1: interpolate (f_i / factor).
      const double ramp =
          std::clamp((double(i) - low) / (high - low), 0.0, 1.0);
      f[i] = f[i] / s.factor * ramp + f[i] * (1.0 - ramp);
    }
    break;
  }
  }
  return f;
}

} // namespace trident::rt
