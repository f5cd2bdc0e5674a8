//===- SchemaValidator.h - A small JSON Schema (2020-12) validator -*- C++ -*-===//
//
// Enough of JSON Schema draft 2020-12 to hold plans against
// docs/plan-schema.json in tests and in `trident validate-plan`: type,
// enum, const, required, properties, additionalProperties, items,
// minItems/maxItems, minimum/maximum/exclusiveMinimum/exclusiveMaximum,
// minLength/maxLength, allOf/anyOf/oneOf, if/then/else, and local $ref into
// $defs. A schema that uses any other keyword is rejected when it is
// loaded, so a constraint is never silently unchecked.
//
// Violations name the JSON path of the offending value in the instance,
// `$.stages[2].memory.weights_bytes`, and what was expected.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_PLAN_SCHEMAVALIDATOR_H
#define TRIDENT_PLAN_SCHEMAVALIDATOR_H

#include "trident/Support/Status.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace trident::plan {

class JsonSchema {
public:
  /// Parses `text` as a schema and checks that it uses only the supported
  /// keywords, each with a value of the right shape, and that every $ref
  /// resolves. Errors name `source` and the schema location.
  static Result<JsonSchema> parse(std::string_view text,
                                  std::string_view source = "schema.json");

  /// The violations of `instanceText` (at most `maxErrors`), each
  /// "PATH: what is wrong"; empty when it conforms. An error when the text
  /// is not JSON at all (the message names `source`).
  Result<std::vector<std::string>>
  validate(std::string_view instanceText,
           std::string_view source = "instance.json",
           size_t maxErrors = 20) const;

  JsonSchema(JsonSchema &&) noexcept;
  JsonSchema &operator=(JsonSchema &&) noexcept;
  ~JsonSchema();

  struct Impl; ///< the parsed schema (internal)

private:
  JsonSchema();
  std::unique_ptr<Impl> impl_;
};

/// The text of docs/plan-schema.json, compiled into the library.
std::string_view planSchemaText();

/// Validates a plan (or a {"schema", "plans"} list) against the built-in
/// schema: ok, or an error naming `source` and listing the violations.
Status validatePlanAgainstSchema(std::string_view planText,
                                 std::string_view source = "plan.json");

} // namespace trident::plan

#endif // TRIDENT_PLAN_SCHEMAVALIDATOR_H
