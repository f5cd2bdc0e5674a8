//===- ExecToCppKernels.cpp - texec ops as C++ statements -----------------===//
//
// Each texec op of a chunk's forward or backward region becomes a few
// statements against the Trident runtime; SSA values become local
// `rt::Tensor` variables (which share storage when copied). The kernels
// are emitted by family over one KernelSite.
//
//===----------------------------------------------------------------------===//

#include "ExecToCppInternal.h"

namespace trident::target::detail {

LogicalResult RegionEmitter::emit(Block &block) {
  // Where each parameter's gradient is complete for this backward: under
  // ZeRO-2 and 3 its full gradient is reduce-scattered into its slice
  // there, then released; under ZeRO-0/1 its asynchronous sums start there
  // (or after the region's last transfer).
  if (backward && (program.getZeroStage() >= 2 || !asyncSums.empty()))
    for (Operation &op : block)
      if (auto g = dyn_cast<tx::AccumulateGradOp>(op))
        lastAccumulate[g.getSym()] = &op;
  if (backward)
    for (Operation &op : block)
      if (isa<tx::SendOp, tx::RecvOp>(op))
        lastTransfer = &op;
  {
    bool open = false;
    for (Operation &op : block) {
      if (isa<tx::SendOp, tx::RecvOp>(op))
        open = false;
      if (auto g = dyn_cast<tx::ParamGatherOp>(op)) {
        if (!open) {
          gatherRuns.emplace_back();
          gatherRunStarted.push_back(0);
          open = true;
        }
        gatherPlace[g] = {gatherRuns.size() - 1, gatherRuns.back().size()};
        gatherRuns.back().push_back(g);
      }
    }
  }
  for (auto [i, arg] : llvm::enumerate(block.getArguments()))
    os << "    rt::Tensor " << fresh(arg) << " = S" << chunk.getIndex()
       << "[mb][" << i << "];\n";
  // Every tensor is released after its last use in the region (a saved
  // activation lives on in S, a parameter in P), so a chunk holds only
  // what is still to be read: gathered ZeRO-3 parameters, temporaries and
  // the saved activations the backward has consumed go as soon as they
  // can.
  DenseMap<Value, Operation *> lastUse;
  for (Operation &op : block)
    for (Value v : op.getOperands())
      lastUse[v] = &op;
  auto release = [&](Value v) {
    auto it = names.find(v);
    if (it == names.end())
      return;
    os << "    " << it->second << " = rt::Tensor();\n";
    for (const std::string &view : views.lookup(v))
      os << "    " << view << " = rt::Tensor();\n";
    if (auto arg = dyn_cast<BlockArgument>(v))
      os << "    S" << chunk.getIndex() << "[mb][" << arg.getArgNumber()
         << "] = rt::Tensor();\n";
    names.erase(it);
  };
  for (BlockArgument arg : block.getArguments())
    if (arg.use_empty())
      release(arg);
  for (Operation &op : block) {
    if (failed(emitOp(op)))
      return failure();
    if (&op == lastTransfer)
      for (auto &[sym, sum] : sumsAfterTransfers)
        emitStart(sym, sum, true);
    llvm::SmallPtrSet<Value, 8> done;
    for (Value v : op.getOperands())
      if (lastUse.lookup(v) == &op && done.insert(v).second)
        release(v);
    for (Value r : op.getResults())
      if (r.use_empty())
        release(r);
  }
  if (backward && block.getNumArguments())
    os << "    S" << chunk.getIndex() << "[mb].clear();\n";
  return success();
}

bool RegionEmitter::isGradient(Value v) {
  if (v.use_empty())
    return false;
  for (Operation *user : v.getUsers()) {
    if (isa<tx::AccumulateGradOp>(user))
      continue;
    if (isa<tx::AllReduceOp, tx::ReduceScatterOp, tx::AllGatherOp,
            tx::AllToAllOp>(user) &&
        isGradient(user->getResult(0)))
      continue;
    return false;
  }
  return true;
}

Operation *RegionEmitter::asyncTpSum(tx::KernelOp op) {
  if (op.getKind() != KernelKind::LinearBwd &&
      op.getKind() != KernelKind::LinearBiasBwd)
    return nullptr;
  Value dx = op.getResult(0);
  if (!dx.hasOneUse())
    return nullptr;
  Operation *sum = *dx.getUsers().begin();
  return isa<tx::AllReduceOp, tx::ReduceScatterOp>(sum) &&
                 sum->getBlock() == op->getBlock()
             ? sum
             : nullptr;
}

bool RegionEmitter::keptF32(Value v) {
  Operation *def = v.getDefiningOp();
  if (auto k = dyn_cast_or_null<tx::KernelOp>(def))
    return tx::keepsF32Result(k.getKind(), cast<OpResult>(v).getResultNumber());
  if (isa_and_nonnull<tx::AllReduceOp, tx::ReduceScatterOp, tx::AllGatherOp,
                      tx::AllToAllOp>(def))
    return keptF32(def->getOperand(0));
  return false;
}

bool RegionEmitter::readByBf16Kernels(Value v) {
  if (v.use_empty())
    return false;
  for (OpOperand &use : v.getUses()) {
    // Kept for the backward: read there as its block argument.
    if (auto save = dyn_cast<tx::SaveOp>(use.getOwner())) {
      auto ch = cast<tx::ChunkOp>(save->getParentOp());
      if (!readByBf16Kernels(
              ch.getBackward().front().getArgument(use.getOperandNumber())))
        return false;
      continue;
    }
    auto k = dyn_cast<tx::KernelOp>(use.getOwner());
    if (!k || !tx::readsBf16Input(k.getKind(), use.getOperandNumber()))
      return false;
  }
  return true;
}

bool RegionEmitter::isBf16Value(Value v) {
  return bf16() && !v.use_empty() && !keptF32(v) &&
         isa<FloatType>(cast<RankedTensorType>(v.getType()).getElementType()) &&
         !isGradient(v);
}

bool RegionEmitter::movesToBf16(Value v) {
  return isBf16Value(v) && !writtenInPlace.contains(v) && readByBf16Kernels(v);
}

void RegionEmitter::roundIfBf16(Value v) {
  if (!isBf16Value(v))
    return;
  if (movesToBf16(v)) {
    const std::string &n = name(v);
    os << "    " << n << " = rt::toBf16(" << n << ");\n";
    for (const std::string &view : views.lookup(v))
      os << "    " << view << " = rt::Tensor();\n";
    return;
  }
  os << "    rt::roundToBf16(" << name(v) << ");\n";
}

/// A ZeRO-3 parameter's gather: waited for if an earlier gather of its run
/// started it, else started now; then the run's next gathers start.
void RegionEmitter::emitParamGather(tx::ParamGatherOp p) {
  auto [run, at] = gatherPlace.lookup(p);
  ArrayRef<tx::ParamGatherOp> gathers = gatherRuns[run];
  size_t &started = gatherRunStarted[run];
  if (at < started) {
    // Started at an earlier gather of its run: wait for it here.
    os << "    " << name(p.getResult()) << "_gather.wait();\n";
  } else {
    std::string n = declare(p.getResult());
    os << "    rt::zero3Gather(" << n << ", " << param(p.getSym()) << ".value, "
       << groupExpr(p.getGroup()) << ");\n";
    started = at + 1;
  }
  if (!loadBalanced(p.getSym()))
    roundIfBf16(p.getResult());
  // The run's next gathers start now, until kParamGathersAhead
  // matrices' are running ahead of this one; a send or receive ends the
  // run: moving a collective past a point-to-point transfer could
  // deadlock two pipeline stages.
  auto isMatrix = [](tx::ParamGatherOp g) {
    return cast<RankedTensorType>(g.getResult().getType()).getRank() >= 2;
  };
  int ahead = 0;
  for (size_t j = at + 1; j < started; ++j)
    ahead += isMatrix(gathers[j]);
  while (ahead < kParamGathersAhead && started < gathers.size()) {
    tx::ParamGatherOp q = gathers[started++];
    std::string n = declare(q.getResult());
    os << "    rt::Pending " << n << "_gather = rt::zero3GatherAsync(" << n
       << ", " << param(q.getSym()) << ".value, " << groupExpr(q.getGroup())
       << "); // ahead, while this parameter is used\n";
    ahead += isMatrix(q);
  }
}

LogicalResult RegionEmitter::emitOp(Operation &op) {
  int64_t numChunks = program.getPp() * program.getVpp();
  int64_t self = chunk.getGlobalIndex();
  // Messages are told apart by (micro-batch, receiving chunk, direction).
  auto tagExpr = [&](int64_t receiver) {
    return tagCall(receiver, numChunks, backward);
  };
  if (auto k = dyn_cast<tx::KernelOp>(op)) {
    if (failed(emitKernel(k)))
      return failure();
    // bf16: the activations it wrote are stored in bf16; the kernel table
    // names the results that stay fp32. (A dx whose sum started is
    // rounded before the sum.)
    for (Value r : k.getResults())
      if (!sumStarted.contains(r))
        roundIfBf16(r);
    return success();
  }
  if (auto in = dyn_cast<tx::InputOp>(op)) {
    os << "    rt::Tensor " << fresh(in.getResult()) << " = c.";
    auto it = cast<RankedTensorType>(in.getType());
    if (isa<FloatType>(it.getElementType())) {
      // Synthetic values of this shape per sample (ViT's images).
      os << "floats(mb, " << cppString(in.getName()) << ", {";
      llvm::interleaveComma(it.getShape().drop_front(), os);
      os << "});\n";
      roundIfBf16(in.getResult());
      return success();
    }
    if (in.getBag())
      os << "bagIds(mb, " << cppString(in.getName()) << ", " << *in.getRange()
         << ", " << *in.getBag() << ");\n";
    else if (in.getRange())
      os << "ids(mb, " << cppString(in.getName()) << ", " << *in.getRange()
         << ", "
         << (cast<RankedTensorType>(in.getType()).getRank() == 2 ? "true"
                                                                 : "false")
         << ");\n";
    else
      os << (in.getName() == "tokens" ? "tokens" : "labels") << "(mb);\n";
    return success();
  }
  if (auto p = dyn_cast<tx::ParamRefOp>(op)) {
    // ZeRO-1/2: the last optimizer step updated the rank's chunk; the
    // parameter's all-gather (started a few parameters ahead) is waited
    // for at the first use (awaitParam).
    if (program.getZeroStage() == 1 || program.getZeroStage() == 2)
      os << "    awaitParam(" << paramIndex.lookup(p.getSym()) << ");\n";
    // bf16: the forward and backward read a bf16 copy of the fp32 master
    // weight, in a bf16 tensor where every reader takes one (a linear's
    // weight), else rounded in an fp32 one; a load-balancing selection
    // bias stays fp32 (Megatron keeps its expert bias an fp32 buffer).
    const bool working =
        bf16() && !p.getResult().use_empty() && !loadBalanced(p.getSym());
    const char *copyFn = !working                           ? ""
                         : readByBf16Kernels(p.getResult()) ? "rt::toBf16("
                                                            : "rt::bf16Copy(";
    os << "    rt::Tensor " << fresh(p.getResult()) << " = " << copyFn
       << param(p.getSym()) << ".value" << (working ? ")" : "") << ";\n";
    return success();
  }
  if (auto p = dyn_cast<tx::ParamGatherOp>(op)) {
    emitParamGather(p);
    return success();
  }
  if (auto g = dyn_cast<tx::AccumulateGradOp>(op)) {
    // The kernel wrote into the gradient already (emitKernel).
    const bool done = accumulatedInPlace.contains(g.getGrad());
    if (program.getZeroStage() < 2) {
      if (!done)
        os << "    rt::axpy(" << param(g.getSym()) << ".grad, "
           << name(g.getGrad()) << ");\n";
      auto sum = asyncSums.find(g.getSym());
      if (sum != asyncSums.end() && lastAccumulate.lookup(g.getSym()) == &op) {
        if (lastTransfer && op.isBeforeInBlock(lastTransfer))
          sumsAfterTransfers.push_back({g.getSym().str(), sum->second});
        else
          emitStart(g.getSym(), sum->second, false);
      }
      return success();
    }
    int idx = paramIndex.lookup(g.getSym());
    if (!done)
      os << "    rt::axpy(fullGrad(" << idx << "), " << name(g.getGrad())
         << ");\n";
    if (lastAccumulate.lookup(g.getSym()) == &op)
      os << "    shardGrad(" << idx << ");\n";
    return success();
  }
  if (auto l = dyn_cast<tx::LossOp>(op)) {
    if (mode == Mode::Recompute)
      return success(); // counted by the forward
    os << "    rt::axpy(c.lossSum, " << name(l.getLoss());
    if (l.getScale())
      os << ", " << llvm::formatv("{0:e}", l.getScale()->convertToDouble())
         << "f";
    os << ");\n";
    return success();
  }
  if (auto ar = dyn_cast<tx::AllReduceOp>(op)) {
    std::string n = fresh(ar.getResult());
    if (sumStarted.contains(ar.getInput())) {
      // Started by the linear backward (asyncTpSum), in place.
      os << "    rt::Tensor " << n << " = " << name(ar.getInput()) << ";\n";
      os << "    " << name(ar.getInput()) << "_sum.wait();\n";
      roundIfBf16(ar.getResult());
      return success();
    }
    // Reduce in place when nothing else reads the input.
    if (ar.getInput().hasOneUse())
      os << "    rt::Tensor " << n << " = " << name(ar.getInput()) << ";\n";
    else
      os << "    rt::Tensor " << n << " = " << name(ar.getInput())
         << ".clone();\n";
    os << "    rt::allReduceSum(" << n << ", " << groupExpr(ar.getGroup())
       << ");\n";
    roundIfBf16(ar.getResult()); // a sum of bf16 values (not of fp32 ones)
    return success();
  }
  if (auto ag = dyn_cast<tx::AllGatherOp>(op)) {
    std::string n = declare(ag.getResult());
    os << "    rt::allGather(" << n << ", " << name(ag.getInput()) << ", "
       << ag.getDim() << ", " << groupExpr(ag.getGroup()) << ");\n";
    return success();
  }
  if (auto rs = dyn_cast<tx::ReduceScatterOp>(op)) {
    if (sumStarted.contains(rs.getInput())) {
      // Started by the linear backward (asyncTpSum) into its result.
      os << "    " << name(rs.getInput()) << "_sum.wait();\n";
      roundIfBf16(rs.getResult());
      return success();
    }
    std::string n = declare(rs.getResult());
    os << "    rt::reduceScatterSum(" << n << ", " << name(rs.getInput())
       << ", " << rs.getDim() << ", " << groupExpr(rs.getGroup()) << ");\n";
    roundIfBf16(rs.getResult());
    return success();
  }
  if (auto a2a = dyn_cast<tx::AllToAllOp>(op)) {
    std::string n = declare(a2a.getResult());
    os << "    rt::allToAll(" << n << ", " << name(a2a.getInput()) << ", "
       << a2a.getDim() << ", " << a2a.getDim() << ", "
       << groupExpr(a2a.getGroup()) << ");\n";
    return success();
  }
  if (auto s = dyn_cast<tx::SendOp>(op)) {
    if (mode == Mode::Recompute)
      return success(); // sent by the forward
    int64_t peer = s.getPeer();
    sent = true;
    os << "    rt::sendAsync(" << name(s.getValue()) << ", "
       << peer % program.getPp() << ", " << tagExpr(peer) << ", "
       << groupExpr("pp") << ");\n";
    return success();
  }
  if (auto r = dyn_cast<tx::RecvOp>(op)) {
    if (mode == Mode::Recompute) {
      // What the forward received, not received again.
      os << "    rt::Tensor " << fresh(r.getResult()) << " = X"
         << chunk.getIndex() << "[mb][" << stashed++ << "];\n";
      return success();
    }
    std::string n = declare(r.getResult());
    os << "    rt::recv(" << n << ", " << r.getPeer() % program.getPp() << ", "
       << tagExpr(self) << ", " << groupExpr("pp") << ");\n";
    if (stashing()) {
      // A copy: later ops of the forward may update the received tensor
      // in place.
      os << "    X" << chunk.getIndex() << "[mb].push_back(" << n
         << ".clone());\n";
      ++stashed;
    }
    return success();
  }
  if (auto save = dyn_cast<tx::SaveOp>(op)) {
    if (stashing()) {
      os << "    // Recomputed before the backward: nothing kept here.\n";
      return success();
    }
    os << "    S" << chunk.getIndex() << "[mb] = {";
    for (auto [i, v] : llvm::enumerate(save.getValues()))
      os << (i ? ", " : "") << name(v);
    os << "};\n";
    if (mode == Mode::Recompute)
      os << "    X" << chunk.getIndex() << "[mb].clear();\n";
    return success();
  }
  if (isa<tx::EndOp>(op))
    return success();
  return op.emitOpError("cannot be translated to C++ inside a chunk");
}

LogicalResult RegionEmitter::emitKernel(tx::KernelOp op) {
  const KernelKind k = op.getKind();
  auto in = [&](unsigned i) { return name(op.getInputs()[i]); };
  auto in2 = [&](unsigned i) { return act2(op.getInputs()[i]); };
  auto ids = [&](unsigned i) { return "ids1(" + in(i) + ")"; };
  DictionaryAttr config = op.getConfigAttr();
  auto cfgInt = [&](StringRef key) {
    return cast<IntegerAttr>(config.get(key)).getInt();
  };
  auto cfgFloat = [&](StringRef key) {
    return llvm::formatv("{0:e}", cast<FloatAttr>(config.get(key))
                                      .getValueAsDouble())
        .str();
  };
  // A float config printed so that it reads back to the same double.
  auto cfgExact = [&](StringRef key) {
    return exactDouble(cast<FloatAttr>(config.get(key)).getValueAsDouble());
  };
  auto axisCoord = [&](StringRef key) -> std::string {
    if (!config || !config.get(key))
      return "";
    return "c.coord(" + cppString(cast<StringAttr>(config.get(key)).getValue()) +
           ")";
  };
  // Results: zero-filled tensors, and [tokens, features] views for the
  // activations the runtime writes.
  SmallVector<std::string> out, out2;
  // The logits' gradient takes over their storage when nothing else reads
  // them (Megatron's cross-entropy writes it in place too): one [tokens,
  // vocab] buffer less at the peak. The kernels read each element before
  // writing it.
  Value logitsIn = k == KernelKind::CrossEntropyBwd ? op.getInputs()[0] : Value();
  const bool inPlace = logitsIn && logitsIn.hasOneUse() &&
                       !name(logitsIn).empty() &&
                       logitsIn.getType() == op.getResult(0).getType();
  // A linear's weight and bias gradients and an embedding's table
  // gradients are accumulated by the kernel (dW += dy^T x, dwte[token] +=
  // dy): when their one reader adds them to a parameter's gradient, the
  // kernel accumulates into that gradient itself, as Megatron's
  // gradient-accumulation fusion does, instead of into a zero-filled
  // temporary of the parameter's size.
  const bool linearBwd = k == KernelKind::LinearBwd || k == KernelKind::LinearBiasBwd;
  const bool embeddingBwd = k == KernelKind::EmbeddingBwd || k == KernelKind::EmbeddingPosBwd;
  auto gradTarget = [&](Value r) -> tx::AccumulateGradOp {
    if (!(embeddingBwd || (linearBwd && r != op.getResult(0))) ||
        !r.hasOneUse())
      return {};
    auto acc = dyn_cast<tx::AccumulateGradOp>(*r.getUsers().begin());
    return acc && acc->getBlock() == op->getBlock() ? acc
                                                    : tx::AccumulateGradOp();
  };
  for (Value r : op.getResults()) {
    std::string n;
    if (inPlace && r == op.getResult(0)) {
      n = fresh(r);
      os << "    rt::Tensor " << n << " = " << name(logitsIn)
         << "; // in place of the logits\n";
      writtenInPlace.insert(r);
    } else if (tx::AccumulateGradOp acc = gradTarget(r)) {
      n = fresh(r);
      os << "    rt::Tensor " << n << " = "
         << (program.getZeroStage() < 2
                 ? param(acc.getSym()) + ".grad"
                 : "fullGrad(" +
                       std::to_string(paramIndex.lookup(acc.getSym())) + ")")
         << "; // accumulated in place\n";
      accumulatedInPlace.insert(r);
    } else {
      // A result the kernel can write in bf16 (KernelInfo::bf16Outputs)
      // that would move into a bf16 tensor is declared as one.
      n = declare(
          r, tx::writesBf16Output(k, cast<OpResult>(r).getResultNumber()) &&
                 movesToBf16(r));
    }
    out.push_back(n);
    if (cast<RankedTensorType>(r.getType()).getRank() >= 3 &&
        k != KernelKind::Attention && k != KernelKind::AttentionSinks) {
      os << "    rt::Tensor " << n << "_2 = act2(" << n << ");\n";
      out2.push_back(n + "_2");
      views[r].push_back(n + "_2");
    } else {
      out2.push_back(n);
    }
  }
  if (k == KernelKind::Attention || k == KernelKind::AttentionSinks) {
    os << "    rt::Tensor " << out[0] << "_2 = act2(" << out[0] << ");\n";
    views[op.getResult(0)].push_back(out[0] + "_2");
  }
  // Kernels see this rank's positions: seq_len / cp of them, the first at
  // the cp coordinate times that (pos_axis / cp_axis configs).
  int64_t seq = program.getLocalSeqLen();
  std::string vocabCoord = axisCoord("vocab_axis");
  std::string posCoord = axisCoord("pos_axis");
  std::string posOffset =
      posCoord.empty() ? "0" : posCoord + " * " + std::to_string(seq);
  // A lookup without positions reads ids [b, n] whatever n is (an
  // embedding bag's ids per sample): the rows of one sample.
  auto idsPerSample = [&]() -> int64_t {
    auto t = cast<RankedTensorType>(op.getInputs()[0].getType());
    return t.getRank() == 2 ? t.getDimSize(1) : seq;
  };
  KernelSite site{op,         k,         config,    out,         out2, seq,
                  vocabCoord, posOffset, in,        in2,         ids,  cfgInt,
                  cfgFloat,   cfgExact,  axisCoord, idsPerSample};
  for (auto family :
       {&RegionEmitter::emitLookupNormKernel, &RegionEmitter::emitDenseKernel,
        &RegionEmitter::emitAttentionKernel, &RegionEmitter::emitMoEKernel,
        &RegionEmitter::emitLossKernel})
    if (std::optional<LogicalResult> done = (this->*family)(site))
      return *done;
  return op.emitOpError() << "kernel '" << op.getName()
                          << "' has no C++ translation";
}

/// Lookup and norm kernels: embeddings, layer and RMS norms; nullopt for
/// another family's kind.
std::optional<LogicalResult>
RegionEmitter::emitLookupNormKernel(KernelSite &s) {
  [[maybe_unused]] auto &[op, k, config, out, out2, seq, vocabCoord, posOffset,
                          in, in2, ids, cfgInt, cfgFloat, cfgExact, axisCoord,
                          idsPerSample] = s;
  if (k == KernelKind::Embedding || k == KernelKind::EmbeddingPos) {
    Value wte = op.getInputs()[1];
    std::string off =
        vocabCoord.empty()
            ? "0"
            : vocabCoord + " * " +
                  std::to_string(
                      cast<RankedTensorType>(wte.getType()).getDimSize(0));
    // With a vocabulary-parallel table the partial sums are all-reduced
    // afterwards: positions are added on the first shard only.
    std::string addPos = vocabCoord.empty() ? "true" : vocabCoord + " == 0";
    os << "    rt::embeddingForward(" << out2[0] << ", " << ids(0) << ", "
       << in(1) << ", " << (k == KernelKind::EmbeddingPos ? in(2) : "rt::Tensor()")
       << ", " << (k == KernelKind::EmbeddingPos ? seq : idsPerSample()) << ", "
       << posOffset << ", " << off << ", " << addPos << ");\n";
    return success();
  }
  if (k == KernelKind::EmbeddingBwd || k == KernelKind::EmbeddingPosBwd) {
    std::string off =
        vocabCoord.empty()
            ? "0"
            : vocabCoord + " * " +
                  std::to_string(cast<RankedTensorType>(
                                     op.getResult(0).getType())
                                     .getDimSize(0));
    bool pos = k == KernelKind::EmbeddingPosBwd;
    if (!pos)
      os << "    rt::Tensor " << out[0] << "_none;\n";
    os << "    rt::embeddingBackward(" << out[0] << ", "
       << (pos ? out[1] : out[0] + "_none") << ", " << in2(1) << ", "
       << ids(0) << ", " << (pos ? seq : idsPerSample()) << ", " << posOffset
       << ", " << off << ", " << (pos ? "true" : "false") << ");\n";
    return success();
  }
  if (k == KernelKind::LayerNorm) {
    os << "    rt::layerNormForward(" << out2[0] << ", " << out[1] << ", "
       << out[2] << ", " << in2(0) << ", " << in(1) << ", " << in(2) << ", "
       << cfgFloat("eps") << "f"
       << (config.get("gamma_shift") ? ", " + cfgFloat("gamma_shift") + "f"
                                     : "")
       << ");\n";
    return success();
  }
  if (k == KernelKind::LayerNormBwd) {
    os << "    rt::layerNormBackward(" << out2[0] << ", " << out[1] << ", "
       << out[2] << ", " << in2(0) << ", " << in2(1) << ", " << in(2) << ", "
       << in(3) << ", " << in(4)
       << (config && config.get("gamma_shift")
               ? ", " + cfgFloat("gamma_shift") + "f"
               : "")
       << ");\n";
    return success();
  }
  if (k == KernelKind::RmsNorm) {
    os << "    rt::rmsNormForward(" << out2[0] << ", " << out[1] << ", "
       << in2(0) << ", " << in(1) << ", " << cfgFloat("eps") << "f);\n";
    return success();
  }
  if (k == KernelKind::RmsNormBwd) {
    os << "    rt::rmsNormBackward(" << out2[0] << ", " << out[1] << ", "
       << in2(0) << ", " << in2(1) << ", " << in(2) << ", " << in(3)
       << ");\n";
    return success();
  }
  return std::nullopt;
}

/// Dense kernels: linear, SwiGLU, dropout, patches, token and sequence views,
/// add and mul; nullopt for another family's kind.
std::optional<LogicalResult> RegionEmitter::emitDenseKernel(KernelSite &s) {
  [[maybe_unused]] auto &[op, k, config, out, out2, seq, vocabCoord, posOffset,
                          in, in2, ids, cfgInt, cfgFloat, cfgExact, axisCoord,
                          idsPerSample] = s;
  if (k == KernelKind::Linear || k == KernelKind::LinearBias) {
    std::string bias = "rt::Tensor()";
    if (k == KernelKind::LinearBias) {
      std::string coord = axisCoord("bias_axis");
      // A row-parallel bias is added on one rank before the reduction.
      bias = coord.empty() ? in(2)
                           : "(" + coord + " == 0 ? " + in(2) +
                                 " : rt::Tensor())";
    }
    os << "    rt::linearForward(" << out2[0] << ", " << in2(0) << ", "
       << in(1) << ", " << bias << ");\n";
    return success();
  }
  if (k == KernelKind::LinearBwd || k == KernelKind::LinearBiasBwd) {
    const std::string db =
        k == KernelKind::LinearBiasBwd ? out[2] : out[0] + "_none";
    auto call = [&](const std::string &dx, const std::string &dw,
                    const std::string &db) {
      os << "    rt::linearBackward(" << dx << ", " << dw << ", " << db << ", "
         << in2(0) << ", " << in2(1) << ", " << in(2) << ");\n";
    };
    Operation *sum = asyncTpSum(op);
    if (k == KernelKind::LinearBwd || sum)
      os << "    rt::Tensor " << out[0] << "_none;\n";
    if (sum) {
      // dx first, its sum over tp started (rounded to bf16 first, as the
      // value it sums), then dW and db while the sum runs.
      const std::string none = out[0] + "_none";
      call(out2[0], none, none);
      roundIfBf16(op.getResult(0));
      if (auto ar = dyn_cast<tx::AllReduceOp>(sum)) {
        os << "    rt::Pending " << out[0] << "_sum = rt::allReduceSumAsync("
           << out[0] << ", " << groupExpr(ar.getGroup()) << ");\n";
      } else {
        auto rs = cast<tx::ReduceScatterOp>(sum);
        std::string r = declare(rs.getResult());
        os << "    rt::Pending " << out[0]
           << "_sum = rt::reduceScatterSumAsync(" << r << ", " << out[0] << ", "
           << rs.getDim() << ", " << groupExpr(rs.getGroup()) << ");\n";
      }
      sumStarted.insert(op.getResult(0));
      call(none, out[1], db);
      return success();
    }
    call(out2[0], out[1], db);
    return success();
  }
  // tgraph's gelu is the erf form unless `approximate` (tanh form).
  std::string geluForm =
      config && config.get("approximate") ? ", true" : ", false";
  // Pointwise activations: forward and backward kinds, runtime name.
  struct Act {
    KernelKind fwd, bwd;
    StringRef fn;
  };
  for (auto [fwd, bwd, fn] :
       {Act{KernelKind::Gelu, KernelKind::GeluBwd, "gelu"},
        Act{KernelKind::Silu, KernelKind::SiluBwd, "silu"},
        Act{KernelKind::Relu, KernelKind::ReluBwd, "relu"},
        Act{KernelKind::SquaredRelu, KernelKind::SquaredReluBwd,
            "squaredRelu"},
        Act{KernelKind::Tanh, KernelKind::TanhBwd, "tanh"}}) {
    std::string extra = fwd == KernelKind::Gelu ? geluForm : "";
    if (k == fwd) {
      os << "    rt::" << fn << "Forward(" << out2[0] << ", " << in2(0)
         << extra << ");\n";
      return success();
    }
    if (k == bwd) {
      os << "    rt::" << fn << "Backward(" << out2[0] << ", " << in2(0)
         << ", " << in2(1) << extra << ");\n";
      return success();
    }
  }
  if (k == KernelKind::Swiglu) {
    os << "    rt::swigluForward(" << out2[0] << ", " << in2(0) << ", "
       << in2(1) << ");\n";
    return success();
  }
  if (k == KernelKind::SwigluBwd) {
    os << "    rt::swigluBackward(" << out2[0] << ", " << out2[1] << ", "
       << in2(0) << ", " << in2(1) << ", " << in2(2) << ");\n";
    return success();
  }
  if (k == KernelKind::Dropout || k == KernelKind::DropoutBwd) {
    // The same mask forwards and backwards: drawn again from the global
    // coordinates of the local block (context-parallel chunk, sequence
    // shard, feature shard).
    auto t = cast<RankedTensorType>(op.getInputs()[0].getType());
    int64_t localSeq = t.getDimSize(1), localF = t.getDimSize(2);
    std::string firstPos = posOffset;
    std::string seqCoord = axisCoord("seq_axis");
    if (!seqCoord.empty())
      firstPos += " + " + seqCoord + " * " + std::to_string(localSeq);
    std::string featCoord = axisCoord("feature_axis");
    std::string firstFeature =
        featCoord.empty() ? "0"
                          : featCoord + " * " + std::to_string(localF);
    os << "    rt::dropoutApply(" << out[0] << ", " << in(0) << ", "
       << t.getDimSize(0) << ", " << localSeq << ", c.dropout(mb, "
       << cfgFloat("rate") << "f, " << cfgInt("site") << ", "
       << cfgInt("seq_len") << ", " << firstPos << ", "
       << cfgInt("features") << ", " << firstFeature << "));\n";
    return success();
  }
  if (k == KernelKind::PatchEmbed || k == KernelKind::PatchEmbedBwd) {
    bool fwd = k == KernelKind::PatchEmbed;
    auto img = cast<RankedTensorType>(op.getInputs()[fwd ? 0 : 1].getType());
    std::string dims = std::to_string(img.getDimSize(1)) + ", " +
                       std::to_string(img.getDimSize(2)) + ", " +
                       std::to_string(cfgInt("patch"));
    if (fwd)
      os << "    rt::patchEmbedForward(" << out2[0] << ", " << in(0) << ", "
         << in(1) << ", " << in(2) << ", " << dims << ");\n";
    else
      os << "    rt::patchEmbedBackward(" << out[0] << ", " << out[1] << ", "
         << in2(0) << ", " << in(1) << ", " << dims << ");\n";
    return success();
  }
  if (k == KernelKind::SeqSlice) {
    auto xt = cast<RankedTensorType>(op.getInputs()[0].getType());
    auto yt = cast<RankedTensorType>(op.getResults()[0].getType());
    std::string count = std::to_string(yt.getDimSize(1));
    os << "    rt::sliceRows(" << out2[0] << ", " << in2(0) << ", "
       << xt.getDimSize(1) << ", " << axisCoord("seq_axis") << " * " << count
       << ", " << count << ");\n";
    return success();
  }
  if (k == KernelKind::PrependToken || k == KernelKind::PrependTokenBwd) {
    bool fwd = k == KernelKind::PrependToken;
    auto x = cast<RankedTensorType>(
        (fwd ? op.getInputs()[0] : op.getResults()[0]).getType());
    std::string tokens = std::to_string(x.getDimSize(1));
    if (fwd)
      os << "    rt::prependTokenForward(" << out2[0] << ", " << in2(0)
         << ", " << in(1) << ", " << tokens << ");\n";
    else
      os << "    rt::prependTokenBackward(" << out2[0] << ", " << out[1]
         << ", " << in2(0) << ", " << tokens << ");\n";
    return success();
  }
  if (k == KernelKind::PositionAdd || k == KernelKind::PositionAddBwd) {
    std::string localSeq = std::to_string(
        cast<RankedTensorType>(op.getInputs()[0].getType()).getDimSize(1));
    if (k == KernelKind::PositionAdd)
      os << "    rt::positionAddForward(" << out2[0] << ", " << in2(0) << ", "
         << in(1) << ", " << localSeq << ", " << posOffset << ");\n";
    else
      os << "    rt::positionAddBackward(" << out[0] << ", " << in2(0) << ", "
         << localSeq << ", " << posOffset << ");\n";
    return success();
  }
  if (k == KernelKind::SelectToken || k == KernelKind::SelectTokenBwd) {
    // The index among this rank's positions: the global one less the
    // block's first position (cp chunk, then sequence shard); out of
    // range on the ranks that do not hold it.
    bool fwd = k == KernelKind::SelectToken;
    auto xt = cast<RankedTensorType>(
        (fwd ? op.getInputs()[0] : op.getResults()[0]).getType());
    int64_t localSeq = xt.getDimSize(1);
    std::string first = posOffset;
    if (std::string seqCoord = axisCoord("seq_axis"); !seqCoord.empty())
      first += " + " + seqCoord + " * " + std::to_string(localSeq);
    std::string index = std::to_string(cfgInt("index")) + " - (" + first + ")";
    if (fwd)
      os << "    rt::selectTokenForward(" << out[0] << ", " << in2(0) << ", "
         << localSeq << ", " << index << ");\n";
    else
      os << "    rt::selectTokenBackward(" << out2[0] << ", " << in(0)
         << ", " << localSeq << ", " << index << ");\n";
    return success();
  }
  if (k == KernelKind::Add || k == KernelKind::Mul) {
    os << "    rt::" << op.getName() << "(" << out[0] << ", " << in(0) << ", "
       << in(1) << ");\n";
    return success();
  }
  return std::nullopt;
}

/// Attention kernels: rotary embedding, latent keys, attention; nullopt for
/// another family's kind.
std::optional<LogicalResult> RegionEmitter::emitAttentionKernel(KernelSite &s) {
  [[maybe_unused]] auto &[op, k, config, out, out2, seq, vocabCoord, posOffset,
                          in, in2, ids, cfgInt, cfgFloat, cfgExact, axisCoord,
                          idsPerSample] = s;
  if (k == KernelKind::Rope || k == KernelKind::RopeBwd) {
    // A scaled RoPE names its rt::RopeScaling, built field by field with
    // every double printed exactly.
    std::string scaling;
    if (auto rs = config ? dyn_cast_or_null<DictionaryAttr>(
                               config.get("scaling"))
                         : DictionaryAttr()) {
      scaling = out2[0] + "_rs";
      RopeScaling v;
      if (std::string why = parseRopeScaling(rs, v); !why.empty())
        return op.emitOpError() << "config 'scaling' " << why;
      const auto &num = exactDouble;
      using Kind = RopeScaling::Kind;
      os << "    rt::RopeScaling " << scaling << ";\n    " << scaling
         << ".kind = rt::RopeScaling::Kind::"
         << (v.kind == Kind::Linear   ? "Linear"
             : v.kind == Kind::Llama3 ? "Llama3"
                                      : "Yarn")
         << ";\n";
      // The fields of v.kind, in the dictionary's order.
      const llvm::StringMap<std::pair<const char *, std::string>> fields = {
          {"factor", {"factor", num(v.factor)}},
          {"low_freq_factor", {"lowFreqFactor", num(v.lowFreqFactor)}},
          {"high_freq_factor", {"highFreqFactor", num(v.highFreqFactor)}},
          {"original_max_positions",
           {"originalMaxPositions", std::to_string(v.originalMaxPositions)}},
          {"beta_fast", {"betaFast", num(v.betaFast)}},
          {"beta_slow", {"betaSlow", num(v.betaSlow)}},
          {"truncate", {"truncate", v.truncate ? "true" : "false"}},
          {"attention_factor", {"attentionFactor", num(v.attentionFactor)}}};
      for (StringRef key : ::trident::detail::ropeScalingKeys(v.kind)) {
        const auto &[field, value] = fields.at(key);
        os << "    " << scaling << "." << field << " = " << value << ";\n";
      }
    }
    os << "    rt::ropeApply(" << out2[0] << ", " << in2(0) << ", " << seq
       << ", " << cfgInt("heads") << ", " << cfgInt("head_dim") << ", "
       << cfgInt("rotary_dim") << ", " << cfgFloat("theta") << ", "
       << (k == KernelKind::RopeBwd ? "true" : "false") << ", " << posOffset;
    // The trailing arguments, as far as they differ from the defaults.
    const bool interleaved = config.get("interleaved") != nullptr;
    const std::string rotOffset =
        config.get("rotary_offset")
            ? std::to_string(cfgInt("rotary_offset"))
            : std::string("0");
    if (interleaved || rotOffset != "0")
      os << ", " << (scaling.empty() ? "{}" : scaling) << ", " << rotOffset
         << (interleaved ? ", true" : "");
    else if (!scaling.empty())
      os << ", " << scaling;
    os << ");\n";
    return success();
  }
  if (k == KernelKind::LatentKey || k == KernelKind::LatentKeyBwd) {
    std::string dims = std::to_string(cfgInt("heads")) + ", " +
                       std::to_string(cfgInt("nope_dim")) + ", " +
                       std::to_string(cfgInt("rope_dim"));
    if (k == KernelKind::LatentKey)
      os << "    rt::latentKeyForward(" << out2[0] << ", " << in2(0) << ", "
         << in2(1) << ", " << dims << ");\n";
    else
      os << "    rt::latentKeyBackward(" << out2[0] << ", " << out2[1] << ", "
         << in2(0) << ", " << dims << ");\n";
    return success();
  }
  if (k == KernelKind::Attention || k == KernelKind::AttentionBwd ||
      k == KernelKind::AttentionSinks || k == KernelKind::AttentionSinksBwd) {
    const bool fwd =
        k == KernelKind::Attention || k == KernelKind::AttentionSinks;
    const bool sinks =
        k == KernelKind::AttentionSinks || k == KernelKind::AttentionSinksBwd;
    auto qt = cast<RankedTensorType>(op.getInputs()[fwd ? 0 : 1].getType());
    auto kt = cast<RankedTensorType>(op.getInputs()[fwd ? 1 : 2].getType());
    std::string cpCoord = axisCoord("cp_axis");
    os << "    rt::AttentionDims " << out[0] << "_dims{" << qt.getDimSize(0)
       << ", " << qt.getDimSize(1) << ", " << cfgInt("heads") << ", "
       << cfgInt("kv_heads") << ", " << cfgInt("head_dim");
    // Context parallel: the local queries against the gathered keys.
    std::string qOffset =
        cpCoord.empty() ? "0"
                        : cpCoord + " * " + std::to_string(qt.getDimSize(1));
    if (!cpCoord.empty())
      os << ", " << kt.getDimSize(1) << ", " << qOffset;
    os << "};\n";
    if (config.get("window"))
      os << "    " << out[0] << "_dims.window = " << cfgInt("window")
         << ";\n";
    if (config.get("bidirectional"))
      os << "    " << out[0] << "_dims.causal = false;\n";
    if (config.get("v_head_dim"))
      os << "    " << out[0] << "_dims.vHeadDim = " << cfgInt("v_head_dim")
         << ";\n";
    if (config.get("scale"))
      os << "    " << out[0] << "_dims.scale = " << cfgExact("scale")
         << ";\n";
    if (config.get("dropout")) {
      // The mask of (sample, head, query, key), this rank's heads starting
      // at its head_axis coordinate.
      std::string headCoord = axisCoord("head_axis");
      std::string firstHead =
          headCoord.empty()
              ? "0"
              : headCoord + " * " + std::to_string(cfgInt("heads"));
      os << "    " << out[0] << "_dims.dropout = c.dropout(mb, "
         << cfgFloat("dropout") << "f, " << cfgInt("site") << ", "
         << kt.getDimSize(1) << ", " << qOffset << ", "
         << cfgInt("heads_total") << ", " << firstHead << ");\n";
    }
    if (fwd)
      os << "    rt::attentionForward(" << out[0] << "_2, " << out[1] << ", "
         << in2(0) << ", " << in2(1) << ", " << in2(2) << ", "
         << (sinks ? in(3) + ", " : std::string()) << out[0]
         << "_dims);\n";
    else {
      // The overload with dsinks and the forward's output (undefined
      // dsinks without sinks).
      if (!sinks)
        os << "    rt::Tensor " << out[0] << "_nosinks;\n";
      os << "    rt::attentionBackward(" << out2[0] << ", " << out2[1] << ", "
         << out2[2] << ", " << (sinks ? out[3] : out[0] + "_nosinks") << ", "
         << in2(0) << ", " << in2(1) << ", " << in2(2) << ", " << in2(3) << ", "
         << in2(4) << ", " << in(5) << ", " << out[0] << "_dims);\n";
    }
    return success();
  }
  return std::nullopt;
}

/// Mixture-of-experts kernels; nullopt for another family's kind.
std::optional<LogicalResult> RegionEmitter::emitMoEKernel(KernelSite &s) {
  [[maybe_unused]] auto &[op, k, config, out, out2, seq, vocabCoord, posOffset,
                          in, in2, ids, cfgInt, cfgFloat, cfgExact, axisCoord,
                          idsPerSample] = s;
  if (k == KernelKind::Moe || k == KernelKind::MoeBwd || k == KernelKind::MoeRouterBwd ||
      k == KernelKind::MoeBiased || k == KernelKind::MoeBiasedBwd ||
      k == KernelKind::MoeRouterBiasedBwd || k == KernelKind::MoeSelected ||
      k == KernelKind::MoeSelectedBwd || k == KernelKind::MoeRouterSelectedBwd) {
    StringRef act = cast<StringAttr>(config.get("activation")).getValue();
    std::string kind = act == "gelu"        ? "Gelu"
                       : act == "gelu_tanh" ? "GeluTanh"
                       : act == "relu"      ? "Relu"
                                            : "Silu";
    // Expert parallelism: this rank holds experts from its ep coordinate
    // times the local count on.
    std::string offset = "0";
    if (std::string epCoord = axisCoord("ep_axis"); !epCoord.empty()) {
      // w_in's operand: after x, router (and the router bias), after dy.
      unsigned wInAt = (k == KernelKind::Moe ? 2 : k == KernelKind::MoeBwd ? 3
                        : k == KernelKind::MoeBiased || k == KernelKind::MoeSelected ? 3
                                                                   : 4);
      Value wIn = op.getInputs()[wInAt];
      offset = epCoord + " * " +
               std::to_string(
                   cast<RankedTensorType>(wIn.getType()).getDimSize(0));
    }
    os << "    rt::MoEDims " << out[0] << "_moe{" << cfgInt("experts") << ", "
       << cfgInt("top_k") << ", "
       << (config.get("gated") ? "true" : "false") << ", rt::Activation::"
       << kind << ", " << offset << "};\n";
    if (config.get("unnormalized"))
      os << "    " << out[0] << "_moe.renormalize = false;\n";
    // The router backward's first row: the rank's own token rows of the
    // gathered x (row_axis).
    auto routerRowOffset = [&]() -> std::string {
      auto dxt = cast<RankedTensorType>(op.getResult(0).getType());
      int64_t rows = dxt.getNumElements() / dxt.getShape().back();
      std::string rowCoord = axisCoord("row_axis");
      return rowCoord.empty() ? "0" : rowCoord + " * " + std::to_string(rows);
    };
    if (config.get("swiglu_limit"))
      os << "    " << out[0] << "_moe.swigluLimit = "
         << cfgFloat("swiglu_limit") << "f;\n";
    if (std::string c0 = axisCoord("out_bias_axis"); !c0.empty())
      os << "    " << out[0] << "_moe.outBiasHere = " << c0 << " == 0;\n";
    // DeepSeek-V3's router.
    if (config.get("sigmoid"))
      os << "    " << out[0] << "_moe.sigmoidScores = true;\n";
    if (config.get("groups"))
      os << "    " << out[0] << "_moe.groups = " << cfgInt("groups") << ";\n    "
         << out[0] << "_moe.topkGroups = " << cfgInt("topk_groups") << ";\n";
    if (config.get("routed_scale"))
      os << "    " << out[0] << "_moe.routedScale = "
         << floatLiteral(cast<FloatAttr>(config.get("routed_scale"))
                                 .getValueAsDouble())
         << ";\n";
    if (k == KernelKind::MoeSelected) {
      // x, router, select, w_in, w_out -> y.
      os << "    rt::MoEBiases " << out[0] << "_b;\n    " << out[0]
         << "_b.select = " << in(2) << ";\n";
      os << "    rt::moeForward(" << out2[0] << ", " << in2(0) << ", "
         << in(1) << ", " << in(3) << ", " << in(4) << ", " << out[0]
         << "_moe, " << out[0] << "_b);\n";
    } else if (k == KernelKind::MoeSelectedBwd) {
      // dy, x, router, select, w_in, w_out -> dx, dw_in, dw_out, dgate.
      os << "    rt::MoEBiases " << out[0] << "_b, " << out[0] << "_db;\n    "
         << out[0] << "_b.select = " << in(3) << ";\n";
      os << "    rt::moeBackward(" << out2[0] << ", " << out[1] << ", "
         << out[2] << ", " << out2[3] << ", " << in2(0) << ", " << in2(1)
         << ", " << in(2) << ", " << in(4) << ", " << in(5) << ", " << out[0]
         << "_moe, " << out[0] << "_b, " << out[0] << "_db);\n";
    } else if (k == KernelKind::MoeRouterSelectedBwd) {
      // dgate, x, router, select -> dx, drouter, load (the tokens each
      // expert got from these rows).
      os << "    rt::MoEBiases " << out[0] << "_b;\n    " << out[0]
         << "_b.select = " << in(3) << ";\n    rt::Tensor " << out[0]
         << "_nobias;\n";
      os << "    rt::moeRouterBackward(" << out2[0] << ", " << out[1] << ", "
         << out[0] << "_nobias, " << in2(0) << ", " << in2(1) << ", "
         << in(2) << ", " << out[0] << "_b, " << out[0] << "_moe, "
         << routerRowOffset() << ", &" << out[2] << ");\n";
    } else if (k == KernelKind::MoeBiased) {
      os << "    rt::moeForward(" << out2[0] << ", " << in2(0) << ", "
         << in(1) << ", " << in(3) << ", " << in(5) << ", " << out[0]
         << "_moe, rt::MoEBiases{" << in(2) << ", " << in(4) << ", " << in(6)
         << "});\n";
    } else if (k == KernelKind::MoeBiasedBwd) {
      // dy, x, router, router_bias, w_in, b_in, w_out, b_out ->
      // dx, dw_in, db_in, dw_out, db_out, dgate.
      os << "    rt::MoEBiases " << out[0] << "_db{rt::Tensor(), " << out[2]
         << ", " << out[4] << "};\n";
      os << "    rt::moeBackward(" << out2[0] << ", " << out[1] << ", "
         << out[3] << ", " << out2[5] << ", " << in2(0) << ", " << in2(1)
         << ", " << in(2) << ", " << in(4) << ", " << in(6) << ", " << out[0]
         << "_moe, rt::MoEBiases{" << in(3) << ", " << in(5) << ", " << in(7)
         << "}, " << out[0] << "_db);\n";
    } else if (k == KernelKind::MoeRouterBiasedBwd) {
      os << "    rt::moeRouterBackward(" << out2[0] << ", " << out[1] << ", "
         << out[2] << ", " << in2(0) << ", " << in2(1) << ", " << in(2)
         << ", " << in(3) << ", " << out[0] << "_moe, " << routerRowOffset()
         << ");\n";
    } else if (k == KernelKind::Moe) {
      os << "    rt::moeForward(" << out2[0] << ", " << in2(0) << ", "
         << in(1) << ", " << in(2) << ", " << in(3) << ", " << out[0]
         << "_moe);\n";
    } else if (k == KernelKind::MoeBwd) {
      os << "    rt::moeBackward(" << out2[0] << ", " << out[1] << ", "
         << out[2] << ", " << out2[3] << ", " << in2(0) << ", " << in2(1)
         << ", " << in(2) << ", " << in(3) << ", " << in(4) << ", " << out[0]
         << "_moe);\n";
    } else {
      os << "    rt::moeRouterBackward(" << out2[0] << ", " << out[1] << ", "
         << in2(0) << ", " << in2(1) << ", " << in(2) << ", " << out[0]
         << "_moe, " << routerRowOffset() << ");\n";
    }
    return success();
  }
  return std::nullopt;
}

/// Losses and recommendation kernels: cross-entropy, bag pooling, dot
/// interaction, binary cross-entropy; nullopt for another family's kind.
std::optional<LogicalResult> RegionEmitter::emitLossKernel(KernelSite &s) {
  [[maybe_unused]] auto &[op, k, config, out, out2, seq, vocabCoord, posOffset,
                          in, in2, ids, cfgInt, cfgFloat, cfgExact, axisCoord,
                          idsPerSample] = s;
  if (k == KernelKind::CrossEntropy || k == KernelKind::CrossEntropyBwd) {
    Value logits = op.getInputs()[0];
    int64_t localVocab =
        cast<RankedTensorType>(logits.getType()).getShape().back();
    std::string off = vocabCoord.empty()
                          ? ""
                          : vocabCoord + " * " + std::to_string(localVocab);
    // A vocabulary padded to a multiple of tp: its real size.
    std::string vocab =
        config && config.get("vocab") ? ", " + std::to_string(cfgInt("vocab"))
                                      : "";
    if (k == KernelKind::CrossEntropy) {
      if (off.empty())
        os << "    rt::crossEntropyForward(" << out[0] << ", " << out[1]
           << ", " << in2(0) << ", " << ids(1) << ");\n";
      else
        os << "    rt::vocabParallelCrossEntropyForward(" << out[0] << ", "
           << out[1] << ", " << in2(0) << ", " << ids(1) << ", " << off
           << ", " << groupExpr("tp") << vocab << ");\n";
    } else {
      if (off.empty())
        os << "    rt::crossEntropyBackward(" << out2[0] << ", " << in2(0)
           << ", " << ids(1) << ", " << in(2) << ", "
           << cfgFloat("grad_scale") << "f);\n";
      else
        os << "    rt::vocabParallelCrossEntropyBackward(" << out2[0] << ", "
           << in2(0) << ", " << ids(1) << ", " << in(2) << ", " << off
           << ", " << cfgFloat("grad_scale") << "f" << vocab << ");\n";
    }
    return success();
  }
  if (k == KernelKind::BagPool || k == KernelKind::BagPoolBwd) {
    const bool fwd = k == KernelKind::BagPool;
    Value rows = fwd ? op.getInputs()[0] : op.getResult(0);
    int64_t bag = cast<RankedTensorType>(rows.getType()).getDimSize(1);
    const char *mean = config && config.get("mean") ? "true" : "false";
    if (fwd)
      os << "    rt::bagPoolForward(" << out[0] << ", " << in2(0) << ", "
         << bag << ", " << mean << ");\n";
    else
      os << "    rt::bagPoolBackward(" << out2[0] << ", " << in(0) << ", "
         << bag << ", " << mean << ");\n";
    return success();
  }
  if (k == KernelKind::DotInteraction || k == KernelKind::DotInteractionBwd) {
    const bool fwd = k == KernelKind::DotInteraction;
    auto list = [&](ArrayRef<std::string> names) {
      std::string s = "{";
      for (auto [i, n] : llvm::enumerate(names))
        s += (i ? ", " : "") + n;
      return s + "}";
    };
    SmallVector<std::string> feats;
    for (unsigned i = fwd ? 0 : 1; i < op.getInputs().size(); ++i)
      feats.push_back(in(i));
    if (fwd)
      os << "    rt::dotInteractionForward(" << out[0] << ", " << list(feats)
         << ");\n";
    else
      os << "    rt::dotInteractionBackward(" << list(out) << ", " << in(0)
         << ", " << list(feats) << ");\n";
    return success();
  }
  if (k == KernelKind::BinaryCrossEntropy)  {
    os << "    rt::binaryCrossEntropyForward(" << out[0] << ", " << in(0)
       << ", " << in(1) << ");\n";
    return success();
  }
  if (k == KernelKind::BinaryCrossEntropyBwd) {
    os << "    rt::binaryCrossEntropyBackward(" << out[0] << ", " << in(0)
       << ", " << in(1) << ", " << cfgFloat("grad_scale") << "f);\n";
    return success();
  }
  return std::nullopt;
}

/// The fixed part of every main.cpp (helpers the op translations call).

} // namespace trident::target::detail
