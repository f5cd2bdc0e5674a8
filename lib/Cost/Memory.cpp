//===- Memory.cpp - Closed-form memory formulas from the papers -----------===//

#include "trident/Cost/Memory.h"

#include <algorithm>

namespace trident {

std::string_view recomputeName(Recompute r) {
  switch (r) {
  case Recompute::None:
    return "none";
  case Recompute::Selective:
    return "selective";
  case Recompute::Full:
    return "full";
  }
  return "none";
}

std::optional<Recompute> parseRecompute(std::string_view n) {
  if (n == "none" || n == "no" || n == "off")
    return Recompute::None;
  if (n == "selective")
    return Recompute::Selective;
  if (n == "full" || n == "block" || n == "uniform")
    return Recompute::Full;
  return std::nullopt;
}

double korthikantiLayerActivationBytes(double s, double b, double h, double a,
                                       double t, bool sp, Recompute r) {
  t = std::max(t, 1.0);
  double sbh = s * b * h;
  if (r == Recompute::Full)
    return 2 * sbh / (sp ? t : 1);
  double attn = r == Recompute::Selective ? 0 : 5 * a * s / h;
  if (sp)
    return sbh / t * (34 + attn);
  return sbh * (10 + 24 / t + attn / t);
}

ModelStateBytes zeroModelStateBytes(double params, int64_t dp, int stage,
                                    double wb, double gb, double ob) {
  double d = double(std::max<int64_t>(dp, 1));
  ModelStateBytes m;
  m.weights = params * wb / (stage >= 3 ? d : 1);
  m.gradients = params * gb / (stage >= 2 ? d : 1);
  m.optimizer = params * ob / (stage >= 1 ? d : 1);
  return m;
}

} // namespace trident
