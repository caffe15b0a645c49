// A plain text table with aligned columns, as every command prints by default.
#pragma once

#include <string>
#include <vector>

#include "linkwise/util/text.h"

namespace linkwise::report {

class Table {
 public:
  void header(std::vector<std::string> cells) { header_ = std::move(cells); }
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  /// Columns padded to their widest cell, two spaces apart; numbers right-aligned, text left-aligned.
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace linkwise::report
