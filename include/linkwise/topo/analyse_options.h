// What `linkwise topo` analyses: a chassis loaded with --nodes and --as-designed
// (topo/chassis_options.h), described once for the Python module's analyse().
#pragma once

#include <string>
#include <vector>

#include "linkwise/topo/chassis_options.h"

namespace linkwise::topo {

struct AnalyseRequest {
  std::string chassis;  ///< a preset name or a chassis YAML file
  int nodes = 0;        ///< 0: the chassis as written
  bool as_designed = false;
};

/// The options of the chassis analysed, in `linkwise topo`'s words.
inline const std::vector<OptionSpec<AnalyseRequest>>& analyse_options() {
  using R = AnalyseRequest;
  static const std::vector<OptionSpec<R>> specs = {
      chassis_option(at<&R::chassis>),
      nodes_option(at<&R::nodes>),
      as_designed_option(at<&R::as_designed>),
  };
  return specs;
}

}  // namespace linkwise::topo
