#include "linkwise/comm/sweep.h"

#include <fmt/format.h>

#include <cctype>

#include "linkwise/util/error.h"
#include "linkwise/util/text.h"

namespace linkwise::comm {

namespace {

// The whole number after -f: at least 2, as nccl-tests' integer step factor.
std::uint64_t parse_factor(const std::string& text) {
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !std::isdigit(static_cast<unsigned char>(text[0])) || v < 2)
    throw InputError(fmt::format("-f/--stepfactor must be a whole number of at least 2, not '{}'", text));
  return v;
}

}  // namespace

std::vector<std::uint64_t> sweep_sizes(std::uint64_t lo, std::uint64_t hi, std::uint64_t f) {
  if (lo == 0 || hi < lo)
    throw InputError(fmt::format("size sweep: need 0 < min <= max, not min {} and max {} bytes", lo, hi));
  if (f < 1) throw InputError(fmt::format("size sweep: the factor must be at least 1, not {}", f));
  if (f == 1) return {lo};
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t s = lo;; s *= f) {  // at most 64 sizes
    sizes.push_back(s);
    if (s > hi / f) break;  // s × f would pass hi (or overflow)
  }
  return sizes;
}

std::vector<std::uint64_t> sweep_sizes(const SweepFlags& o) {
  const std::uint64_t lo = parse_size_bytes(o.min, "-b/--minbytes");
  const std::uint64_t hi = parse_size_bytes(o.max, "-e/--maxbytes");
  if (lo > hi) throw InputError(fmt::format("-b {} is larger than -e {}", o.min, o.max));
  if (o.factor && o.step) throw InputError("give -f/--stepfactor or -i/--stepbytes, not both");
  if (o.step) {
    const std::uint64_t inc = parse_size_bytes(*o.step, "-i/--stepbytes");
    const std::uint64_t rows = (hi - lo) / inc + 1;
    if (rows > kMaxSweepSizes)
      throw InputError(fmt::format("-b {} -e {} -i {} makes {} sizes; the most is {} (use a larger -i, or -f)", o.min,
                                   o.max, *o.step, rows, kMaxSweepSizes));
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t s = lo; s <= hi; s += inc) sizes.push_back(s);
    return sizes;
  }
  return sweep_sizes(lo, hi, o.factor ? parse_factor(*o.factor) : 2);
}

bool counts_per_rank(Op op) { return op == Op::kAllGather || op == Op::kReduceScatter || op == Op::kAllToAll; }

std::uint64_t element_unit(Op op, int dtype_bytes, int ranks) {
  return static_cast<std::uint64_t>(dtype_bytes) * (counts_per_rank(op) ? ranks : 1);
}

std::vector<std::uint64_t> whole_elements(const std::vector<std::uint64_t>& sizes, std::uint64_t unit,
                                          const SweepFlags& o, const std::string& what) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s : sizes) {
    std::uint64_t r = s / unit * unit;
    if (r > 0 && (out.empty() || out.back() != r)) out.push_back(r);
  }
  if (out.empty())
    throw InputError(fmt::format("-b {} -e {}: no size holds {} ({} bytes); use -b {} or more", o.min, o.max, what,
                                 unit, unit));
  return out;
}

}  // namespace linkwise::comm
