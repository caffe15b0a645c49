// SVG writing shared by the drawing and the HTML report's charts (private to report/): escaped
// attributes and text, numbers without trailing noise, and a text width estimate for the
// monospace font every label uses.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace linkwise::report::svg {

/// Font size of every label, px; monospace, so a character advances 0.6 em.
inline constexpr double kFontPx = 11;
/// Width budgeted per character, px: a little over 0.6 em so a label fits its box.
inline constexpr double kCharPx = 6.8;

/// `text` made safe for XML text and attribute values: & < > " ' escaped, control characters and
/// bytes that are not UTF-8 replaced by '?'.
std::string escape(std::string_view text);
/// Characters (UTF-8 code points) in `text`.
std::size_t length(std::string_view text);
/// Estimated width of `text` in px at kFontPx.
inline double text_width(std::string_view text) {
  return static_cast<double>(length(text)) * kCharPx;
}
/// A coordinate with at most one decimal.
std::string num(double v);

using Attrs = std::vector<std::pair<std::string, std::string>>;

/// Appends elements to a string; attributes with an empty value are left out.
class Writer {
 public:
  void open(const std::string& tag, const Attrs& attrs);
  void close(const std::string& tag);
  /// `<tag attrs>text</tag>`, or `<tag attrs/>` when text is empty.
  void element(const std::string& tag, const Attrs& attrs, std::string_view text = {});
  /// A label: `<text x y [font-weight] [data-for]>text</text>`.
  void text(double x, double y, std::string_view text, const std::string& weight = "",
            const std::string& for_node = "", const std::string& anchor = "");
  void raw(std::string_view s) { out_ += s; }
  const std::string& str() const { return out_; }

 private:
  void attrs(const Attrs& attrs);
  std::string out_;
};

}  // namespace linkwise::report::svg
