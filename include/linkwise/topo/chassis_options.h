// The options every command that loads a chassis shares (util/option_spec.h): the CHASSIS
// argument, --nodes and --as-designed, with their help written once.
#pragma once

#include <string>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/option_spec.h"

namespace linkwise::topo {

/// CHASSIS: a preset name or a chassis YAML file (topo::load_chassis).
template <class S>
OptionSpec<S> chassis_option(std::string& (*field)(S&)) {
  return {"CHASSIS", field, "A preset name (linkwise presets) or a chassis YAML file"};
}
/// --nodes N: copies of the chassis joined by a network.
template <class S>
OptionSpec<S> nodes_option(int& (*field)(S&)) {
  return OptionSpec<S>{"--nodes", field,
                       "Copies of the chassis joined by a network through their NICs"}
      .range(1, kMaxBoxes);
}
/// --as-designed: links at their design rate instead of the trained one the chassis records.
template <class S>
OptionSpec<S> as_designed_option(bool& (*field)(S&)) {
  return {"--as-designed", field,
          "Links at their design rate; by default a link the chassis records as trained lower "
          "(probe -o) runs at its trained generation and width"};
}

}  // namespace linkwise::topo
