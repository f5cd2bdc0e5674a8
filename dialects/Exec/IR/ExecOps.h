//===- ExecOps.h - texec dialect and operations ---------------*- C++ -*-===//

#ifndef TRIDENT_DIALECTS_EXEC_IR_EXECOPS_H
#define TRIDENT_DIALECTS_EXEC_IR_EXECOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include "dialects/Exec/IR/ExecOpsDialect.h.inc"
#include "dialects/Exec/IR/ExecEnums.h.inc"

namespace mlir::trident::exec {
class GroupOp;

/// Dialect-wide rules: every tensor operand and result has a static shape.
template <typename ConcreteType>
class ExecOpTrait : public OpTrait::TraitBase<ConcreteType, ExecOpTrait> {
public:
  static LogicalResult verifyTrait(Operation *op);
};
LogicalResult verifyExecOpTrait(Operation *op);
template <typename ConcreteType>
LogicalResult ExecOpTrait<ConcreteType>::verifyTrait(Operation *op) {
  return verifyExecOpTrait(op);
}

/// One entry of the kernel table: what a `texec.kernel` of one kind takes
/// and gives (the kinds and their names: ExecBase.td). The emitter
/// (lib/Target) maps each kind to runtime calls; the verifier checks calls
/// against the same table.
struct KernelInfo {
  KernelKind kind;
  /// kVariadic: any number (the verifier checks the kernel's own rule).
  unsigned numInputs;
  unsigned numResults;
  /// Config keys that must be present.
  llvm::ArrayRef<llvm::StringRef> required;
  /// Config keys that may be present.
  llvm::ArrayRef<llvm::StringRef> optional;
  /// Bit i set: result i stays fp32 in a bf16 program (texec.program
  /// precision "bf16"): statistics a kernel keeps for its backward (norm
  /// means and reciprocal deviations, the softmax of attention, the
  /// cross-entropy's log-sum-exp) and loss sums, as Megatron keeps them.
  /// Every other float result is a bf16 activation; parameter gradients
  /// are fp32 by their use (accumulate_grad), not by this mask.
  unsigned f32Results = 0;
  /// Bit i set: the runtime kernel reads input i as it is from a tensor
  /// stored in bf16 (2 bytes an element, rt::toBf16) in a bf16 program,
  /// with the same result as from its values in an fp32 tensor; the
  /// emitter stores a value in bf16 when every reader takes it so.
  unsigned bf16Inputs = 0;
  /// Bit i set: the runtime kernel writes result i into a tensor stored in
  /// bf16 as well, each element rounded as rt::toBf16 rounds (the same
  /// bits as toBf16 of its fp32 result); the emitter declares a result
  /// that it would move into bf16 so, which saves the fp32 tensor and the
  /// pass that moves it.
  unsigned bf16Outputs = 0;
};
/// Whether result `index` of a `kind` kernel stays fp32 in a bf16 program.
bool keepsF32Result(KernelKind kind, unsigned index);
/// Whether a `kind` kernel reads input `index` from bf16 storage.
bool readsBf16Input(KernelKind kind, unsigned index);
/// Whether a `kind` kernel writes result `index` into bf16 storage.
bool writesBf16Output(KernelKind kind, unsigned index);
/// A KernelInfo count that the kernel's own verifier rule checks.
constexpr unsigned kVariadic = ~0u;
/// The table entry of `kind`.
const KernelInfo &lookupKernel(KernelKind kind);
/// Stops with a message unless the table lists every kind in its order
/// (the dialect checks it when it loads).
void checkKernelTable();
/// Families of kinds, by the names' conventions (ExecBase.td): a backward
/// ends in "_bwd"; the mixture-of-experts kinds start with "moe", those
/// with a selection bias hold "selected", those with biases "biased".
bool isBackwardKernel(KernelKind kind);
bool isMoEKernel(KernelKind kind);
bool hasSelectionBias(KernelKind kind);
bool hasExpertBiases(KernelKind kind);
/// Every kernel, in table order (for docs and the emitter's checks).
llvm::ArrayRef<KernelInfo> kernelTable();

/// The grid axes a program knows.
bool isGridAxis(llvm::StringRef axis);
} // namespace mlir::trident::exec

#define GET_OP_CLASSES
#include "dialects/Exec/IR/ExecOps.h.inc"

#endif // TRIDENT_DIALECTS_EXEC_IR_EXECOPS_H
