#include "core/compare.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <thread>

#include "core/half.h"
#include "core/poison.h"

namespace ts {
namespace {

// Maps float bits to a line where adjacent floats differ by 1 (sign-magnitude -> two's order).
int64_t ordered(uint64_t bits, DType t) {
  int width = int(dtype_size(t)) * 8;
  uint64_t sign = uint64_t(1) << (width - 1);
  uint64_t mag = bits & (sign - 1);
  return (bits & sign) ? -int64_t(mag) : int64_t(mag);
}

// The map's geometry for a shape: its last two dimensions, at most kMaxMapSide cells a side.
ErrorMap map_for(const Shape& s) {
  ErrorMap m;
  const int n = int(s.size());
  m.col_dim = n >= 1 ? n - 1 : -1;
  m.row_dim = n >= 2 ? n - 2 : -1;
  auto side = [](int dim, const Shape& s, int64_t* step) {
    const int64_t len = dim < 0 ? 1 : std::max<int64_t>(s[size_t(dim)], 1);
    *step = (len + ErrorMap::kMaxMapSide - 1) / ErrorMap::kMaxMapSide;
    return (len + *step - 1) / *step;
  };
  m.rows = side(m.row_dim, s, &m.row_step);
  m.cols = side(m.col_dim, s, &m.col_step);
  m.cells.assign(size_t(m.rows * m.cols), 0.0f);
  return m;
}

CompareReport compare_pass(const std::string& name, const Tensor& got, const Tensor& ref, Tolerance tol,
                           bool poisoned, const std::vector<uint8_t>* mask, ErrorMap* map);

}  // namespace

std::string index_str(const Shape& s, int64_t flat) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = s[d] ? flat % s[d] : 0;
    flat = s[d] ? flat / s[d] : 0;
  }
  return shape_str(idx);
}

CompareReport compare(const std::string& name, const Tensor& got, const Tensor& ref, Tolerance tol,
                      bool poisoned, const std::vector<uint8_t>* unwritten_mask) {
  CompareReport r = compare_pass(name, got, ref, tol, poisoned, unwritten_mask, nullptr);
  if (!r.ok() && got.shape == ref.shape && r.count > 0) {
    ErrorMap map = map_for(got.shape);
    compare_pass(name, got, ref, std::move(tol), poisoned, unwritten_mask, &map);
    r.map = std::move(map);
  }
  return r;
}

namespace {

// Elements [begin, end) of a compare: counts, maxima and the first mismatch of the range, and the
// sums behind the NMSE.
struct Range {
  CompareReport r;
  double err2 = 0, ref2 = 0;
};

Range compare_range(const Tensor& got, const Tensor& ref, const Tolerance& tol, const double* bound, bool poisoned,
                    const std::vector<uint8_t>* mask, ErrorMap* map, int64_t begin, int64_t end) {
  Range out;
  CompareReport& r = out.r;
  r.bad_per_dim.resize(got.shape.size());
  for (size_t d = 0; d < got.shape.size(); ++d) r.bad_per_dim[d].assign(size_t(got.shape[d]), 0);
  const bool fl = is_float(got.dtype);
  const uint64_t poison = poison_bits(got.dtype);
  double& err2 = out.err2;
  double& ref2 = out.ref2;
  // The dtype switches are hoisted out of the element loop: values come in chunks, raw bits and the
  // reference's rounding to the output dtype through one function chosen up front.
  const size_t es = dtype_size(got.dtype);
  uint64_t (*round_bits)(double) = nullptr;
  switch (got.dtype) {
    case DType::f32: round_bits = [](double w) { return uint64_t(std::bit_cast<uint32_t>(float(w))); }; break;
    case DType::f16: round_bits = [](double w) { return uint64_t(f64_to_f16(w)); }; break;
    case DType::bf16: round_bits = [](double w) { return uint64_t(f64_to_bf16(w)); }; break;
    case DType::f64: round_bits = [](double w) { return std::bit_cast<uint64_t>(w); }; break;
    default: break;
  }
  constexpr int64_t kChunk = 4096;
  std::vector<double> gv(size_t(std::min(end - begin, kChunk))), wv(gv.size());
  for (int64_t first = begin; first < end; first += kChunk) {
    const int64_t n = std::min(kChunk, end - first);
    got.values(first, n, gv.data());
    ref.values(first, n, wv.data());
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = first + j;
      const double g = gv[size_t(j)], w = wv[size_t(j)];
      uint64_t gbits = 0;
      std::memcpy(&gbits, got.bytes.data() + size_t(i) * es, es);
      bool bad;
      double err = std::fabs(g - w);
      const double allowed = tol.atol + (bound ? bound[i] : 0.0) + tol.rtol * std::fabs(w);
      const bool unwritten = poisoned && (fl ? gbits == poison : mask && (*mask)[size_t(i)]);
      if (unwritten) {
        ++r.unwritten;
        bad = true;
        err = std::numeric_limits<double>::infinity();
      } else if (std::isnan(g) || std::isnan(w)) {
        bad = true;  // NaN never passes, not even against a NaN reference
        err = std::numeric_limits<double>::infinity();
      } else if (std::isinf(g) || std::isinf(w)) {
        bad = !(g == w);
        err = bad ? std::numeric_limits<double>::infinity() : 0;
      } else {
        bad = !(err <= allowed);
        err2 += (g - w) * (g - w);
        ref2 += w * w;
        if (w != 0) r.max_rel = std::max(r.max_rel, err / std::fabs(w));
      }
      r.max_abs = std::max(r.max_abs, err);
      const double ratio = allowed > 0 ? err / allowed : (err > 0 ? std::numeric_limits<double>::infinity() : 0);
      r.worst = std::max(r.worst, ratio);
      if (map) {
        const int64_t col = map->col_dim < 0 ? 0 : i % got.shape[size_t(map->col_dim)];
        const int64_t row = map->row_dim < 0 ? 0 : i / got.shape[size_t(map->col_dim)] % got.shape[size_t(map->row_dim)];
        float& cell = map->cells[size_t(row / map->row_step * map->cols + col / map->col_step)];
        cell = std::max(cell, float(ratio));
      }
      if (round_bits && !unwritten && std::isfinite(g) && std::isfinite(w)) {
        const int64_t a = ordered(gbits, got.dtype), b = ordered(round_bits(w), got.dtype);
        // In uint64: the distance between two float64s of opposite sign can pass int64's range.
        r.max_ulp = std::max<uint64_t>(r.max_ulp, a > b ? uint64_t(a) - uint64_t(b) : uint64_t(b) - uint64_t(a));
      }
      if (bad) {
        if (r.first_bad < 0) {
          r.first_bad = i;
          r.first_got = g;
          r.first_want = w;
          r.first_allowed = allowed;
        }
        ++r.mismatches;
        int64_t flat = i;
        for (size_t d = got.shape.size(); d-- > 0;) {
          r.bad_per_dim[d][size_t(flat % got.shape[d])]++;
          flat /= got.shape[d];
        }
      }
    }
  }
  return out;
}

// Outputs this long are compared in ranges on several threads (a 16M-element output took ~0.13 s
// on one, in the critical path of check's large cases). The ranges do not depend on the thread
// count, and their sums are added in range order: the report is the same on every machine.
constexpr int64_t kRangeElements = int64_t(1) << 18;
constexpr int64_t kParallelElements = int64_t(1) << 20;

CompareReport compare_pass(const std::string& name, const Tensor& got, const Tensor& ref, Tolerance tol,
                           bool poisoned, const std::vector<uint8_t>* mask, ErrorMap* map) {
  CompareReport r;
  r.output = name;
  r.tol = tol;
  r.count = got.numel();
  if (got.shape != ref.shape) {
    r.mismatches = r.count ? r.count : 1;
    r.first_bad = 0;
    r.worst = std::numeric_limits<double>::infinity();
    return r;
  }
  const Tensor* elem = tol.bound(name);
  if (elem && (elem->dtype != DType::f64 || elem->shape != ref.shape))
    throw std::logic_error(cat("tolerance of ", name, " is ", elem->describe(), " but the reference is ", ref.describe(),
                               ": a per-element bound must be float64 of the output's shape"));
  const double* bound = elem ? reinterpret_cast<const double*>(elem->bytes.data()) : nullptr;
  // The error map (a failing output's second pass) is one array: that pass stays on one thread.
  const int64_t ranges = map || r.count < kParallelElements ? 1 : (r.count + kRangeElements - 1) / kRangeElements;
  const int64_t step = ranges == 1 ? std::max<int64_t>(r.count, 1) : kRangeElements;
  std::vector<Range> parts(static_cast<size_t>(ranges));
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t k; (k = next++) < ranges;)
      parts[size_t(k)] = compare_range(got, ref, tol, bound, poisoned, mask, map, k * step, std::min(r.count, (k + 1) * step));
  };
  const int64_t threads = std::min<int64_t>(ranges, std::clamp(int64_t(std::thread::hardware_concurrency()), int64_t(1), int64_t(8)));
  std::vector<std::thread> helpers;
  for (int64_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
  double err2 = 0, ref2 = 0;
  r.bad_per_dim.resize(got.shape.size());
  for (size_t d = 0; d < got.shape.size(); ++d) r.bad_per_dim[d].assign(size_t(got.shape[d]), 0);
  for (const Range& p : parts) {
    const CompareReport& q = p.r;
    if (r.first_bad < 0 && q.first_bad >= 0) {
      r.first_bad = q.first_bad;
      r.first_got = q.first_got, r.first_want = q.first_want, r.first_allowed = q.first_allowed;
    }
    r.mismatches += q.mismatches;
    r.unwritten += q.unwritten;
    r.max_abs = std::max(r.max_abs, q.max_abs);
    r.max_rel = std::max(r.max_rel, q.max_rel);
    r.max_ulp = std::max(r.max_ulp, q.max_ulp);
    r.worst = std::max(r.worst, q.worst);
    for (size_t d = 0; d < q.bad_per_dim.size(); ++d)
      for (size_t x = 0; x < q.bad_per_dim[d].size(); ++x) r.bad_per_dim[d][x] += q.bad_per_dim[d][x];
    err2 += p.err2;
    ref2 += p.ref2;
  }
  r.nmse = ref2 > 0 ? err2 / ref2 : err2;
  return r;
}

}  // namespace

Tolerance scaled(const Tolerance& tol, double k) {
  Tolerance t{tol.atol * k, tol.rtol * k, {}};
  for (auto& [name, b] : tol.elem) {
    auto s = std::make_shared<Tensor>(*b);
    for (int64_t i = 0; i < s->numel(); ++i) s->set(i, s->get(i) * k);
    t.elem[name] = std::move(s);
  }
  return t;
}

}  // namespace ts
