#include "linkwise/measure/nccl_bench.h"

#include <algorithm>

#include "linkwise/util/error.h"
#include "measure/handles.h"

namespace linkwise::measure {

namespace {

struct Local {
  int device, rank;
  NcclApi::Comm comm;
  CudaApi::Buffer send, recv;
  CudaApi::Stream stream;
  CudaApi::Event start, end;
};

NcclApi::Call make_call(const NcclOptions& o, const CollectiveCounts& c, bool in_place,
                        const Local& l, int n) {
  NcclApi::Call call;
  call.op = o.op;
  call.count = c.count;
  call.root = o.root;
  call.rank = l.rank;
  call.nranks = n;
  call.send = in_place ? l.recv : l.send;
  call.send_offset = in_place ? c.send_inplace * l.rank * 4 : 0;
  call.recv = l.recv;
  call.recv_offset = in_place ? c.recv_inplace * l.rank * 4 : 0;
  return call;
}

void run_all(NcclApi& nccl, std::vector<Local>& ls, const NcclOptions& o, const CollectiveCounts& c,
             bool in_place, int n) {
  nccl.group_start();
  for (auto& l : ls) nccl.run(l.comm, make_call(o, c, in_place, l, n), l.stream);
  nccl.group_end();
}

// The expected value of every element of rank `r`'s output, chunk by chunk, for inputs rank + 1.
struct Expect {
  std::size_t offset, count;
  float value;
};
std::vector<Expect> expected(const NcclApi::Call& call, const CollectiveCounts& c) {
  int n = call.nranks, r = call.rank;
  float sum = static_cast<float>(n) * (n + 1) / 2;
  std::size_t off = call.recv_offset / 4, cnt = c.count;
  switch (call.op) {
    case comm::Op::kAllReduce:
    case comm::Op::kReduceScatter:
      return {{off, cnt, sum}};
    case comm::Op::kReduce:
      return r == call.root ? std::vector<Expect>{{off, cnt, sum}} : std::vector<Expect>{};
    case comm::Op::kBroadcast:
      return {{off, cnt, static_cast<float>(call.root + 1)}};
    case comm::Op::kSendRecv:
      return {{off, cnt, static_cast<float>((r + n - 1) % n + 1)}};
    case comm::Op::kAllGather:
    case comm::Op::kAllToAll: {
      std::vector<Expect> e;
      for (int j = 0; j < n; ++j) e.push_back({off + j * cnt, cnt, static_cast<float>(j + 1)});
      return e;
    }
  }
  return {};
}

long check(CudaApi& cuda, NcclApi& nccl, std::vector<Local>& ls, const NcclOptions& o,
           const CollectiveCounts& c, bool in_place, int n, std::size_t alloc_elems) {
  for (auto& l : ls) {
    auto call = make_call(o, c, in_place, l, n);
    cuda.fill(l.recv, 0, alloc_elems, 0.0f, l.stream);
    cuda.fill(call.send, call.send_offset / 4, c.send_count, static_cast<float>(l.rank + 1),
              l.stream);
  }
  run_all(nccl, ls, o, c, in_place, n);
  long wrong = 0;
  for (auto& l : ls) {
    cuda.synchronize(l.stream);
    for (const auto& e : expected(make_call(o, c, in_place, l, n), c))
      wrong +=
          static_cast<long>(cuda.count_mismatches(l.recv, e.offset, e.count, e.value, l.stream));
  }
  return wrong;
}

}  // namespace

std::vector<std::uint64_t> nccl_sizes(const NcclOptions& o) {
  return o.sizes.empty() ? comm::sweep_sizes(o.min_bytes, o.max_bytes, o.factor) : o.sizes;
}

NcclSweep run_nccl_sweep(CudaApi& cuda, NcclApi& nccl, const RankSet& rs, const NcclOptions& o,
                         const Hooks<NcclSweep>& hooks) {
  if (rs.devices.empty() || rs.devices.size() != rs.ranks.size() ||
      rs.devices.size() != rs.comms.size())
    throw InputError("NCCL sweep: every local rank needs a device and a communicator");
  const int n = rs.nranks;
  const auto sizes = nccl_sizes(o);
  auto maxc = collective_counts(o.op, o.max_bytes, n);
  std::size_t alloc_elems = std::max<std::size_t>(std::max(maxc.send_count, maxc.recv_count), 1);
  detail::Handles h(cuda);
  std::vector<Local> ls;
  for (std::size_t i = 0; i < rs.devices.size(); ++i) {
    int d = rs.devices[i];
    ls.push_back({d, rs.ranks[i], rs.comms[i], h.buffer(MemoryKind::kDevice, d, alloc_elems * 4),
                  h.buffer(MemoryKind::kDevice, d, alloc_elems * 4), h.stream(d), h.event(d),
                  h.event(d)});
  }
  auto sync = [&] {
    for (auto& l : ls) cuda.synchronize(l.stream);
  };
  NcclSweep out;
  out.op = o.op;
  out.nranks = n;
  out.nccl_version = nccl.version();
  if (hooks.stopping()) return out;
  // Warm-up at the largest and the smallest size, as nccl-tests' TimeTest.
  for (auto bytes : {o.max_bytes, o.min_bytes}) {
    auto c = collective_counts(o.op, bytes, n);
    for (int w = 0; w < o.warmup; ++w) run_all(nccl, ls, o, c, false, n);
    sync();
  }
  double bw_sum = 0;
  int bw_count = 0;
  for (auto bytes : sizes) {
    if (hooks.stopping()) break;
    auto c = collective_counts(o.op, bytes, n);
    NcclRow row;
    row.size_bytes = c.size_bytes;
    row.count = c.count;
    row.redop = reduces(o.op) ? "sum" : "none";
    row.root = rooted(o.op) ? o.root : -1;
    for (int ip = 0; ip < 2; ++ip) {
      run_all(nccl, ls, o, c, ip == 1, n);
      sync();
      for (auto& l : ls) cuda.record(l.start, l.stream);
      for (int it = 0; it < std::max(1, o.iters); ++it) run_all(nccl, ls, o, c, ip == 1, n);
      for (auto& l : ls) cuda.record(l.end, l.stream);
      sync();
      double local = 0;
      for (auto& l : ls) local += cuda.elapsed_s(l.start, l.end) / std::max(1, o.iters);
      double t = rs.sum_over_processes(local) / n;
      row.time_us[ip] = t * 1e6;
      row.algbw[ip] = alg_bandwidth_GBps(o.op, c, n, t);
      row.busbw[ip] = row.algbw[ip] * bus_factor(o.op, n);
      if (o.check) {
        double w = rs.sum_over_processes(
            static_cast<double>(check(cuda, nccl, ls, o, c, ip == 1, n, alloc_elems)));
        row.wrong[ip] = static_cast<long>(w);
        out.wrong_total += row.wrong[ip];
      }
      bw_sum += row.busbw[ip];
      ++bw_count;
    }
    out.rows.push_back(row);
    out.avg_busbw = bw_sum / bw_count;
    hooks.done(out);
  }
  return out;
}

}  // namespace linkwise::measure
