//===- SchemaValidator.cpp - A small JSON Schema (2020-12) validator ------===//
//
// Two passes. Loading walks the whole schema once and rejects keywords it
// does not implement (a validator that skipped `pattern` or `prefixItems`
// would accept plans the schema forbids) and $refs that do not resolve.
// Validation is a recursive walk of schema and instance together that
// appends "PATH: message" lines; applicators that only ask a question
// (`if`, the branches of anyOf / oneOf) run against a scratch list.
//
//===----------------------------------------------------------------------===//

#include "trident/Plan/SchemaValidator.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <set>

namespace trident::plan {

using Json = nlohmann::json;

struct JsonSchema::Impl {
  Json root;
  std::string source;
};

JsonSchema::JsonSchema() : impl_(std::make_unique<Impl>()) {}
JsonSchema::JsonSchema(JsonSchema &&) noexcept = default;
JsonSchema &JsonSchema::operator=(JsonSchema &&) noexcept = default;
JsonSchema::~JsonSchema() = default;

namespace {

/// Nested $refs deeper than this are taken for a cycle.
constexpr int kMaxDepth = 256;

const std::set<std::string> &typeNames() {
  static const std::set<std::string> names = {
      "null", "boolean", "object", "array", "number", "string", "integer"};
  return names;
}

/// Resolves a local reference ("#" or "#/a/b/0", RFC 6901 escapes);
/// nullptr when it does not resolve.
const Json *resolveRef(const Json &root, const std::string &ref) {
  if (ref.empty() || ref[0] != '#')
    return nullptr;
  const Json *at = &root;
  size_t pos = 1;
  if (pos == ref.size())
    return at;
  if (ref[pos] != '/')
    return nullptr;
  while (pos < ref.size()) {
    size_t next = ref.find('/', pos + 1);
    std::string token =
        ref.substr(pos + 1, next == std::string::npos ? std::string::npos
                                                      : next - pos - 1);
    std::string unescaped;
    for (size_t i = 0; i < token.size(); ++i) {
      if (token[i] == '~' && i + 1 < token.size() &&
          (token[i + 1] == '0' || token[i + 1] == '1')) {
        unescaped += token[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        unescaped += token[i];
      }
    }
    if (at->is_object()) {
      auto it = at->find(unescaped);
      if (it == at->end())
        return nullptr;
      at = &*it;
    } else if (at->is_array()) {
      if (unescaped.empty() ||
          unescaped.find_first_not_of("0123456789") != std::string::npos ||
          unescaped.size() > 9)
        return nullptr;
      size_t idx = std::stoul(unescaped);
      if (idx >= at->size())
        return nullptr;
      at = &(*at)[idx];
    } else {
      return nullptr;
    }
    pos = next == std::string::npos ? ref.size() : next;
  }
  return at;
}

std::string escapePointer(const std::string &key) {
  std::string r;
  for (char c : key)
    r += c == '~' ? std::string("~0") : c == '/' ? std::string("~1")
                                                 : std::string(1, c);
  return r;
}

/// Checks the shape of every keyword of `s` (at schema location `where`).
Status checkSchema(const Json &root, const Json &s, const std::string &where,
                   const std::string &source) {
  auto err = [&](const std::string &what) {
    return Status::error(source + ": schema at '" + where + "': " + what);
  };
  if (s.is_boolean())
    return Status::ok();
  if (!s.is_object())
    return err("a schema must be an object or a boolean");
  auto sub = [&](const Json &child, const std::string &loc) {
    return checkSchema(root, child, loc, source);
  };
  auto nonNegInt = [](const Json &v) {
    return v.is_number_integer() && v.get<int64_t>() >= 0;
  };
  for (auto it = s.begin(); it != s.end(); ++it) {
    const std::string &k = it.key();
    const Json &v = it.value();
    const std::string loc = where + "/" + escapePointer(k);
    if (k == "$schema" || k == "$id" || k == "$comment" || k == "title" ||
        k == "description") {
      if (!v.is_string())
        return err("'" + k + "' must be a string");
    } else if (k == "default" || k == "examples") {
      // Annotations: any value.
    } else if (k == "$defs" || k == "properties") {
      if (!v.is_object())
        return err("'" + k + "' must be an object of schemas");
      for (auto d = v.begin(); d != v.end(); ++d)
        if (Status st = sub(d.value(), loc + "/" + escapePointer(d.key()));
            !st)
          return st;
    } else if (k == "$ref") {
      if (!v.is_string())
        return err("'$ref' must be a string");
      const Json *target = resolveRef(root, v.get<std::string>());
      if (!target)
        return err("'$ref' '" + v.get<std::string>() +
                   "' does not resolve (only local references '#/...' are "
                   "supported)");
    } else if (k == "type") {
      auto known = [](const Json &t) {
        return t.is_string() && typeNames().count(t.get<std::string>());
      };
      if (v.is_array()) {
        if (v.empty())
          return err("'type' must not be an empty list");
        for (const Json &t : v)
          if (!known(t))
            return err("'type' lists an unknown type " + t.dump());
      } else if (!known(v)) {
        return err("'type' must be one of null, boolean, object, array, "
                   "number, string, integer (or a list of them), got " +
                   v.dump());
      }
    } else if (k == "enum") {
      if (!v.is_array() || v.empty())
        return err("'enum' must be a non-empty array");
    } else if (k == "const") {
      // Any value.
    } else if (k == "required") {
      if (!v.is_array())
        return err("'required' must be an array of strings");
      std::set<std::string> seen;
      for (const Json &r : v) {
        if (!r.is_string())
          return err("'required' must be an array of strings");
        if (!seen.insert(r.get<std::string>()).second)
          return err("'required' names '" + r.get<std::string>() + "' twice");
      }
    } else if (k == "additionalProperties" || k == "items" || k == "if" ||
               k == "then" || k == "else" || k == "not") {
      if (k == "items" && v.is_array())
        return err("'items' must be a single schema in draft 2020-12 "
                   "(prefixItems is not supported)");
      if (Status st = sub(v, loc); !st)
        return st;
    } else if (k == "allOf" || k == "anyOf" || k == "oneOf") {
      if (!v.is_array() || v.empty())
        return err("'" + k + "' must be a non-empty array of schemas");
      for (size_t i = 0; i < v.size(); ++i)
        if (Status st = sub(v[i], loc + "/" + std::to_string(i)); !st)
          return st;
    } else if (k == "minItems" || k == "maxItems" || k == "minLength" ||
               k == "maxLength") {
      if (!nonNegInt(v))
        return err("'" + k + "' must be a non-negative integer");
    } else if (k == "minimum" || k == "maximum" || k == "exclusiveMinimum" ||
               k == "exclusiveMaximum") {
      if (!v.is_number())
        return err("'" + k + "' must be a number");
    } else {
      return err("keyword '" + k +
                 "' is not supported by this validator (see "
                 "include/trident/Plan/SchemaValidator.h)");
    }
  }
  return Status::ok();
}

/// Where violations go: a bounded list, or nowhere (count only).
struct Sink {
  std::vector<std::string> *out = nullptr;
  size_t max = 20;
  size_t count = 0;
  void add(const std::string &path, const std::string &what) {
    ++count;
    if (out && out->size() < max)
      out->push_back(path + ": " + what);
  }
  bool full() const { return out && out->size() >= max; }
};

std::string shortDump(const Json &v) {
  std::string d = v.dump();
  if (d.size() > 48)
    d = d.substr(0, 45) + "...";
  return d;
}

std::string typeOf(const Json &v) {
  switch (v.type()) {
  case Json::value_t::null:
    return "null";
  case Json::value_t::boolean:
    return "boolean";
  case Json::value_t::object:
    return "object";
  case Json::value_t::array:
    return "array";
  case Json::value_t::string:
    return "string";
  case Json::value_t::number_integer:
  case Json::value_t::number_unsigned:
    return "integer";
  case Json::value_t::number_float:
    return "number";
  default:
    return "value";
  }
}

bool hasType(const Json &v, const std::string &t) {
  if (t == "integer")
    return v.is_number_integer() ||
           (v.is_number_float() && std::isfinite(v.get<double>()) &&
            std::floor(v.get<double>()) == v.get<double>());
  if (t == "number")
    return v.is_number();
  if (t == "string")
    return v.is_string();
  if (t == "boolean")
    return v.is_boolean();
  if (t == "object")
    return v.is_object();
  if (t == "array")
    return v.is_array();
  return v.is_null();
}

bool identifierLike(const std::string &k) {
  if (k.empty() || std::isdigit(static_cast<unsigned char>(k[0])))
    return false;
  for (char c : k)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'))
      return false;
  return true;
}

std::string childPath(const std::string &path, const std::string &key) {
  return identifierLike(key) ? path + "." + key
                             : path + "[" + Json(key).dump() + "]";
}

size_t codePoints(const std::string &s) {
  size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

std::string numText(const Json &v) { return v.dump(); }

/// Validates `inst` (at `path`) against `s`; true when it conforms.
bool check(const Json &root, const Json &s, const Json &inst,
           const std::string &path, Sink &sink, int depth) {
  if (depth > kMaxDepth) {
    sink.add(path, "schema nesting too deep (a $ref cycle?)");
    return false;
  }
  if (s.is_boolean()) {
    if (!s.get<bool>())
      sink.add(path, "no value is allowed here");
    return s.get<bool>();
  }
  const size_t before = sink.count;
  auto kw = [&](const char *k) -> const Json * {
    auto it = s.find(k);
    return it == s.end() ? nullptr : &*it;
  };

  if (const Json *ref = kw("$ref")) {
    const Json *target = resolveRef(root, ref->get<std::string>());
    if (target)
      check(root, *target, inst, path, sink, depth + 1);
  }

  if (const Json *t = kw("type")) {
    bool ok = false;
    std::string want;
    if (t->is_array()) {
      for (const Json &x : *t) {
        ok = ok || hasType(inst, x.get<std::string>());
        want += (want.empty() ? "" : " or ") + x.get<std::string>();
      }
    } else {
      want = t->get<std::string>();
      ok = hasType(inst, want);
    }
    if (!ok) {
      sink.add(path, "expected " + want + ", got " + typeOf(inst) + " " +
                         shortDump(inst));
      return false; // the other keywords would only repeat this
    }
  }

  if (const Json *e = kw("enum")) {
    bool found = false;
    for (const Json &x : *e)
      found = found || x == inst;
    if (!found) {
      std::string list;
      for (const Json &x : *e)
        list += (list.empty() ? "" : ", ") + x.dump();
      sink.add(path, shortDump(inst) + " is not one of " + list);
    }
  }
  if (const Json *c = kw("const"))
    if (!(*c == inst))
      sink.add(path, "expected " + shortDump(*c) + ", got " + shortDump(inst));

  if (inst.is_number()) {
    double x = inst.get<double>();
    if (const Json *m = kw("minimum"); m && x < m->get<double>())
      sink.add(path, numText(inst) + " is below the minimum " + numText(*m));
    if (const Json *m = kw("maximum"); m && x > m->get<double>())
      sink.add(path, numText(inst) + " is above the maximum " + numText(*m));
    if (const Json *m = kw("exclusiveMinimum"); m && !(x > m->get<double>()))
      sink.add(path, numText(inst) + " must be greater than " + numText(*m));
    if (const Json *m = kw("exclusiveMaximum"); m && !(x < m->get<double>()))
      sink.add(path, numText(inst) + " must be less than " + numText(*m));
  }

  if (inst.is_string()) {
    size_t n = codePoints(inst.get<std::string>());
    if (const Json *m = kw("minLength"); m && n < m->get<uint64_t>())
      sink.add(path, "string is shorter than " + numText(*m) + " characters");
    if (const Json *m = kw("maxLength"); m && n > m->get<uint64_t>())
      sink.add(path, "string is longer than " + numText(*m) + " characters");
  }

  if (inst.is_array()) {
    size_t n = inst.size();
    if (const Json *m = kw("minItems"); m && n < m->get<uint64_t>())
      sink.add(path, "has " + std::to_string(n) + " items, expected at least " +
                         numText(*m));
    if (const Json *m = kw("maxItems"); m && n > m->get<uint64_t>())
      sink.add(path, "has " + std::to_string(n) + " items, expected at most " +
                         numText(*m));
    if (const Json *items = kw("items"))
      for (size_t i = 0; i < n && !sink.full(); ++i)
        check(root, *items, inst[i], path + "[" + std::to_string(i) + "]",
              sink, depth + 1);
  }

  if (inst.is_object()) {
    if (const Json *req = kw("required"))
      for (const Json &r : *req)
        if (!inst.contains(r.get<std::string>()))
          sink.add(childPath(path, r.get<std::string>()),
                   "required field is missing");
    const Json *props = kw("properties");
    const Json *extra = kw("additionalProperties");
    for (auto it = inst.begin(); it != inst.end() && !sink.full(); ++it) {
      std::string p = childPath(path, it.key());
      if (props && props->contains(it.key())) {
        check(root, (*props)[it.key()], it.value(), p, sink, depth + 1);
      } else if (extra) {
        if (extra->is_boolean() && !extra->get<bool>())
          sink.add(p, "unexpected field (the schema does not allow it)");
        else
          check(root, *extra, it.value(), p, sink, depth + 1);
      }
    }
  }

  if (const Json *all = kw("allOf"))
    for (const Json &x : *all)
      check(root, x, inst, path, sink, depth + 1);
  auto quietly = [&](const Json &x) {
    Sink scratch; // counts only
    return check(root, x, inst, path, scratch, depth + 1);
  };
  if (const Json *any = kw("anyOf")) {
    bool ok = false;
    for (const Json &x : *any)
      ok = ok || quietly(x);
    if (!ok) {
      sink.add(path, "matches none of the " + std::to_string(any->size()) +
                         " alternatives of anyOf; the first says:");
      check(root, (*any)[0], inst, path, sink, depth + 1);
    }
  }
  if (const Json *one = kw("oneOf")) {
    size_t matches = 0;
    for (const Json &x : *one)
      matches += quietly(x) ? 1 : 0;
    if (matches != 1)
      sink.add(path, "matches " + std::to_string(matches) + " of the " +
                         std::to_string(one->size()) +
                         " alternatives of oneOf, expected exactly one");
  }
  if (const Json *n = kw("not"))
    if (quietly(*n))
      sink.add(path, "matches a schema it must not match ('not')");
  if (const Json *cond = kw("if")) {
    const Json *branch = quietly(*cond) ? kw("then") : kw("else");
    if (branch)
      check(root, *branch, inst, path, sink, depth + 1);
  }
  return sink.count == before;
}

} // namespace

Result<JsonSchema> JsonSchema::parse(std::string_view text,
                                     std::string_view source) {
  std::string src(source);
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return Status::error(src + ": not valid JSON");
  if (Status s = checkSchema(j, j, "#", src); !s)
    return s;
  JsonSchema schema;
  schema.impl_->root = std::move(j);
  schema.impl_->source = src;
  return schema;
}

Result<std::vector<std::string>>
JsonSchema::validate(std::string_view instanceText, std::string_view source,
                     size_t maxErrors) const {
  Json inst = Json::parse(instanceText, nullptr, /*allow_exceptions=*/false);
  if (inst.is_discarded())
    return Status::error(std::string(source) + ": not valid JSON");
  std::vector<std::string> errors;
  Sink sink;
  sink.out = &errors;
  sink.max = std::max<size_t>(1, maxErrors);
  check(impl_->root, impl_->root, inst, "$", sink, 0);
  return errors;
}

Status validatePlanAgainstSchema(std::string_view planText,
                                 std::string_view source) {
  // Parsed once: the built-in text is fixed, and its test loads it.
  static const Result<JsonSchema> schema =
      JsonSchema::parse(planSchemaText(), "built-in plan-schema.json");
  if (!schema)
    return schema.status();
  auto errors = schema->validate(planText, source);
  if (!errors)
    return errors.status();
  if (errors->empty())
    return Status::ok();
  std::string msg = std::string(source) + " does not match the " +
                    "trident.plan/v1 schema:";
  for (const std::string &e : *errors)
    msg += "\n  " + e;
  return Status::error(msg);
}

} // namespace trident::plan
