// The serving front end as one process in front of the engine (docs/serving.md, "The front end"):
// its CPU time per request and per streamed token (work/serve_impl.h) and the queue it forms.
#include <algorithm>
#include <limits>

#include "linkwise/work/serve.h"
#include "work/serve_impl.h"

namespace linkwise::work::detail {

double front_end_request_cpu_s(const ServeOptions& o) {
  if (o.front_end != FrontEnd::kVllmApiServer) return 0;
  return kVllmTokenizeCpuS * o.input + (o.chat_endpoint ? kVllmChatRequestCpuS : 0);
}

double front_end_token_cpu_s(FrontEnd f) {
  return f == FrontEnd::kVllmApiServer ? kVllmApiServerDetokS : 0;
}

double front_end_chunk_cpu_s(FrontEnd f) {
  return f == FrontEnd::kVllmApiServer ? kVllmApiServerChunkS : 0;
}

double front_end_burst_wait_s(double n, double c) { return std::max(0.0, n - 1) / 2 * c; }

double front_end_poisson_wait_s(double X, double c, double u) {
  if (u >= 1) return std::numeric_limits<double>::infinity();
  return X * c * c / (2 * (1 - u));
}

double front_end_chunk_itl_s(double tau, double c, double X_others) {
  double kept = 1 - X_others * std::max(0.0, c - tau);
  return kept > 0.05 ? tau / kept : tau / 0.05;  // at most 20 tokens a chunk on average
}

}  // namespace linkwise::work::detail
