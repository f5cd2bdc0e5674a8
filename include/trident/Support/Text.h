//===- Text.h - Fixed-width text for tables ---------------------*- C++ -*-===//
//
// The two helpers every text table of the tools uses: a number through a
// printf format, and a cell padded to a width; and the two every
// comma-separated option reader uses (--fix, --clusters, the axis table's
// alias lists).
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SUPPORT_TEXT_H
#define TRIDENT_SUPPORT_TEXT_H

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

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

/// `s` without leading and trailing spaces and tabs.
inline std::string_view trimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

/// The comma-separated items of `s`, each trimmed; empty items are kept
/// (so that a reader can refuse them), and "" gives one empty item.
inline std::vector<std::string_view> splitCommaList(std::string_view s) {
  std::vector<std::string_view> out;
  while (true) {
    size_t comma = s.find(',');
    out.push_back(trimBlanks(s.substr(0, comma)));
    if (comma == std::string_view::npos)
      return out;
    s.remove_prefix(comma + 1);
  }
}

} // namespace trident

#endif // TRIDENT_SUPPORT_TEXT_H
