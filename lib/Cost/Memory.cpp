//===- Memory.cpp - Closed-form memory formulas from the papers -----------===//

#include "trident/Cost/Memory.h"

#include <algorithm>

namespace trident {

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
