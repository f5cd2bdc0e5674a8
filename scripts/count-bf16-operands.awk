#===- count-bf16-operands.awk - Which linear operands a program keeps in bf16 -===#
#
# Reads the main.cpp of a bf16 program (`trident emit --precision bf16
# --emit cpp`) and prints how many of its rt::linearForward calls read x
# and W from bf16 tensors, and how many of its rt::linearBackward calls
# read dy from one: a value is a bf16 tensor where the same function
# assigns it rt::toBf16(...) (the emitter's readByBf16Kernels,
# lib/Target/ExecToCppKernels.cpp). The backward's x comes from what the
# forward saved, under other names, so it is not counted. The cost model
# reads the same facts off the model (GemmCost::xBf16, wBf16, dyBf16;
# readFromBf16Tensors and gradientInBf16Tensor in
# dialects/Graph/IR/GraphOps.h): test/Target/emit-bf16-operands.test
# prints these counts for the end-to-end models and
# test/unit/Analysis/AnalysisTest.cpp holds the cost model's to them.
#
# usage: awk -f scripts/count-bf16-operands.awk main.cpp
#===----------------------------------------------------------------------===#
# The name of a call's i-th argument (the calls sit on one line; their
# arguments are names, or act2(name)).
function arg(call, i,    s, f) {
  split(call, f, ",")
  s = f[i]
  gsub(/ |act2\(|\)|;|rt::linear(Forward|Backward)\(/, "", s)
  return s
}
/^  void / { delete bf16 }
/= rt::toBf16\(/ {
  split($0, a, "=")
  name = a[1]
  gsub(/ |rt::Tensor/, "", name)
  bf16[name] = 1
}
/rt::linearForward\(/ {
  ++fwd
  if (arg($0, 2) in bf16) ++fwdX
  if (arg($0, 3) in bf16) ++fwdW
}
/rt::linearBackward\(/ {
  ++bwd
  if (arg($0, 4) in bf16) ++bwdDy
}
END {
  printf "linear forward %d: x in bf16 %d, W in bf16 %d\n", fwd, fwdX, fwdW
  printf "linear backward %d: dy in bf16 %d\n", bwd, bwdDy
}
