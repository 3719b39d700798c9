#pragma once
// The draws of the operator generators. Every random choice a generator makes is one of these
// primitives, and its value is a pure function of (the case's draw key, RapidCheck's size, the draw's
// position in the case): the n-th draw of a case drawn with key K reads Stream(K, "draw").bits(n)
// (core/rng.h), the draws of an option of a choice (draw::choose) come from a stream of their own,
// and each primitive below states how it maps its bits to a value. The body of a generator never
// draws twice in one unsequenced expression (two arguments of one call, two operands of +), so every
// compiler draws in the same order. RapidCheck's random state is not read: a sweep's case k
// (tools/sweep.h) is the same with any RapidCheck version, and its id in a CI log or an --xfail file
// keeps meaning the same case.
//
// RapidCheck only shrinks: inside draw::exec (rc::gen::exec underneath) each primitive is one
// generated value of RapidCheck's, built from the value already drawn with the shrinks RapidCheck
// would give it (a range shrinks towards its low end, a choice towards its first option), so
// tools/shrink.cpp and the properties walk RapidCheck's shrink trees. When a shrink changes a draw,
// the draws after it are drawn again at their positions (as rc::gen::exec regenerates them).
// A change here that changes some draw changes the sweeps: bump kSweepVersion (generators.h).
#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/rng.h"

namespace ts::draw {

namespace detail {

// The draws of one evaluation of a draw::exec body, on this thread.
struct Context {
  Stream stream;  // Stream(key, "draw")
  int size = 0;
  uint64_t next = 0;  // the position of the next draw
  Context* outer = nullptr;
};

class Scope {
 public:
  Scope(uint64_t key, int size);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  Context context_;
};

// The bits of the next draw of the innermost draw::exec body; std::logic_error outside of one.
uint64_t next_bits();
int size();  // RapidCheck's size of the innermost body
// The key a Keyed set for the next draw::exec generator called on this thread (taken: none after).
std::optional<uint64_t> take_key();

// The drawn value as RapidCheck's generated value: `*` hands it to rc::gen::exec's recipe, which
// replays it (or a shrink of it) when a shrink re-runs the body.
template <class T, class Shrink>
T generated(T value, Shrink shrink) {
  return *rc::Gen<T>([value, shrink](const rc::Random&, int) { return rc::shrinkable::shrinkRecur(value, shrink); });
}

template <class T>
uint64_t span(T lo, T hi) {
  if (!(lo < hi)) throw std::logic_error("draw: an empty range");
  return uint64_t(hi) - uint64_t(lo);  // modulo 2^64: exact for any range of a 64-bit type
}

inline uint64_t index(uint64_t bits, uint64_t n) { return bits % n; }

}  // namespace detail

// While one lives, the next draw::exec generator called on this thread draws with `key`, whatever
// rc::Random it is given (the sweep's cases: draw_case in tools/sweep.h). Without one, a draw::exec
// generator takes its key from RapidCheck's random state (a property test, random on each run).
class Keyed {
 public:
  explicit Keyed(uint64_t key);
  ~Keyed();
  Keyed(const Keyed&) = delete;
  Keyed& operator=(const Keyed&) = delete;
};

// A generator whose body `f` (no arguments) draws with the primitives below.
template <class F>
rc::Gen<std::decay_t<std::invoke_result_t<F&>>> exec(F f) {
  using T = std::decay_t<std::invoke_result_t<F&>>;
  return rc::Gen<T>([f](const rc::Random& random, int size) {
    const std::optional<uint64_t> keyed = detail::take_key();
    const uint64_t key = keyed ? *keyed : rc::Random(random).next();
    return rc::gen::exec([f, key, size] {
      detail::Scope scope(key, size);
      return f();
    })(random, size);
  });
}

// [lo, hi), its span scaled with RapidCheck's size as rc::gen::inRange scaled it when the sweeps
// drew with RapidCheck (small cases at small sizes): at size s (0 below 0, 100 above 100)
// lo + bits % (1 + ((hi - lo - 1) * s + 50) / 100), in 128-bit integers, the quotient rounded down.
// Shrinks towards lo.
template <class T>
T in_range(T lo, T hi) {
  static_assert(std::is_integral_v<T>);
  const uint64_t span = detail::span(lo, hi);
  const unsigned s = unsigned(std::clamp(detail::size(), 0, 100));
  const uint64_t scaled = uint64_t(((unsigned __int128)(span - 1) * s + 50) / 100) + 1;
  const T value = T(uint64_t(lo) + detail::index(detail::next_bits(), scaled));
  return detail::generated(value, [lo](T x) { return rc::shrink::towards<T>(x, lo); });
}

// [lo, hi) alike at every size (RapidCheck's resize(100, inRange(lo, hi))): lo + bits % (hi - lo).
// Shrinks towards lo.
template <class T>
T uniform(T lo, T hi) {
  static_assert(std::is_integral_v<T>);
  const T value = T(uint64_t(lo) + detail::index(detail::next_bits(), detail::span(lo, hi)));
  return detail::generated(value, [lo](T x) { return rc::shrink::towards<T>(x, lo); });
}

// One of `values`, alike at every size: values[bits % n]. Shrinks towards the first.
template <class T>
T element_of(const std::vector<T>& values) {
  if (values.empty()) throw std::logic_error("draw: an element of an empty list");
  const size_t i = detail::generated(size_t(detail::index(detail::next_bits(), values.size())),
                                     [](size_t x) { return rc::shrink::towards<size_t>(x, 0); });
  return values[i];
}

template <class T, class... Ts>
T element(Ts&&... values) {
  return element_of(std::vector<T>{T(std::forward<Ts>(values))...});
}

// True one time in n, at every size: bits % n == n - 1. Shrinks to false (so a shrink can leave the
// branch it opens).
inline bool one_in(uint64_t n) {
  if (n == 0) throw std::logic_error("draw: one_in(0)");
  return detail::generated(detail::index(detail::next_bits(), n) == n - 1, &rc::shrink::boolean);
}

// True or false, alike (RapidCheck's arbitrary<bool>): one_in(2).
inline bool boolean() { return one_in(2); }

// One of weights.size() options by weight, alike at every size (RapidCheck's weightedOneOf): with
// B the draw's bits, the first option whose running weight exceeds B % (the weights' sum). Then
// `body(option)` runs, its own draws coming from a stream of its own, Stream(B, "draw") (its n-th
// draw reads Stream(B, "draw").bits(n)), and the case goes on at the position after the choice: an
// option that draws more or fewer values moves no later draw, so a shrink of the choice (towards the
// first option) leaves the rest of the case as it was.
template <class F>
auto choose(const std::vector<uint64_t>& weights, F body) -> decltype(body(size_t(0))) {
  uint64_t total = 0;
  for (uint64_t w : weights) total += w;
  if (total == 0) throw std::logic_error("draw: weights that sum to 0");
  const uint64_t bits = detail::next_bits();
  uint64_t r = detail::index(bits, total);
  size_t chosen = 0;
  while (r >= weights[chosen]) r -= weights[chosen++];
  const size_t i = detail::generated(chosen, [](size_t x) { return rc::shrink::towards<size_t>(x, 0); });
  detail::Scope option(bits, detail::size());
  return body(i);
}

// An option of a weighted choice: a value, or a body that draws one.
template <class T>
struct Option {
  std::function<T()> draw;
  template <class U, std::enable_if_t<std::is_constructible_v<T, U&&> && !std::is_invocable_v<U&>, int> = 0>
  Option(U&& value) : draw([v = T(std::forward<U>(value))] { return v; }) {}
  template <class U, std::enable_if_t<std::is_invocable_r_v<T, U&>, int> = 0>
  Option(U body) : draw(std::move(body)) {}
};

// A value of one option, chosen by weight: choose() over the weights, then the option's value (drawn
// from the option's own stream when it is a body).
template <class T>
T weighted(std::initializer_list<std::pair<uint64_t, Option<T>>> options) {
  std::vector<uint64_t> weights;
  for (auto& o : options) weights.push_back(o.first);
  return choose(weights, [&](size_t i) { return std::data(options)[i].second.draw(); });
}

}  // namespace ts::draw
