//===- ValidatePlanCommand.cpp - trident validate-plan --------------------===//
//
// `trident validate-plan --plan plan.json [--schema schema.json]`: holds a
// plan (trident plan -o) or a plan list (trident plan --json) against the
// trident.plan/v1 JSON Schema (docs/plan-schema.json, compiled in; --schema
// takes another file) and, for a single plan, against the reader's own
// consistency checks (layers_per_chunk has pp*vpp entries, ...).
//
// Exit codes: 0 the plan conforms; 1 it does not (every violation is
// printed with its JSON path) or a file cannot be read; 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "trident/Plan/SchemaValidator.h"
#include "trident/Support/FileIO.h"

#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

namespace cl = llvm::cl;

namespace trident::tool {

cl::SubCommand validatePlanCmd(
    "validate-plan",
    "Check a plan JSON against the trident.plan/v1 schema");

namespace {
cl::opt<std::string> planFileOpt("plan",
                                 cl::desc("plan.json (trident plan -o) or a "
                                          "plan list (trident plan --json)"),
                                 cl::value_desc("file"),
                                 cl::sub(validatePlanCmd), cl::cat(category));
cl::opt<std::string> schemaFileOpt(
    "schema",
    cl::desc("JSON Schema to use (default: the built-in "
             "docs/plan-schema.json)"),
    cl::value_desc("file"), cl::sub(validatePlanCmd), cl::cat(category));
} // namespace

int runValidatePlan() {
  if (planFileOpt.empty())
    return fail("validate-plan needs --plan FILE", 2);
  Result<std::string> text = readFile(planFileOpt);
  if (!text)
    return fail(text.message());
  std::string schemaName = "built-in docs/plan-schema.json";
  std::string schemaText(plan::planSchemaText());
  if (!schemaFileOpt.empty()) {
    Result<std::string> s = readFile(schemaFileOpt);
    if (!s)
      return fail(s.message());
    schemaText = std::move(*s);
    schemaName = schemaFileOpt;
  }
  auto schema = plan::JsonSchema::parse(schemaText, schemaName);
  if (!schema)
    return fail(schema.message());
  auto errors = schema->validate(*text, planFileOpt.getValue());
  if (!errors)
    return fail(errors.message());
  if (!errors->empty()) {
    std::string msg = planFileOpt + " does not match " + schemaName + ":";
    for (const std::string &e : *errors)
      msg += "\n  " + e;
    return fail(msg);
  }
  // What the schema cannot say (sizes that must agree): the reader's
  // checks, on the plan or on every plan of a list.
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  bool list = j.is_object() && j.contains("plans");
  std::vector<std::string> plans;
  if (list)
    for (const nlohmann::json &p : j["plans"])
      plans.push_back(p.dump());
  else
    plans.push_back(*text);
  for (size_t i = 0; i < plans.size(); ++i) {
    std::string where = planFileOpt + (list ? " plans[" + std::to_string(i) +
                                                  "]"
                                            : std::string());
    auto p = plan::parsePlanJson(plans[i], where);
    if (!p)
      return fail(p.message());
  }
  llvm::outs() << planFileOpt << ": conforms to " << schemaName
               << " and reads back (" << plans.size()
               << (plans.size() == 1 ? " plan)" : " plans)") << "\n";
  return 0;
}

} // namespace trident::tool
