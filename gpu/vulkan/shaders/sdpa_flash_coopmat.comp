// sdpa, impl=coopmat: causal attention of float16 heads on tensor cores (16x16x16 float16 cooperative
// matrices, float32 accumulators), after sdpa_update_cache has written this step's rows into the caches
// (a prefill from position 0 binds k and v here instead, as the caches' first rows; gpu/plans/sdpa.cpp):
//   y(r, c) = scale_log2 * dot(q[s,h,:], k_cache[c,kvh,:])       for keys c < n = pos + s + 1
//   (scale_log2 = scale * log2(e), rounded once by the plan: the scores in log2 units)
//   out[s,h,:] = (sum_c 2^(y_c - R) v_cache[c,kvh,:]) / (sum_c 2^(y_c - R))   for any reference R
// Query rows of kv head kvh are r = s*G + g (head h = kvh*G + g), as sdpa_qk_tiled has them: the G
// heads sharing a kv head share every K/V tile. A workgroup of 8 subgroups (Dispatch::subgroup = 32)
// takes BR = 64 rows (a row tile) in 4 strips of 16 rows; subgroups w and w + 4 both work on strip w,
// each with the strip's Q fragments in registers. The workgroups with the most keys (the last rows,
// causal) come first in the grid; where the plan pairs row tiles (slots < rtiles), a workgroup takes
// a long one and then a short one.
// Keys go in tiles of BC = 32 up to the workgroup's causal limit: each invocation loads its share of
// the next tile's keys and values into registers while the subgroups work on the current one, which
// the shared buffers hold (zero past D and past ctx); DB = ceil(D / 16) (the plan's define) 16-dim
// blocks, so every fragment loop has a constant count and is unrolled (arrays of cooperative
// matrices indexed at run time would live in local memory). Of each tile, subgroup w takes keys
// 0..15 and subgroup w + 4 keys 16..31: two independent streams of a strip's keys, each a whole
// flash attention of its own (its R, l and sums), which meet once, at the end. So each subgroup has
// half the products a tile, and a multiprocessor two subgroups a strip to run while one waits.
// One pass, online: each row keeps R, an integer within 1 of the largest y its stream has seen:
// R rises, to the ceiling of a tile's largest y, only where that passes R by more than 1 (a rise
// costs the subgroup a factor matrix and a pass over its sums; a row's first keys cost none, as
// its sums are still 0). A tile's weights are e = exp2(y - R) <= 2 (the largest one of a row
// >= 1/2), and where a tile raises R by j, the row's sums so far are multiplied by 2^-j: exact (a
// power of two; past 2^-126 they are dropped, at most 2^-126 of their size), so every weight passes
// one exp2 and no rounding else, as in a two-pass softmax whose max were R (gpu/plans/sdpa.cpp,
// "impl=coopmat"). At the end each stream's sums go to the larger of the two R the same way, and
// are added.
// Rows live spread over the lanes in the accumulators' own layout, which no API states. So whatever
// needs a row's value goes through a 16x16 matrix stored by lanes and loaded as one: element i of it
// belongs to element i of every accumulator. The scores go out, for the row maxima (lane pair
// (2i, 2i+1) reads row i, 8 keys each); over them the lanes write what each score's exponent
// subtracts (R, or KILL past the causal limit), and where R rises, a matrix of the rows' factors.
// Only a tile that masks a key or raises an R takes that trip: in the others, the subtrahends the
// subgroup holds are all R already, and the scores in registers show that no R rises.
// The weights are then computed in the scores' own registers, and their sums l kept there too, one
// partial sum per element (added along the rows at the end).
// The A operand of the weighted sum must be float16: a weight is scaled, w = 2^12 e (exact), and
// split into w_hi, w cut to 11 significant bits, and w_lo = float16(w - w_hi); both multiply V (two
// products, one float32 accumulator), which keeps e to about 2^-20 relative, and out takes the 2^-12
// back with 1 / l. The scale keeps both halves normal float16 numbers down to e = 2^-15 (w_hi down
// to 2^-26), and w <= 2^13 far below float16's largest: a device that flushes float16 subnormals
// (the specs allow it without DenormPreserve, in conversions and on tensor cores alike) loses at
// most 2^-26 of a weight. The halves go from float32 accumulators to float16 A operands by a
// conversion of the matrices, no memory between.
// One shared array holds everything as uvec2 (glslang 12 loads float16 cooperative matrices from
// scalar or uint arrays only): the query rows, later over them the scores, the factors and the
// streams' (R, l), and at the end the output.
#extension GL_NV_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_vote : enable
#extension GL_EXT_control_flow_attributes : enable
TS_INPUT(q, 0)
layout(std430, binding = 1) readonly buffer KC { f16vec4 k_cache[]; };
layout(std430, binding = 2) readonly buffer VC { f16vec4 v_cache[]; };
TS_OUTPUT(out, 3)
layout(push_constant) uniform Params {
  uint S; uint Hq; uint Hkv; uint D4; uint pos; uint ctx; float scale_log2; uint rtiles; uint slots;
} pc;

// The plan's defines (gpu/plans/sdpa.cpp): NI, the workgroup's invocations (8 subgroups of 32); BR,
// its query rows; DB, the 16-dim blocks of a head, ceil(D / 16).
const uint BC = 32u;             // keys a tile: 16 for each of a strip's two subgroups
const uint DQ = 4u * DB;         // quads (4 halves, a uvec2) of a staged row
const uint DP = DQ + 2u;         // a staged row in quads, padded: a 16-byte multiple off the banks' period
const uint LQ = (BC * DQ + NI - 1u) / NI;  // quads of a tile each invocation stages (DB / 2, rounded up)
const uint QL = BR * DQ / NI;    // quads of the query rows each invocation stages (= DB)
const uint SS = 16u + 2u;        // floats of a row of scores (16 keys, padded)
const uint FS = 16u + 2u;        // floats of a row of a factor matrix (padded)
const uint QREG = BR * DP;                            // the query rows (until they are in registers)
const uint SREG = 8u * 16u * SS / 2u;                 // per subgroup 16 rows of scores, as uvec2
const uint FREG = 8u * 16u * FS / 2u;                 // per subgroup a 16x16 matrix of row factors
const uint XOFF = SREG + FREG;                         // per subgroup its rows' (R, l) at the end
const uint KOFF = max(QREG, XOFF + 8u * 16u), VOFF = KOFF + BC * DP;
const uint DHF = (DB + 1u) / 2u;                      // 16-dim blocks of out its strip's first subgroup owns
const uint OS = 16u * DB + 8u;                        // floats of a row of out at the end (padded)
const uint OREG = 4u * 16u * OS / 2u;                 // per strip 16 rows of out, as uvec2
const float MASKED = -1.0e30, KILL = 1.0e30;

shared uvec2 sm[max(VOFF + BC * DP, OREG)];

uint kvh, l_;
uvec2 kr[LQ], vr[LQ];  // this invocation's share of the next tile

uvec2 quad(f16vec4 v) { return uvec2(packFloat2x16(v.xy), packFloat2x16(v.zw)); }

// Keys (or values) c0 .. c0+BC-1 into registers: quad e = l + NI i of the tile (key e / DQ, quad e % DQ).
// Each load unconditional, from a clamped index (ctx and D4 are at least 1), and put zeroes what lies
// past the cache or the head: a load under a branch, its value merged after it, is waited out there,
// before the tile's products, instead of at put.
void fetch(uint c0, bool values) {
  [[unroll]] for (uint i = 0u; i < LQ; ++i) {
    uint e = l_ + NI * i, c = c0 + e / DQ, d4 = e % DQ;
    uint at = (min(c, pc.ctx - 1u) * pc.Hkv + kvh) * pc.D4 + min(d4, pc.D4 - 1u);
    if (values) vr[i] = quad(v_cache[at]); else kr[i] = quad(k_cache[at]);
  }
}

// The tile of keys (or values) c0 .. that fetch loaded, into shared memory, zero past ctx and past D.
void put(bool values, uint c0) {
  [[unroll]] for (uint i = 0u; i < LQ; ++i) {
    uint e = l_ + NI * i;
    bool in_ = c0 + e / DQ < pc.ctx && e % DQ < pc.D4;
    if (e < BC * DQ) sm[(values ? VOFF : KOFF) + (e / DQ) * DP + e % DQ] = in_ ? (values ? vr[i] : kr[i]) : uvec2(0u);
  }
}

// The power of two that takes sums made against reference R to reference Rn >= R: exact, 0 past 2^-126
// (R - Rn is then below -126, or R is MASKED: nothing summed yet).
float rescale(float R, float Rn) {
  return R == Rn ? 1.0 : R == MASKED || R - Rn < -126.0 ? 0.0 : intBitsToFloat((127 + int(R - Rn)) << 23);
}

// Element i of the subgroup's 16x16 factor matrix is the factor of element i's row: lane (rr, half_)
// writes f into its half of row rr.
fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> row_factors(uint fbase, uint rr, uint half_, float f) {
  [[unroll]] for (uint k = 0u; k < 8u; k += 2u) sm[fbase + (rr * FS + 8u * half_ + k) / 2u] = floatBitsToUint(vec2(f));
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> fm;
  coopMatLoadNV(fm, sm, fbase, FS / 2u, false);
  return fm;
}

// Rows r0 .. r0+BR-1 of kv head kvh, whole.
void attend(uint r0) {
  uint G = pc.Hq / pc.Hkv, rows = pc.S * G;
  uint w = gl_SubgroupID, strip = w & 3u, dh = w >> 2u, lane = gl_SubgroupInvocationID;
  // The workgroup's causal limit: its last row's keys.
  uint limit = min(pc.ctx, pc.pos + (min(r0 + BR, rows) - 1u) / G + 1u);

  barrier();  // a row tile before: every subgroup is done with its rows in shared memory
  fetch(0u, false);
  fetch(0u, true);
  // The query rows: every load first, then every store (a loop of load-then-store waits out a load
  // per round trip). Each load unconditional, from a clamped index, and zeroed after: a load under
  // a branch is waited out before the next one is issued.
  vec4 qv[QL];
  [[unroll]] for (uint x = 0u; x < QL; ++x) {
    uint e = l_ + NI * x, r = r0 + e / DQ, d4 = e % DQ, rc = min(r, rows - 1u);
    qv[x] = q_at4(4u * (((rc / G) * pc.Hq + kvh * G + rc % G) * pc.D4 + min(d4, pc.D4 - 1u)));
    if (!(r < rows && d4 < pc.D4)) qv[x] = vec4(0.0);
  }
  [[unroll]] for (uint x = 0u; x < QL; ++x) {
    uint e = l_ + NI * x;
    sm[(e / DQ) * DP + e % DQ] = quad(f16vec4(qv[x]));  // exact: the case is float16
  }
  barrier();
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> qa[DB];
  [[unroll]] for (uint kk = 0u; kk < DB; ++kk) coopMatLoadNV(qa[kk], sm, (16u * strip) * DP + 4u * kk, DP, false);

  // This lane's row of the subgroup's strip and its half of the subgroup's 16 keys of a tile.
  uint rr = lane >> 1u, half_ = lane & 1u, r = r0 + 16u * strip + rr;
  uint n = r < rows ? pc.pos + r / G + 1u : 0u;  // keys the row sees
  float R = MASKED;  // the row's reference over this subgroup's keys: within 1 of their largest score
  // What each score's exponent subtracts, as the last tile that went through shared memory left it;
  // held: R for every element (that tile masked no key), which stays so until R rises.
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> sub;
  bool held = false;
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> o[DB];
  [[unroll]] for (uint dn = 0u; dn < DB; ++dn) o[dn] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> lsum = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
  uint sbase = w * 16u * SS / 2u;                    // the subgroup's score rows, uvec2
  uint sat = sbase + (rr * SS + 8u * half_) / 2u;    // this lane's 8 scores in them
  uint fbase = SREG + w * 16u * FS / 2u;             // the subgroup's factor matrix, uvec2
  uint cw = 16u * dh;                                // the subgroup's keys of a tile: c0 + cw ..
  for (uint c0 = 0u; c0 < limit; c0 += BC) {
    barrier();  // every subgroup is done with the previous keys and values (first: the query rows)
    put(false, c0);
    put(true, c0);
    barrier();
    if (c0 + BC < limit) {
      fetch(c0 + BC, false);
      fetch(c0 + BC, true);
    }
    if (c0 + cw >= limit) continue;  // the subgroup's half of the last tile is past every row's keys
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> sc = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
    [[unroll]] for (uint kk = 0u; kk < DB; ++kk) {
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> kb;
      coopMatLoadNV(kb, sm, KOFF + cw * DP + 4u * kk, DP, true);
      sc = coopMatMulAddNV(qa[kk], kb, sc);
    }
    uint c = c0 + cw + 8u * half_;  // the key of this lane's first score
    // A tile that masks no key and raises no R (no score passes its row's R by more than 1, as the
    // row maxima below would find: the same operations, uncontracted) needs neither the row maxima
    // nor new subtrahends: the held ones are its own.
    bool edge = subgroupAny(c + 8u > n), trip = !held || edge;  // edge: the tile masks a key
    if (!trip) {
      bool rise = false;
      [[unroll]] for (int i = 0; i < sc.length(); ++i) {
        precise float y = pc.scale_log2 * sc[i];
        precise float t = y - sub[i];
        rise = rise || t > 1.0;
      }
      trip = subgroupAny(rise);
    }
    if (trip) {
      coopMatStoreNV(sc, sm, sbase, SS / 2u, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      float top = MASKED;
      [[unroll]] for (uint k = 0u; k < 8u; k += 2u) {
        vec2 v = uintBitsToFloat(sm[sat + k / 2u]);
        if (c + k < n) top = max(top, pc.scale_log2 * v.x);
        if (c + k + 1u < n) top = max(top, pc.scale_log2 * v.y);
      }
      top = max(top, subgroupShuffleXor(top, 1u));
      // A power of two: R and its successor are integers, and R - Rn >= -126 is a normal float.
      // While R is MASKED the row's sums are 0 (every weight so far exp2(y - KILL) = 0), whatever f.
      float Rn = top - R > 1.0 ? ceil(top) : R, f = R == MASKED ? 1.0 : rescale(R, Rn);
      R = Rn;
      // Over the scores this lane read: what each score's exponent subtracts, R, or KILL where the
      // key is past the row's causal limit (its weight exp2(y - KILL) is 0).
      [[unroll]] for (uint k = 0u; k < 8u; k += 2u)
        sm[sat + k / 2u] = floatBitsToUint(vec2(c + k < n ? R : KILL, c + k + 1u < n ? R : KILL));
      if (subgroupAny(f != 1.0)) {
        fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> fm = row_factors(fbase, rr, half_, f);
        [[unroll]] for (int i = 0; i < fm.length(); ++i) lsum[i] *= fm[i];
        [[unroll]] for (uint dn = 0u; dn < DB; ++dn)
          [[unroll]] for (int i = 0; i < fm.length(); ++i) o[dn][i] *= fm[i];
      } else {
        subgroupMemoryBarrierShared();
        subgroupBarrier();
      }
      coopMatLoadNV(sub, sm, sbase, SS / 2u, false);
      held = !edge;
    }
    // The weights in the scores' own registers, split into float16 halves there, and the halves as
    // the A operand of the weighted sum (a conversion, not a trip through memory).
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> hi, lo;
    [[unroll]] for (int i = 0; i < sub.length(); ++i) {
      float e = exp2(pc.scale_log2 * sc[i] - sub[i]);  // @marker weight
      lsum[i] += e;
      // A cut, not a rounding: no compiler can fold a bit mask away (float(float16_t(w)) it may).
      float wt = 4096.0 * e, h = uintBitsToFloat(floatBitsToUint(wt) & 0xFFFFE000u);
      hi[i] = h;
      lo[i] = wt - h;
    }
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ph = fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(hi);
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> pl = fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(lo);
    [[unroll]] for (uint dn = 0u; dn < DB; ++dn) {
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> vb;
      coopMatLoadNV(vb, sm, VOFF + cw * DP + 4u * dn, DP, false);
      o[dn] = coopMatMulAddNV(ph, vb, o[dn]);
      o[dn] = coopMatMulAddNV(pl, vb, o[dn]);
    }
  }
  // The row sums of this subgroup's keys: each element of lsum holds one column's share of its row.
  subgroupBarrier();
  coopMatStoreNV(lsum, sm, sbase, SS / 2u, false);
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  float l = 0.0;
  [[unroll]] for (uint k = 0u; k < 8u; k += 2u) {
    vec2 v = uintBitsToFloat(sm[sat + k / 2u]);
    l += v.x;
    l += v.y;
  }
  l += subgroupShuffleXor(l, 1u);
  // The strip's two subgroups' sums, each to the larger reference (exact powers of two); (R, l) of
  // both, in subgroup order, so that both get the same bits.
  if (half_ == 0u) sm[XOFF + w * 16u + rr] = floatBitsToUint(vec2(R, l));
  barrier();
  vec2 x0 = uintBitsToFloat(sm[XOFF + strip * 16u + rr]), x1 = uintBitsToFloat(sm[XOFF + (strip + 4u) * 16u + rr]);
  float Rt = max(x0.x, x1.x), f0 = rescale(x0.x, Rt), f1 = rescale(x1.x, Rt);
  float inv = 1.0 / (x0.y * f0 + x1.y * f1) * (1.0 / 4096.0);
  float f = dh == 0u ? f0 : f1;
  if (subgroupAny(f != 1.0)) {
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> fm = row_factors(fbase, rr, half_, f);
    [[unroll]] for (uint dn = 0u; dn < DB; ++dn)
      [[unroll]] for (int i = 0; i < fm.length(); ++i) o[dn][i] *= fm[i];
  }
  // The strip's output through shared memory: subgroup dh of the strip owns blocks [DHF dh, ..) of out
  // and stores the others of its sums there, adds the other subgroup's sums of
  // its own blocks to them, stores the totals back, and its lanes store its blocks of the rows;
  // lane (rr, half_) half of row rr's, texels of 4 dims (D % 4 == 0: a texel never straddles rows,
  // and is whole: out_store_texel, no lane count). The loop is not unrolled: one copy of the
  // store's conversion, not one a texel (which would be most of the kernel's binary).
  barrier();
  uint ob = strip * 16u * OS / 2u;  // the strip's 16 rows of out, uvec2
  [[unroll]] for (uint dn = 0u; dn < DB; ++dn)
    if ((dn < DHF) != (dh == 0u)) coopMatStoreNV(o[dn], sm, ob + 8u * dn, OS / 2u, false);
  barrier();
  [[unroll]] for (uint dn = 0u; dn < DB; ++dn)
    if ((dn < DHF) == (dh == 0u)) {
      fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> o1;
      coopMatLoadNV(o1, sm, ob + 8u * dn, OS / 2u, false);
      [[unroll]] for (int i = 0; i < o1.length(); ++i) o[dn][i] += o1[i];
      coopMatStoreNV(o[dn], sm, ob + 8u * dn, OS / 2u, false);
    }
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  uint nb = dh == 0u ? DHF : DB - DHF, row = ((r / G) * pc.Hq + kvh * G + r % G) * 4u * pc.D4;
  [[dont_unroll]] for (uint t = 0u; t < 2u * nb; ++t) {
    uint d = 16u * DHF * dh + 8u * nb * half_ + 4u * t, at = ob + (rr * OS + d) / 2u;
    if (r < rows && d < 4u * pc.D4)
      out_store_texel(out_texel_of(row + d), vec4(uintBitsToFloat(sm[at]), uintBitsToFloat(sm[at + 1u])) * inv);
  }
}

void main() {
  uint g = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  if (g >= pc.slots * pc.Hkv) return;  // a folded grid's spare workgroups, whole
  kvh = g / pc.slots;
  l_ = ts_local_index();
  uint t = g % pc.slots, first = pc.rtiles - 1u - t;
  // Paired (the plan's slots < rtiles): the t-th shortest row tile too, so that every workgroup has
  // about as many keys as any other (causal: row tile i sees about i + 1 tiles of keys). One call
  // site: two would compile the whole kernel twice, and the larger code runs slower.
  uint tiles = pc.slots < pc.rtiles && t < first ? 2u : 1u;
  [[dont_unroll]] for (uint i = 0u; i < tiles; ++i) attend((i == 0u ? first : t) * BR);  // the longest rows first
}
