//===- FileIO.h - Reading inputs and writing outputs atomically -*- C++ -*-===//

#ifndef TRIDENT_SUPPORT_FILEIO_H
#define TRIDENT_SUPPORT_FILEIO_H

#include "trident/Support/Status.h"

#include <string>
#include <string_view>

namespace trident {

/// Reads a whole file; the error names the path and the reason.
Result<std::string> readFile(const std::string &path);

/// Writes `contents` to a temporary file beside `path`, flushes it and
/// renames it over `path`, so an interrupted run never leaves a
/// half-written output. "-" writes to standard output.
Status writeFileAtomically(const std::string &path, std::string_view contents);

} // namespace trident

#endif // TRIDENT_SUPPORT_FILEIO_H
