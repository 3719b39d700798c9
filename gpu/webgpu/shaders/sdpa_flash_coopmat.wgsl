// sdpa, impl=coopmat: causal attention of float16 heads on tensor cores (Dawn's subgroup matrices,
// float16 16x16x16 with float32 results), the WGSL twin of gpu/vulkan/shaders/sdpa_flash_coopmat.comp,
// whose comment states the math:
//   y(r, c) = scale_log2 * dot(q[s,h,:], k_cache[c,kvh,:])       for keys c < n = pos + s + 1
//   out[s,h,:] = (sum_c 2^(y_c - R) v_cache[c,kvh,:]) / (sum_c 2^(y_c - R))
// Query rows r = s*G + g of kv head kvh; a workgroup of 8 subgroups (Dispatch::subgroup = 32) takes
// BR = 64 rows in 4 strips of 16; subgroups w and w + 4 both work on strip w, taking keys 0..15 and
// 16..31 of each 32-key tile: two streams, each with its own R (within 1 of its largest y), l and
// sums, which meet at the end by exact powers of two; each weight e = exp2(y - R) is split into
// float16 halves w_hi + w_lo of w = 4096 e. Paired row tiles as the GLSL twin has them.
// What WGSL changes: its subgroup matrices have no elements to read or write and no conversions, and
// there is no subgroup barrier. So every row value goes through workgroup memory between workgroup
// barriers (the kernel's control flow is uniform over the workgroup: its loops run on the uniforms
// and the workgroup id alone), each lane holding half a row (lane (rr, half_): row rr, columns
// 8 half_ .. 8 half_ + 7):
//  - Two passes over the keys, not one: the first computes only the scores, for each stream's final
//    R, so that the second never rescales its sums. A rise of R would take every block of the sums
//    out to memory and back between two workgroup barriers each (any of the workgroup's 256 row
//    streams rising is enough), and recomputing the scores costs less (PERFORMANCE.md). The weights
//    are what the one-pass kernel ends with, exp2(y - R) for the final R (exact powers of two
//    there, one exp2 here), so the derived tolerance (gpu/plans/sdpa.cpp, "impl=coopmat") holds.
//  - The scores are stored (float32) and read by the lanes, which write the weights' halves as
//    float16 where the weighted sum loads them as its left operands.
//  - l is kept by the lanes, one partial sum a column (the reference emulation's order).
//  - At the end both streams' sums go out block by block and the lanes of the strip combine them
//    (the exact factors and 1 / l) into the output's texels.
// Workgroup memory: float16 [the query rows | later K and V tiles], the weights' halves; float32 score
// (and sums) blocks, one a subgroup; the streams' (R, l).
TS_INPUT(q, 0)
@group(0) @binding(1) var<storage, read> k_cache : array<vec4<f16>>;
@group(0) @binding(2) var<storage, read> v_cache : array<vec4<f16>>;
TS_OUTPUT(out_, 3)
struct Params {
  S: u32, Hq: u32, Hkv: u32, D4: u32, pos: u32, ctx: u32, scale_log2: f32, rtiles: u32, slots: u32
}
@group(0) @binding(4) var<uniform> pc : Params;

// NI (the workgroup's invocations: 8 subgroups of 32), BR (its query rows) and DB (16-dim blocks of
// a head, ceil(D / 16)): the plan's defines (gpu/plans/sdpa.cpp).
const BC = 32u;                  // keys a tile: 16 for each of a strip's two subgroups
const DQ = 4u * DB;              // quads (4 halves) of a staged row
const DP = 16u * DB + 8u;        // a staged row in halves, padded (a 16-byte multiple)
const LQ = (BC * DQ + NI - 1u) / NI;  // quads of a K (or V) tile each invocation stages
const QL = BR * DQ / NI;         // quads of the query rows each invocation stages (= DB)
const VOFF = BC * DP;            // the V tile after the K tile; the query rows over both before them
const WS = 16u + 8u;             // halves of a row of a weight block (padded)
const HOFF = BR * DP;            // the subgroups' w_hi blocks, then their w_lo blocks
const LOFF = HOFF + 8u * 16u * WS;
const SS = 16u + 4u;             // floats of a row of a score (or sums) block (padded)
const MASKED = -1.0e30;
const KILL = 1.0e30;

var<workgroup> hsm : array<f16, LOFF + 8u * 16u * WS>;
var<workgroup> fsm : array<f32, 8u * 16u * SS>;
var<workgroup> rl : array<vec2<f32>, 128>;  // (R, l) of row rr of subgroup w at 16 w + rr

alias Left = subgroup_matrix_left<f16, 16, 16>;
alias Right = subgroup_matrix_right<f16, 16, 16>;
alias Acc = subgroup_matrix_result<f32, 16, 16>;

var<private> kvh : u32;
var<private> l_ : u32;
var<private> kr : array<vec4<f16>, LQ>;  // this invocation's share of the next tile
var<private> vr : array<vec4<f16>, LQ>;

// Keys (and values, `values`) c0 .. c0+BC-1 into registers: quad e = l + NI i of the tile (key e / DQ,
// quad e % DQ). Each load unconditional, from a clamped index (ctx and D4 are at least 1); put
// zeroes what lies past the cache or the head (as the GLSL twin, whose comment says why).
fn fetch(c0: u32, values: bool) {
  for (var i = 0u; i < LQ; i++) {
    let e = l_ + NI * i;
    let at = (min(c0 + e / DQ, pc.ctx - 1u) * pc.Hkv + kvh) * pc.D4 + min(e % DQ, pc.D4 - 1u);
    kr[i] = k_cache[at];
    if (values) { vr[i] = v_cache[at]; }
  }
}

fn put_quad(at: u32, v: vec4<f16>) {
  for (var j = 0u; j < 4u; j++) { hsm[at + j] = v[j]; }
}

// The tile of keys (and values) c0 .. that fetch loaded, into workgroup memory, zero past ctx and D.
fn put(values: bool, c0: u32) {
  for (var i = 0u; i < LQ; i++) {
    let e = l_ + NI * i;
    if (e < BC * DQ) {
      let at = (e / DQ) * DP + 4u * (e % DQ);
      let in_ = c0 + e / DQ < pc.ctx && e % DQ < pc.D4;
      put_quad(at, select(vec4<f16>(0.0), kr[i], in_));
      if (values) { put_quad(VOFF + at, select(vec4<f16>(0.0), vr[i], in_)); }
    }
  }
}

// The subgroup's 16 x 16 scores of the staged keys (its half of the tile), into its float32 block.
fn scores(qa: ptr<function, array<Left, DB>>, cw: u32, sbase: u32) {
  var sc = Acc();
  for (var kk = 0u; kk < DB; kk++) {
    let kb = subgroupMatrixLoad<Right, col_major>(&hsm, cw * DP + 16u * kk, DP);
    sc = subgroupMatrixMultiplyAccumulate((*qa)[kk], kb, sc);
  }
  subgroupMatrixStore<row_major>(&fsm, sbase, sc, SS);
}

// The power of two that takes sums made against reference R to reference Rn >= R: exact, 0 past 2^-126
// (R - Rn is then below -126, or R is MASKED: nothing summed yet).
fn rescale(R: f32, Rn: f32) -> f32 {
  if (R == Rn) { return 1.0; }
  if (R == MASKED || R - Rn < -126.0) { return 0.0; }
  return bitcast<f32>((127 + i32(R - Rn)) << 23u);
}

// Rows r0 .. r0+BR-1 of kv head kvh, whole.
fn attend(r0: u32, w: u32, lane: u32) {
  let G = pc.Hq / pc.Hkv;
  let rows = pc.S * G;
  let strip = w & 3u;
  let dh = w >> 2u;
  // The workgroup's causal limit: its last row's keys.
  let limit = min(pc.ctx, pc.pos + (min(r0 + BR, rows) - 1u) / G + 1u);

  workgroupBarrier();  // a row tile before: every subgroup is done with workgroup memory
  fetch(0u, false);
  // The query rows: every load first, then every store.
  var qv : array<vec4<f32>, QL>;
  for (var x = 0u; x < QL; x++) {
    let e = l_ + NI * x;
    let r = r0 + e / DQ;
    let d4 = e % DQ;
    let rc = min(r, rows - 1u);
    qv[x] = q_at4(4u * (((rc / G) * pc.Hq + kvh * G + rc % G) * pc.D4 + min(d4, pc.D4 - 1u)));
    if (!(r < rows && d4 < pc.D4)) { qv[x] = vec4<f32>(0.0); }
  }
  for (var x = 0u; x < QL; x++) {
    let e = l_ + NI * x;
    put_quad((e / DQ) * DP + 4u * (e % DQ), vec4<f16>(qv[x]));  // exact: the case is float16
  }
  workgroupBarrier();
  var qa : array<Left, DB>;
  for (var kk = 0u; kk < DB; kk++) { qa[kk] = subgroupMatrixLoad<Left, row_major>(&hsm, (16u * strip) * DP + 16u * kk, DP); }

  // This lane's row of the subgroup's strip and its half of the subgroup's 16 keys of a tile.
  let rr = lane >> 1u;
  let half_ = lane & 1u;
  let r = r0 + 16u * strip + rr;
  let n = select(0u, pc.pos + r / G + 1u, r < rows);  // keys the row sees
  let sbase = w * 16u * SS;        // the subgroup's float32 block
  let sat = sbase + rr * SS + 8u * half_;  // this lane's 8 elements in it
  let wat = w * 16u * WS + rr * WS + 8u * half_;  // and in its weight blocks (after HOFF, LOFF)
  let cw = 16u * dh;               // the subgroup's keys of a tile: c0 + cw ..
  // Pass 1, the keys alone: the row stream's final R as the one-pass kernel has it (an integer within
  // 1 of the largest y: it rises, to the ceiling of a tile's largest y, where that passes it by more
  // than 1).
  var R = MASKED;
  for (var c0 = 0u; c0 < limit; c0 += BC) {
    workgroupBarrier();  // every subgroup is done with the previous keys (first: the query rows)
    put(false, c0);
    workgroupBarrier();
    if (c0 + BC < limit) { fetch(c0 + BC, false); } else { fetch(0u, true); }  // pass 2's first tile
    scores(&qa, cw, sbase);
    workgroupBarrier();
    let c = c0 + cw + 8u * half_;  // the key of this lane's first score
    var top = MASKED;
    for (var k = 0u; k < 8u; k++) {
      if (c + k < n) { top = max(top, pc.scale_log2 * fsm[sat + k]); }
    }
    top = max(top, subgroupShuffleXor(top, 1u));
    if (top - R > 1.0) { R = ceil(top); }
  }
  // Pass 2: the weights against the final R, and their sums.
  var o : array<Acc, DB>;
  var lc : array<f32, 8>;          // l: one partial sum a column of this lane's half of the row
  for (var c0 = 0u; c0 < limit; c0 += BC) {
    workgroupBarrier();  // every subgroup is done with the previous keys, values and scores
    put(true, c0);
    workgroupBarrier();
    if (c0 + BC < limit) { fetch(c0 + BC, true); }
    scores(&qa, cw, sbase);
    workgroupBarrier();
    let c = c0 + cw + 8u * half_;
    for (var k = 0u; k < 8u; k++) {
      // The weight: 0 past the row's causal limit (exp2 of about -KILL).
      var e = exp2(pc.scale_log2 * fsm[sat + k] - select(KILL, R, c + k < n));  // @marker weight
      lc[k] += e;
      // A cut, not a rounding: w_hi keeps float16's 11 significant bits, and w_lo = w - w_hi is exact.
      let wt = 4096.0 * e;
      let h = bitcast<f32>(bitcast<u32>(wt) & 0xFFFFE000u);
      hsm[HOFF + wat + k] = f16(h);
      hsm[LOFF + wat + k] = f16(wt - h);
    }
    workgroupBarrier();
    let ph = subgroupMatrixLoad<Left, row_major>(&hsm, HOFF + w * 16u * WS, WS);
    let pl = subgroupMatrixLoad<Left, row_major>(&hsm, LOFF + w * 16u * WS, WS);
    for (var dn = 0u; dn < DB; dn++) {
      let vb = subgroupMatrixLoad<Right, row_major>(&hsm, VOFF + cw * DP + 16u * dn, DP);
      o[dn] = subgroupMatrixMultiplyAccumulate(ph, vb, o[dn]);
      o[dn] = subgroupMatrixMultiplyAccumulate(pl, vb, o[dn]);
    }
  }
  // The row sum of this subgroup's keys: columns 0..7 and 8..15 each in order, then the two.
  var l = 0.0;
  for (var k = 0u; k < 8u; k++) { l += lc[k]; }
  l += subgroupShuffleXor(l, 1u);
  if (half_ == 0u) { rl[w * 16u + rr] = vec2<f32>(R, l); }
  workgroupBarrier();
  // Both streams of the row to the larger reference (exact powers of two), and 1 / l.
  let x0 = rl[strip * 16u + rr];
  let x1 = rl[(strip + 4u) * 16u + rr];
  let Rt = max(x0.x, x1.x);
  let f0 = rescale(x0.x, Rt);
  let f1 = rescale(x1.x, Rt);
  let inv = 1.0 / (x0.y * f0 + x1.y * f1) * (1.0 / 4096.0);
  // Block by block, both subgroups of a strip store their sums, and its 64 lanes each take a texel
  // of the 16 x 16 block: row rr, columns 4 (2 half_ + dh) ..; a texel never straddles rows
  // (D % 4 == 0) and is whole: out_store_texel.
  let col = 4u * (2u * half_ + dh);
  let a0 = strip * 16u * SS + rr * SS + col;
  let a1 = (strip + 4u) * 16u * SS + rr * SS + col;
  let row = ((r / G) * pc.Hq + kvh * G + r % G) * 4u * pc.D4;
  for (var dn = 0u; dn < DB; dn++) {
    workgroupBarrier();  // every lane is done with the block before
    subgroupMatrixStore<row_major>(&fsm, sbase, o[dn], SS);
    workgroupBarrier();
    let d = 16u * dn + col;
    if (r < rows && d < 4u * pc.D4) {
      let s0 = vec4<f32>(fsm[a0], fsm[a0 + 1u], fsm[a0 + 2u], fsm[a0 + 3u]);
      let s1 = vec4<f32>(fsm[a1], fsm[a1 + 1u], fsm[a1 + 2u], fsm[a1 + 3u]);
      out_store_texel(out_texel_of(row + d), (s0 * f0 + s1 * f1) * inv);
    }
  }
}

@compute @workgroup_size(NI)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32, @builtin(subgroup_id) w: u32,
        @builtin(subgroup_invocation_id) lane: u32) {
  let g = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
  if (g >= pc.slots * pc.Hkv) { return; }  // a folded grid's spare workgroups, whole
  kvh = g / pc.slots;
  l_ = ts_local_index(li);
  let t = g % pc.slots;
  let first = pc.rtiles - 1u - t;
  // Paired (the plan's slots < rtiles): the t-th shortest row tile too.
  let tiles = select(1u, 2u, pc.slots < pc.rtiles && t < first);
  for (var i = 0u; i < tiles; i++) { attend(select(t, first, i == 0u) * BR, w, lane); }
}
