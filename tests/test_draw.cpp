// The generators' draws (properties/draw.h): each value is the documented function of the stream
// Stream(key, "draw") (core/rng.h), the draw's position and the size, whatever RapidCheck's random
// state; the ranges scale with the size as RapidCheck's do; and RapidCheck still shrinks every draw
// (a range towards its low end, a choice towards its first option), re-drawing the draws after a
// shrunk one at their positions.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "core/rng.h"
#include "properties/draw.h"

namespace ts {
namespace {

// The first value `gen` draws with `key` at `size`.
template <class T>
T drawn(const rc::Gen<T>& gen, uint64_t key, int size, uint64_t random = 0) {
  const draw::Keyed keyed(key);
  return gen(rc::Random(random), size).value();
}

TEST(Draw, ValuesAreTheDocumentedFunctionOfTheStream) {
  const auto gen = draw::exec([] {
    const int64_t a = draw::uniform<int64_t>(-5, 1000);
    const int64_t b = draw::in_range<int64_t>(10, 20);
    const std::string c = draw::element<std::string>("x", "y", "z");
    const bool d = draw::one_in(3);
    const int e = draw::weighted<int>({{2, 7}, {3, [] { return draw::uniform(100, 200); }}});
    const int f = draw::uniform(0, 1000);
    return std::tuple{a, b, c, d, e, f};
  });
  for (uint64_t key : {uint64_t(0), uint64_t(99), ~uint64_t(0)})
    for (int size : {0, 50, 100, 1000}) {
      const Stream st(key, "draw");
      const auto [a, b, c, d, e, f] = drawn(gen, key, size);
      EXPECT_EQ(a, -5 + int64_t(st.bits(0) % 1005));
      EXPECT_EQ(b, 10 + int64_t(st.bits(1) % (1 + (9 * uint64_t(std::min(size, 100)) + 50) / 100)));
      EXPECT_EQ(c, std::vector<std::string>({"x", "y", "z"})[st.bits(2) % 3]);
      EXPECT_EQ(d, st.bits(3) % 3 == 2);
      // An option draws from its own stream, keyed by the choice's bits; the case goes on after it.
      EXPECT_EQ(e, st.bits(4) % 5 < 2 ? 7 : 100 + int(Stream(st.bits(4), "draw").bits(0) % 100));
      EXPECT_EQ(f, int(st.bits(5) % 1000));
      // RapidCheck's random state is not read.
      EXPECT_EQ(drawn(gen, key, size, 12345), std::tuple(a, b, c, d, e, f));
    }
}

TEST(Draw, RangesScaleWithTheSizeOthersDoNot) {
  const auto gen = draw::exec([] { return std::pair{draw::in_range(0, 50), draw::uniform(0, 50)}; });
  std::set<int> sized0, uniform0, sized100;
  for (uint64_t key = 0; key < 400; ++key) {
    sized0.insert(drawn(gen, key, 0).first);
    uniform0.insert(drawn(gen, key, 0).second);
    sized100.insert(drawn(gen, key, 100).first);
  }
  EXPECT_EQ(sized0, std::set<int>{0});
  EXPECT_EQ(uniform0.size(), 50u);
  EXPECT_EQ(sized100.size(), 50u);
}

// Shrinking walks every draw down: the local minimum of "always fails" is every range at its low
// end and every choice at its first option, and a draw after a shrunk choice is drawn again.
TEST(Draw, RapidCheckShrinksEveryDraw) {
  const auto gen = draw::exec([] {
    const int64_t a = draw::in_range<int64_t>(5, 100);
    const std::string b = draw::element<std::string>("first", "second", "third");
    const int64_t c = draw::weighted<int64_t>({{1, 1}, {5, [] { return draw::uniform<int64_t>(1000, 2000); }}});
    const bool d = draw::one_in(2);
    return std::tuple{a, b, c, d};
  });
  for (uint64_t key = 0; key < 20; ++key) {
    const draw::Keyed keyed(key);
    const rc::Shrinkable<std::tuple<int64_t, std::string, int64_t, bool>> s = gen(rc::Random(), 100);
    const auto [smallest, steps] = rc::shrinkable::findLocalMin(s, [](const auto&) { return true; });
    EXPECT_EQ(smallest, std::tuple(int64_t(5), std::string("first"), int64_t(1), false)) << "key " << key;
    // Shrinking towards a failure that needs c >= 1000 keeps c's branch and takes c to its low end.
    const auto [big, _] = rc::shrinkable::findLocalMin(s, [](const auto& v) { return std::get<2>(v) >= 1000; });
    if (std::get<2>(s.value()) >= 1000) EXPECT_EQ(std::get<2>(big), 1000) << "key " << key;
  }
}

// A choice shrinks to an option that draws more or fewer values without moving the draws after it.
TEST(Draw, AShrunkChoiceLeavesTheLaterDrawsAsTheyWere) {
  const auto gen = draw::exec([] {
    const int64_t c = draw::weighted<int64_t>({{1, 0},
                                               {1, [] {
                                                  const int64_t x = draw::uniform<int64_t>(1, 100);
                                                  return x + draw::uniform<int64_t>(1000, 2000);
                                                }}});
    return std::pair{c, draw::uniform<int64_t>(0, 1 << 30)};
  });
  int shrunk = 0;
  for (uint64_t key = 0; key < 20; ++key) {
    const draw::Keyed keyed(key);
    const rc::Shrinkable<std::pair<int64_t, int64_t>> s = gen(rc::Random(), 100);
    if (s.value().first == 0) continue;
    const auto first = rc::shrinkable::immediateShrinks(s).next();
    ASSERT_TRUE(first);
    EXPECT_EQ(*first, std::pair(int64_t(0), s.value().second)) << "key " << key;
    ++shrunk;
  }
  EXPECT_GT(shrunk, 0);
}

TEST(Draw, APrimitiveOutsideAGeneratorIsAnError) {
  EXPECT_THROW(draw::in_range(0, 3), std::logic_error);
  const auto empty = draw::exec([] { return draw::in_range(3, 3); });
  EXPECT_THROW(drawn(empty, 1, 100), std::logic_error);
}

}  // namespace
}  // namespace ts
