// A command's options described once, beside the options struct they fill: per field its flag
// names, help text, allowed range and Python keyword, bound to the field itself. The executable
// declares its CLI flags from the description (apps/linkwise/commands.h) and the Python module its
// keyword arguments (python/linkwise_py.cc), so an option is written in one place; a default is
// the struct's own initialiser.
//
//   const std::vector<OptionSpec<Req>>& request_options() {
//     using Spec = OptionSpec<Req>;
//     static const std::vector<Spec> specs = {
//         Spec{"--seq", at<&Req::seq>, "Sequence length in tokens"}.range(1, 1 << 24),
//         {"-b,--minbytes", at<&Req::sweep, &SweepFlags::min>, "Smallest size"},
//     };
//     return specs;
//   }
#pragma once

#include <cctype>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace linkwise {

namespace detail {
template <class M>
struct MemberOf;
template <class C, class T>
struct MemberOf<T C::*> {
  using Class = C;
};
template <auto M, auto... Rest>
auto& reach(typename MemberOf<decltype(M)>::Class& s) {
  if constexpr (sizeof...(Rest) == 0) {
    return s.*M;
  } else {
    return reach<Rest...>(s.*M);
  }
}
}  // namespace detail

/// The field a chain of members reaches: at<&Req::seq>, at<&Req::sweep, &SweepFlags::min>.
template <auto... M>
constexpr auto at = &detail::reach<M...>;

/// A field of S, by the types options come in.
template <class S>
using OptionField = std::variant<std::string& (*)(S&), int& (*)(S&), double& (*)(S&), bool& (*)(S&),
                                 std::optional<std::string>& (*)(S&), std::optional<int>& (*)(S&),
                                 std::vector<std::string>& (*)(S&)>;

template <class S>
struct OptionSpec {
  enum Trait : unsigned {
    kRequired = 1,  ///< must be given
    kLast = 2,      ///< given several times, the last counts
    kOneArg = 4,    ///< a list option takes one argument per flag (no words after it)
  };
  std::string flags;  ///< CLI names, "-b,--minbytes"; a name without '-' is a positional
  OptionField<S> field;
  std::string help;
  double lo = 0, hi = 0;  ///< allowed range, when lo < hi
  bool positive = false;  ///< must be > 0
  std::string name;       ///< Python keyword; "": the first long flag, '-' as '_'
  std::string type_name;  ///< CLI placeholder ("DIR"); "": the type's
  std::string needs;      ///< another flag this one is only valid with
  unsigned traits = 0;

  OptionSpec(std::string f, OptionField<S> fld, std::string h)
      : flags(std::move(f)), field(fld), help(std::move(h)) {}
  OptionSpec range(double min, double max) && { return lo = min, hi = max, std::move(*this); }
  OptionSpec positive_number() && { return positive = true, std::move(*this); }
  OptionSpec python(std::string n) && { return name = std::move(n), std::move(*this); }
  OptionSpec type(std::string t) && { return type_name = std::move(t), std::move(*this); }
  OptionSpec only_with(std::string flag) && { return needs = std::move(flag), std::move(*this); }
  OptionSpec with(unsigned t) && { return traits |= t, std::move(*this); }

  bool has(Trait t) const { return (traits & t) != 0; }
  bool positional() const { return flags.empty() || flags[0] != '-'; }
  /// The name the CLI reports the option by: its first long flag ("--minbytes"), else its first
  /// name.
  std::string cli_name() const {
    for (std::size_t a = 0; a < flags.size();) {
      std::size_t b = flags.find(',', a);
      if (b == std::string::npos) b = flags.size();
      if (flags.compare(a, 2, "--") == 0) return flags.substr(a, b - a);
      a = b + 1;
    }
    return flags.substr(0, flags.find(','));
  }
  /// The Python keyword: `name`, else the CLI name without dashes, '-' as '_' ("CHASSIS":
  /// "chassis").
  std::string python_name() const {
    if (!name.empty()) return name;
    std::string n = cli_name();
    n.erase(0, n.find_first_not_of('-'));
    for (char& c : n) c = c == '-' ? '_' : static_cast<char>(std::tolower(c));
    return n;
  }
};

}  // namespace linkwise
