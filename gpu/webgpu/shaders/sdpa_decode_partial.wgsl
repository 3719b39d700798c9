// sdpa split (flash-decoding), step 1 of 2, for short query blocks (decode): the WGSL twin of
// gpu/vulkan/shaders/sdpa_decode_partial.comp, which states the math and the work split. Per query
// row of the block and chunk j (keys c in [c0, c0 + chunk)):
//   m = max_c s_c (MASKED if it sees none),  e_c = exp(s_c - m),  l = sum_c e_c,
//   part_o[row, j, :] = sum_c e_c v[c, kvh, :],  part_ml[row, j] = (m, l),  s_c = scale * q . k_c,
// float32; lane groups of LG invocations share each key (queries in registers, partial dots
// reduce-scattered by subgroupShuffleXor), then weighted V in NS key slices added in slice order.
// Needs subgroups of at least LG invocations (Dispatch::subgroup, `enable subgroups;` from the backend).
TS_INPUT(q, 0)
TS_INPUT(k, 1)
TS_INPUT(v, 2)
TS_INPUT(k_cache, 3)
TS_INPUT(v_cache, 4)
@group(0) @binding(5) var<storage, read_write> part_o : array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> part_ml : array<vec2<f32>>;
struct Params {
  S: u32, Hq: u32, Hkv: u32, D4: u32, pos: u32, scale: f32, chunk: u32, chunks: u32, qblocks: u32
}
@group(0) @binding(7) var<uniform> pc : Params;

const QB = 4u;   // query rows a workgroup (gpu/plans/sdpa.cpp kDecodeQueries)
const LG = 8u;   // invocations a key in the scores (= Dispatch::subgroup)
const TL = 4u;   // head-dim texels an invocation holds: D4 <= LG * TL, D4 even
const KP = 2u;   // keys a lane group scores at once: KP * QB = LG
const NS = 4u;   // weighted-V slices: WG / 32 (WG = kDecodeWg = 128)
const KB = 8u;   // V texels an invocation loads before their first use
const MASKED = -1.0e30;

// Kept small (see the GLSL): [key]: the QB queries' scores, then weights; after the last weight is
// read, slices 1.. of the weighted V, [slice][query][texel] ((NS - 1) * QB * 32 = 384 <= DCHUNK).
var<workgroup> w4 : array<vec4<f32>, DCHUNK>;
var<workgroup> kf : array<vec4<f32>, FMAX * 32u>;  // this step's key rows (S <= FMAX), staged
var<workgroup> qf : array<vec4<f32>, QB * 32u>;    // the block's queries, staged
var<workgroup> red : array<f32, 128>;
var<workgroup> stat_m : array<f32, QB>;
var<workgroup> stat_l : array<f32, QB>;

var<private> G : u32;
var<private> q0 : u32;
var<private> nq : u32;
var<private> c0 : u32;
var<private> kvh : u32;

fn row_of(i: u32) -> u32 {
  let qi = q0 + min(i, nq - 1u);
  return (qi / G) * pc.Hq + kvh * G + qi % G;
}
// How many keys of this chunk query i sees (0 for the block's spare rows i >= nq).
fn seen_of(i: u32) -> u32 {
  let n = pc.pos + (q0 + min(i, nq - 1u)) / G + 1u;
  return select(0u, min(pc.chunk, n - c0), i < nq && n > c0);
}
// Texel u of those invocation t of a lane group holds: pairs of neighbours, pair t then pair t + LG
// (as the GLSL, whose 16-bit caches are read a pair at a time).
fn texel_of(t: u32, u: u32) -> u32 { return 2u * (t + LG * (u / 2u)) + u % 2u; }
fn fresh_at(c: u32, d4: u32) -> u32 { return 4u * (((c - pc.pos) * pc.Hkv + kvh) * pc.D4 + d4); }
fn cached_at(c: u32, d4: u32) -> u32 { return 4u * ((c * pc.Hkv + kvh) * pc.D4 + d4); }
fn score(i: u32, c: u32) -> f32 { return w4[c][i]; }
fn set_weight(i: u32, c: u32, e: f32) { w4[c][i] = e; }
// chunk_softmax's runs: a lane group's LG parts combined by shuffles (partners t ^ 1, ^ 2, ^ 4).
const RUN = LG;
fn run_max(x: f32) -> f32 {
  var y = x;
  for (var b = 1u; b < LG; b *= 2u) { y = max(y, subgroupShuffleXor(y, b)); }
  return y;
}
fn run_sum(x: f32) -> f32 {
  var y = x;
  for (var b = 1u; b < LG; b *= 2u) { y += subgroupShuffleXor(y, b); }
  return y;
}
#include "sdpa_chunk_softmax.wgsl"

// Two halves of a value list held by partners (lane bit `bit` clear / set): each keeps its half and
// adds the partner's copy of it.
fn keep(hi: bool, lo_v: f32, hi_v: f32, bit: u32) -> f32 {
  return select(lo_v, hi_v, hi) + subgroupShuffleXor(select(hi_v, lo_v, hi), bit);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let l = ts_local_index(li);
  let w = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
  if (w >= pc.qblocks * pc.chunks * pc.Hkv) { return; }  // a folded grid's spare workgroups, whole
  let b = w % pc.qblocks;
  let rest = w / pc.qblocks;
  let j = rest % pc.chunks;
  kvh = rest / pc.chunks;
  G = pc.Hq / pc.Hkv;
  q0 = b * QB;
  nq = min(QB, pc.S * G - q0);
  c0 = j * pc.chunk;
  // The last query sees furthest: seen_of(nq - 1u), spelled out in values WGSL's uniformity analysis
  // knows to be uniform (private variables are not), since the shuffles' loop runs to it.
  let n_last = pc.pos + (b * QB + min(QB, pc.S * (pc.Hq / pc.Hkv) - b * QB) - 1u) / (pc.Hq / pc.Hkv) + 1u;
  let nk = select(0u, min(pc.chunk, n_last - j * pc.chunk), n_last > j * pc.chunk);
  let nc = select(0u, min(nk, pc.pos - j * pc.chunk), pc.pos > j * pc.chunk);  // cached keys, then this step's

  let t = l % LG;
  let grp = l / LG;
  // The block's queries, staged once (all invocations, coalesced), then each invocation's texels.
  for (var x = l; x < QB * pc.D4; x += WG) {
    qf[x] = vec4<f32>(0.0);
    if (x / pc.D4 < nq) { qf[x] = q_at4(4u * (row_of(x / pc.D4) * pc.D4 + x % pc.D4)); }
  }
  workgroupBarrier();
  var qr : array<array<vec4<f32>, TL>, QB>;
  for (var i = 0u; i < QB; i++) {
    for (var u = 0u; u < TL; u++) {
      qr[i][u] = vec4<f32>(0.0);
      if (texel_of(t, u) < pc.D4) { qr[i][u] = qf[i * pc.D4 + texel_of(t, u)]; }
    }
  }
  // Each step's K texels are loaded one step ahead (as the GLSL): the next step's loads are in
  // flight during this step's dots and shuffles.
  var ahead : array<array<vec4<f32>, TL>, KP>;
  for (var p = 0u; p < KP; p++) {
    for (var u = 0u; u < TL; u++) {
      let c = grp * KP + p;
      let d4 = texel_of(t, u);
      ahead[p][u] = vec4<f32>(0.0);
      if (c < nc && d4 < pc.D4) { ahead[p][u] = k_cache_at4(cached_at(c0 + c, d4)); }
    }
  }
  for (var base = 0u; base < nc; base += (WG / LG) * KP) {
    let kk = ahead;
    for (var p = 0u; p < KP; p++) {
      for (var u = 0u; u < TL; u++) {
        let c = base + (WG / LG) * KP + grp * KP + p;
        let d4 = texel_of(t, u);
        ahead[p][u] = vec4<f32>(0.0);
        if (c < nc && d4 < pc.D4) { ahead[p][u] = k_cache_at4(cached_at(c0 + c, d4)); }
      }
    }
    var acc : array<f32, 8>;  // KP * QB
    for (var p = 0u; p < KP; p++) {
      for (var i = 0u; i < QB; i++) {
        var a = 0.0;
        for (var u = 0u; u < TL; u++) { a += dot(qr[i][u], kk[p][u]); }
        acc[p * QB + i] = a;
      }
    }
    var h4 : array<f32, 4>;
    for (var x = 0u; x < 4u; x++) { h4[x] = keep((t & 4u) != 0u, acc[x], acc[x + 4u], 4u); }
    let h20 = keep((t & 2u) != 0u, h4[0], h4[2], 2u);
    let h21 = keep((t & 2u) != 0u, h4[1], h4[3], 2u);
    let s = keep((t & 1u) != 0u, h20, h21, 1u);
    let c = base + grp * KP + t / QB;
    let i = t % QB;
    if (c < nc) { w4[c][i] = select(MASKED, pc.scale * s, c < seen_of(i)); }
  }
  // This step's keys (at most FMAX): rows staged in shared memory by all invocations at once, then
  // an invocation a score, its dots in head-dim order.
  let nf = nk - nc;
  if (nf > 0u) {
    for (var x = l; x < nf * pc.D4; x += WG) { kf[x] = k_at4(fresh_at(c0 + nc + x / pc.D4, x % pc.D4)); }
    workgroupBarrier();
    for (var x = l; x < nf * QB; x += WG) {
      let c = nc + x / QB;
      let i = x % QB;
      var a = 0.0;
      for (var d4 = 0u; d4 < pc.D4; d4++) { a += dot(qf[i * pc.D4 + d4], kf[(x / QB) * pc.D4 + d4]); }
      w4[c][i] = select(MASKED, pc.scale * a, c < seen_of(i));
    }
  }
  workgroupBarrier();

  chunk_softmax(l, WG / QB, seen_of(l / (WG / QB)));

  let d4 = l % 32u;
  let slice = l / 32u;
  var acc : array<vec4<f32>, QB>;
  var na : array<u32, QB>;
  for (var i = 0u; i < QB; i++) {
    acc[i] = vec4<f32>(0.0);
    na[i] = seen_of(i);
  }
  // Whole batches of cached keys check no bound (as the GLSL): every query of the block sees every
  // cached key, and the spare rows' sums are never stored.
  let whole = nc - nc % (NS * KB);
  for (var base = 0u; base < whole; base += NS * KB) {
    var vv : array<vec4<f32>, KB>;
    for (var u = 0u; u < KB; u++) {
      vv[u] = vec4<f32>(0.0);
      if (d4 < pc.D4) { vv[u] = v_cache_at4(cached_at(c0 + base + u * NS + slice, d4)); }
    }
    for (var u = 0u; u < KB; u++) {
      let e = w4[base + u * NS + slice];
      for (var i = 0u; i < QB; i++) { acc[i] += e[i] * vv[u]; }
    }
  }
  for (var base = whole; base < nc; base += NS * KB) {
    var vv : array<vec4<f32>, KB>;
    for (var u = 0u; u < KB; u++) {
      let c = base + u * NS + slice;
      vv[u] = vec4<f32>(0.0);
      if (c < nc && d4 < pc.D4) { vv[u] = v_cache_at4(cached_at(c0 + c, d4)); }
    }
    for (var u = 0u; u < KB; u++) {
      let c = base + u * NS + slice;
      if (c < nc) {
        let e = w4[c];
        for (var i = 0u; i < QB; i++) {
          if (c < na[i]) { acc[i] += e[i] * vv[u]; }
        }
      }
    }
  }
  // This step's values, after the cached ones: each slice still adds its keys in key order.
  for (var c = nc + (slice + NS - nc % NS) % NS; c < nk; c += NS) {
    var vt = vec4<f32>(0.0);
    if (d4 < pc.D4) { vt = v_at4(fresh_at(c0 + c, d4)); }
    let e = w4[c];
    for (var i = 0u; i < QB; i++) {
      if (c < na[i]) { acc[i] += e[i] * vt; }
    }
  }
  workgroupBarrier();  // every weight was read: w4 holds the slices' sums now
  if (slice > 0u) {
    for (var i = 0u; i < QB; i++) { w4[((slice - 1u) * QB + i) * 32u + d4] = acc[i]; }
  }
  workgroupBarrier();
  if (slice == 0u && d4 < pc.D4) {
    for (var i = 0u; i < QB; i++) {
      if (i < nq) {
        var o = acc[i];
        for (var x = 0u; x + 1u < NS; x++) { o += w4[(x * QB + i) * 32u + d4]; }
        part_o[(row_of(i) * pc.chunks + j) * pc.D4 + d4] = o;
      }
    }
  }
  if (l < nq) { part_ml[row_of(l) * pc.chunks + j] = vec2<f32>(stat_m[l], stat_l[l]); }
}
