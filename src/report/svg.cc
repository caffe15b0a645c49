#include "svg.h"

#include <fmt/format.h>

#include <cmath>

namespace linkwise::report::svg {

namespace {

/// Length of the UTF-8 sequence starting at s[i], or 0 when it is not valid UTF-8.
std::size_t utf8_len(std::string_view s, std::size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return 0;
  return n;
}

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = utf8_len(text, i);
    if (n == 0) {
      out += '?';
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    char c = text[i++];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
    }
  }
  return out;
}

std::size_t length(std::string_view text) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < text.size(); ++count)
    i += std::max<std::size_t>(1, utf8_len(text, i));
  return count;
}

std::string num(double v) {
  if (!std::isfinite(v)) v = 0;
  double r = std::round(v * 10) / 10;
  if (r == std::floor(r)) return fmt::format("{:.0f}", r);
  return fmt::format("{:.1f}", r);
}

void Writer::attrs(const Attrs& attrs) {
  for (const auto& [k, v] : attrs)
    if (!v.empty()) out_ += fmt::format(" {}=\"{}\"", k, escape(v));
}

void Writer::open(const std::string& tag, const Attrs& a) {
  out_ += "<" + tag;
  attrs(a);
  out_ += ">\n";
}

void Writer::close(const std::string& tag) { out_ += "</" + tag + ">\n"; }

void Writer::element(const std::string& tag, const Attrs& a, std::string_view text) {
  out_ += "<" + tag;
  attrs(a);
  if (text.empty()) {
    out_ += "/>\n";
  } else {
    out_ += ">" + escape(text) + "</" + tag + ">\n";
  }
}

void Writer::text(double x, double y, std::string_view t, const std::string& weight,
                  const std::string& for_node, const std::string& anchor) {
  element("text",
          {{"x", num(x)},
           {"y", num(y)},
           {"font-weight", weight},
           {"text-anchor", anchor},
           {"data-for", for_node}},
          t);
}

}  // namespace linkwise::report::svg
