#pragma once
// Counter-based input data: element i of the tensor named `name` in a case with seed `seed` is a
// pure function of (seed, name, i). Specified here so any machine and compiler, and any other tool,
// can regenerate the same bytes:
//   stream = fnv1a64(name)
//   u      = splitmix64(splitmix64(seed ^ stream) + i)
//   unit   = (u >> 11) * 2^-53                      in [0, 1)
//   uniform(lo, hi) = lo + (hi - lo) * unit        (float64, then rounded once to the case dtype)
#include <cstdint>
#include <string_view>

namespace ts {

constexpr uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

constexpr uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

struct Stream {
  uint64_t key;
  Stream(uint64_t seed, std::string_view name) : key(splitmix64(seed ^ fnv1a64(name))) {}
  uint64_t bits(uint64_t i) const { return splitmix64(key + i); }
  double unit(uint64_t i) const { return double(bits(i) >> 11) * 0x1.0p-53; }
  double uniform(uint64_t i, double lo, double hi) const { return lo + (hi - lo) * unit(i); }
};

}  // namespace ts
