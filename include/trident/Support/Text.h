//===- Text.h - Fixed-width text for tables ---------------------*- C++ -*-===//
//
// The two helpers every text table of the tools uses: a number through a
// printf format, and a cell padded to a width.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SUPPORT_TEXT_H
#define TRIDENT_SUPPORT_TEXT_H

#include <cstdio>
#include <string>

namespace trident {

/// `v` through the printf format `format` ("%.3f", "%+.1f%%").
inline std::string formatNumber(const char *format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

/// `s` padded with spaces to `width`: right-aligned, or left-aligned with
/// `left`; a longer `s` is returned whole.
inline std::string padCell(std::string s, size_t width, bool left = false) {
  if (s.size() >= width)
    return s;
  return left ? s + std::string(width - s.size(), ' ')
              : std::string(width - s.size(), ' ') + s;
}

} // namespace trident

#endif // TRIDENT_SUPPORT_TEXT_H
