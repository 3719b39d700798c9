// sdpa, impl=coopmat: causal attention of float16 heads on tensor cores (16x16x16 float16 cooperative
// matrices, float32 accumulators), after sdpa_update_cache has written this step's rows into the caches:
//   score(r, c) = scale * dot(q[s,h,:], k_cache[c,kvh,:])        for keys c < n = pos + s + 1
//   M = max_c score, e_c = exp(score - M), l = sum_c e_c,  out[s,h,:] = (sum_c e_c v_cache[c,kvh,:]) * (1 / l)
// Query rows of kv head kvh are r = s*G + g (head h = kvh*G + g), as sdpa_qk_tiled has them: the G
// heads sharing a kv head share every K/V tile. A workgroup of 4 subgroups (Dispatch::subgroup = 32)
// takes BR = 64 rows; subgroup w owns rows 16w .. 16w+15, its Q fragments held in registers.
// Keys go in tiles of BC = 32 up to the workgroup's causal limit, staged in shared memory (zero past D
// and past ctx). Two passes over the keys: the first finds each row's max M, the second weighs with
// exp(score - M) and accumulates; a weight passes one exp and nothing is rescaled, so the bound is the
// one of a single softmax (gpu/plans/sdpa.cpp, "impl=coopmat"). The A operand of the weighted sum must
// be float16: a weight is scaled, w = 2^12 e (exact), and split w_hi = float16(w), w_lo =
// float16(w - w_hi); both multiply V (two products, one float32 accumulator), which keeps e to about
// 2^-20 relative, and out takes the 2^-12 back with 1 / l. The scale keeps both halves normal
// float16 numbers down to e = 2^-15 (w_hi down to 2^-26): a device that flushes float16 subnormals
// (the specs allow it without DenormPreserve, in conversions and on tensor cores alike) loses at most
// 2^-26 of a weight.
// Lane pair (2i, 2i+1) of a subgroup does row i's softmax, 16 keys each (from key i of its half on,
// wrapping: no bank conflicts); their sums l are added at the end.
#extension GL_NV_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_shader_subgroup_basic : enable
TS_INPUT(q, 0)
layout(std430, binding = 1) readonly buffer KC { f16vec4 k_cache[]; };
layout(std430, binding = 2) readonly buffer VC { f16vec4 v_cache[]; };
TS_OUTPUT(out, 3)
layout(push_constant) uniform Params {
  uint S; uint Hq; uint Hkv; uint D4; uint pos; uint ctx; float scale; uint rtiles;
} pc;

const uint WG = 128u;            // = Dispatch::workgroup: 4 subgroups of 32
const uint BR = 64u;             // query rows a workgroup (gpu/plans/sdpa.cpp kCoopmatRows)
const uint BC = 32u;             // keys a tile
const uint DM = 128u;            // the longest head (the contract's coopmat rule)
const uint DP = DM / 4u + 2u;    // a staged row in quads: a 16-byte multiple, padded against bank conflicts
const float MASKED = -1.0e30;

uvec2 quad(f16vec4 v) { return uvec2(packFloat2x16(v.xy), packFloat2x16(v.zw)); }

// float16 quads as uvec2: glslang 12 loads float16 cooperative matrices from scalar or uint arrays only.
shared uvec2 sq[BR * DP];                // the workgroup's query rows, [row][d]
shared uvec2 skv[BC * DP];               // the tile's keys, then its values, [key][d]
shared float ss[4u * 16u * BC];          // per subgroup: its 16 rows' scores of the tile, [row][key]
shared float16_t sp[4u * 2u * 16u * BC]; // per subgroup: the weights' high and low halves, [half][row][key]

uint kvh, G, rows, r0;

// Keys c0 .. c0+BC-1 of the cache into skv (zero past D and past ctx).
void stage(uint c0, bool values) {
  barrier();  // every subgroup is done with the previous contents
  for (uint e = ts_local_index(); e < BC * (DM / 4u); e += WG) {
    uint j = e / (DM / 4u), d4 = e % (DM / 4u), c = c0 + j;
    f16vec4 v = f16vec4(0.0);
    if (c < pc.ctx && d4 < pc.D4) {
      uint at = (c * pc.Hkv + kvh) * pc.D4 + d4;
      v = values ? v_cache[at] : k_cache[at];
    }
    skv[j * DP + d4] = quad(v);
  }
  barrier();
}

// The subgroup's 16 x BC scores of key tile c0 (unscaled dots) into its ss region.
void scores(uint c0, uint w, uint nk, fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> qa[8]) {
  stage(c0, false);
  for (uint j = 0u; j < 2u; ++j) {
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> sc = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
    for (uint kk = 0u; kk < 8u; ++kk)
      if (kk < nk) {
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> kb;
        coopMatLoadNV(kb, skv, (16u * j) * DP + 4u * kk, DP, true);
        sc = coopMatMulAddNV(qa[kk], kb, sc);
      }
    coopMatStoreNV(sc, ss, w * 16u * BC + 16u * j, BC, false);
  }
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}

void main() {
  uint g = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  if (g >= pc.rtiles * pc.Hkv) return;  // a folded grid's spare workgroups, whole
  kvh = g / pc.rtiles;
  G = pc.Hq / pc.Hkv;
  rows = pc.S * G;
  r0 = (g % pc.rtiles) * BR;
  uint w = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  uint nk = (pc.D4 + 3u) / 4u;  // 16-dim steps of D
  // The workgroup's causal limit: its last row's keys.
  uint limit = min(pc.ctx, pc.pos + (min(r0 + BR, rows) - 1u) / G + 1u);

  for (uint e = ts_local_index(); e < BR * (DM / 4u); e += WG) {
    uint i = e / (DM / 4u), d4 = e % (DM / 4u), r = r0 + i;
    vec4 v = vec4(0.0);
    if (r < rows && d4 < pc.D4) v = q_at4(4u * (((r / G) * pc.Hq + kvh * G + r % G) * pc.D4 + d4));
    sq[i * DP + d4] = quad(f16vec4(v));  // exact: the case is float16
  }
  barrier();
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> qa[8];
  for (uint kk = 0u; kk < 8u; ++kk)
    if (kk < nk) coopMatLoadNV(qa[kk], sq, (16u * w) * DP + 4u * kk, DP, false);

  // This lane's row of the subgroup's strip and its half of the tile's keys.
  uint rr = lane >> 1u, half_ = lane & 1u, r = r0 + 16u * w + rr;
  uint n = r < rows ? pc.pos + r / G + 1u : 0u;  // keys the row sees
  uint at = w * 16u * BC + rr * BC + 16u * half_, pat = w * 2u * 16u * BC + rr * BC + 16u * half_;
  float m = MASKED;
  for (uint c0 = 0u; c0 < limit; c0 += BC) {
    scores(c0, w, nk, qa);
    // Lane pair rr starts at column rr: the 16 rows' reads of one step fall in 16 banks, not one.
    for (uint i = 0u; i < 16u; ++i) {
      uint k = (i + rr) & 15u;
      if (c0 + 16u * half_ + k < n) m = max(m, pc.scale * ss[at + k]);
    }
  }
  m = max(m, subgroupShuffleXor(m, 1u));

  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> o[8];
  for (uint dn = 0u; dn < 8u; ++dn) o[dn] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
  float l = 0.0;
  for (uint c0 = 0u; c0 < limit; c0 += BC) {
    scores(c0, w, nk, qa);
    for (uint i = 0u; i < 16u; ++i) {
      uint k = (i + rr) & 15u;
      float e = c0 + 16u * half_ + k < n ? exp(pc.scale * ss[at + k] - m) : 0.0;  // @marker weight
      l += e;
      // The high half rounded in the preamble's integer arithmetic: a compiler may fold
      // float(float16_t(w)) back to w, which would leave the low half 0.
      float w = 4096.0 * e, hi = ts_f16_round(w);
      sp[pat + k] = float16_t(hi);  // exact
      sp[pat + 16u * BC + k] = float16_t(w - hi);
    }
    stage(c0, true);  // its barriers also order the weights' stores before their loads
    uint pbase = w * 2u * 16u * BC;
    for (uint kk = 0u; kk < 2u; ++kk) {
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ph, pl;
      coopMatLoadNV(ph, sp, pbase + 16u * kk, BC, false);
      coopMatLoadNV(pl, sp, pbase + 16u * BC + 16u * kk, BC, false);
      for (uint dn = 0u; dn < 8u; ++dn)
        if (dn < nk) {
          fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> vb;
          coopMatLoadNV(vb, skv, (16u * kk) * DP + 4u * dn, DP, false);
          o[dn] = coopMatMulAddNV(ph, vb, o[dn]);
          o[dn] = coopMatMulAddNV(pl, vb, o[dn]);
        }
    }
  }
  l += subgroupShuffleXor(l, 1u);
  float inv = 1.0 / l * (1.0 / 4096.0);

  // Two 16x16 blocks of the strip's output at a time through ss; lane (rr, half_) stores row rr's
  // 16 dims of block dn + half_, four texels (D % 4 == 0: a texel never straddles rows).
  for (uint dn = 0u; dn < 8u; dn += 2u) {
    if (dn >= nk) break;
    subgroupBarrier();  // the lanes are done reading ss
    coopMatStoreNV(o[dn], ss, w * 16u * BC, BC, false);
    if (dn + 1u < nk) coopMatStoreNV(o[dn + 1u], ss, w * 16u * BC + 16u, BC, false);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    if (r >= rows) continue;
    uint row = ((r / G) * pc.Hq + kvh * G + r % G) * 4u * pc.D4;
    for (uint t = 0u; t < 4u; ++t) {
      uint d = 16u * (dn + half_) + 4u * t;
      if (d >= 4u * pc.D4) continue;
      uint a = w * 16u * BC + rr * BC + 16u * half_ + 4u * t;
      out_store(out_texel_of(row + d), vec4(ss[a], ss[a + 1u], ss[a + 2u], ss[a + 3u]) * inv);
    }
  }
}
