#include "util/yaml_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>

#include "linkwise/util/limits.h"
#include "linkwise/util/text.h"

namespace linkwise::detail {

namespace {

// Walks the loaded tree: nesting no deeper than limits::kMaxNestingDepth, no map with the same key
// twice (yaml-cpp keeps both and a lookup sees only one), and no more than kMaxVisits nodes visited
// (aliases share nodes, so a small file can stand for a huge tree).
class TreeCheck {
 public:
  explicit TreeCheck(const std::string& file) : file_(file) {}
  void walk(const YAML::Node& n, int depth) {
    if (++visits_ > kMaxVisits)
      throw InputError(
          fmt::format("more than {} YAML nodes (counting each use of an alias)", kMaxVisits),
          location_of(n, file_));
    if (depth > limits::kMaxNestingDepth)
      throw InputError(fmt::format("YAML nested deeper than {} levels", limits::kMaxNestingDepth),
                       location_of(n, file_));
    if (n.IsSequence()) {
      for (const auto& x : n) walk(x, depth + 1);
    } else if (n.IsMap()) {
      std::set<std::string> keys;
      for (auto it = n.begin(); it != n.end(); ++it) {
        const YAML::Node key = it->first;
        if (key.IsScalar() && !keys.insert(key.Scalar()).second)
          throw InputError(fmt::format("duplicate key '{}' (the same key twice in one map)",
                                       limits::quote_value(key.Scalar())),
                           location_of(key, file_));
        walk(key, depth + 1);
        walk(it->second, depth + 1);
      }
    }
  }

 private:
  static constexpr long kMaxVisits = 2'000'000;
  const std::string& file_;
  long visits_ = 0;
};

}  // namespace

YAML::Node load_yaml(const std::string& text, const std::string& filename) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(fmt::format("YAML syntax error: {}", e.msg),
                     {filename, e.mark.line + 1, e.mark.column + 1});
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("YAML error: {}", e.msg),
                     {filename, e.mark.line + 1, e.mark.column + 1});
  }
  TreeCheck(filename).walk(root, 0);
  return root;
}

SourceLocation location_of(const YAML::Node& n, const std::string& file) {
  const YAML::Mark m = n.Mark();
  if (m.is_null()) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

static std::string scalar_text(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  return "nothing";
}

double as_double(const YAML::Node& n, const std::string& file, const std::string& what) {
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    try {
      std::size_t pos = 0;
      double v = std::stod(s, &pos);
      if (pos == s.size() && std::isfinite(v)) return v;
    } catch (const std::exception&) {
    }
  }
  throw InputError(
      fmt::format("'{}' must be a number, not '{}'", what, limits::quote_value(scalar_text(n))),
      location_of(n, file));
}

int as_int(const YAML::Node& n, const std::string& file, const std::string& what) {
  double v = as_double(n, file, what);
  if (v != std::floor(v) || std::fabs(v) > 1e9)
    throw InputError(
        fmt::format("'{}' must be a whole number, not '{}'", what, limits::quote_value(n.Scalar())),
        location_of(n, file));
  return static_cast<int>(v);
}

std::string as_string(const YAML::Node& n, const std::string& file, const std::string& what) {
  if (!n.IsScalar())
    throw InputError(fmt::format("'{}' must be text, not {}", what, scalar_text(n)),
                     location_of(n, file));
  return n.Scalar();
}

void check_keys(const YAML::Node& n, const std::vector<std::string>& allowed,
                const std::string& file, const std::string& context) {
  if (!n.IsMap())
    throw InputError(fmt::format("{} must be a map of keys", context), location_of(n, file));
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string key = it->first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string hint = did_you_mean(key, allowed);
    throw InputError(fmt::format("unknown key '{}' in {}{}", limits::quote_value(key), context,
                                 hint.empty() ? "" : "; " + hint),
                     location_of(it->first, file));
  }
}

}  // namespace linkwise::detail
