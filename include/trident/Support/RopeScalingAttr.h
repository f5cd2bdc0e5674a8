//===- RopeScalingAttr.h - Checks of a rope_scaling dictionary -*- C++ -*-===//
//
// tgraph.attention's `rope_scaling` and the texec rope kernels' `scaling`
// hold the same dictionary; both verifiers check it here (header-only, so
// the two dialect libraries stay independent). The keys and formulas are
// rt::RopeScaling's (include/trident/Runtime/Runtime.h).
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SUPPORT_ROPESCALINGATTR_H
#define TRIDENT_SUPPORT_ROPESCALINGATTR_H

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <cmath>
#include <string>

namespace trident {

/// "" when `rs` is a valid scaling, else what is wrong with it.
inline std::string checkRopeScaling(mlir::DictionaryAttr rs) {
  auto type = rs.getAs<mlir::StringAttr>("type");
  if (!type)
    return "needs a string 'type'";
  std::string t = type.getValue().str();
  llvm::SmallVector<llvm::StringRef> keys;
  if (t == "linear")
    keys = {"factor"};
  else if (t == "llama3")
    keys = {"factor", "low_freq_factor", "high_freq_factor",
            "original_max_positions"};
  else if (t == "yarn")
    keys = {"factor",    "original_max_positions", "beta_fast",
            "beta_slow", "truncate",               "attention_factor"};
  else
    return (llvm::Twine("type '") + t + "' is not one of linear, llama3, yarn")
        .str();
  for (mlir::NamedAttribute a : rs) {
    llvm::StringRef k = a.getName().getValue();
    if (k != "type" && !llvm::is_contained(keys, k))
      return (llvm::Twine("key '") + k + "' does not belong to type '" + t +
              "'")
          .str();
  }
  for (llvm::StringRef k : keys) {
    mlir::Attribute a = rs.get(k);
    if (!a)
      return (llvm::Twine("type '") + t + "' needs '" + k + "'").str();
    if (k == "original_max_positions") {
      auto i = llvm::dyn_cast<mlir::IntegerAttr>(a);
      if (!i || !i.getType().isInteger(64) || i.getInt() <= 0)
        return (llvm::Twine("'") + k + "' must be a positive i64").str();
    } else if (k == "truncate") {
      if (!llvm::isa<mlir::BoolAttr>(a))
        return "'truncate' must be true or false";
    } else {
      auto f = llvm::dyn_cast<mlir::FloatAttr>(a);
      double v = f ? f.getValueAsDouble() : 0.0;
      if (!f || !std::isfinite(v) || v <= 0.0)
        return (llvm::Twine("'") + k + "' must be a positive number").str();
      if (k == "factor" && v < 1.0)
        return "'factor' must be at least 1";
    }
  }
  if (t == "llama3" &&
      rs.getAs<mlir::FloatAttr>("high_freq_factor").getValueAsDouble() <=
          rs.getAs<mlir::FloatAttr>("low_freq_factor").getValueAsDouble())
    return "'high_freq_factor' must exceed 'low_freq_factor'";
  return "";
}

} // namespace trident

#endif // TRIDENT_SUPPORT_ROPESCALINGATTR_H
