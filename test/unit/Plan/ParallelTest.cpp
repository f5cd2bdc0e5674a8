//===- ParallelTest.cpp - The axis table and its readers and writers ------===//

#include "trident/Plan/Parallel.h"
#include "trident/Plan/ParallelJson.h"
#include "trident/Search/Pins.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <set>
#include <string>

using namespace trident;
using Json = nlohmann::ordered_json;

namespace {

/// A value of every axis other than its default (etp: other than tp).
ParallelAxes everyAxisSet() {
  ParallelAxes a;
  a.dp = 3, a.tp = 4, a.pp = 5, a.cp = 2, a.ep = 6, a.etp = 2, a.vpp = 7;
  a.microBatch = 9;
  a.sequenceParallel = true;
  a.recompute = Recompute::Selective;
  a.zeroStage = 2;
  a.schedule = ScheduleKind::GPipe;
  a.cpCommType = CpCommType::AllGather;
  return a;
}

} // namespace

TEST_CASE("the axis table names every axis once", "[plan][parallel]") {
  std::set<std::string_view> names, keys, flags;
  for (const AxisSpec &a : kAxes) {
    CHECK(names.insert(a.name).second);
    CHECK(keys.insert(a.jsonKey).second);
    CHECK(flags.insert(a.flag).second);
    // Every spelling leads back to its row.
    CHECK(findAxis(a.name) == &a);
    CHECK(findAxis(a.jsonKey) == &a);
  }
  CHECK(findAxis("micro_batch") == &axisSpec(Axis::MicroBatch));
  CHECK(findAxis("zero_stage") == &axisSpec(Axis::Zero));
  CHECK(findAxis("sequence-parallel") == &axisSpec(Axis::Sp));
  CHECK(findAxis("nonsense") == nullptr);
  // The keys every JSON spells (issue 31: they used to disagree).
  CHECK(axisSpec(Axis::MicroBatch).jsonKey == "micro_batch_size");
  CHECK(axisSpec(Axis::Zero).jsonKey == "zero_stage");
  CHECK(axisSpec(Axis::Etp).inParallelObject);
}

TEST_CASE("the plan layout round-trips every axis", "[plan][parallel]") {
  ParallelAxes in = everyAxisSet();
  Json j;
  writeAxesJson(j, in);
  CHECK(j["parallel"]["etp"] == 2);
  CHECK(j["parallel"]["sequence_parallel"] == true);
  CHECK(j["micro_batch_size"] == 9);
  CHECK(j["recompute"] == "selective");
  CHECK(j["zero_stage"] == 2);
  CHECK(j["schedule"] == "gpipe");
  ParallelAxes out;
  REQUIRE(readAxesJson(j, out, AxesLayout::Plan, "p.json").isOk());
  CHECK(out == in);
  // etp written resolved: 0 ("follows tp") is written as tp and reads
  // back as 0.
  in.etp = 0;
  Json k;
  writeAxesJson(k, in);
  CHECK(k["parallel"]["etp"] == 4);
  ParallelAxes back;
  REQUIRE(readAxesJson(k, back, AxesLayout::Plan, "p.json").isOk());
  CHECK(back.etp == 0);
  CHECK(back == in);
}

TEST_CASE("the flat layout reads aliases and defaults", "[plan][parallel]") {
  // shared/validation/cases.json spells "micro_batch" and "zero".
  Json j = Json::parse(R"({"tp": 8, "pp": 4, "dp": 2, "micro_batch": 2,
                           "zero": 1, "vpp": null, "recompute": "full"})");
  ParallelAxes a;
  REQUIRE(readAxesJson(j, a, AxesLayout::Flat, "cases.json").isOk());
  CHECK(a.tp == 8);
  CHECK(a.microBatch == 2);
  CHECK(a.zeroStage == 1);
  CHECK(a.vpp == 1); // null: the default
  CHECK(a.recompute == Recompute::Full);
  CHECK(!a.schedule); // absent: derived from vpp
}

TEST_CASE("axis readers name the field and what was expected",
          "[plan][parallel]") {
  auto readErr = [](const char *text, AxesLayout layout) {
    ParallelAxes a;
    Status s = readAxesJson(Json::parse(text), a, layout, "f.json");
    REQUIRE_FALSE(s.isOk());
    return s.message();
  };
  CHECK(readErr(R"({"tp": "8"})", AxesLayout::Flat) ==
        "f.json: 'tp' must be an integer");
  CHECK(readErr(R"({"zero": 4})", AxesLayout::Flat) ==
        "f.json: 'zero' must be in [0, 3], got 4");
  CHECK(readErr(R"({"recompute": "most"})", AxesLayout::Flat) ==
        "f.json: 'recompute': expected none, selective or full, got 'most'");
  CHECK(readErr(R"({"sequence_parallel": 1})", AxesLayout::Flat) ==
        "f.json: 'sequence_parallel' must be true or false");
  CHECK(readErr(R"({"parallel": {"dp": 1}})", AxesLayout::Plan) ==
        "f.json: missing field 'parallel.tp'");
  CHECK(readErr(R"({"parallel": 3})", AxesLayout::Plan) ==
        "f.json: 'parallel' must be an object");
}

TEST_CASE("values parse and print by the row", "[plan][parallel]") {
  const AxisSpec &tp = axisSpec(Axis::Tp);
  CHECK(*parseAxisValue(tp, "8") == 8);
  CHECK(parseAxisValue(tp, "0").message() ==
        "expected an integer from 1 to 16777216, got '0'");
  CHECK(!parseAxisValue(tp, "8x").isOk());
  CHECK(*parseAxisValue(axisSpec(Axis::Sp), "on") == 1);
  CHECK(*parseAxisValue(axisSpec(Axis::Recompute), "block") ==
        int64_t(Recompute::Full));
  CHECK(*parseAxisValue(axisSpec(Axis::Schedule), "interleaved-1f1b") ==
        int64_t(ScheduleKind::Interleaved1F1B));
  CHECK(axisValueText(axisSpec(Axis::Schedule), 0) == "gpipe");
  CHECK(axisValueText(axisSpec(Axis::Sp), 1) == "true");
}

TEST_CASE("runtimes run only what their column allows", "[plan][parallel]") {
  ParallelAxes a;
  for (size_t r = 0; r < kRuntimeCount; ++r)
    CHECK(runtimeAxisRefusal(a, Runtime(r)).empty()); // defaults run anywhere
  a.cp = 2;
  CHECK(runtimeAxisRefusal(a, Runtime::MegatronCore).empty());
  CHECK(runtimeAxisRefusal(a, Runtime::Torchtitan).empty());
  CHECK(runtimeAxisRefusal(a, Runtime::Fsdp) ==
        "cp 2: PyTorch FSDP has no context parallelism");
  CHECK(runtimeAxisRefusal(a, Runtime::MegatronLm) ==
        "cp 2: Megatron-LM before Megatron-Core has no context parallelism");
  ParallelAxes z;
  z.zeroStage = 1;
  CHECK(runtimeAxisRefusal(z, Runtime::Torchtitan) ==
        "zero 1: torchtitan has no optimizer-only sharding (ZeRO 1)");
  z.zeroStage = 3;
  CHECK(runtimeAxisRefusal(z, Runtime::Torchtitan).empty());
  CHECK(!runtimeAxisRefusal(z, Runtime::MegatronLm).empty());
  // The programs `trident emit` writes run every axis (context parallelism
  // as an all-gather of K and V).
  CHECK(runtimeAxisRefusal(everyAxisSet(), Runtime::Trident).empty());
  ParallelAxes ring = everyAxisSet();
  ring.cpCommType = CpCommType::P2p;
  CHECK(runtimeAxisRefusal(ring, Runtime::Trident) ==
        "cp_comm_type p2p: the programs trident emit writes all-gather K and "
        "V over cp (docs/emit.md)");
  // Without context parallelism the kind means nothing and nobody refuses
  // it (AxisSpec::applies).
  ring.cp = 1;
  CHECK(runtimeAxisRefusal(ring, Runtime::Trident).empty());
  ParallelAxes ulysses;
  ulysses.cp = 4;
  ulysses.cpCommType = CpCommType::A2a;
  CHECK(runtimeAxisRefusal(ulysses, Runtime::MegatronCore).empty());
  CHECK(runtimeAxisRefusal(ulysses, Runtime::Torchtitan) ==
        "cp_comm_type a2a: torchtitan's context parallelism (PyTorch's "
        "context_parallel) rotates K/V shards; it has no cp_comm_type 'a2a'");
}

TEST_CASE("exporters' single-axis refusals come from the table",
          "[plan][parallel]") {
  ParallelAxes a;
  a.cp = 2;
  CHECK(exportAxisRefusal(a, plan::ExportTarget::DeepSpeed) ==
        "context parallelism (cp 2): Trident writes no DeepSpeed sequence "
        "parallelism (DeepSpeed-Ulysses, the all-to-all over heads that "
        "cp_comm_type a2a prices, is the model code's DistributedAttention, "
        "not a config key; the ring and all-gather kinds have no DeepSpeed "
        "form)");
  CHECK(exportAxisRefusal(a, plan::ExportTarget::Megatron).empty());
  a.cp = 1;
  a.schedule = ScheduleKind::GPipe;
  CHECK(exportAxisRefusal(a, plan::ExportTarget::Megatron).find(
            "schedule 'gpipe'") == 0);
  a.schedule.reset();
  a.zeroStage = 1;
  CHECK(exportAxisRefusal(a, plan::ExportTarget::TorchTitan).find(
            "ZeRO stage 1") == 0);
}

TEST_CASE("every pinnable axis pins under its name", "[plan][parallel]") {
  ParallelAxes in = everyAxisSet();
  std::string spec;
  for (const AxisSpec &a : kAxes)
    if (a.pinnable)
      spec += (spec.empty() ? "" : ",") + std::string(a.name) + "=" +
              (a.type == AxisType::Bool ? std::to_string(a.get(in))
                                        : axisValueText(a, a.get(in)));
  // vpp 7 with gpipe contradicts; pin the interleaved schedule instead.
  in.schedule = ScheduleKind::Interleaved1F1B;
  const size_t at = spec.find(",schedule=gpipe");
  REQUIRE(at != std::string::npos);
  spec.replace(at, std::string(",schedule=gpipe").size(),
               ",schedule=interleaved-1f1b");
  auto pins = search::parsePins(spec);
  REQUIRE(pins.isOk());
  CHECK(search::formatPins(*pins) == spec);
  ParallelAxes out;
  out.etp = in.etp; // not pinnable
  pins->applyTo(out);
  CHECK(out == in);
}
