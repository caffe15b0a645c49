#include "linkwise/work/job.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "linkwise/util/error.h"
#include "linkwise/util/text.h"

namespace linkwise::work {

const char* to_string(Mode m) {
  switch (m) {
    case Mode::kPretrain: return "pretrain";
    case Mode::kFullFinetune: return "full";
    case Mode::kLora: return "lora";
  }
  return "?";
}

const char* to_string(Precision p) {
  switch (p) {
    case Precision::kBf16: return "bf16";
    case Precision::kFp8: return "fp8";
    case Precision::kFp16: return "fp16";
    case Precision::kAuto: return "auto";
  }
  return "?";
}

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "?";
}

namespace {
template <typename E>
E parse_enum(const std::string& s, const char* what, std::initializer_list<E> all) {
  std::vector<std::string> names;
  for (E e : all) {
    if (s == to_string(e)) return e;
    names.push_back(to_string(e));
  }
  std::string hint = did_you_mean(s, names);
  throw InputError(fmt::format("unknown {} '{}' (one of: {}){}", what, s, fmt::to_string(fmt::join(names, ", ")),
                               hint.empty() ? "" : "; " + hint));
}
}  // namespace

Mode parse_mode(const std::string& s) {
  if (s == "finetune" || s == "full-finetune") return Mode::kFullFinetune;
  return parse_enum(s, "mode", {Mode::kPretrain, Mode::kFullFinetune, Mode::kLora});
}
Precision parse_precision(const std::string& s) {
  return parse_enum(s, "precision", {Precision::kBf16, Precision::kFp16, Precision::kFp8, Precision::kAuto});
}
Recompute parse_recompute(const std::string& s) {
  return parse_enum(s, "recompute mode", {Recompute::kNone, Recompute::kSelective, Recompute::kFull});
}

void validate_job(const Job& job) {
  if (job.seq < 0) throw InputError(fmt::format("--seq must be positive, not {}", job.seq));
  if (job.micro_batch < 1) throw InputError(fmt::format("--micro-batch must be at least 1, not {}", job.micro_batch));
  if (job.global_batch < 0) throw InputError(fmt::format("--global-batch must be positive, not {}", job.global_batch));
  if (job.mode == Mode::kLora) {
    if (job.lora.rank < 1) throw InputError(fmt::format("--lora-rank must be at least 1, not {}", job.lora.rank));
    static const std::vector<std::string> known = {"q", "k", "v", "o", "gate", "up", "down"};
    if (job.lora.targets.empty()) throw InputError("--lora-targets needs at least one of q,k,v,o,gate,up,down");
    for (const auto& t : job.lora.targets)
      if (std::find(known.begin(), known.end(), t) == known.end())
        throw InputError(fmt::format("unknown LoRA target '{}' (one of: {})", t, fmt::to_string(fmt::join(known, ", "))));
  }
}

}  // namespace linkwise::work
