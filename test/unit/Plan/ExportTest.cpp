//===- ExportTest.cpp - Megatron-LM, DeepSpeed, torchtitan exporters ------===//
//
// Exact option names and values for hand-built plans, and the error for a
// plan each target cannot express (docs/exporters.md lists the sources).
//
//===----------------------------------------------------------------------===//

#include "trident/Plan/Export.h"
#include "trident/Frontend/ModelSource.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace trident;
using namespace trident::plan;

namespace {

/// GPT-3 175B as Narayanan et al. 2021 ran it: tp 8, pp 12, dp 16 on 1536
/// GPUs, 96 layers, micro-batch 1, global batch 1536.
Plan gpt3() {
  Plan p;
  p.model = "gpt3_175b";
  p.cluster = "dgx-a100-80gb:192";
  p.seqLen = 2048;
  p.globalBatch = 1536;
  p.dp = 16;
  p.tp = 8;
  p.pp = 12;
  p.sequenceParallel = true;
  p.microBatch = 1;
  p.numMicroBatches = 96;
  p.recompute = Recompute::Full;
  p.zeroStage = 1;
  p.schedule = ScheduleKind::OneFOneB;
  p.layersPerChunk.assign(12, 8);
  for (int64_t s = 0; s < 12; ++s) {
    StagePlan st;
    st.index = s;
    st.layers = 8;
    st.deviceGroup = "dgx-a100-80gb";
    st.gpu = "a100-80gb";
    p.stages.push_back(st);
  }
  return p;
}

/// `p` on one pipeline stage with ZeRO-3 (FSDP): its 1536 GPUs as dp 192
/// x tp 8, 8 micro-batches, the 96 blocks on one stage.
Plan asOneStageZero3(Plan p) {
  p.zeroStage = 3;
  p.pp = 1;
  p.dp = 192;
  p.numMicroBatches = 8;
  p.layersPerChunk = {96};
  p.stages.resize(1);
  return p;
}

std::string exported(const Plan &p, ExportTarget t) {
  auto r = exportPlan(p, t, "plan.json");
  INFO((r ? std::string() : r.message()));
  REQUIRE(r.isOk());
  return r->text;
}

bool has(const std::string &text, const std::string &what) {
  return text.find(what) != std::string::npos;
}

} // namespace

TEST_CASE("export targets parse by name", "[export]") {
  CHECK(*parseExportTarget("megatron") == ExportTarget::Megatron);
  CHECK(*parseExportTarget("deepspeed") == ExportTarget::DeepSpeed);
  CHECK(*parseExportTarget("torchtitan") == ExportTarget::TorchTitan);
  auto bad = parseExportTarget("nemo");
  REQUIRE_FALSE(bad.isOk());
  CHECK(has(bad.message(), "'nemo'"));
}

TEST_CASE("Megatron-LM arguments of the GPT-3 plan", "[export]") {
  std::string t = exported(gpt3(), ExportTarget::Megatron);
  CHECK(has(t, "--num-layers 96 \\\n"));
  CHECK(has(t, "--tensor-model-parallel-size 8 \\\n"));
  CHECK(has(t, "--pipeline-model-parallel-size 12 \\\n"));
  CHECK(has(t, "--context-parallel-size 1 \\\n"));
  CHECK(has(t, "--expert-model-parallel-size 1 \\\n"));
  CHECK(has(t, "--sequence-parallel \\\n"));
  CHECK(has(t, "--micro-batch-size 1 \\\n"));
  CHECK(has(t, "--global-batch-size 1536 \\\n"));
  CHECK(has(t, "--seq-length 2048 \\\n"));
  CHECK(has(t, "--recompute-granularity full \\\n"));
  CHECK(has(t, "--recompute-method uniform \\\n"));
  CHECK(has(t, "--recompute-num-layers 1 \\\n"));
  CHECK(has(t, "--use-distributed-optimizer \\\n"));
  CHECK(has(t, "--bf16\n")); // the last flag: no continuation
  CHECK(has(t, "# data-parallel size 16 has no flag"));
  CHECK(has(t, "launch on 1536 GPUs"));
  // Even stages, vpp 1: no layout flags.
  CHECK_FALSE(has(t, "virtual"));
  CHECK_FALSE(has(t, "--decoder-first"));
  CHECK_FALSE(has(t, "layout"));
}

TEST_CASE("Megatron-LM virtual stages and uneven splits", "[export]") {
  Plan p = gpt3();
  p.vpp = 2;
  p.schedule = ScheduleKind::Interleaved1F1B;
  p.layersPerChunk.assign(24, 4);
  CHECK(has(exported(p, ExportTarget::Megatron),
            "--num-virtual-stages-per-pipeline-rank 2 \\\n"));

  // Lighter first and last stage, equal middle ones: first/last flags.
  Plan u = gpt3();
  u.layersPerChunk = {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 9};
  std::string t = exported(u, ExportTarget::Megatron);
  CHECK(has(t, "--decoder-first-pipeline-num-layers 7 \\\n"));
  CHECK(has(t, "--decoder-last-pipeline-num-layers 9 \\\n"));

  // Uneven middle stages, or uneven with vpp: the explicit layout, chunks
  // in model order with embedding and loss.
  Plan v = gpt3();
  v.pp = 2;
  v.dp = 96;
  v.numMicroBatches = 16;
  v.vpp = 2;
  v.schedule = ScheduleKind::Interleaved1F1B;
  v.layersPerChunk = {23, 25, 24, 24};
  v.stages.resize(2);
  std::string lt = exported(v, ExportTarget::Megatron);
  CHECK(has(lt, "--pipeline-model-parallel-layout \"Et*23|t*25|t*24|t*24L\""));
  CHECK_FALSE(has(lt, "virtual-stages"));
}

TEST_CASE("Megatron-LM precision and ZeRO", "[export]") {
  Plan p = gpt3();
  p.precision = "fp8";
  p.zeroStage = 3;
  p.recompute = Recompute::Selective;
  std::string t = exported(p, ExportTarget::Megatron);
  CHECK(has(t, "--fp8-format hybrid"));
  CHECK_FALSE(has(t, "--fp8-recipe")); // delayed: Megatron-Core's default
  {
    // Another recipe is named, in Megatron-LM's flag and in the
    // Megatron-Bridge mixed-precision recipe.
    auto model = frontend::zooModel("gpt3-175b");
    REQUIRE(model.isOk());
    auto bridge = [&](const Plan &q) {
      auto r =
          exportPlan(q, ExportTarget::MegatronBridge, "plan.json", &*model);
      INFO((r ? std::string() : r.message()));
      REQUIRE(r.isOk());
      return r->text;
    };
    Plan cs = p;
    cs.fp8Recipe = Fp8Recipe::Tensorwise;
    std::string mt = exported(cs, ExportTarget::Megatron);
    INFO(mt);
    CHECK(has(mt, "--fp8-recipe tensorwise"));
    CHECK(
        has(bridge(cs), "mixed_precision=bf16_with_fp8_current_scaling_mixed"));
    cs.fp8Recipe = Fp8Recipe::Blockwise;
    CHECK(has(bridge(cs),
              "mixed_precision=bf16_with_fp8_subchannel_scaling_mixed"));
    cs.fp8Recipe = Fp8Recipe::Mxfp8;
    CHECK(has(exported(cs, ExportTarget::Megatron), "--fp8-recipe mxfp8"));
    CHECK(has(bridge(cs), "mixed_precision=bf16_with_mxfp8_mixed"));
  }
  CHECK(has(t, "--bf16 \\\n"));
  CHECK(has(t, "--use-megatron-fsdp \\\n"));
  CHECK(has(t, "--data-parallel-sharding-strategy optim_grads_params"));
  CHECK(has(t, "--recompute-granularity selective \\\n"));
  CHECK_FALSE(has(t, "--recompute-method"));
  CHECK_FALSE(has(t, "--use-distributed-optimizer"));
  // Megatron-FSDP launches only with the fsdp_dtensor checkpoint format
  // (validate_args at d98e8a64), and not with CUDA_DEVICE_MAX_CONNECTIONS=1.
  CHECK(has(t, "--ckpt-format fsdp_dtensor"));
  CHECK(has(t, "# Megatron-FSDP: leave CUDA_DEVICE_MAX_CONNECTIONS unset or "
               "above 1"));
  CHECK(has(t, "before Blackwell")); // tp 8 with Megatron-FSDP
  // The figures overlap the gradient reduction with the backward: so must
  // the run. The parameter all-gather is priced exposed: not overlapped.
  CHECK(has(t, "--overlap-grad-reduce"));
  CHECK_FALSE(has(t, "--overlap-param-gather"));
  p.zeroStage = 1;
  std::string z1 = exported(p, ExportTarget::Megatron);
  CHECK_FALSE(has(z1, "--ckpt-format"));
  CHECK_FALSE(has(z1, "leave CUDA_DEVICE_MAX_CONNECTIONS unset"));
  // tp 8 without Megatron-FSDP: validate_args asserts the variable is 1.
  CHECK(has(z1, "# set CUDA_DEVICE_MAX_CONNECTIONS=1: validate_args"));
  CHECK(has(z1, "--overlap-grad-reduce"));
  // Priced for the Megatron-LM of 2020-2022 (reduction after the
  // backward): the flag stays off.
  p.runtime = "megatron-lm";
  CHECK_FALSE(
      has(exported(p, ExportTarget::Megatron), "--overlap-grad-reduce"));
  // No data parallelism: nothing to reduce.
  p.runtime = "megatron-core";
  p.dp = 1;
  p.globalBatch = p.microBatch * p.numMicroBatches;
  CHECK_FALSE(
      has(exported(p, ExportTarget::Megatron), "--overlap-grad-reduce"));
}

TEST_CASE("DeepSpeed config of a pipeline plan", "[export]") {
  Plan p = gpt3();
  p.sequenceParallel = false;
  // AutoTP does not join the PipelineEngine's grid: tp with pp is refused.
  auto tpPp = exportPlan(p, ExportTarget::DeepSpeed, "plan.json");
  REQUIRE_FALSE(tpPp.isOk());
  CHECK_THAT(tpPp.message(),
             Catch::Contains("tp 8 with pp 12: the PipelineEngine's grid "
                             "comes from PipelineModule (pipe x data), which "
                             "AutoTP (tensor_parallel.autotp_size) does not "
                             "join, so its data-parallel size would be 128, "
                             "not 16"));
  p.tp = 1;
  auto r = exportPlan(p, ExportTarget::DeepSpeed, "plan.json");
  REQUIRE(r.isOk());
  CHECK(r->text == "{\n"
                   "  \"train_batch_size\": 1536,\n"
                   "  \"train_micro_batch_size_per_gpu\": 1,\n"
                   "  \"gradient_accumulation_steps\": 96,\n"
                   "  \"gradient_clipping\": 1.0,\n"
                   "  \"bf16\": {\n"
                   "    \"enabled\": true\n"
                   "  },\n"
                   "  \"zero_optimization\": {\n"
                   "    \"stage\": 1,\n"
                   "    \"overlap_comm\": true,\n"
                   "    \"reduce_bucket_size\": 500000000\n"
                   "  },\n"
                   "  \"activation_checkpointing\": {\n"
                   "    \"partition_activations\": false,\n"
                   "    \"cpu_checkpointing\": false,\n"
                   "    \"contiguous_memory_optimization\": false,\n"
                   "    \"number_checkpoints\": 8,\n"
                   "    \"synchronize_checkpoint_boundary\": false,\n"
                   "    \"profile\": false\n"
                   "  }\n"
                   "}\n");
  CHECK_FALSE(r->notesInText);
  // The figures of a megatron-lm plan do not overlap the reduction; no
  // recomputation, no activation_checkpointing.
  p.runtime = "megatron-lm";
  p.recompute = Recompute::None;
  for (StagePlan &st : p.stages)
    st.recompute = Recompute::None;
  auto plain = exportPlan(p, ExportTarget::DeepSpeed, "plan.json");
  REQUIRE(plain.isOk());
  CHECK_FALSE(has(plain->text, "overlap_comm"));
  CHECK_FALSE(has(plain->text, "activation_checkpointing"));
  CHECK(has(plain->text, "\"reduce_bucket_size\": 500000000"));
  bool stagesNote = false;
  for (const std::string &n : r->notes)
    stagesNote |= has(n, "PipelineModule(layers=..., num_stages=12");
  CHECK(stagesNote);
}

TEST_CASE("DeepSpeed AutoTP leaves train_batch_size to DeepSpeed", "[export]") {
  // Without an mpu DeepSpeedConfig's world size is every GPU: the plan's
  // global batch would fail its micro * gas * world check.
  Plan p = gpt3();
  p.sequenceParallel = false;
  p.pp = 1;
  p.layersPerChunk = {96};
  p.stages.resize(1);
  auto r = exportPlan(p, ExportTarget::DeepSpeed, "plan.json");
  INFO((r ? std::string() : r.message()));
  REQUIRE(r.isOk());
  CHECK(r->text.rfind("{\n  \"train_micro_batch_size_per_gpu\": 1,\n"
                      "  \"gradient_accumulation_steps\": 96,\n",
                      0) == 0);
  CHECK(has(r->text, "\"autotp_size\": 8"));
  bool why = false;
  for (const std::string &n : r->notes)
    why |= has(n, "train_batch_size is left out: without an mpu DeepSpeed "
                  "counts all 128 GPUs as data-parallel and would reject "
                  "1536 != 1 * 96 * 128");
  CHECK(why);
}

TEST_CASE("DeepSpeed ZeRO-3 holds the gathers the prediction holds",
          "[export]") {
  Plan p = gpt3();
  p.pp = 1, p.tp = 1, p.dp = 1536;
  p.numMicroBatches = 1;
  p.sequenceParallel = false;
  p.zeroStage = 3;
  p.layersPerChunk = {96};
  p.stages.resize(1);
  p.stages[0].zero3GatherElements = 1812.5e6;
  auto r = exportPlan(p, ExportTarget::DeepSpeed, "plan.json");
  INFO((r ? std::string() : r.message()));
  REQUIRE(r.isOk());
  CHECK(has(r->text, "\"stage3_prefetch_bucket_size\": 1812500000,"));
  CHECK(has(r->text, "\"stage3_max_live_parameters\": 3625000000"));
  // DeepSpeed of 2021 gathered on use: nothing fetched ahead.
  p.runtime = "deepspeed";
  r = exportPlan(p, ExportTarget::DeepSpeed, "plan.json");
  REQUIRE(r.isOk());
  CHECK(has(r->text, "\"stage3_prefetch_bucket_size\": 0,"));
  // A plan from before the field: DeepSpeed's defaults, and a note.
  p.stages[0].zero3GatherElements = 0;
  r = exportPlan(p, ExportTarget::DeepSpeed, "plan.json");
  REQUIRE(r.isOk());
  CHECK_FALSE(has(r->text, "stage3_"));
  bool noted = false;
  for (const std::string &n : r->notes)
    noted |= has(n, "the plan records no ZeRO-3 gather size");
  CHECK(noted);
}

TEST_CASE("torchtitan configuration module", "[export]") {
  Plan p = gpt3();
  p.zeroStage = 3;
  p.pp = 2;
  p.dp = 96;
  p.numMicroBatches = 16;
  p.layersPerChunk = {47, 49};
  p.stages.resize(2);
  std::string t = exported(p, ExportTarget::TorchTitan);
  // Without the model: the settings as a function of a Trainer.Config.
  CHECK(has(t, "from torchtitan.distributed.activation_checkpoint import "
               "FullAC\n"
               "from torchtitan.trainer import Trainer\n\n\n"
               "def apply_plan(config: Trainer.Config) -> Trainer.Config:\n"));
  CHECK(has(t, "    config.parallelism.data_parallel_replicate_degree = 1\n"
               "    config.parallelism.data_parallel_shard_degree = 96\n"
               // ZeRO-3 with stages: torchtitan's default would not reshard.
               "    config.parallelism.fsdp_reshard_after_forward = "
               "\"always\"\n"
               "    config.parallelism.tensor_parallel_degree = 8\n"
               "    config.parallelism.enable_sequence_parallel = True\n"
               "    config.parallelism.context_parallel_degree = 1\n"
               "    config.parallelism.expert_parallel_degree = 1\n"
               "    config.parallelism.pipeline_parallel_degree = 2\n"
               "    config.parallelism.pipeline_parallel_schedule = "
               "\"1F1B\"\n"
               "    config.parallelism.num_pp_microbatches = 16\n"
               "    config.parallelism.module_fqns_per_model_part = [\n"
               "        [\"tok_embeddings\", \"layers.0\""));
  CHECK(has(t, "\"layers.46\"],\n        [\"layers.47\""));
  CHECK(has(t, "\"layers.95\", \"norm\", \"lm_head\"],\n    ]\n"));
  CHECK(has(t, "    config.training.num_tokens_per_microbatch_per_dp_rank = "
               "2048\n"
               "    config.training.num_tokens_per_train_step = 3145728\n"
               "    config.training.max_context_length = 2048\n"
               "    config.training.mixed_precision_param = \"bfloat16\"\n"
               "    config.activation_checkpoint = FullAC.Config()\n"
               "    config.compile.enable = False\n"
               "    config.compile.enable_async_tensor_parallel = False\n"
               "    return config\n"));
  CHECK_FALSE(has(t, "def trident_plan"));
  CHECK(has(t, "# launch on 1536 GPUs (dp * tp * pp * cp): the model is not "
               "known"));
  // Without stages the default policy reshards: nothing to write.
  Plan one = asOneStageZero3(gpt3());
  CHECK_FALSE(has(exported(one, ExportTarget::TorchTitan), "reshard"));
  one.zeroStage = 2;
  CHECK(has(exported(one, ExportTarget::TorchTitan),
            "fsdp_reshard_after_forward = \"never\"\n"));
  one.recompute = Recompute::None;
  std::string none = exported(one, ExportTarget::TorchTitan);
  CHECK(has(none, "    config.activation_checkpoint = None\n"));
  CHECK_FALSE(has(none, "import FullAC"));
}

TEST_CASE("fp32 plans export to every target", "[export]") {
  // fp32 is each target's default: Megatron-LM without --bf16 / --fp16,
  // DeepSpeed without a bf16 / fp16 section, torchtitan's float32.
  Plan p = gpt3();
  p.precision = "fp32";
  p.sequenceParallel = false;
  std::string m = exported(p, ExportTarget::Megatron);
  CHECK_FALSE(has(m, "--bf16"));
  CHECK_FALSE(has(m, "--fp16"));
  CHECK(has(m, "--tensor-model-parallel-size 8"));
  Plan noTp = p; // DeepSpeed runs no tp with pp
  noTp.tp = 1;
  std::string d = exported(noTp, ExportTarget::DeepSpeed);
  CHECK_FALSE(has(d, "bf16"));
  CHECK_FALSE(has(d, "fp16"));
  CHECK(has(d, "\"zero_optimization\""));
  std::string t = exported(asOneStageZero3(p), ExportTarget::TorchTitan);
  CHECK(has(t, "mixed_precision_param = \"float32\"\n"));
  CHECK_FALSE(has(t, "bfloat16"));
}

TEST_CASE("plans a target cannot express are errors", "[export]") {
  // Stages on two node groups: no target places stages on node groups.
  Plan h = gpt3();
  h.stages[11].deviceGroup = "h100";
  h.stages[11].gpu = "h100-sxm";
  for (ExportTarget t : {ExportTarget::Megatron, ExportTarget::DeepSpeed,
                         ExportTarget::TorchTitan}) {
    auto r = exportPlan(h, t, "mixed.json");
    REQUIRE_FALSE(r.isOk());
    CHECK(has(r.message(), "mixed.json: cannot export to "));
    CHECK(has(r.message(), "node group 'h100'"));
  }
  // GPipe in Megatron-LM.
  Plan g = gpt3();
  g.schedule = ScheduleKind::GPipe;
  auto rg = exportPlan(g, ExportTarget::Megatron, "plan.json");
  REQUIRE_FALSE(rg.isOk());
  CHECK(has(rg.message(), "schedule 'gpipe'"));
  // Uneven stages in DeepSpeed.
  Plan u = gpt3();
  u.sequenceParallel = false;
  u.tp = 1;
  u.layersPerChunk = {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 9};
  auto ru = exportPlan(u, ExportTarget::DeepSpeed, "plan.json");
  REQUIRE_FALSE(ru.isOk());
  CHECK(has(ru.message(), "uneven pipeline stages"));
  // ZeRO 2 with a pipeline in DeepSpeed; ZeRO 1 in torchtitan.
  Plan z = gpt3();
  z.sequenceParallel = false;
  z.zeroStage = 2;
  CHECK(has(exportPlan(z, ExportTarget::DeepSpeed).message(),
            "ZeRO stage 2 with pp 12"));
  CHECK(has(exportPlan(gpt3(), ExportTarget::TorchTitan).message(),
            "ZeRO stage 1"));
  // Interleaving in DeepSpeed.
  Plan v = gpt3();
  v.sequenceParallel = false;
  v.vpp = 2;
  v.schedule = ScheduleKind::Interleaved1F1B;
  v.layersPerChunk.assign(24, 4);
  CHECK(has(exportPlan(v, ExportTarget::DeepSpeed).message(),
            "virtual pipeline stages (vpp 2): DeepSpeed's PipelineEngine"));
  // An interleaved schedule without virtual stages is malformed.
  v.vpp = 1;
  v.layersPerChunk.assign(12, 8);
  CHECK(has(exportPlan(v, ExportTarget::Megatron).message(),
            "schedule 'interleaved-1f1b' does not match vpp 1"));
  // GPipe: the table's schedule row for DeepSpeed names the value.
  v.schedule = ScheduleKind::GPipe;
  CHECK(has(exportPlan(v, ExportTarget::DeepSpeed).message(),
            "schedule 'gpipe': DeepSpeed's PipelineEngine runs only its 1F1B"));
}

TEST_CASE("Megatron-LM launch scripts", "[export]") {
  Plan p = gpt3(); // 1536 GPUs
  p.gpusPerNode = 8;
  frontend::ModelConfig model; // a decoder language model
  auto script = [&](Launcher l, const frontend::ModelConfig *m) {
    return exportPlan(p, ExportTarget::Megatron, "plan.json", m, l);
  };
  // Slurm: the plan's GPUs as whole nodes, one torchrun task per node.
  auto slurm = script(Launcher::Slurm, &model);
  INFO((slurm ? std::string() : slurm.message()));
  REQUIRE(slurm.isOk());
  const std::string &t = slurm->text;
  CHECK(t.rfind("#!/bin/bash\n#SBATCH --job-name=trident-gpt3_175b\n"
                "#SBATCH --nodes=192\n#SBATCH --ntasks-per-node=1\n"
                "#SBATCH --gpus-per-node=8\n",
                0) == 0);
  CHECK(has(t, "export CUDA_DEVICE_MAX_CONNECTIONS=1\n")); // tp 8
  CHECK(has(t, "--nproc-per-node 8"));
  CHECK(has(t, "\"$MEGATRON_LM/pretrain_gpt.py\" \\\n  --num-layers 96 \\\n"));
  CHECK_FALSE(has(t, "# set CUDA_DEVICE_MAX_CONNECTIONS=1")); // set, not said
  // The last argument ends the command.
  CHECK(t.substr(t.size() - 2) != "\\\n");

  // torchrun is one node: refused for 192.
  auto one = script(Launcher::Torchrun, &model);
  REQUIRE_FALSE(one.isOk());
  CHECK(has(one.message(), "use --launcher slurm"));
  // Without the model (no architecture flags) or for a model
  // pretrain_gpt.py does not build, no script.
  auto noModel = script(Launcher::Slurm, nullptr);
  REQUIRE_FALSE(noModel.isOk());
  CHECK(has(noModel.message(), "give --model"));
  frontend::ModelConfig bert;
  bert.family = frontend::ModelFamily::EncoderLM;
  auto enc = script(Launcher::Slurm, &bert);
  REQUIRE_FALSE(enc.isOk());
  CHECK(has(enc.message(), "decoder language models"));
  // Node size unknown (node groups differ, or an older plan): refused.
  p.gpusPerNode = 0;
  auto unknown = script(Launcher::Slurm, &model);
  REQUIRE_FALSE(unknown.isOk());
  CHECK(has(unknown.message(), "GPUs per node"));
  // GPUs that are not whole nodes.
  p.gpusPerNode = 7;
  auto partial = script(Launcher::Slurm, &model);
  REQUIRE_FALSE(partial.isOk());
  CHECK(has(partial.message(), "not whole nodes of 7"));
  // torchtitan's launch line is held to the same whole nodes.
  auto titan =
      exportPlan(asOneStageZero3(p), ExportTarget::TorchTitan, "plan.json");
  REQUIRE_FALSE(titan.isOk());
  CHECK(has(titan.message(), "cannot write torchtitan's launch: the plan's "
                             "1536 GPUs are not whole nodes of 7"));
  // Other targets take no launcher.
  p.gpusPerNode = 8;
  auto ds = exportPlan(p, ExportTarget::TorchTitan, "plan.json", &model,
                       Launcher::Torchrun);
  REQUIRE_FALSE(ds.isOk());
  CHECK(
      has(ds.message(),
          "--launcher writes Megatron-LM and Megatron-Bridge launch scripts"));
  CHECK(*parseLauncher("slurm") == Launcher::Slurm);
  CHECK(*parseLauncher("") == Launcher::None);
  CHECK_FALSE(parseLauncher("mpirun").isOk());
}

TEST_CASE("torchtitan's flavours are the distilled list", "[export]") {
  // scripts/distill-export-flags.sh wrote what torchtitan ships at the pin;
  // the table is its decoder models (layers, width and vocabulary known).
  std::ifstream in(std::string(TRIDENT_SOURCE_DIR) +
                   "/test/data/export-flags/torchtitan-models.txt");
  REQUIRE(in);
  auto num = [](const std::string &v) -> int64_t {
    return v == "-" ? 0 : std::stoll(v);
  };
  std::set<std::string> distilled, table;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream fields(line);
    std::string module, flavour, config;
    fields >> module >> flavour >> config;
    std::map<std::string, int64_t> size;
    for (std::string kv; fields >> kv;)
      size[kv.substr(0, kv.find('='))] = num(kv.substr(kv.find('=') + 1));
    if (!size["layers"] || !size["dim"] || !size["vocab"])
      continue;
    config = config.substr(std::string("config=").size());
    distilled.insert(
        module + " " + flavour + " " + (config == "-" ? "" : config) + " " +
        std::to_string(size["layers"]) + " " + std::to_string(size["dim"]) +
        " " + std::to_string(size["heads"]) + " " +
        std::to_string(size["kv_heads"]) + " " + std::to_string(size["vocab"]) +
        " " + std::to_string(size["experts"]) + " " +
        std::to_string(size["top_k"]));
  }
  for (const TorchTitanFlavour &f : torchTitanFlavours())
    table.insert(std::string(f.module) + " " + f.flavour + " " + f.config +
                 " " + std::to_string(f.layers) + " " + std::to_string(f.dim) +
                 " " + std::to_string(f.heads) + " " +
                 std::to_string(f.kvHeads) + " " + std::to_string(f.vocab) +
                 " " + std::to_string(f.experts) + " " +
                 std::to_string(f.topK));
  CHECK(distilled.size() >= 20);
  CHECK(table == distilled);
}

TEST_CASE("the Megatron-Bridge translation is Megatron-Bridge's own",
          "[export]") {
  // scripts/distill-export-flags.sh wrote, at the pin, the keys the vanilla
  // GPT recipe's overrides can set (megatron-bridge.txt) and
  // translate_mlm_to_bridge.py's ARG_MAP (megatron-bridge-map.txt).
  auto lines = [](const char *name) {
    std::ifstream in(std::string(TRIDENT_SOURCE_DIR) +
                     "/test/data/export-flags/" + name);
    REQUIRE(in);
    std::vector<std::vector<std::string>> out;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#')
        continue;
      std::istringstream words(line);
      std::vector<std::string> w;
      for (std::string x; words >> x;)
        w.push_back(x);
      out.push_back(w);
    }
    return out;
  };
  std::set<std::string> keys;
  for (const auto &w : lines("megatron-bridge.txt"))
    keys.insert(w[0]);
  std::map<std::string, std::pair<std::string, std::string>> argMap;
  for (const auto &w : lines("megatron-bridge-map.txt")) {
    REQUIRE(w.size() == 3);
    argMap[w[0]] = {w[1], w[2]};
  }
  REQUIRE(keys.count("model.tensor_model_parallel_size"));
  REQUIRE(argMap.size() > 100);
  std::set<std::string> flags;
  for (const BridgeOverrideRule &r : megatronBridgeRules()) {
    INFO(r.flag << " -> " << r.key << " (" << r.how << ")");
    CHECK(flags.insert(std::string(r.flag)).second); // one row a flag
    const bool keyed = r.how == "value" || r.how == "true" ||
                       r.how == "false" || r.how == "path" ||
                       r.how == "layer_list" || r.how == "seq_length";
    if (keyed)
      CHECK(keys.count(std::string(r.key)));
    else
      CHECK((r.key.empty() || r.key == "mixed_precision"));
    auto it = argMap.find(std::string(r.flag));
    if (it == argMap.end())
      continue; // not in ARG_MAP: the key alone is checked
    const auto &[path, transform] = it->second;
    if (r.how == "value" || r.how == "layer_list") {
      CHECK(path == r.key);
      CHECK((transform == "-" || transform == "alias"));
    } else if (r.how == "true") {
      CHECK(path == r.key);
      CHECK(transform == "flag");
    } else if (r.how == "false") {
      CHECK(path == r.key);
      CHECK(transform == "flag_invert");
    } else if (r.how == "path") {
      CHECK(path == r.key);
      CHECK((transform == "-" || transform == "data_path"));
    } else if (r.how == "precision") {
      CHECK(path.rfind("mixed_precision", 0) == 0);
    } else if (r.how == "skip") {
      // ARG_MAP skips it too, or maps it to a key the recipe lacks
      CHECK((transform == "skip" || !keys.count(path)));
    } else {
      CHECK(transform == r.how); // swiglu, squared_relu, seq_length
    }
  }
  // The recipes the exporter names are registered at the pin.
  for (const char *mp :
       {"mixed_precision=bf16_mixed", "mixed_precision=fp16_mixed",
        "mixed_precision=bf16_with_fp8_delayed_scaling_mixed",
        "mixed_precision=bf16_with_fp8_current_scaling_mixed",
        "mixed_precision=bf16_with_fp8_subchannel_scaling_mixed",
        "mixed_precision=bf16_with_mxfp8_mixed"})
    CHECK(keys.count(mp));
}

TEST_CASE("torchtitan runs the models it ships", "[export]") {
  auto zoo = [](const char *name) {
    auto m = frontend::zooModel(name);
    REQUIRE(m.isOk());
    return *m;
  };
  auto file = [](const char *name) {
    auto m = frontend::loadHFConfigFile(
        std::string(TRIDENT_SOURCE_DIR) + "/test/data/models/" + name, nullptr);
    REQUIRE(m.isOk());
    return *m;
  };
  auto flavour = [](const frontend::ModelConfig &m) {
    const TorchTitanFlavour *f = torchTitanFlavourOf(m);
    return f ? std::string(f->module) + " " + f->flavour : std::string("-");
  };
  CHECK(flavour(zoo("llama-3-8b")) == "llama3 8B");
  CHECK(flavour(zoo("llama-3-70b")) == "llama3 70B");
  CHECK(flavour(zoo("llama-3.1-405b")) == "llama3 405B");
  CHECK(flavour(file("qwen3-8b.json")) == "qwen3 8B");
  CHECK(flavour(file("qwen3-30b-a3b.json")) == "qwen3 30B-A3B");
  CHECK(flavour(file("deepseek-v3.json")) == "deepseek_v3 671B");
  CHECK(flavour(file("gpt-oss-20b.json")) == "gpt_oss 20b");
  CHECK(flavour(zoo("mixtral-8x7b")) == "-");
  CHECK(flavour(zoo("gpt3-175b")) == "-");
  CHECK(flavour(zoo("llama-2-7b")) == "-");

  // Export: the flavour and its config in the header; another model is
  // refused, naming the closest torchtitan has.
  Plan p = asOneStageZero3(gpt3());
  p.gpusPerNode = 8;
  frontend::ModelConfig gpt = zoo("gpt3-175b");
  auto refused = exportPlan(p, ExportTarget::TorchTitan, "plan.json", &gpt);
  REQUIRE_FALSE(refused.isOk());
  CHECK(refused.message() ==
        "plan.json: cannot export to torchtitan: the model: torchtitan (at "
        "b5bcd76c) has no model of gpt3_175b's shape (96 layers, hidden "
        "12288, vocabulary 51200); its closest is llama3 405B (126 layers, "
        "hidden 16384): add the model to torchtitan first, or export to "
        "Megatron-LM");
  frontend::ModelConfig mixtral = zoo("mixtral-8x7b");
  auto moe = exportPlan(p, ExportTarget::TorchTitan, "plan.json", &mixtral);
  REQUIRE_FALSE(moe.isOk());
  CHECK(has(moe.message(), "8 experts); its closest is"));
  frontend::ModelConfig llama = zoo("llama-3-70b");
  auto ok = exportPlan(p, ExportTarget::TorchTitan, "plan.json", &llama);
  REQUIRE(ok.isOk());
  CHECK(has(ok->text, "# model: torchtitan.models.llama3 flavour 70B, from "
                      "its config llama3_70b()\n"));
  CHECK(has(ok->text, "# launch on 192 nodes of 8 GPUs: on each, torchrun "
                      "--nnodes 192 --nproc-per-node 8"));
  CHECK(has(ok->text, "-m torchtitan.train --module trident_plan --config "
                      "trident_plan\n"));
  CHECK(has(ok->text, "from torchtitan.models.llama3.config_registry import "
                      "llama3_70b\n"));
  CHECK(has(ok->text, "\n\ndef trident_plan() -> Trainer.Config:\n"
                      "    config = llama3_70b()\n"
                      "    return apply_plan(config)\n"));
  // A flavour without a config of its own: the model's first config, with
  // the flavour's model spec.
  auto qwen = file("qwen3-8b.json");
  Plan q = p;
  q.model = "qwen3_8b";
  auto qt = exportPlan(q, ExportTarget::TorchTitan, "plan.json", &qwen);
  REQUIRE(qt.isOk());
  CHECK(has(qt->text, "# model: torchtitan.models.qwen3 flavour 8B, which has "
                      "no config of its own: qwen3_0_6b() with "
                      "model_registry(\"8B\")\n"));
  CHECK(has(qt->text, "from torchtitan.models.qwen3 import model_registry\n"
                      "from torchtitan.models.qwen3.config_registry import "
                      "qwen3_0_6b\n"));
  CHECK(has(qt->text, "    config = qwen3_0_6b()\n"
                      "    config.model_spec = model_registry(\"8B\")\n"
                      "    return apply_plan(config)\n"));
}
