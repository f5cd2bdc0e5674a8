//===- ExecBase.td - texec dialect and base op --------------*- tablegen -*-===//
//
// The per-rank execution dialect: one SPMD program that every rank of a
// (dp, tp, pp) grid runs, with static local shapes, kernels on local shards,
// collectives over named groups, point-to-point transfers between pipeline
// stages, the pipeline schedule and the optimizer step. docs/texec.md.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_DIALECTS_EXEC_IR_EXECBASE_TD
#define TRIDENT_DIALECTS_EXEC_IR_EXECBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/CommonAttrConstraints.td"

def TExec_Dialect : Dialect {
  let name = "texec";
  let cppNamespace = "::mlir::trident::exec";
  let summary = "One rank's training program: kernels, collectives, schedule";
  let description = [{
    `texec` is what a plan becomes: the program a single rank runs. It is
    SPMD: every rank runs the same `texec.program`; a rank executes the
    `texec.stage` whose index is its pipeline coordinate, and reads its
    other grid coordinates (dp, tp) at run time to pick its shards.
    Conventions, checked by every op (the `ExecOpTrait`):

    * Every tensor has a fully static shape: the local shard a rank holds.
    * Float tensors are f32 (the backends run fp32), ids are i32.
  }];
}

/// Dialect-wide rules: static shapes; f32 / i32 element types.
def TExec_ExecOpTrait : NativeOpTrait<"ExecOpTrait"> {
  let cppNamespace = "::mlir::trident::exec";
}

class TExec_Op<string mnemonic, list<Trait> traits = []>
    : Op<TExec_Dialect, mnemonic, !listconcat(traits, [TExec_ExecOpTrait])>;

def TExec_FloatTensor : RankedTensorOf<[F32]>;
def TExec_IdTensor : RankedTensorOf<[I32]>;
def TExec_AnyTensor : RankedTensorOf<[F32, I32]>;

#endif // TRIDENT_DIALECTS_EXEC_IR_EXECBASE_TD
