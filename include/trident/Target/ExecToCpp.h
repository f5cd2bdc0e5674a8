//===- ExecToCpp.h - texec to a C++ project --------------------*- C++ -*-===//
//
// Translates a texec.program into the main.cpp of one SPMD program that
// every rank runs against the runtime (include/trident/Runtime/Runtime.h),
// plus the CMakeLists.txt that builds it. Everything in main.cpp comes from
// the texec ops: one C++ statement group per op. docs/emit.md.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_TARGET_EXECTOCPP_H
#define TRIDENT_TARGET_EXECTOCPP_H

#include "trident/Support/Status.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir {
class ModuleOp;
namespace trident::exec {
class ProgramOp;
} // namespace trident::exec
} // namespace mlir

namespace trident::target {

enum class Backend { Cpu, Cuda };

/// "cpu" / "cuda" -> Backend; nullopt otherwise.
std::optional<Backend> parseBackend(llvm::StringRef name);

/// Writes main.cpp for `program`; emits a diagnostic at any op it cannot
/// translate.
mlir::LogicalResult emitMainCpp(mlir::trident::exec::ProgramOp program,
                                llvm::raw_ostream &os);
/// Translates the single texec.program of `module` (for trident-translate).
mlir::LogicalResult emitModuleCpp(mlir::ModuleOp module, llvm::raw_ostream &os);

/// The CMakeLists.txt of an emitted project. `tridentSourceDir` is baked in
/// as the default of the TRIDENT_SOURCE_DIR cache path.
std::string emitCMakeLists(llvm::StringRef programName, Backend backend,
                           llvm::StringRef tridentSourceDir);

/// Writes `files` (name, contents) as directory `dir`: into a temporary
/// sibling first, then renamed into place. An existing `dir` is replaced
/// only if an earlier emit wrote it (it holds `.trident-emit`).
Status writeProjectAtomically(
    const std::string &dir,
    const std::vector<std::pair<std::string, std::string>> &files);

} // namespace trident::target

#endif // TRIDENT_TARGET_EXECTOCPP_H
