//===- Export.cpp - A plan as Megatron-LM, DeepSpeed, torchtitan config ---===//
//
// Each exporter first checks that the target can run the plan as written
// and reports the first thing it cannot express; then it writes the
// options. The option names, and the source each was read from, are in
// docs/exporters.md.
//
//===----------------------------------------------------------------------===//

#include "trident/Plan/Export.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>

namespace trident::plan {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

Status unsupported(std::string_view source, std::string_view target,
                   const std::string &what) {
  return Status::error(std::string(source) + ": cannot export to " +
                       std::string(target) + ": " + what);
}

/// Checks shared by every target: the plan is well formed and all stages run
/// on one node group of one GPU type (the three runtimes launch one
/// homogeneous job and cannot pin a stage to a node group).
Status checkCommon(const Plan &p, std::string_view source,
                   std::string_view target) {
  if (Status s = verify(p, source); !s)
    return s;
  if (!p.dataShares.empty())
    return unsupported(
        source, target,
        "the plan's data-parallel replicas run different micro-batch counts "
        "on different node groups (data_shares); it launches one homogeneous "
        "job with one batch per replica");
  for (const StagePlan &s : p.stages) {
    const StagePlan &first = p.stages.front();
    if (s.deviceGroup != first.deviceGroup || s.gpu != first.gpu)
      return unsupported(
          source, target,
          "stage " + str(s.index) + " runs on node group '" + s.deviceGroup +
              "' (" + s.gpu + ") and stage " + str(first.index) + " on '" +
              first.deviceGroup + "' (" + first.gpu +
              "); it launches one homogeneous job and cannot place pipeline "
              "stages on different node groups");
  }
  for (const StagePlan &s : p.stages)
    if (s.recompute != p.stages.front().recompute)
      return unsupported(
          source, target,
          "stage " + str(s.index) + " recomputes '" +
              std::string(recomputeName(s.recompute)) + "' and stage " +
              str(p.stages.front().index) + " '" +
              std::string(recomputeName(p.stages.front().recompute)) +
              "'; its activation checkpointing setting applies to every "
              "pipeline stage alike");
  return Status::ok();
}

bool allEqual(const std::vector<int64_t> &v, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i)
    if (v[i] != v[begin])
      return false;
  return true;
}

int64_t totalLayers(const Plan &p) {
  return std::accumulate(p.layersPerChunk.begin(), p.layersPerChunk.end(),
                         int64_t(0));
}

std::string withComments(const std::vector<std::string> &notes) {
  std::string out;
  for (const std::string &n : notes)
    out += "# " + n + "\n";
  return out;
}

//===----------------------------------------------------------------------===//
// Megatron-LM: megatron/training/arguments.py and the config dataclasses it
// turns into flags (ModelParallelConfig, TransformerConfig, TrainingConfig).
//===----------------------------------------------------------------------===//

/// What Megatron-LM cannot run, from the parallel axes alone.
/// `target` names it in messages (Megatron-Bridge runs Megatron-Core too).
Status megatronAxes(const Plan &p, std::string_view source,
                    std::string_view target = "Megatron-LM") {
  if (std::string why = exportAxisRefusal(p, ExportTarget::Megatron);
      !why.empty())
    return unsupported(source, target, why);
  if (p.vpp > 1 && p.pp < 2)
    return unsupported(source, target,
                       "vpp " + str(p.vpp) +
                           " needs pipeline-model-parallel-size >= 2");
  if (p.sequenceParallel && p.tp < 2)
    return unsupported(source, target,
                       "sequence parallelism with tp 1: Megatron-LM turns "
                       "--sequence-parallel off when tp is 1");
  if (p.precision != "bf16" && p.precision != "fp16" &&
      p.precision != "fp8" && p.precision != "fp32")
    return unsupported(source, target,
                       "precision '" + p.precision + "' (expected bf16, fp16 "
                       "or fp8)");
  return Status::ok();
}

/// What the plan predicts, to compare with the run's first logged steps:
/// the step time (and its 80 % range), tokens/s, MFU and the memory per
/// GPU of each stage. Nothing for a plan without figures (hand-written).
std::vector<std::string> predictionNotes(const Plan &p) {
  const Predicted &f = p.predicted;
  if (!(f.iterationSeconds > 0))
    return {};
  char buf[256];
  std::string range;
  if (f.iterationLowSeconds > 0 && f.iterationHighSeconds > 0) {
    std::snprintf(buf, sizeof buf, " (80%% range %.3g to %.3g s)",
                  f.iterationLowSeconds, f.iterationHighSeconds);
    range = buf;
  }
  std::snprintf(buf, sizeof buf,
                "predicted (runtime %s): %.4g s per step%s, %.0f tokens/s, "
                "MFU %.1f%%",
                p.runtime.c_str(), f.iterationSeconds, range.c_str(),
                f.tokensPerSecond, f.mfu * 100);
  std::vector<std::string> out{buf};
  std::string memory = "predicted memory per GPU (GB), by stage:";
  for (const StagePlan &st : p.stages) {
    std::snprintf(buf, sizeof buf, " %.1f", st.totalBytes / 1e9);
    memory += buf;
  }
  out.push_back(memory);
  return out;
}

/// A number as Megatron-LM's argparse reads it: integers without a point,
/// others with up to 10 significant digits (1e-05, 500000, 0.1).
std::string num(double x) {
  if (x == double(int64_t(x)) && std::abs(x) < 1e15)
    return std::to_string(int64_t(x));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", x);
  return buf;
}

/// A framework that runs Megatron-LM's arguments (Megatron-LM itself, or
/// Megatron-Bridge translating them), and the program a launch script
/// starts, under a checkout the user names in an environment variable.
struct LaunchProgram {
  std::string_view framework;   ///< "Megatron-LM"
  std::string_view setting;     ///< what it is configured with: "flag"
  std::string_view checkoutVar; ///< "MEGATRON_LM"
  std::string_view pin;         ///< "d98e8a64"
  std::string_view script;      ///< "pretrain_gpt.py", under the checkout
  std::string_view fsdpCheck;   ///< where Megatron-FSDP's asserts are
};
constexpr LaunchProgram kMegatronProgram{"Megatron-LM",     "flag",
                                         "MEGATRON_LM",     "d98e8a64",
                                         "pretrain_gpt.py", "validate_args"};
constexpr LaunchProgram kBridgeProgram{"Megatron-Bridge",
                                       "override",
                                       "MEGATRON_BRIDGE",
                                       "067f987d",
                                       "scripts/training/run_recipe.py",
                                       "ConfigContainer.validate"};

/// A per-layer flag as Megatron-LM's list expression ("[0]*3+[1]*1+..."),
/// read by its --moe-layer-freq and --no-rope-freq.
std::string layerPattern(int64_t layers,
                         const std::function<bool(int64_t)> &on) {
  std::string pattern;
  for (int64_t i = 0, run = 0; i < layers; i += run) {
    bool here = on(i);
    run = 1;
    while (i + run < layers && on(i + run) == here)
      ++run;
    pattern += (pattern.empty() ? "" : "+") + std::string("[") +
               (here ? "1" : "0") + "]*" + std::to_string(run);
  }
  return pattern;
}

/// Megatron-LM's architecture arguments for a decoder language model
/// (megatron/training/arguments.py at the pin, docs/exporters.md): every
/// size and choice the model fixes, so that the run builds this model and
/// not Megatron's defaults (GeLU, LayerNorm, biases, dropout 0.1, tied
/// embeddings, learned positions).
void megatronArchitecture(
    const frontend::ModelConfig &mc, int64_t seqLen,
    const LaunchProgram &program,
    const std::function<void(const std::string &, const std::string &)> &flag,
    std::vector<std::string> &notes) {
  const std::string fw(program.framework);
  using namespace frontend;
  // What the flags cannot say is noted, never silently dropped: the run
  // would build a different model there.
  auto notExported = [&](const std::string &what) {
    notes.push_back("not exported: " + what + " (no " + fw + " " +
                    std::string(program.setting) + " written; set it by hand)");
  };
  if (mc.family != ModelFamily::DecoderLM) {
    notes.push_back("architecture flags are written for decoder language "
                    "models only (BERT, ViT and DLRM are other Megatron-LM "
                    "models)");
    return;
  }
  if (mc.parallelResidual)
    notExported(mc.parallelSharedNorm
                    ? "the parallel residual blocks with one norm (GPT-J)"
                    : "the parallel residual blocks (GPT-NeoX)");
  if (mc.headBias)
    notExported("the LM head's bias");
  if (mc.attentionSinks)
    notExported("the attention sinks");
  // A window as long as the sequence is full causal attention.
  if (mc.slidingWindow > 0 && mc.slidingWindow < seqLen)
    notExported("the sliding window of " + std::to_string(mc.slidingWindow) +
                " positions");
  flag("--hidden-size", num(double(mc.hidden)));
  flag("--ffn-hidden-size", num(double(mc.ffn)));
  flag("--num-attention-heads", num(double(mc.numHeads)));
  if (mc.attention == AttentionKind::Standard) {
    if (mc.numKvHeads != mc.numHeads) {
      flag("--group-query-attention", "");
      flag("--num-query-groups", num(double(mc.numKvHeads)));
    }
    flag("--kv-channels", num(double(mc.headDim)));
  } else {
    flag("--multi-latent-attention", "");
    if (mc.mla.qLoraRank > 0)
      flag("--q-lora-rank", num(double(mc.mla.qLoraRank)));
    flag("--kv-lora-rank", num(double(mc.mla.kvLoraRank)));
    flag("--qk-head-dim", num(double(mc.mla.qkNopeHeadDim)));
    flag("--qk-pos-emb-head-dim", num(double(mc.mla.qkRopeHeadDim)));
    flag("--v-head-dim", num(double(mc.mla.vHeadDim)));
  }
  // Learned positions: the model's table. RoPE has no table; Megatron-LM
  // still wants the sequence to fit under the maximum.
  int64_t maxPositions = mc.maxPositions > 0 ? mc.maxPositions : mc.seqLen;
  if (mc.position != PositionKind::Learned)
    maxPositions = std::max(maxPositions, seqLen);
  flag("--max-position-embeddings", num(double(maxPositions)));
  if (mc.position == PositionKind::Rotary) {
    flag("--position-embedding-type", "rope");
    flag("--rotary-base", num(mc.ropeTheta));
    // Latent attention rotates its own qk-pos-emb-head-dim dimensions.
    if (mc.rotaryPct != 1.0 && mc.attention == AttentionKind::Standard)
      flag("--rotary-percent", num(mc.rotaryPct));
    if (mc.ropeInterleaved)
      flag("--rotary-interleaved", "");
    if (!mc.noRopeLayers.empty()) {
      // Megatron-LM's --no-rope-freq list: 1 marks a layer without RoPE.
      flag("--no-rope-freq", "\"(" + layerPattern(mc.numLayers, [&](int64_t i) {
                               return bool(mc.noRopeLayers[size_t(i)]);
                             }) + ")\"");
    }
    switch (mc.ropeScaling.kind) {
    case RopeScaling::Kind::None:
      break;
    case RopeScaling::Kind::Llama3:
      flag("--use-rope-scaling", "");
      flag("--rope-scaling-factor", num(mc.ropeScaling.factor));
      break;
    case RopeScaling::Kind::Linear:
    case RopeScaling::Kind::Yarn:
      notExported("the RoPE scaling (factor " + num(mc.ropeScaling.factor) +
                  "; Megatron-LM's YaRN or interpolation options)");
      break;
    }
  } else if (mc.position == PositionKind::Learned) {
    flag("--position-embedding-type", "learned_absolute");
  } else {
    flag("--position-embedding-type", "none");
  }
  switch (mc.act) {
  case Activation::Silu:
    if (mc.gatedMlp)
      flag("--swiglu", "");
    else
      notExported("the ungated SiLU MLP");
    break;
  case Activation::Relu2:
    if (mc.gatedMlp)
      notExported("the gated squared-ReLU MLP");
    else
      flag("--squared-relu", "");
    break;
  case Activation::Gelu:
  case Activation::GeluTanh:
    // Megatron-LM's default activation; the tanh form is its fused kernel's.
    if (mc.gatedMlp)
      notExported("the GeGLU MLP");
    break;
  case Activation::Relu:
    notExported("the ReLU MLP");
    break;
  }
  switch (mc.norm) {
  case NormKind::RMSNorm:
    flag("--normalization", "RMSNorm");
    break;
  case NormKind::LayerNorm:
    flag("--normalization", "LayerNorm");
    break;
  case NormKind::LayerNorm1p:
    flag("--normalization", "LayerNorm");
    flag("--apply-layernorm-1p", "");
    break;
  }
  flag("--norm-epsilon", num(mc.normEps));
  if (mc.qkNorm && mc.qkNormRopeLayersOnly)
    flag("--qk-l2-norm", ""); // Llama 4's, on the RoPE layers
  else if (mc.qkNorm)
    flag("--qk-layernorm", "");
  // Megatron-LM's linears have biases unless --disable-bias-linear; the
  // q, k, v biases alone come back with --add-qkv-bias.
  if (!mc.outBias && !mc.mlpBias) {
    flag("--disable-bias-linear", "");
    if (mc.qkvBias)
      flag("--add-qkv-bias", "");
  } else if (!mc.qkvBias || !mc.outBias || !mc.mlpBias) {
    notExported(std::string("biases on some linears only (qkv ") +
                (mc.qkvBias ? "yes" : "no") + ", output " +
                (mc.outBias ? "yes" : "no") + ", MLP " +
                (mc.mlpBias ? "yes" : "no") + "; Megatron-LM's default: all)");
  }
  if (!mc.tieEmbeddings)
    flag("--untie-embeddings-and-output-weights", "");
  flag("--attention-dropout", num(mc.attentionDropoutRate()));
  flag("--hidden-dropout", num(mc.dropout));
  if (mc.moe.numExperts > 0) {
    const MoEConfig &moe = mc.moe;
    flag("--num-experts", num(double(moe.numExperts)));
    flag("--moe-router-topk", num(double(moe.topK)));
    flag("--moe-ffn-hidden-size", num(double(moe.expertFfn)));
    if (moe.numSharedExperts > 0)
      flag("--moe-shared-expert-intermediate-size",
           num(double(moe.numSharedExperts * moe.sharedFfn)));
    // Which layers have experts, as Megatron-LM's list expression.
    bool all = true;
    for (int64_t i = 0; i < mc.numLayers; ++i)
      all = all && mc.isMoeLayer(i);
    if (!all)
      flag("--moe-layer-freq",
           "\"(" + layerPattern(mc.numLayers, [&](int64_t i) {
             return mc.isMoeLayer(i);
           }) + ")\"");
    if (moe.scoresOnInput)
      flag("--moe-apply-probs-on-input", "");
    if (moe.sigmoidScores)
      flag("--moe-router-score-function", "sigmoid");
    if (moe.routerScoreCorrection)
      flag("--moe-router-enable-expert-bias", "");
    if (moe.numGroups > 1) {
      flag("--moe-router-num-groups", num(double(moe.numGroups)));
      flag("--moe-router-group-topk", num(double(moe.topkGroups)));
    }
    if (moe.routedScale != 1.0)
      flag("--moe-router-topk-scaling-factor", num(moe.routedScale));
    if (!moe.renormalize && !moe.sigmoidScores)
      notes.push_back("the model weights its top-k experts by their "
                      "unnormalised probabilities; Megatron-LM's softmax "
                      "router renormalises them (check the router options)");
    flag("--moe-grouped-gemm", "");
    flag("--moe-token-dispatcher-type", "alltoall");
  }
  // Paths are the user's: shell variables that must be set (the launch
  // stops naming the one that is not).
  flag("--tokenizer-type", "HuggingFaceTokenizer");
  flag("--tokenizer-model", "\"${TOKENIZER_MODEL:?set TOKENIZER_MODEL}\"");
  flag("--data-path", "\"${DATA_PATH:?set DATA_PATH}\"");
  flag("--save", "\"${CHECKPOINT_DIR:?set CHECKPOINT_DIR}\"");
  flag("--load", "\"${CHECKPOINT_DIR:?set CHECKPOINT_DIR}\"");
  notes.push_back("set TOKENIZER_MODEL (the model's own tokenizer: " + fw +
                  " takes the vocabulary, " + std::to_string(mc.vocabSize) +
                  " here, from it), DATA_PATH and CHECKPOINT_DIR");
}

/// What CUDA_DEVICE_MAX_CONNECTIONS must be for `p`, as validate_args
/// (megatron/training/arguments.py at the pin) holds it before Blackwell:
/// 1 with tp or cp > 1 (asserted), unset with Megatron-FSDP (asserted not
/// 1), anything when Megatron does not care.
enum class MaxConnections : uint8_t { Any, One, Unset };
MaxConnections maxConnectionsFor(const Plan &p) {
  if (p.zeroStage >= 2)
    return MaxConnections::Unset;
  if (p.tp > 1 || p.cp > 1)
    return MaxConnections::One;
  return MaxConnections::Any;
}

/// How the plan's GPUs lie on nodes, for a launcher: one node when they
/// fit one (or the node size is unknown: perNode 0), else whole nodes of
/// cluster.gpus_per_node; an error naming `how` when they are not whole.
struct NodeLayout {
  int64_t nodes = 1;
  int64_t perNode = 0; ///< GPUs started on each node
};
Result<NodeLayout> nodeLayout(const Plan &p, std::string_view source,
                              std::string_view how) {
  const int64_t world = p.dp * p.tp * p.pp * p.cp;
  if (p.gpusPerNode <= 0 || world <= p.gpusPerNode)
    return NodeLayout{1, world};
  if (world % p.gpusPerNode != 0)
    return Status::error(std::string(source) + ": cannot write " +
                         std::string(how) + ": the plan's " + str(world) +
                         " GPUs are not whole nodes of " + str(p.gpusPerNode));
  return NodeLayout{world / p.gpusPerNode, p.gpusPerNode};
}

/// Characters a Slurm job name keeps (anything else becomes '_').
std::string jobName(std::string_view model) {
  std::string out = "trident-";
  for (char c : model)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
            c == '_' || c == '.')
               ? c
               : '_';
  return out;
}

/// The arguments `args` (one "--flag value" or override each) of
/// `program` as a bash script that launches it under torchrun on one node,
/// or under srun + torchrun on the plan's nodes.
Result<std::string> launchScript(const Plan &p, std::string_view source,
                                 const frontend::ModelConfig *model,
                                 Launcher launcher,
                                 const LaunchProgram &program,
                                 const std::vector<std::string> &args,
                                 const std::vector<std::string> &notes) {
  const std::string how =
      launcher == Launcher::Slurm ? "--launcher slurm" : "--launcher torchrun";
  auto refuse = [&](const std::string &why) {
    return Status::error(std::string(source) + ": cannot write " + how + ": " +
                         why);
  };
  if (!model)
    return refuse("the script runs " + std::string(program.script) +
                  ", which needs the model's architecture flags: give "
                  "--model (the plan records no model source)");
  if (model->family != frontend::ModelFamily::DecoderLM)
    return refuse(std::string(program.framework) + " (at the pinned " +
                  std::string(program.pin) +
                  ") pretrains decoder language models with " +
                  std::string(program.script) +
                  " and has no pretraining script for this model family; "
                  "use the argument list without --launcher");
  const int64_t world = p.dp * p.tp * p.pp * p.cp;
  if (launcher == Launcher::Slurm && p.gpusPerNode <= 0)
    return refuse("the plan does not record its GPUs per node (its node "
                  "groups differ, or it was written before "
                  "cluster.gpus_per_node): plan it again");
  auto layout = nodeLayout(p, source, how);
  if (!layout)
    return layout.status();
  const auto [nodes, perNode] = *layout;
  if (launcher == Launcher::Torchrun && nodes > 1)
    return refuse("torchrun here launches one node, but the plan uses " +
                  str(world) + " GPUs on nodes of " + str(p.gpusPerNode) +
                  ": use --launcher slurm");

  std::string t = "#!/bin/bash\n";
  if (launcher == Launcher::Slurm)
    t += "#SBATCH --job-name=" + jobName(p.model) +
         "\n#SBATCH --nodes=" + str(nodes) +
         "\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=" +
         str(perNode) + "\n#SBATCH --exclusive\n";
  t += withComments(notes);
  t += "# one torchrun per node starts a process per GPU; " + str(nodes) +
       " node(s) x " + str(perNode) + " GPUs = " + str(world) +
       " = dp * tp * pp * cp\n";
  t += "set -euo pipefail\n";
  const std::string var(program.checkoutVar);
  t += ": \"${" + var + ":?set " + var + " to a " +
       std::string(program.framework) + " checkout (exported for " +
       std::string(program.pin) + ")}\"\n";
  const MaxConnections conn = maxConnectionsFor(p);
  if (conn == MaxConnections::One)
    t += std::string("# ") +
         (&program == &kMegatronProgram ? "" : "Megatron-LM's ") +
         "validate_args asserts it with tp or cp > 1 (before Blackwell)\n"
         "export CUDA_DEVICE_MAX_CONNECTIONS=1\n";
  else if (conn == MaxConnections::Unset)
    t += "# Megatron-FSDP asserts it is not 1 (" +
         std::string(program.fsdpCheck) +
         ")\n"
         "unset CUDA_DEVICE_MAX_CONNECTIONS\n";
  if (launcher == Launcher::Torchrun) {
    t += "torchrun --standalone --nproc-per-node " + str(perNode) + " \\\n";
  } else {
    // The first host of the allocation; sed reads the whole list, so no
    // SIGPIPE (which `head -n 1` can raise) fails the pipeline under
    // pipefail.
    t += "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | "
         "sed -n 1p)\n";
    t += "srun --kill-on-bad-exit=1 torchrun --nnodes \"$SLURM_NNODES\" "
         "--nproc-per-node " +
         str(perNode) +
         " \\\n  --rdzv-id \"$SLURM_JOB_ID\" --rdzv-backend c10d "
         "--rdzv-endpoint \"$MASTER_ADDR:29500\" \\\n";
  }
  t += "  \"$" + var + "/" + std::string(program.script) + "\"";
  for (const std::string &a : args)
    t += " \\\n  " + a;
  t += "\n";
  return t;
}

/// The notes every Megatron-Core export starts with: what it is, the
/// prediction, and the runtime the figures were predicted for.
std::vector<std::string> megatronHeader(const Plan &p, std::string_view what,
                                        const LaunchProgram &program) {
  const std::string_view framework = program.framework;
  const std::string_view setting = program.setting;
  std::vector<std::string> notes;
  notes.push_back(std::string(what) + " for " + p.model + " on " + p.cluster +
                  " (trident plan, " + std::string(kPlanSchema) + ")");
  for (std::string &n : predictionNotes(p))
    notes.push_back(std::move(n));
  if (p.runtime != "megatron-core" && p.runtime != "megatron-lm")
    notes.push_back("the plan's figures were predicted for runtime '" +
                    p.runtime +
                    "'; trident plan --runtime megatron-core predicts " +
                    std::string(framework) + "'s");
  notes.push_back("data-parallel size " + str(p.dp) + " has no " +
                  std::string(setting) + ": " + std::string(framework) +
                  " derives it from the world size; launch on " +
                  str(p.dp * p.tp * p.pp * p.cp) + " GPUs (dp * tp * pp * cp)");
  return notes;
}

/// One Megatron-LM argument: "--flag" and its value as the shell reads it
/// ("" for a switch; quoted where the shell needs it).
struct MegatronFlag {
  std::string name, value;
};

/// Megatron-LM's arguments for `p` (and, with it, `model`'s
/// architecture), in order; what they cannot say, and what the launch
/// must set besides (the environment), goes to `notes`. `launcher` None:
/// the CUDA_DEVICE_MAX_CONNECTIONS rule is a note (a script sets it).
std::vector<MegatronFlag> megatronFlags(const Plan &p,
                                        const frontend::ModelConfig *model,
                                        Launcher launcher,
                                        const LaunchProgram &program,
                                        std::vector<std::string> &notes) {
  std::vector<MegatronFlag> a;
  auto flag = [&](const std::string &name, const std::string &value = "") {
    a.push_back({name, value});
  };
  flag("--num-layers", str(totalLayers(p)));
  flag("--tensor-model-parallel-size", str(p.tp));
  flag("--pipeline-model-parallel-size", str(p.pp));
  flag("--context-parallel-size", str(p.cp));
  flag("--expert-model-parallel-size", str(p.ep));
  if (p.ep > 1)
    flag("--expert-tensor-parallel-size", str(p.expertTp()));

  // Layers per stage. Even: nothing to say (Megatron splits evenly). Uneven
  // with vpp 1 and equal middle stages: first/last stage sizes. Anything
  // else: the explicit layout, one '|'-separated entry per model chunk in
  // model order (chunk c*pp + s), which is also the plan's order.
  const std::vector<int64_t> &l = p.layersPerChunk;
  bool even = allEqual(l, 0, l.size());
  if (even) {
    if (p.vpp > 1)
      flag("--num-virtual-stages-per-pipeline-rank", str(p.vpp));
  } else if (p.vpp == 1 && p.pp >= 2 && allEqual(l, 1, l.size() - 1)) {
    flag("--decoder-first-pipeline-num-layers", str(l.front()));
    flag("--decoder-last-pipeline-num-layers", str(l.back()));
  } else {
    std::string layout;
    for (size_t g = 0; g < l.size(); ++g) {
      if (g)
        layout += "|";
      if (g == 0)
        layout += "E";
      if (l[g] == 1)
        layout += "t";
      else if (l[g] > 1)
        layout += "t*" + str(l[g]);
      if (g + 1 == l.size())
        layout += "L";
    }
    flag("--pipeline-model-parallel-layout", "\"" + layout + "\"");
  }

  if (p.sequenceParallel)
    flag("--sequence-parallel");
  // Transformer Engine's userbuffers overlap (the plan was priced with the
  // tensor-parallel collectives hidden behind its GEMMs).
  if (p.tpCommOverlap)
    flag("--tp-comm-overlap");
  // Megatron-Core's default is p2p (the ring the plan was priced with
  // unless it says otherwise).
  if (p.cp > 1 && p.cpCommType != CpCommType::P2p)
    flag("--cp-comm-type",
         axisValueText(axisSpec(Axis::CpCommType), int64_t(p.cpCommType)));
  flag("--micro-batch-size", str(p.microBatch));
  flag("--global-batch-size", str(p.globalBatch));
  flag("--seq-length", str(p.seqLen));
  if (p.recompute == Recompute::Selective) {
    flag("--recompute-granularity", "selective");
  } else if (p.recompute == Recompute::Full) {
    // Every block recomputed, one checkpoint per block (Narayanan et al.).
    flag("--recompute-granularity", "full");
    flag("--recompute-method", "uniform");
    flag("--recompute-num-layers", "1");
  }
  if (p.zeroStage == 1) {
    flag("--use-distributed-optimizer");
  } else if (p.zeroStage >= 2) {
    // ZeRO-2/3 is Megatron-FSDP with the matching sharding strategy.
    flag("--use-megatron-fsdp");
    flag("--data-parallel-sharding-strategy",
         p.zeroStage == 2 ? "optim_grads" : "optim_grads_params");
    // validate_args: "Megatron-FSDP requires the `fsdp_dtensor`
    // checkpointing format", and CUDA_DEVICE_MAX_CONNECTIONS not 1.
    flag("--ckpt-format", "fsdp_dtensor");
    std::string env = "Megatron-FSDP: leave CUDA_DEVICE_MAX_CONNECTIONS "
                      "unset or above 1 (" +
                      std::string(program.fsdpCheck) + " asserts it)";
    if (p.tp > 1 || p.cp > 1)
      env += "; before Blackwell Megatron warns that tp or cp with "
             "Megatron-FSDP want different settings (tp and cp: 1)";
    notes.push_back(env);
  }
  if (maxConnectionsFor(p) == MaxConnections::One &&
      launcher == Launcher::None) {
    notes.push_back(std::string("set CUDA_DEVICE_MAX_CONNECTIONS=1: ") +
                    (&program == &kMegatronProgram ? "" : "Megatron-LM's ") +
                    "validate_args asserts it with tp or cp > 1 before "
                    "Blackwell");
  }
  // The plan's figures (every runtime preset but megatron-lm) overlap the
  // data-parallel gradient reduction with the backward, which Megatron-LM
  // does only with --overlap-grad-reduce (off by default). They count the
  // distributed optimizer's parameter all-gather as exposed, so
  // --overlap-param-gather stays off (with it the run would beat them).
  if (p.dp * p.cp > 1 && p.runtime != "megatron-lm")
    flag("--overlap-grad-reduce");
  if (p.precision == "bf16") {
    flag("--bf16");
  } else if (p.precision == "fp16") {
    flag("--fp16");
  } else if (p.precision == "fp8") {
    // FP8 GEMMs through Transformer Engine, bf16 elsewhere.
    flag("--bf16");
    flag("--fp8-format", "hybrid");
    // Delayed scaling is --fp8-recipe's default (transformer_config.py at
    // d98e8a64).
    if (p.fp8Recipe != Fp8Recipe::Delayed)
      flag("--fp8-recipe",
           axisValueText(axisSpec(Axis::Fp8Recipe), int64_t(p.fp8Recipe)));
  } else {
    // fp32: Megatron-LM trains in fp32 unless --bf16 or --fp16 is given.
  }
  // The model itself, after what the plan decided.
  if (model) {
    megatronArchitecture(*model, p.seqLen, program, flag, notes);
  } else {
    notes.push_back("architecture flags (hidden size, heads, ...) need the "
                    "model: trident export --model M");
  }

  return a;
}

/// `args` as the text of an export: comments, then one argument a line
/// (`\` continued), or the launch script of `program`.
Result<std::string> argumentText(const Plan &p, std::string_view source,
                                 const frontend::ModelConfig *model,
                                 Launcher launcher,
                                 const LaunchProgram &program,
                                 const std::vector<std::string> &args,
                                 const std::vector<std::string> &notes) {
  if (launcher != Launcher::None)
    return launchScript(p, source, model, launcher, program, args, notes);
  std::string t = withComments(notes);
  for (size_t i = 0; i < args.size(); ++i)
    t += args[i] + (i + 1 < args.size() ? " \\\n" : "\n");
  return t;
}

Result<Exported> exportMegatron(const Plan &p, std::string_view source,
                                const frontend::ModelConfig *model,
                                Launcher launcher) {
  if (Status s = megatronAxes(p, source); !s)
    return s;
  Exported e;
  e.notesInText = true;
  e.notes = megatronHeader(p, "Megatron-LM arguments", kMegatronProgram);
  std::vector<std::string> args;
  for (const MegatronFlag &f :
       megatronFlags(p, model, launcher, kMegatronProgram, e.notes))
    args.push_back(f.value.empty() ? f.name : f.name + " " + f.value);
  auto text =
      argumentText(p, source, model, launcher, kMegatronProgram, args, e.notes);
  if (!text)
    return text.status();
  e.text = std::move(*text);
  return e;
}

//===----------------------------------------------------------------------===//
// Megatron-Bridge: scripts/training/run_recipe.py with the vanilla GPT
// recipe (Megatron-Core's own defaults, "for MLM <-> Bridge correlation"),
// and the Megatron-LM arguments above translated into its KEY=VALUE
// overrides, as scripts/translate_mlm_to_bridge.py maps them.
//===----------------------------------------------------------------------===//

constexpr std::string_view kBridgeRecipe =
    "vanilla_gpt_pretrain_1gpu_h100_bf16_config";

/// How a Megatron-LM argument becomes Megatron-Bridge overrides. The names
/// are translate_mlm_to_bridge.py's transforms where it has one.
enum class BridgeHow : uint8_t {
  Value,       ///< key=value ("-" in ARG_MAP)
  True,        ///< a switch: key=true ("flag")
  False,       ///< a switch that turns the key off: key=false ("flag_invert")
  Swiglu,      ///< model.gated_linear_unit=true model.activation_func=silu
  SquaredRelu, ///< model.activation_func=squared_relu
  SeqLength,   ///< dataset.seq_length and model.seq_length
  Precision,   ///< --bf16, --fp16, --fp8-format: one mixed_precision recipe
  LayerList,   ///< "([1]*3+[0]*1)" as the list [1,1,1,0]
  Path,        ///< a path from a shell variable, as a quoted string
  Skip,        ///< nothing to set (implied, or sized from another key)
};

struct BridgeRow {
  std::string_view flag, key;
  BridgeHow how;
};

// Every argument megatronFlags writes. Rows differing from ARG_MAP (at the
// pin, test/data/export-flags/megatron-bridge-map.txt; the unit test
// ExportTest holds them to it) say why.
// clang-format off
constexpr BridgeRow kBridgeRows[] = {
    {"--num-layers", "model.num_layers", BridgeHow::Value},
    {"--tensor-model-parallel-size", "model.tensor_model_parallel_size", BridgeHow::Value},
    {"--pipeline-model-parallel-size", "model.pipeline_model_parallel_size", BridgeHow::Value},
    {"--context-parallel-size", "model.context_parallel_size", BridgeHow::Value},
    {"--expert-model-parallel-size", "model.expert_model_parallel_size", BridgeHow::Value},
    {"--expert-tensor-parallel-size", "model.expert_tensor_parallel_size", BridgeHow::Value},
    {"--num-virtual-stages-per-pipeline-rank", "model.virtual_pipeline_model_parallel_size", BridgeHow::Value},
    // Not in ARG_MAP: TransformerConfig's fields of the same meaning.
    {"--decoder-first-pipeline-num-layers", "model.num_layers_in_first_pipeline_stage", BridgeHow::Value},
    {"--decoder-last-pipeline-num-layers", "model.num_layers_in_last_pipeline_stage", BridgeHow::Value},
    {"--pipeline-model-parallel-layout", "model.pipeline_model_parallel_layout", BridgeHow::Value},
    {"--sequence-parallel", "model.sequence_parallel", BridgeHow::True},
    // Not in ARG_MAP: ModelParallelConfig's field of the same meaning.
    {"--tp-comm-overlap", "model.tp_comm_overlap", BridgeHow::True},
    {"--cp-comm-type", "model.cp_comm_type", BridgeHow::Value},
    {"--micro-batch-size", "train.micro_batch_size", BridgeHow::Value},
    {"--global-batch-size", "train.global_batch_size", BridgeHow::Value},
    {"--seq-length", "dataset.seq_length", BridgeHow::SeqLength},
    {"--recompute-granularity", "model.recompute_granularity", BridgeHow::Value},
    {"--recompute-method", "model.recompute_method", BridgeHow::Value},
    {"--recompute-num-layers", "model.recompute_num_layers", BridgeHow::Value},
    {"--use-distributed-optimizer", "ddp.use_distributed_optimizer", BridgeHow::True},
    // Not in ARG_MAP: DistributedDataParallelConfig's fields.
    {"--use-megatron-fsdp", "ddp.use_megatron_fsdp", BridgeHow::True},
    {"--data-parallel-sharding-strategy", "ddp.data_parallel_sharding_strategy", BridgeHow::Value},
    {"--ckpt-format", "checkpoint.ckpt_format", BridgeHow::Value},
    {"--overlap-grad-reduce", "ddp.overlap_grad_reduce", BridgeHow::True},
    {"--bf16", "mixed_precision", BridgeHow::Precision},
    {"--fp16", "mixed_precision", BridgeHow::Precision},
    {"--fp8-format", "mixed_precision", BridgeHow::Precision},
    {"--fp8-recipe", "mixed_precision", BridgeHow::Precision},
    {"--hidden-size", "model.hidden_size", BridgeHow::Value},
    {"--ffn-hidden-size", "model.ffn_hidden_size", BridgeHow::Value},
    {"--num-attention-heads", "model.num_attention_heads", BridgeHow::Value},
    {"--group-query-attention", "", BridgeHow::Skip},
    {"--num-query-groups", "model.num_query_groups", BridgeHow::Value},
    {"--kv-channels", "model.kv_channels", BridgeHow::Value},
    // GPTModelProvider has no max_position_embeddings: its learned
    // position table has seq_length rows (ARG_MAP's key is not a field).
    {"--max-position-embeddings", "", BridgeHow::Skip},
    {"--position-embedding-type", "model.position_embedding_type", BridgeHow::Value},
    {"--rotary-base", "model.rotary_base", BridgeHow::Value},
    {"--rotary-percent", "model.rotary_percent", BridgeHow::Value},
    // Not in ARG_MAP: GPTModelProvider's and TransformerConfig's fields.
    {"--rotary-interleaved", "model.rotary_interleaved", BridgeHow::True},
    {"--use-rope-scaling", "model.rope_scaling", BridgeHow::True},
    {"--rope-scaling-factor", "model.rope_scaling_factor", BridgeHow::Value},
    {"--swiglu", "", BridgeHow::Swiglu},
    {"--squared-relu", "", BridgeHow::SquaredRelu},
    {"--normalization", "model.normalization", BridgeHow::Value},
    {"--apply-layernorm-1p", "model.layernorm_zero_centered_gamma", BridgeHow::True},
    {"--norm-epsilon", "model.layernorm_epsilon", BridgeHow::Value},
    {"--qk-layernorm", "model.qk_layernorm", BridgeHow::True},
    {"--disable-bias-linear", "model.add_bias_linear", BridgeHow::False},
    {"--add-qkv-bias", "model.add_qkv_bias", BridgeHow::True},
    {"--untie-embeddings-and-output-weights", "model.share_embeddings_and_output_weights", BridgeHow::False},
    {"--attention-dropout", "model.attention_dropout", BridgeHow::Value},
    {"--hidden-dropout", "model.hidden_dropout", BridgeHow::Value},
    {"--num-experts", "model.num_moe_experts", BridgeHow::Value},
    {"--moe-router-topk", "model.moe_router_topk", BridgeHow::Value},
    {"--moe-ffn-hidden-size", "model.moe_ffn_hidden_size", BridgeHow::Value},
    {"--moe-shared-expert-intermediate-size", "model.moe_shared_expert_intermediate_size", BridgeHow::Value},
    // ARG_MAP passes Megatron-LM's expression string; TransformerConfig's
    // moe_layer_freq is an int or a list, which the string is not.
    {"--moe-layer-freq", "model.moe_layer_freq", BridgeHow::LayerList},
    {"--moe-router-score-function", "model.moe_router_score_function", BridgeHow::Value},
    {"--moe-router-enable-expert-bias", "model.moe_router_enable_expert_bias", BridgeHow::True},
    {"--moe-router-num-groups", "model.moe_router_num_groups", BridgeHow::Value},
    {"--moe-router-group-topk", "model.moe_router_group_topk", BridgeHow::Value},
    {"--moe-router-topk-scaling-factor", "model.moe_router_topk_scaling_factor", BridgeHow::Value},
    {"--moe-grouped-gemm", "model.moe_grouped_gemm", BridgeHow::True},
    {"--moe-token-dispatcher-type", "model.moe_token_dispatcher_type", BridgeHow::Value},
    {"--tokenizer-type", "tokenizer.tokenizer_type", BridgeHow::Value},
    {"--tokenizer-model", "tokenizer.tokenizer_model", BridgeHow::Path},
    {"--data-path", "dataset.data_path", BridgeHow::Path},
    {"--save", "checkpoint.save", BridgeHow::Path},
    {"--load", "checkpoint.load", BridgeHow::Path},
};
// clang-format on

std::string_view bridgeHowName(BridgeHow how) {
  switch (how) {
  case BridgeHow::Value:
    return "value";
  case BridgeHow::True:
    return "true";
  case BridgeHow::False:
    return "false";
  case BridgeHow::Swiglu:
    return "swiglu";
  case BridgeHow::SquaredRelu:
    return "squared_relu";
  case BridgeHow::SeqLength:
    return "seq_length";
  case BridgeHow::Precision:
    return "precision";
  case BridgeHow::LayerList:
    return "layer_list";
  case BridgeHow::Path:
    return "path";
  case BridgeHow::Skip:
    return "skip";
  }
  return "value";
}

/// A shell word's text without the double quotes megatronFlags put around
/// it ("Et*4|t*4L" -> Et*4|t*4L).
std::string unquoted(const std::string &v) {
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"')
    return v.substr(1, v.size() - 2);
  return v;
}

bool plainWord(std::string_view v) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '.' || c == '-' || c == '+';
  });
}

/// KEY=VALUE as one shell word that Hydra's override parser reads back as
/// VALUE: a plain word as it is, anything else (the layout's '|' and '*',
/// a list's brackets) in Hydra's single quotes, or unquoted for a list;
/// the word double-quoted for the shell where it has more than a plain
/// word's characters. `expand`: VALUE holds a ${VAR} the shell expands.
std::string overrideWord(std::string_view key, const std::string &value,
                         bool list = false, bool expand = false) {
  std::string hydra = value;
  if (!list && !plainWord(value)) {
    hydra = "'";
    for (char c : value) {
      if (c == '\'' || c == '\\')
        hydra += '\\';
      hydra += c;
    }
    hydra += "'";
  }
  std::string word = std::string(key) + "=" + hydra;
  if (plainWord(value))
    return word;
  std::string out = "\"";
  for (char c : word) {
    if (c == '"' || c == '\\' || c == '`' || (c == '$' && !expand))
      out += '\\';
    out += c;
  }
  return out + "\"";
}

/// Megatron-LM's expert-layer expression "([1]*3+[0]*1)" (what
/// megatronArchitecture writes) as Hydra's list [1,1,1,0]; "" if malformed.
std::string layerList(const std::string &expr) {
  std::string e = expr;
  if (e.size() < 2 || e.front() != '(' || e.back() != ')')
    return "";
  e = e.substr(1, e.size() - 2);
  std::string out = "[";
  size_t pos = 0;
  while (pos < e.size()) {
    size_t plus = e.find('+', pos);
    std::string part = e.substr(
        pos, plus == std::string::npos ? std::string::npos : plus - pos);
    // "[d]*n"
    if (part.size() < 5 || part[0] != '[' || part[2] != ']' || part[3] != '*' ||
        (part[1] != '0' && part[1] != '1'))
      return "";
    int64_t n = 0;
    for (size_t i = 4; i < part.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(part[i])))
        return "";
      n = n * 10 + (part[i] - '0');
    }
    for (int64_t i = 0; i < n; ++i)
      out += (out.size() > 1 ? "," : "") + std::string(1, part[1]);
    if (plus == std::string::npos)
      break;
    pos = plus + 1;
  }
  return out + "]";
}

/// The registered mixed-precision recipe (training/mixed_precision.py)
/// for the plan's precision; "null" (no mixed precision) for fp32. FP8:
/// the recipe of the plan's fp8_recipe (delayed, Megatron-LM's default
/// for --fp8-format hybrid, unless it names another).
std::string bridgePrecision(const Plan &p) {
  if (p.precision == "bf16")
    return "bf16_mixed";
  if (p.precision == "fp16")
    return "fp16_mixed";
  if (p.precision == "fp8")
    switch (p.fp8Recipe) {
    case Fp8Recipe::Delayed:
      return "bf16_with_fp8_delayed_scaling_mixed";
    case Fp8Recipe::Tensorwise:
      return "bf16_with_fp8_current_scaling_mixed";
    case Fp8Recipe::Blockwise:
      return "bf16_with_fp8_subchannel_scaling_mixed";
    case Fp8Recipe::Mxfp8:
      return "bf16_with_mxfp8_mixed";
    }
  return "null";
}

Result<Exported> exportMegatronBridge(const Plan &p, std::string_view source,
                                      const frontend::ModelConfig *model,
                                      Launcher launcher) {
  constexpr std::string_view target = "Megatron-Bridge";
  if (Status s = megatronAxes(p, source, target); !s)
    return s;
  if (!model)
    return unsupported(source, target,
                       "its vanilla GPT recipe builds the model from the "
                       "architecture overrides: give --model (the plan "
                       "records no model source)");
  if (Status s = checkExportModel(ExportTarget::MegatronBridge, *model, p.model,
                                  source);
      !s)
    return s;

  Exported e;
  e.notesInText = true;
  e.notes = megatronHeader(p, "Megatron-Bridge run_recipe.py arguments",
                           kBridgeProgram);
  const std::vector<MegatronFlag> flags =
      megatronFlags(p, model, launcher, kBridgeProgram, e.notes);
  std::vector<std::string> args = {"--recipe " + std::string(kBridgeRecipe),
                                   "--mode pretrain",
                                   "--dataset megatron-indexed"};
  auto set = [&](std::string_view key, const std::string &value,
                 bool list = false, bool expand = false) {
    args.push_back(overrideWord(key, value, list, expand));
  };
  bool distOpt = false, vppSet = false;
  for (const MegatronFlag &f : flags) {
    const BridgeRow *row = nullptr;
    for (const BridgeRow &r : kBridgeRows)
      if (r.flag == f.name)
        row = &r;
    if (!row)
      return unsupported(source, target,
                         "Megatron-LM's " + f.name +
                             " has no Megatron-Bridge override in Trident's "
                             "translation table (kBridgeRows)");
    const std::string v = unquoted(f.value);
    switch (row->how) {
    case BridgeHow::Value:
      set(row->key, v);
      vppSet =
          vppSet || row->key == "model.virtual_pipeline_model_parallel_size";
      break;
    case BridgeHow::True:
      set(row->key, "true");
      distOpt = distOpt || row->key == "ddp.use_distributed_optimizer";
      break;
    case BridgeHow::False:
      set(row->key, "false");
      break;
    case BridgeHow::Swiglu:
      set("model.gated_linear_unit", "true");
      set("model.activation_func", "silu");
      break;
    case BridgeHow::SquaredRelu:
      set("model.activation_func", "squared_relu");
      break;
    case BridgeHow::SeqLength:
      set("dataset.seq_length", v);
      set("model.seq_length", v);
      break;
    case BridgeHow::LayerList: {
      std::string list = layerList(v);
      if (list.empty())
        return unsupported(source, target,
                           "the expert layers '" + v +
                               "' are not a [0|1]*n sum");
      set(row->key, list, /*list=*/true);
      break;
    }
    case BridgeHow::Path:
      set(row->key, v, false, /*expand=*/true);
      break;
    case BridgeHow::Precision:
    case BridgeHow::Skip:
      break;
    }
  }
  // An explicit layout implies the virtual stages (Megatron-Core derives
  // them, and asserts them equal when given); Bridge's runner rebuilds a
  // recipe's layout only when the size is overridden: say it.
  if (p.vpp > 1 && !vppSet)
    set("model.virtual_pipeline_model_parallel_size", str(p.vpp));
  set("mixed_precision", bridgePrecision(p));
  // Without a mixed-precision recipe nothing resets the recipe's optimizer,
  // built for bf16 (distributed_fused_adam_with_cosine_annealing's default
  // precision "bf16-mixed"): an fp32 run says so itself.
  if (p.precision == "fp32")
    set("optimizer.bf16", "false");
  // The recipe's optimizer enables the distributed optimizer and Bridge
  // enables it for both configs when either has it
  // (_validate_and_sync_distributed_optimizer_settings); so too the
  // parameter all-gather overlap, which the prediction counts as exposed.
  if (!distOpt && p.zeroStage < 2)
    set("ddp.use_distributed_optimizer", "false");
  set("optimizer.use_distributed_optimizer",
      p.zeroStage >= 1 ? "true" : "false");
  set("ddp.overlap_param_gather", "false");
  set("optimizer.overlap_param_gather", "false");
  if (p.zeroStage >= 2)
    e.notes.push_back("Megatron-FSDP turns the distributed optimizer on "
                      "itself (ddp and optimizer)");
  if (model->position == frontend::PositionKind::Learned &&
      model->maxPositions > 0 && model->maxPositions != p.seqLen)
    e.notes.push_back("GPTModelProvider sizes the learned position table by "
                      "seq_length (" +
                      str(p.seqLen) + "), not the model's " +
                      str(model->maxPositions) + " positions");
  if (p.precision == "fp8" && p.fp8Recipe == Fp8Recipe::Delayed)
    e.notes.push_back("FP8: bf16_with_fp8_delayed_scaling_mixed, the delayed "
                      "scaling Megatron-LM's --fp8-format hybrid defaults to "
                      "(it also gathers FP8 parameters)");
  else if (p.precision == "fp8")
    e.notes.push_back(
        "FP8: " + bridgePrecision(p) +
        ", the recipe of the plan's fp8_recipe " +
        axisValueText(axisSpec(Axis::Fp8Recipe), int64_t(p.fp8Recipe)));
  auto text =
      argumentText(p, source, model, launcher, kBridgeProgram, args, e.notes);
  if (!text)
    return text.status();
  e.text = std::move(*text);
  return e;
}

//===----------------------------------------------------------------------===//
// DeepSpeed: docs/_pages/config-json.md, deepspeed/runtime/pipe/.
//===----------------------------------------------------------------------===//

/// What DeepSpeed cannot run, from the parallel axes alone.
Status deepSpeedAxes(const Plan &p, std::string_view source) {
  constexpr std::string_view target = "DeepSpeed";
  if (std::string why = exportAxisRefusal(p, ExportTarget::DeepSpeed);
      !why.empty())
    return unsupported(source, target, why);
  if (p.pp > 1 && p.zeroStage >= 2)
    return unsupported(source, target,
                       "ZeRO stage " + str(p.zeroStage) +
                           " with pp " + str(p.pp) +
                           ": DeepSpeed's PipelineEngine allows ZeRO 0 or 1 "
                           "only");
  if (p.ep > 1 && p.tp > 1)
    return unsupported(source, target,
                       "expert parallelism with tensor parallelism: AutoEP "
                       "cannot be combined with AutoTP");
  if (p.tp > 1 && p.pp > 1)
    // deepspeed/__init__.py: a PipelineModule's engine takes its grid from
    // model.mpu() (pipe x data unless built with a topology), while AutoTP
    // takes its group from deepspeed.utils.groups: the tp ranks would be
    // counted as data-parallel.
    return unsupported(source, target,
                       "tp " + str(p.tp) + " with pp " + str(p.pp) +
                           ": the PipelineEngine's grid comes from "
                           "PipelineModule (pipe x data), which AutoTP "
                           "(tensor_parallel.autotp_size) does not join, so "
                           "its data-parallel size would be " +
                           str(p.dp * p.tp) + ", not " + str(p.dp) +
                           "; export to Megatron-LM for tp with pp");
  if (p.ep > 1 && p.expertTp() > 1)
    return unsupported(source, target,
                       "expert-tensor parallelism (etp " +
                           str(p.expertTp()) + ")");
  if (p.precision == "fp8")
    return unsupported(source, target,
                       "fp8: the DeepSpeed config has no FP8 training switch "
                       "(FP8 GEMMs come from Transformer Engine in model "
                       "code)");
  if (p.precision != "bf16" && p.precision != "fp16" &&
      p.precision != "fp32")
    return unsupported(source, target,
                       "precision '" + p.precision + "'");
  return Status::ok();
}

Result<Exported> exportDeepSpeed(const Plan &p, std::string_view source) {
  if (Status s = deepSpeedAxes(p, source); !s)
    return s;
  if (p.pp > 1 && !allEqual(p.layersPerChunk, 0, p.layersPerChunk.size()))
    return unsupported(source, "DeepSpeed",
                       "uneven pipeline stages: PipelineModule's "
                       "partition_method ('parameters', 'uniform', "
                       "'type:REGEX') takes no explicit layers per stage");

  nlohmann::ordered_json j;
  // With AutoTP and no mpu, DeepSpeedConfig counts every GPU as
  // data-parallel (deepspeed/runtime/config.py: world_size =
  // dist.get_world_size()) and asserts train_batch_size == micro * gas *
  // world_size: the plan's global batch would fail it. Without the key
  // DeepSpeed derives it from the other two, with or without an mpu.
  if (p.tp == 1)
    j["train_batch_size"] = p.globalBatch;
  j["train_micro_batch_size_per_gpu"] = p.microBatch;
  j["gradient_accumulation_steps"] = p.numMicroBatches;
  // Clip the global gradient norm at 1.0, Megatron-LM's default
  // (--clip-grad), as the Megatron-LM export's run does; DeepSpeed's own
  // default (0) would not clip.
  j["gradient_clipping"] = 1.0;
  // fp32 is DeepSpeed's default: neither "bf16" nor "fp16" enabled.
  if (p.precision != "fp32")
    j[p.precision] = {{"enabled", true}};
  j["zero_optimization"] = {{"stage", p.zeroStage}};
  if (p.zeroStage >= 1) {
    // What the figures assumed: the gradient reduction overlapped with the
    // backward (every runtime preset but megatron-lm), in buckets of
    // DeepSpeed's default 5e8 elements (the deepspeed preset's
    // zero3GradBucketElements).
    if (p.runtime != "megatron-lm")
      j["zero_optimization"]["overlap_comm"] = true;
    j["zero_optimization"]["reduce_bucket_size"] =
        int64_t(kDeepSpeedReduceBucketElements);
  }
  // ZeRO-3's parameter gathers as the plan's memory holds them: two of the
  // largest layer's gathered parameters live at once, the one in use and
  // the one fetched ahead (stages[].memory.zero3_gather_elements), where
  // DeepSpeed's defaults (5e7 ahead, 1e9 live) could hold far more. A
  // runtime whose gathers do not overlap compute fetches nothing ahead.
  double gather = 0;
  for (const StagePlan &st : p.stages)
    gather = std::max(gather, st.zero3GatherElements);
  const std::optional<Runtime> rt = parseRuntime(p.runtime);
  EvalOptions opts;
  if (rt)
    applyRuntime(opts, *rt);
  if (p.zeroStage == 3 && gather > 0) {
    const auto elements = int64_t(std::ceil(gather));
    j["zero_optimization"]["stage3_prefetch_bucket_size"] =
        opts.overlapZero3Gather ? elements : int64_t(0);
    j["zero_optimization"]["stage3_max_live_parameters"] = 2 * elements;
  }
  if (p.recompute == Recompute::Full)
    // deepspeed.checkpointing's settings for the blocks the model wraps
    // (one checkpoint per block, nothing partitioned or offloaded: what
    // the plan's memory assumed).
    j["activation_checkpointing"] = {
        {"partition_activations", false},
        {"cpu_checkpointing", false},
        {"contiguous_memory_optimization", false},
        {"number_checkpoints",
         p.layersPerChunk.empty() ? int64_t(0) : p.layersPerChunk.front()},
        {"synchronize_checkpoint_boundary", false},
        {"profile", false}};
  if (p.tp > 1)
    j["tensor_parallel"] = {{"autotp_size", p.tp}};
  if (p.ep > 1)
    j["expert_parallel"] = {{"enabled", true}, {"autoep_size", p.ep}};

  Exported e;
  e.text = j.dump(2) + "\n";
  // JSON has no comments: the prediction goes with the other notes.
  e.notes = predictionNotes(p);
  if (p.zeroStage == 3 && gather > 0)
    e.notes.push_back(
        "ZeRO-3 gathers sized as predicted: " +
        str(int64_t(std::ceil(gather))) +
        " parameter elements per layer (the largest), two live at once" +
        (opts.overlapZero3Gather
             ? std::string(", the next layer fetched ahead")
             : std::string(", nothing fetched ahead (runtime '") + p.runtime +
                   "' gathers on use)"));
  else if (p.zeroStage == 3)
    e.notes.push_back("the plan records no ZeRO-3 gather size (written "
                      "before stages[].memory.zero3_gather_elements): "
                      "DeepSpeed's default prefetch and live-parameter "
                      "limits, which may hold more than the prediction");
  e.notes.push_back("launch on " + str(p.dp * p.tp * p.pp) +
                    " GPUs (dp * tp * pp); the global batch " +
                    str(p.globalBatch) +
                    " = train_micro_batch_size_per_gpu * "
                    "gradient_accumulation_steps * data-parallel size " +
                    str(p.dp));
  if (p.tp > 1)
    e.notes.push_back(
        "train_batch_size is left out: without an mpu DeepSpeed counts all " +
        str(p.dp * p.tp) + " GPUs as data-parallel and would reject " +
        str(p.globalBatch) + " != " + str(p.microBatch) + " * " +
        str(p.numMicroBatches) + " * " + str(p.dp * p.tp) +
        "; it derives the value itself (and logs " +
        str(p.microBatch * p.numMicroBatches * p.dp * p.tp) +
        " unless deepspeed.initialize gets an mpu; each AutoTP group of " +
        str(p.tp) + " reads the same batch, so the global batch is " +
        str(p.globalBatch) + ")");
  if (p.pp > 1)
    e.notes.push_back(
        "pipeline stages are not a config key: build the model as "
        "deepspeed.pipe.PipelineModule(layers=..., num_stages=" +
        str(p.pp) + ", partition_method=\"uniform\") (" +
        str(p.layersPerChunk.front()) + " blocks per stage)");
  if (p.recompute == Recompute::Full)
    e.notes.push_back(
        p.pp > 1 ? "full recomputation: "
                   "PipelineModule(activation_checkpoint_interval=1)"
                 : "full recomputation: wrap each block in "
                   "deepspeed.checkpointing.checkpoint");
  return e;
}

//===----------------------------------------------------------------------===//
// torchtitan: torchtitan/config/configs.py (TrainingConfig,
// ParallelismConfig), torchtitan/distributed/activation_checkpoint.py.
//===----------------------------------------------------------------------===//

/// torchtitan/models/*/__init__.py at b5bcd76c (the *_configs flavour
/// tables; debug flavours and models without layer count, width and
/// vocabulary left out), distilled into
/// test/data/export-flags/torchtitan-models.txt.
constexpr TorchTitanFlavour kTorchTitanFlavours[] = {
    {"deepseek_v3", "16B", "deepseek_v3_16b", 27, 2048, 16, 0, 102400, 64, 0},
    {"deepseek_v3", "236B", "", 60, 5120, 128, 0, 102400, 160, 0},
    {"deepseek_v3", "671B", "deepseek_v3_671b", 61, 7168, 128, 0, 129280, 256,
     0},
    {"gpt_oss", "120b", "gpt_oss_120b", 36, 2880, 0, 0, 201088, 128, 4},
    {"gpt_oss", "20b", "gpt_oss_20b", 24, 2880, 0, 0, 201088, 32, 4},
    {"kimi_k2_7", "Kimi-K2.5", "kimi_k2_5", 61, 7168, 64, 0, 163840, 384, 0},
    {"llama3", "1B", "", 16, 2048, 32, 8, 128256, 0, 0},
    {"llama3", "3B", "", 28, 3072, 24, 8, 128256, 0, 0},
    {"llama3", "405B", "llama3_405b", 126, 16384, 128, 8, 128256, 0, 0},
    {"llama3", "70B", "llama3_70b", 80, 8192, 64, 8, 128256, 0, 0},
    {"llama3", "8B", "llama3_8b", 32, 4096, 32, 8, 128256, 0, 0},
    {"muse_glimmer", "30B", "muse_glimmer_30b", 52, 6656, 32, 2, 202048, 0, 0},
    {"qwen3", "0.6B", "qwen3_0_6b", 28, 1024, 16, 8, 151936, 0, 0},
    {"qwen3", "1.7B", "qwen3_1_7b", 28, 2048, 16, 8, 151936, 0, 0},
    {"qwen3", "14B", "qwen3_14b", 40, 5120, 40, 8, 151936, 0, 0},
    {"qwen3", "235B-A22B", "", 94, 4096, 64, 4, 151936, 128, 8},
    {"qwen3", "30B-A3B", "qwen3_30b_a3b", 48, 2048, 32, 4, 151936, 128, 8},
    {"qwen3", "32B", "qwen3_32b", 64, 5120, 64, 8, 151936, 0, 0},
    {"qwen3", "4B", "", 36, 2560, 32, 8, 151936, 0, 0},
    {"qwen3", "8B", "", 36, 4096, 32, 8, 151936, 0, 0},
    {"qwen3_5", "0.8B", "qwen35_0_8b", 24, 1024, 8, 2, 248320, 0, 0},
    {"qwen3_5", "122B-A10B", "qwen35_122b_a10b", 48, 3072, 32, 2, 248320, 256,
     8},
    {"qwen3_5", "27B", "qwen35_27b", 64, 5120, 24, 4, 248320, 0, 0},
    {"qwen3_5", "2B", "qwen35_2b", 24, 2048, 8, 2, 248320, 0, 0},
    {"qwen3_5", "35B-A3B", "qwen35_35b_a3b", 40, 2048, 16, 2, 248320, 256, 8},
    {"qwen3_5", "397B-A17B", "qwen35_397b_a17b", 60, 4096, 32, 2, 248320, 512,
     10},
    {"qwen3_5", "4B", "qwen35_4b", 32, 2560, 16, 4, 248320, 0, 0},
    {"qwen3_5", "9B", "qwen35_9b", 32, 4096, 16, 4, 248320, 0, 0},
};

/// Every size the flavour states agrees with the model's (0: unstated).
bool sameShape(const TorchTitanFlavour &f, const frontend::ModelConfig &m) {
  auto agree = [](int64_t stated, int64_t actual) {
    return stated == 0 || stated == actual;
  };
  return f.layers == m.numLayers && f.dim == m.hidden &&
         f.vocab == m.vocabSize && f.experts == m.moe.numExperts &&
         agree(f.heads, m.numHeads) && agree(f.kvHeads, m.numKvHeads) &&
         agree(f.topK, m.moe.topK);
}

/// The flavour nearest `m` in layers x width^2 (the weights of the blocks,
/// on a log scale), dense against dense and MoE against MoE first.
const TorchTitanFlavour &closestFlavour(const frontend::ModelConfig &m) {
  const TorchTitanFlavour *best = nullptr;
  double bestScore = 0;
  const double size = std::log(double(std::max<int64_t>(1, m.numLayers)) *
                               double(m.hidden) * double(m.hidden));
  for (const TorchTitanFlavour &f : kTorchTitanFlavours) {
    double score = std::abs(
        std::log(double(f.layers) * double(f.dim) * double(f.dim)) - size);
    if ((f.experts > 0) != (m.moe.numExperts > 0))
      score += 100; // another kind of model
    if (!best || score < bestScore) {
      best = &f;
      bestScore = score;
    }
  }
  return *best;
}

std::string flavourName(const TorchTitanFlavour &f) {
  return std::string(f.module) + " " + f.flavour;
}

/// What torchtitan cannot run, from the parallel axes alone.
Status torchTitanAxes(const Plan &p, std::string_view source) {
  constexpr std::string_view target = "torchtitan";
  if (std::string why = exportAxisRefusal(p, ExportTarget::TorchTitan);
      !why.empty())
    return unsupported(source, target, why);
  if (p.precision != "bf16" && p.precision != "fp32")
    return unsupported(source, target,
                       "precision '" + p.precision +
                           "': training.mixed_precision_param takes "
                           "bfloat16 or float32 (fp8 is a model converter, "
                           "fp16 is absent)");
  if (p.ep > 1 && p.expertTp() > 1)
    return unsupported(source, target,
                       "expert-tensor parallelism (etp " +
                           str(p.expertTp()) + ")");
  // ZeRO 0: DDP (replicate); ZeRO 2/3: FSDP (shard).
  int64_t shard = p.zeroStage == 0 ? 1 : p.dp;
  if (p.ep > 1 && (shard * p.cp * p.tp) % p.ep != 0)
    return unsupported(source, target,
                       "ep " + str(p.ep) +
                           " does not divide data_parallel_shard_degree * cp "
                           "* tp = " +
                           str(shard * p.cp * p.tp) +
                           " (torchtitan's expert parallelism borrows ranks "
                           "from FSDP, cp and tp; ZeRO 0 replicates)");
  return Status::ok();
}

Result<Exported> exportTorchTitan(const Plan &p, std::string_view source,
                                  const frontend::ModelConfig *model) {
  if (Status s = torchTitanAxes(p, source); !s)
    return s;
  // The model: one torchtitan ships, or nothing to run.
  const TorchTitanFlavour *flavour = nullptr;
  if (model) {
    if (Status s =
            checkExportModel(ExportTarget::TorchTitan, *model, p.model, source);
        !s)
      return s;
    flavour = torchTitanFlavourOf(*model);
  }
  // ZeRO 0: DDP (replicate); ZeRO 2/3: FSDP (shard).
  int64_t shard = p.zeroStage == 0 ? 1 : p.dp;
  int64_t replicate = p.zeroStage == 0 ? p.dp : 1;

  Exported e;
  e.notesInText = true;
  e.notes.push_back("torchtitan configuration for " + p.model + " on " +
                    p.cluster + " (trident plan, " + std::string(kPlanSchema) +
                    ")");
  for (std::string &n : predictionNotes(p))
    e.notes.push_back(std::move(n));
  if (p.runtime != "torchtitan")
    e.notes.push_back("the plan's figures were predicted for runtime '" +
                      p.runtime +
                      "'; trident plan --runtime torchtitan predicts "
                      "torchtitan's (FlashAttention-2, its selective "
                      "checkpointing)");
  e.notes.push_back(
      "a module of torchtitan's configuration system (a function returning "
      "Trainer.Config, pytorch/torchtitan#2386): save it as trident_plan.py "
      "where Python finds it (the torchtitan checkout, or PYTHONPATH)");
  // run_train.sh (torchtitan's launcher) runs torchrun on one node; more
  // nodes run torchrun -m torchtitan.train on each.
  auto layout = nodeLayout(p, source, "torchtitan's launch");
  if (!layout)
    return layout.status();
  const auto [nodes, perNode] = *layout;
  std::string launch;
  if (!model) {
    launch = "launch on " + str(nodes * perNode) +
             " GPUs (dp * tp * pp * cp): the model is not known (trident "
             "export --model M), so only apply_plan(config) is written; call "
             "it on your Trainer.Config";
  } else if (nodes == 1) {
    launch = "launch on " + str(perNode) + " GPUs: NGPU=" + str(perNode) +
             " MODULE=trident_plan CONFIG=trident_plan ./run_train.sh";
  } else {
    launch = "launch on " + str(nodes) + " nodes of " + str(perNode) +
             " GPUs: on each, torchrun --nnodes " + str(nodes) +
             " --nproc-per-node " + str(perNode) +
             " --rdzv-backend c10d --rdzv-endpoint FIRST_HOST:29500 -m "
             "torchtitan.train --module trident_plan --config trident_plan";
  }
  // The baseline: the flavour's own config, or (a flavour without one)
  // the first config of the same model with the model spec replaced.
  const TorchTitanFlavour *base = flavour;
  if (flavour && !*flavour->config)
    for (const TorchTitanFlavour &f : kTorchTitanFlavours)
      if (std::string_view(f.module) == flavour->module && *f.config) {
        base = &f;
        break;
      }
  if (flavour) {
    std::string m = "model: torchtitan.models." + std::string(flavour->module) +
                    " flavour " + flavour->flavour;
    if (base == flavour)
      m += ", from its config " + std::string(flavour->config) + "()";
    else if (base && *base->config)
      m += ", which has no config of its own: " + std::string(base->config) +
           "() with model_registry(\"" + flavour->flavour + "\")";
    e.notes.push_back(m);
  }
  e.notes.push_back(launch);
  // torch.compile off, stated: the plan's runtime prices eager kernels
  // (no fusion), and it cannot overlap tensor-parallel collectives with
  // the GEMMs (the tp_comm_overlap row refuses torchtitan), which
  // torchtitan's async TP would (it needs compile).
  e.notes.push_back("compile off (compile.enable = False): the prediction "
                    "prices eager kernels; torch.compile would run faster "
                    "than predicted");
  e.notes.push_back("the rest (data, optimizer, steps, checkpoints) is the "
                    "baseline config's");

  // Python literals.
  auto q = [](const std::string &v) { return "\"" + v + "\""; };
  std::vector<std::pair<std::string, std::string>> set;
  // ZeRO 0: DDP (replicate); ZeRO 2/3: FSDP (shard).
  set.emplace_back("parallelism.data_parallel_replicate_degree",
                   str(replicate));
  set.emplace_back("parallelism.data_parallel_shard_degree", str(shard));
  // torchtitan's "default" policy reshards after the forward only without
  // pipeline stages (torchtitan/distributed/fsdp.py,
  // get_fsdp_reshard_after_forward_policy: `return not pp_enabled`): ZeRO-2
  // says "never", ZeRO-3 with stages must say "always" or it runs as ZeRO-2
  // and holds the gathered parameters the plan's memory does not count.
  if (p.zeroStage == 2)
    set.emplace_back("parallelism.fsdp_reshard_after_forward", q("never"));
  else if (p.zeroStage == 3 && p.pp > 1)
    set.emplace_back("parallelism.fsdp_reshard_after_forward", q("always"));
  set.emplace_back("parallelism.tensor_parallel_degree", str(p.tp));
  if (p.tp > 1)
    set.emplace_back("parallelism.enable_sequence_parallel",
                     p.sequenceParallel ? "True" : "False");
  set.emplace_back("parallelism.context_parallel_degree", str(p.cp));
  set.emplace_back("parallelism.expert_parallel_degree", str(p.ep));
  set.emplace_back("parallelism.pipeline_parallel_degree", str(p.pp));
  if (p.pp > 1) {
    const ScheduleKind k = p.scheduleKind();
    const char *sched = k == ScheduleKind::GPipe             ? "GPipe"
                        : k == ScheduleKind::Interleaved1F1B ? "Interleaved1F1B"
                                                             : "1F1B";
    set.emplace_back("parallelism.pipeline_parallel_schedule", q(sched));
    set.emplace_back("parallelism.num_pp_microbatches", str(p.numMicroBatches));
    // The split as written, one model chunk per line in model order, with
    // torchtitan's decoder module names.
    std::string parts = "[\n";
    int64_t block = 0;
    for (size_t g = 0; g < p.layersPerChunk.size(); ++g) {
      std::string part;
      auto add = [&](const std::string &name) {
        part += (part.empty() ? "" : ", ") + q(name);
      };
      if (g == 0)
        add("tok_embeddings");
      for (int64_t i = 0; i < p.layersPerChunk[g]; ++i)
        add("layers." + str(block++));
      if (g + 1 == p.layersPerChunk.size()) {
        add("norm");
        add("lm_head");
      }
      parts += "        [" + part + "],\n";
    }
    set.emplace_back("parallelism.module_fqns_per_model_part", parts + "    ]");
  }
  set.emplace_back("training.num_tokens_per_microbatch_per_dp_rank",
                   str(p.microBatch * p.seqLen));
  set.emplace_back("training.num_tokens_per_train_step",
                   str(p.globalBatch * p.seqLen));
  set.emplace_back("training.max_context_length", str(p.seqLen));
  set.emplace_back("training.mixed_precision_param",
                   q(p.precision == "fp32" ? "float32" : "bfloat16"));
  // Activation checkpointing is a policy class, not a string.
  const char *ac = p.recompute == Recompute::Full ? "FullAC.Config()"
                   : p.recompute == Recompute::Selective
                       ? "SelectiveAC.Config()"
                       : "None";
  set.emplace_back("activation_checkpoint", ac);
  set.emplace_back("compile.enable", "False");
  if (p.tp > 1)
    set.emplace_back("compile.enable_async_tensor_parallel", "False");

  std::string t = withComments(e.notes);
  if (p.recompute == Recompute::Full)
    t += "from torchtitan.distributed.activation_checkpoint import FullAC\n";
  else if (p.recompute == Recompute::Selective)
    t += "from torchtitan.distributed.activation_checkpoint import "
         "SelectiveAC\n";
  if (base && base != flavour)
    t += "from torchtitan.models." + std::string(flavour->module) +
         " import model_registry\n";
  if (base && *base->config)
    t += "from torchtitan.models." + std::string(base->module) +
         ".config_registry import " + base->config + "\n";
  t += "from torchtitan.trainer import Trainer\n\n\n";
  t += "def apply_plan(config: Trainer.Config) -> Trainer.Config:\n";
  t += "    \"\"\"The plan's parallelism, batch, precision, activation "
       "checkpointing and compilation.\"\"\"\n";
  for (const auto &[key, value] : set)
    t += "    config." + key + " = " + value + "\n";
  t += "    return config\n";
  if (base && *base->config) {
    t += "\n\ndef trident_plan() -> Trainer.Config:\n";
    t += "    config = " + std::string(base->config) + "()\n";
    if (base != flavour)
      t += "    config.model_spec = model_registry(" + q(flavour->flavour) +
           ")\n";
    t += "    return apply_plan(config)\n";
  }
  e.text = std::move(t);
  return e;
}

} // namespace

Status checkExportModel(ExportTarget target, const frontend::ModelConfig &model,
                        std::string_view modelName, std::string_view source) {
  if (target == ExportTarget::MegatronBridge) {
    constexpr std::string_view bridge = "Megatron-Bridge";
    if (model.family != frontend::ModelFamily::DecoderLM)
      return unsupported(source, bridge,
                         "run_recipe.py's GPT recipe builds decoder "
                         "language models only");
    if (model.attention != frontend::AttentionKind::Standard)
      return unsupported(
          source, bridge,
          "the model's latent attention: the vanilla GPT recipe's "
          "GPTModelProvider has no latent-attention fields (q_lora_rank, "
          "kv_lora_rank, ...); DeepSeek's models need their own recipe "
          "(deepseek_v3_pretrain_config), which builds the model from its "
          "Hugging Face config: export to Megatron-LM");
    if (model.position == frontend::PositionKind::None)
      return unsupported(source, bridge,
                         "a model without position embeddings: "
                         "GPTModelProvider's position_embedding_type is "
                         "learned_absolute, rope or yarn");
    return Status::ok();
  }
  if (target != ExportTarget::TorchTitan || torchTitanFlavourOf(model))
    return Status::ok();
  const TorchTitanFlavour &c = closestFlavour(model);
  return unsupported(
      source, "torchtitan",
      "the model: torchtitan (at b5bcd76c) has no model of " +
          std::string(modelName) + "'s shape (" + str(model.numLayers) +
          " layers, hidden " + str(model.hidden) + ", vocabulary " +
          str(model.vocabSize) +
          (model.moe.numExperts > 0
               ? ", " + str(model.moe.numExperts) + " experts"
               : std::string()) +
          "); its closest is " + flavourName(c) + " (" + str(c.layers) +
          " layers, hidden " + str(c.dim) +
          "): add the model to torchtitan first, or export to Megatron-LM");
}

std::vector<BridgeOverrideRule> megatronBridgeRules() {
  std::vector<BridgeOverrideRule> out;
  for (const BridgeRow &r : kBridgeRows)
    out.push_back({r.flag, r.key, bridgeHowName(r.how)});
  return out;
}

std::span<const TorchTitanFlavour> torchTitanFlavours() {
  return kTorchTitanFlavours;
}

const TorchTitanFlavour *
torchTitanFlavourOf(const frontend::ModelConfig &model) {
  if (model.family != frontend::ModelFamily::DecoderLM)
    return nullptr;
  for (const TorchTitanFlavour &f : kTorchTitanFlavours)
    if (sameShape(f, model))
      return &f;
  return nullptr;
}

Result<ExportTarget> parseExportTarget(std::string_view name) {
  if (name == "megatron")
    return ExportTarget::Megatron;
  if (name == "deepspeed")
    return ExportTarget::DeepSpeed;
  if (name == "torchtitan")
    return ExportTarget::TorchTitan;
  if (name == "megatron-bridge")
    return ExportTarget::MegatronBridge;
  return Status::error("unknown export target '" + std::string(name) +
                       "' (expected megatron, megatron-bridge, deepspeed or "
                       "torchtitan)");
}

Result<Launcher> parseLauncher(std::string_view name) {
  if (name.empty() || name == "none")
    return Launcher::None;
  if (name == "torchrun")
    return Launcher::Torchrun;
  if (name == "slurm")
    return Launcher::Slurm;
  return Status::error("unknown launcher '" + std::string(name) +
                       "' (expected torchrun or slurm)");
}

std::string_view exportTargetTitle(ExportTarget target) {
  switch (target) {
  case ExportTarget::Megatron:
    return "Megatron-LM";
  case ExportTarget::DeepSpeed:
    return "DeepSpeed";
  case ExportTarget::TorchTitan:
    return "torchtitan";
  case ExportTarget::MegatronBridge:
    return "Megatron-Bridge";
  }
  return "Megatron-LM";
}

std::string_view exportTargetName(ExportTarget target) {
  switch (target) {
  case ExportTarget::Megatron:
    return "megatron";
  case ExportTarget::DeepSpeed:
    return "deepspeed";
  case ExportTarget::TorchTitan:
    return "torchtitan";
  case ExportTarget::MegatronBridge:
    return "megatron-bridge";
  }
  return "megatron";
}

Status checkExportAxes(const Plan &plan, ExportTarget target,
                       std::string_view source) {
  switch (target) {
  case ExportTarget::Megatron:
    return megatronAxes(plan, source);
  case ExportTarget::DeepSpeed:
    return deepSpeedAxes(plan, source);
  case ExportTarget::TorchTitan:
    return torchTitanAxes(plan, source);
  case ExportTarget::MegatronBridge:
    return megatronAxes(plan, source, "Megatron-Bridge");
  }
  return Status::error("unknown export target");
}

std::string axesRefusal(const ParallelConfig &cfg, ExportTarget target) {
  Status s = checkExportAxes(axesPlan(cfg), target, "plan");
  return s ? std::string() : s.message();
}

std::string planRefusal(const LayerProfile &profile, const Cluster &cluster,
                        const ParallelConfig &cfg, const Evaluation &eval,
                        ExportTarget target, double pricePerGpuHour) {
  // Megatron-Bridge refuses what Megatron-LM does, and besides only models
  // (checkExportModel, before the search): its export needs the model,
  // which this check of the plan as written does not have.
  if (target == ExportTarget::MegatronBridge)
    target = ExportTarget::Megatron;
  auto e = exportPlan(makePlan(profile, cluster, cfg, eval, pricePerGpuHour),
                      target, "plan");
  return e ? std::string() : e.message();
}

namespace {

/// `p` with its layer counts in transformer layers. The planner splits a
/// model by tgraph.repeat iterations (blocks); a model whose layers repeat
/// with a period (gpt-oss's alternating windows, Llama 4 Maverick's dense
/// and MoE layers) has blocks of several layers (frontend::blockLayers, the
/// builder's own rule), while Megatron-LM, DeepSpeed and torchtitan count
/// layers. Without the model's config (zoo names, whose blocks are single
/// layers, and .mlir models) the counts stay blocks.
Plan inTransformerLayers(const Plan &p, const frontend::ModelConfig *model) {
  if (!model)
    return p;
  const std::vector<int64_t> sizes = frontend::blockLayers(*model);
  if (int64_t(sizes.size()) != totalLayers(p))
    return p; // another model's plan: checkCommon / verify say so
  // Layers before block b.
  std::vector<int64_t> before(sizes.size() + 1, 0);
  for (size_t b = 0; b < sizes.size(); ++b)
    before[b + 1] = before[b] + sizes[b];
  auto layers = [&](int64_t first, int64_t count) {
    return before[size_t(first + count)] - before[size_t(first)];
  };
  Plan q = p;
  for (int64_t g = 0, first = 0; g < int64_t(q.layersPerChunk.size()); ++g) {
    int64_t n = p.layersPerChunk[size_t(g)];
    q.layersPerChunk[size_t(g)] = layers(first, n);
    first += n;
  }
  for (StagePlan &st : q.stages) {
    if (st.chunkBlockRanges.empty())
      continue;
    for (const auto &[first, last] : st.chunkBlockRanges)
      if (first < 0 || last < first || last > int64_t(sizes.size()))
        return p;
    st.layers = 0;
    for (size_t c = 0; c < st.chunkBlockRanges.size(); ++c) {
      auto &[first, last] = st.chunkBlockRanges[c];
      int64_t n = layers(first, last - first);
      if (c < st.chunkLayers.size())
        st.chunkLayers[c] = n;
      st.layers += n;
      first = before[size_t(first)];
      last = before[size_t(last)];
    }
  }
  return q;
}

} // namespace

Result<Exported> exportPlan(const Plan &input, ExportTarget target,
                            std::string_view source,
                            const frontend::ModelConfig *model,
                            Launcher launcher) {
  if (Status s = checkCommon(input, source, exportTargetTitle(target)); !s)
    return s;
  const Plan plan = inTransformerLayers(input, model);
  if (launcher != Launcher::None && target != ExportTarget::Megatron &&
      target != ExportTarget::MegatronBridge)
    return Status::error(
        std::string(source) +
        ": --launcher writes Megatron-LM and Megatron-Bridge launch "
        "scripts; " +
        std::string(exportTargetTitle(target)) +
        (target == ExportTarget::DeepSpeed
             ? " runs the training script the user writes (the `deepspeed` "
               "launcher with this JSON as its config)"
             : " runs a Trainer.Config the user writes (torchrun -m "
               "torchtitan.train with these settings)") +
        ": export without --launcher");
  switch (target) {
  case ExportTarget::Megatron:
    return exportMegatron(plan, source, model, launcher);
  case ExportTarget::DeepSpeed:
    return exportDeepSpeed(plan, source);
  case ExportTarget::TorchTitan:
    return exportTorchTitan(plan, source, model);
  case ExportTarget::MegatronBridge:
    return exportMegatronBridge(plan, source, model, launcher);
  }
  return Status::error("unknown export target");
}

} // namespace trident::plan
