// Host pack/unpack of every layout (SPEC "Layouts", core/layout.h): exact round trips for random
// shapes of rank 1-4 (ragged tails included), zero padding lanes, planted padding reported,
// Physical::flat and locate inverse to each other, texel counts as SPEC states the extents, and
// small layouts checked byte by byte against SPEC's own words.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <cstring>
#include <set>

#include "core/contract.h"
#include "core/errors.h"
#include "core/layout.h"
#include "core/rng.h"

namespace ts {
namespace {

const std::vector<Layout> kFloatLayouts = {Layout::buffer, Layout::texture3d_w, Layout::texture3d_h,
                                           Layout::texture3d_c};
const std::vector<Layout> kInt8Layouts = {Layout::buffer, Layout::int8_4w, Layout::int8_4c1w, Layout::int8_4w4c};

// Dimensions around a texel's width, where packing breaks: 1, 2, 3, 5 along the packed dimension,
// exact multiples of 4, sometimes 0 (an empty tensor) and sometimes wider.
rc::Gen<int64_t> gen_dim() {
  return rc::gen::weightedOneOf<int64_t>({{6, rc::gen::element<int64_t>(1, 2, 3, 4, 5, 8)},
                                          {3, rc::gen::inRange<int64_t>(1, 14)},
                                          {1, rc::gen::just<int64_t>(0)}});
}

Shape gen_shape(int max_rank = 4) {
  const int rank = *rc::gen::inRange(1, max_rank + 1);
  Shape s;
  for (int d = 0; d < rank; ++d) s.push_back(*gen_dim());
  return s;
}

struct Drawn {
  DType dtype;
  Layout layout;
};

// A float dtype with a float layout, or int8 with a packed int8 layout (or a plain buffer).
Drawn gen_dtype_layout() {
  if (*rc::gen::inRange(0, 4) == 0) return {DType::i8, *rc::gen::elementOf(kInt8Layouts)};
  return {*rc::gen::element(DType::f32, DType::f16, DType::bf16), *rc::gen::elementOf(kFloatLayouts)};
}

// Every element's bytes distinct from its neighbours' and never all zero, so a data lane can be
// told from a padding lane and one element from another (raw bits: NaN patterns are fine here).
Tensor filled(DType t, const Shape& s, uint64_t seed) {
  Tensor x(t, s);
  const size_t es = dtype_size(t);
  for (int64_t i = 0; i < x.numel(); ++i) {
    uint64_t r = splitmix64(seed ^ splitmix64(uint64_t(i)));
    std::memcpy(x.bytes.data() + size_t(i) * es, &r, es);
    x.bytes[size_t(i) * es] |= 1;
  }
  return x;
}

std::string describe(const Drawn& d, const Shape& s) {
  return cat(dtype_name(d.dtype), shape_str(s), " as ", layout_name(d.layout));
}

RC_GTEST_PROP(Layouts, PackThenUnpackIsTheIdentity, ()) {
  const Drawn d = gen_dtype_layout();
  const Shape s = gen_shape();
  RC_TAG(layout_name(d.layout));
  RC_LOG() << describe(d, s) << "\n";
  const Tensor x = filled(d.dtype, s, *rc::gen::arbitrary<uint64_t>());
  const Physical p = physical(s, d.dtype, d.layout);
  const std::vector<uint8_t> packed = pack(x, d.layout);
  RC_ASSERT(packed.size() == p.bytes);
  int64_t bad = -7, first = -7;
  const Tensor back = unpack(packed, 0, s, d.dtype, d.layout, &bad, &first);
  RC_ASSERT(back.shape == s);
  RC_ASSERT(back.dtype == d.dtype);
  RC_ASSERT(back.bytes == x.bytes);
  RC_ASSERT(bad == 0);
  RC_ASSERT(first == -1);
  // At an offset into a larger host buffer, as a backend's staging buffer holds it.
  const size_t offset = *rc::gen::inRange<size_t>(1, 40);
  std::vector<uint8_t> shifted(offset, 0xAB);
  shifted.insert(shifted.end(), packed.begin(), packed.end());
  shifted.insert(shifted.end(), 16, 0xCD);
  RC_ASSERT(unpack(shifted, offset, s, d.dtype, d.layout).bytes == x.bytes);
}

RC_GTEST_PROP(Layouts, PaddingLanesAreZeroAndDataLanesHoldTheirElement, ()) {
  const Drawn d = gen_dtype_layout();
  const Shape s = gen_shape();
  RC_LOG() << describe(d, s) << "\n";
  const Tensor x = filled(d.dtype, s, *rc::gen::arbitrary<uint64_t>());
  const Physical p = physical(s, d.dtype, d.layout);
  const std::vector<uint8_t> packed = pack(x, d.layout);
  const size_t es = dtype_size(d.dtype);
  static const uint8_t zero[8] = {};
  std::vector<int> seen(size_t(x.numel()), 0);
  for (int64_t t = 0; t < p.texels; ++t)
    for (int lane = 0; lane < 4; ++lane) {
      const size_t at = size_t(t) * p.texel_bytes + size_t(lane) * es;
      const int64_t i = p.flat(t, lane);
      if (i < 0) {
        // A buffer stores its elements alone: the lanes past numel in its last texel are not stored.
        if (d.layout == Layout::buffer) continue;
        RC_ASSERT(std::memcmp(packed.data() + at, zero, es) == 0);
      } else {
        RC_ASSERT(i < x.numel());
        RC_ASSERT(std::memcmp(packed.data() + at, x.bytes.data() + size_t(i) * es, es) == 0);
        ++seen[size_t(i)];
      }
    }
  for (int n : seen) RC_ASSERT(n == 1);  // every element in exactly one lane
}

// Whether a layout pads along its packed dimension(s) for this shape.
bool has_padding(const Shape& s, Layout l) {
  const Nchw d = nchw_of(s);
  if (numel(s) == 0) return false;
  switch (l) {
    case Layout::buffer: return false;
    case Layout::texture3d_w: case Layout::int8_4w: return d.w % 4 != 0;
    case Layout::texture3d_h: return d.h % 4 != 0;
    case Layout::texture3d_c: case Layout::int8_4c1w: return d.c % 4 != 0;
    case Layout::int8_4w4c: return d.w % 4 != 0 || d.c % 4 != 0;
  }
  return false;
}

RC_GTEST_PROP(Layouts, UnpackReportsNonzeroPaddingLanes, ()) {
  Drawn d = gen_dtype_layout();
  if (d.layout == Layout::buffer) d.layout = d.dtype == DType::i8 ? Layout::int8_4w4c : Layout::texture3d_c;
  Shape s = gen_shape();
  for (int64_t& x : s) x = std::max<int64_t>(x, 1);
  // A packed dimension the shape lacks is 1, which pads; one that is a multiple of 4 is made ragged.
  if (!has_padding(s, d.layout)) {
    const size_t r = s.size();
    switch (d.layout) {
      case Layout::texture3d_h: s[r - 2] = 6; break;
      case Layout::texture3d_c: case Layout::int8_4c1w: s[r - 3] = 3; break;
      default: s[r - 1] = 5;
    }
  }
  RC_ASSERT(has_padding(s, d.layout));
  RC_LOG() << describe(d, s) << "\n";
  const Tensor x = filled(d.dtype, s, *rc::gen::arbitrary<uint64_t>());
  const Physical p = physical(s, d.dtype, d.layout);
  std::vector<std::pair<int64_t, int>> padding;
  for (int64_t t = 0; t < p.texels; ++t)
    for (int lane = 0; lane < 4; ++lane)
      if (p.flat(t, lane) < 0) padding.push_back({t, lane});
  RC_ASSERT(!padding.empty());
  const size_t es = dtype_size(d.dtype);
  std::vector<uint8_t> packed = pack(x, d.layout);
  // Plant garbage in one or two padding lanes (one byte of the lane is enough to count).
  const auto one = *rc::gen::elementOf(padding);
  const auto two = *rc::gen::elementOf(padding);
  const int planted = one == two ? 1 : 2;
  for (auto [t, lane] : {one, two}) {
    const size_t byte = *rc::gen::inRange<size_t>(0, es);
    packed[size_t(t) * p.texel_bytes + size_t(lane) * es + byte] = *rc::gen::inRange<uint8_t>(1, 255);
  }
  int64_t bad = 0, first = -1;
  const Tensor back = unpack(packed, 0, s, d.dtype, d.layout, &bad, &first);
  RC_ASSERT(bad == planted);
  RC_ASSERT(first == std::min(one.first, two.first));
  RC_ASSERT(back.bytes == x.bytes);  // the elements themselves are still read back exactly
}

RC_GTEST_PROP(Layouts, FlatAndLocateAreInverse, ()) {
  const Drawn d = gen_dtype_layout();
  const Shape s = gen_shape();
  RC_LOG() << describe(d, s) << "\n";
  const Physical p = physical(s, d.dtype, d.layout);
  const int64_t n = numel(s);
  for (int64_t i = 0; i < n; ++i) {
    int64_t t = -1;
    int lane = -1;
    p.locate(i, t, lane);
    RC_ASSERT(t >= 0 && t < p.texels);
    RC_ASSERT(lane >= 0 && lane < 4);
    RC_ASSERT(p.flat(t, lane) == i);
  }
  int64_t data = 0;
  for (int64_t t = 0; t < p.texels; ++t)
    for (int lane = 0; lane < 4; ++lane)
      if (const int64_t i = p.flat(t, lane); i >= 0) {
        ++data;
        int64_t t2 = -1;
        int lane2 = -1;
        p.locate(i, t2, lane2);
        RC_ASSERT(t2 == t && lane2 == lane);
      }
  RC_ASSERT(data == n);
}

int64_t ceil4(int64_t x) { return (x + 3) / 4; }

// SPEC "Layouts", from the shape alone: [N,C,H,W] with missing leading dimensions 1 and dimensions
// before the last four folded into N; texture extents (ceil(W/4), H, C*N), (W, ceil(H/4), C*N),
// (W, H, ceil(C/4)*N); one 32-bit word per 4 packed int8 elements, int8_4w4c in 16-byte blocks.
RC_GTEST_PROP(Layouts, TexelCountsMatchTheSpecExtents, ()) {
  const Drawn d = gen_dtype_layout();
  const Shape s = gen_shape(6);
  RC_LOG() << describe(d, s) << "\n";
  const size_t r = s.size();
  const int64_t W = s[r - 1], H = r >= 2 ? s[r - 2] : 1, C = r >= 3 ? s[r - 3] : 1;
  int64_t N = 1;
  for (size_t k = 0; k + 3 < r; ++k) N *= s[k];
  const Physical p = physical(s, d.dtype, d.layout);
  RC_ASSERT(p.dims.n == N && p.dims.c == C && p.dims.h == H && p.dims.w == W);
  const int64_t es = int64_t(dtype_size(d.dtype));
  std::array<int64_t, 3> want{};
  switch (d.layout) {
    case Layout::buffer: want = {ceil4(N * C * H * W), 1, 1}; break;
    case Layout::texture3d_w: want = {ceil4(W), H, C * N}; break;
    case Layout::texture3d_h: want = {W, ceil4(H), C * N}; break;
    case Layout::texture3d_c: want = {W, H, ceil4(C) * N}; break;
    case Layout::int8_4w: want = {N * C * H * ceil4(W), 1, 1}; break;
    case Layout::int8_4c1w: want = {N * ceil4(C) * H * W, 1, 1}; break;
    case Layout::int8_4w4c: want = {4 * N * ceil4(C) * H * ceil4(W), 1, 1}; break;
  }
  RC_ASSERT(p.extent[0] == want[0] && p.extent[1] == want[1] && p.extent[2] == want[2]);
  RC_ASSERT(p.texels == want[0] * want[1] * want[2]);
  RC_ASSERT(p.texel_bytes == size_t(4 * es));  // 4 lanes; a packed int8 word is 4 bytes
  RC_ASSERT(p.bytes == size_t(d.layout == Layout::buffer ? N * C * H * W * es : p.texels * 4 * es));
}

TEST(Layouts, PackedInt8LayoutsHoldInt8Only) {
  for (Layout l : {Layout::int8_4w, Layout::int8_4c1w, Layout::int8_4w4c})
    for (DType t : {DType::f32, DType::f16, DType::bf16, DType::i32}) {
      try {
        physical({2, 4}, t, l);
        ADD_FAILURE() << layout_name(l) << " accepted " << dtype_name(t);
      } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("holds int8 only"), std::string::npos) << e.what();
      }
    }
}

// int8 element v(n,c,h,w) of a tensor, numbered so that every byte tells where it came from.
Tensor int8_ramp(const Shape& s) {
  Tensor x(DType::i8, s);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, double(i + 1));
  return x;
}

// SPEC: int8_4w "each 32-bit word holds 4 consecutive W elements, byte j = element 4i+j".
TEST(Layouts, Int8_4wWordsAreFourConsecutiveWidthElements) {
  const Tensor x = int8_ramp({2, 5});  // H = 2, W = 5: two words per row, the second ragged
  const std::vector<uint8_t> want = {1, 2, 3, 4, /**/ 5, 0, 0, 0, /**/ 6, 7, 8, 9, /**/ 10, 0, 0, 0};
  EXPECT_EQ(pack(x, Layout::int8_4w), want);
}

// SPEC: int8_4c1w "each word holds 4 consecutive channels at one (n,h,w)".
TEST(Layouts, Int8_4c1wWordsAreFourChannelsAtOnePosition) {
  const Tensor x = int8_ramp({5, 1, 2});  // C = 5, H = 1, W = 2; element (c, w) = 2c + w + 1
  const std::vector<uint8_t> want = {1, 3, 5, 7, /* w=0, c 0-3 */ 2, 4, 6, 8, /* w=1 */
                                     9, 0, 0, 0, /* w=0, c 4  */ 10, 0, 0, 0 /* w=1 */};
  EXPECT_EQ(pack(x, Layout::int8_4c1w), want);
}

// SPEC: int8_4w4c "each 16-byte block holds 4 W positions x 4 channels: word j = the 4 channels at
// w = 4i+j"; blocks ordered (n, c/4, h, w/4).
TEST(Layouts, Int8_4w4cBlockWordJHoldsTheChannelsAtW4iPlusJ) {
  const Tensor x = int8_ramp({5, 1, 6});  // C = 5, H = 1, W = 6; element (c, w) = 6c + w + 1
  auto v = [](int c, int w) { return uint8_t(6 * c + w + 1); };
  std::vector<uint8_t> want;
  for (int c4 = 0; c4 < 2; ++c4)
    for (int i = 0; i < 2; ++i)      // block w/4
      for (int j = 0; j < 4; ++j)    // word j of the block: w = 4i + j
        for (int lane = 0; lane < 4; ++lane) {
          const int c = 4 * c4 + lane, w = 4 * i + j;
          want.push_back(c < 5 && w < 6 ? v(c, w) : 0);
        }
  ASSERT_EQ(want.size(), 64u);
  // Spelled out for the first block and the ragged second one: channels 0-3 at w = 0..3, then w = 4, 5.
  EXPECT_EQ(std::vector<uint8_t>(want.begin(), want.begin() + 8), (std::vector<uint8_t>{1, 7, 13, 19, 2, 8, 14, 20}));
  EXPECT_EQ(std::vector<uint8_t>(want.begin() + 16, want.begin() + 32),
            (std::vector<uint8_t>{5, 11, 17, 23, 6, 12, 18, 24, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(pack(x, Layout::int8_4w4c), want);
}

// The texel at image position (x, y, z) of a float32 texture, as 4 floats.
std::array<float, 4> texel(const std::vector<uint8_t>& img, const Physical& p, int64_t x, int64_t y, int64_t z) {
  std::array<float, 4> v;
  std::memcpy(v.data(), img.data() + size_t((z * p.extent[1] + y) * p.extent[0] + x) * 16, 16);
  return v;
}

TEST(Layouts, TexturesPackAlongTheirDimensionWithZeroPadding) {
  Tensor x(DType::f32, {2, 5, 2, 3});  // N = 2, C = 5, H = 2, W = 3; value = 1000n + 100c + 10h + w + 1
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t w = i % 3, h = i / 3 % 2, c = i / 6 % 5, n = i / 30;
    x.set(i, double(1000 * n + 100 * c + 10 * h + w + 1));
  }
  auto val = [](int n, int c, int h, int w) { return float(1000 * n + 100 * c + 10 * h + w + 1); };

  // Channels-packed: extents (W, H, ceil(C/4) * N) = (3, 2, 4); z = n * 2 + c / 4.
  Physical pc = physical(x.shape, DType::f32, Layout::texture3d_c);
  EXPECT_EQ(pc.extent[0], 3);
  EXPECT_EQ(pc.extent[1], 2);
  EXPECT_EQ(pc.extent[2], 4);
  std::vector<uint8_t> c = pack(x, Layout::texture3d_c);
  EXPECT_EQ(texel(c, pc, 2, 1, 0), (std::array<float, 4>{val(0, 0, 1, 2), val(0, 1, 1, 2), val(0, 2, 1, 2), val(0, 3, 1, 2)}));
  EXPECT_EQ(texel(c, pc, 1, 0, 3), (std::array<float, 4>{val(1, 4, 0, 1), 0, 0, 0}));

  // Width-packed: (ceil(W/4), H, C * N) = (1, 2, 10); z = n * 5 + c.
  Physical pw = physical(x.shape, DType::f32, Layout::texture3d_w);
  EXPECT_EQ(pw.extent[0], 1);
  EXPECT_EQ(pw.extent[2], 10);
  std::vector<uint8_t> w = pack(x, Layout::texture3d_w);
  EXPECT_EQ(texel(w, pw, 0, 1, 7), (std::array<float, 4>{val(1, 2, 1, 0), val(1, 2, 1, 1), val(1, 2, 1, 2), 0}));

  // Height-packed: (W, ceil(H/4), C * N) = (3, 1, 10).
  Physical ph = physical(x.shape, DType::f32, Layout::texture3d_h);
  EXPECT_EQ(ph.extent[0], 3);
  EXPECT_EQ(ph.extent[1], 1);
  std::vector<uint8_t> h = pack(x, Layout::texture3d_h);
  EXPECT_EQ(texel(h, ph, 2, 0, 4), (std::array<float, 4>{val(0, 4, 0, 2), val(0, 4, 1, 2), 0, 0}));
}

TEST(Layouts, LeadingDimensionsFoldIntoN) {
  const Nchw d = nchw_of({2, 3, 4, 5, 6});
  EXPECT_EQ(d.n, 6);
  EXPECT_EQ(d.c, 4);
  EXPECT_EQ(d.h, 5);
  EXPECT_EQ(d.w, 6);
  const Nchw v = nchw_of({7});
  EXPECT_EQ(v.n * v.c * v.h, 1);
  EXPECT_EQ(v.w, 7);
}

TEST(Layouts, StorageParsesDefaultAndOverrides) {
  Storage s = Storage::parse("texture3d_c;freqs_cos=buffer;xk_out=texture3d_w");
  EXPECT_EQ(s.fallback, "texture3d_c");
  EXPECT_EQ(s.of("xq"), "texture3d_c");
  EXPECT_EQ(s.of("freqs_cos"), "buffer");
  EXPECT_EQ(s.of("xk_out"), "texture3d_w");
  for (const char* bad : {"texture3d", "buffer;x", "buffer;=buffer", "buffer;x=buffer;x=texture3d_w", "buffer;x=int4",
                          "", "buffer;"})
    EXPECT_THROW(Storage::parse(bad), UsageError) << bad;
}

}  // namespace
}  // namespace ts
