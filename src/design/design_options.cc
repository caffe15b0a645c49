// design's options, described once (util/option_spec.h).
#include "linkwise/design/search.h"

namespace linkwise::design {

const std::vector<OptionSpec<DesignRequest>>& design_options() {
  using R = DesignRequest;
  using Spec = OptionSpec<R>;
  static const std::vector<Spec> specs = {
      Spec{"SPACE", at<&R::space>, "A design space YAML file (docs/design-format.md)"}.with(
          Spec::kRequired),
      Spec{"--top", at<&R::search, &SearchOptions::top>, "Designs ranked and scored in full"}.range(
          1, 100),
      Spec{"--threads", at<&R::search, &SearchOptions::threads>, "Worker threads (0: every core)"}
          .range(0, 1024),
      {"--out", at<&R::out>,
       "Write each ranked and front design as a chassis YAML into this folder"},
  };
  return specs;
}

}  // namespace linkwise::design
