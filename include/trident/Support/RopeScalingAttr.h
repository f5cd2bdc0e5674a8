//===- RopeScalingAttr.h - A RopeScaling as a dictionary attr -*- C++ -*-===//
//
// tgraph.attention's `rope_scaling` and the texec rope kernels' `scaling`
// hold a RopeScaling (Support/RopeScaling.h) as the same dictionary. The
// graph builder writes it, both verifiers read and check it, and the C++
// emitter reads it here (header-only, so the dialect libraries stay
// independent).
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SUPPORT_ROPESCALINGATTR_H
#define TRIDENT_SUPPORT_ROPESCALINGATTR_H

#include "trident/Support/RopeScaling.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace trident {

namespace detail {
/// The dictionary keys of `kind` besides "type", in the order written.
inline llvm::SmallVector<llvm::StringRef>
ropeScalingKeys(RopeScaling::Kind kind) {
  switch (kind) {
  case RopeScaling::Kind::None:
    return {};
  case RopeScaling::Kind::Linear:
    return {"factor"};
  case RopeScaling::Kind::Llama3:
    return {"factor", "low_freq_factor", "high_freq_factor",
            "original_max_positions"};
  case RopeScaling::Kind::Yarn:
    return {"factor",    "original_max_positions", "beta_fast",
            "beta_slow", "truncate",               "attention_factor"};
  }
  return {};
}
} // namespace detail

/// Reads `rs` into `out`: "" when it is a valid scaling (its keys exactly
/// those of its type, each of the right attribute type, the values in
/// checkRopeScaling's ranges), else what is wrong with it.
inline std::string parseRopeScaling(mlir::DictionaryAttr rs,
                                    RopeScaling &out) {
  using Kind = RopeScaling::Kind;
  out = RopeScaling{};
  auto type = rs.getAs<mlir::StringAttr>("type");
  if (!type)
    return "needs a string 'type'";
  llvm::StringRef t = type.getValue();
  if (t == "linear")
    out.kind = Kind::Linear;
  else if (t == "llama3")
    out.kind = Kind::Llama3;
  else if (t == "yarn")
    out.kind = Kind::Yarn;
  else
    return (llvm::Twine("type '") + t + "' is not one of linear, llama3, yarn")
        .str();
  const llvm::SmallVector<llvm::StringRef> keys =
      detail::ropeScalingKeys(out.kind);
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
      if (!i || !i.getType().isInteger(64))
        return (llvm::Twine("'") + k + "' must be an i64").str();
      out.originalMaxPositions = i.getInt();
    } else if (k == "truncate") {
      auto b = llvm::dyn_cast<mlir::BoolAttr>(a);
      if (!b)
        return "'truncate' must be true or false";
      out.truncate = b.getValue();
    } else {
      auto f = llvm::dyn_cast<mlir::FloatAttr>(a);
      if (!f)
        return (llvm::Twine("'") + k + "' must be a float").str();
      double v = f.getValueAsDouble();
      (k == "factor"             ? out.factor
       : k == "low_freq_factor"  ? out.lowFreqFactor
       : k == "high_freq_factor" ? out.highFreqFactor
       : k == "beta_fast"        ? out.betaFast
       : k == "beta_slow"        ? out.betaSlow
                                 : out.attentionFactor) = v;
    }
  }
  return checkRopeScaling(out, /*snakeCase=*/true);
}

/// "" when `rs` is a valid scaling, else what is wrong with it.
inline std::string checkRopeScaling(mlir::DictionaryAttr rs) {
  RopeScaling ignored;
  return parseRopeScaling(rs, ignored);
}

/// The dictionary of `s` (null for Kind::None): the inverse of
/// parseRopeScaling.
inline mlir::DictionaryAttr ropeScalingAttr(mlir::Builder &b,
                                            const RopeScaling &s) {
  using Kind = RopeScaling::Kind;
  if (s.kind == Kind::None)
    return {};
  llvm::SmallVector<mlir::NamedAttribute> a;
  a.push_back(b.getNamedAttr(
      "type", b.getStringAttr(s.kind == Kind::Linear   ? "linear"
                              : s.kind == Kind::Llama3 ? "llama3"
                                                       : "yarn")));
  for (llvm::StringRef k : detail::ropeScalingKeys(s.kind)) {
    mlir::Attribute v;
    if (k == "original_max_positions")
      v = b.getI64IntegerAttr(s.originalMaxPositions);
    else if (k == "truncate")
      v = b.getBoolAttr(s.truncate);
    else
      v = b.getF64FloatAttr(k == "factor"             ? s.factor
                            : k == "low_freq_factor"  ? s.lowFreqFactor
                            : k == "high_freq_factor" ? s.highFreqFactor
                            : k == "beta_fast"        ? s.betaFast
                            : k == "beta_slow"        ? s.betaSlow
                                                      : s.attentionFactor);
    a.push_back(b.getNamedAttr(k, v));
  }
  return b.getDictionaryAttr(a);
}

} // namespace trident

#endif // TRIDENT_SUPPORT_ROPESCALINGATTR_H
