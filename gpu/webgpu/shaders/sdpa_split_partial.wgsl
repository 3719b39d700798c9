// sdpa split (flash-decoding), step 1 of 2: partial attention of a block of query rows over one
// chunk of the context; the algorithm, order of operations and scratch layout of
// gpu/vulkan/shaders/sdpa_split_partial.comp, which states them. Workgroup (query block b, chunk j,
// kv head kvh), b fastest; queries qi = qblock*b + i of the kv head (qi = s*G + g) share every K/V
// load; per query m = max s_c over the keys it sees, e_c = exp(s_c - m), l = sum e_c,
// part_o[row, j, :] = sum e_c v_c, part_ml[row, j] = (m, l); a chunk past a query's causal limit
// writes (MASKED, 0) and zeros. Keys c < pos come from the caches, this step's (c >= pos) from k
// and v; sdpa_split_combine writes them into the caches. Scores: an invocation takes a key and
// every qs-th query (queries staged in workgroup memory, by head-dim slices), KB cached texels in
// flight; weighted V: a head-dim texel and every qv-th query, KB cached keys in flight, this step's
// keys last. Barriers are in uniform control flow: the bounds of the loops around them depend only
// on the uniforms and the workgroup id.
// Bindings (gpu/webgpu/PROTOCOL.md): q, k, v and the caches through their accessors (TS_INPUT,
// gpu/ACCESSORS.md); each storage array binds the tensor of its name; `pc` takes the plan's
// uniforms; SCMAX and QSTAGE (the shared arrays' sizes) come from the plan.
TS_INPUT(q, 0)
TS_INPUT(k, 1)
TS_INPUT(v, 2)
TS_INPUT(k_cache, 3)
TS_INPUT(v_cache, 4)
@group(0) @binding(5) var<storage, read_write> part_o : array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> part_ml : array<vec2<f32>>;
struct Params {
  S: u32, Hq: u32, Hkv: u32, D4: u32, pos: u32, scale: f32, chunk: u32, chunks: u32, qblocks: u32, qblock: u32
}
@group(0) @binding(7) var<uniform> pc : Params;

// WG = 64 (gpu/plans/sdpa.cpp kSplitWg); qblock is a power of two <= 32; qblock * chunk <= SCMAX.
const QPT = 4u;  // queries an invocation accumulates
const KB = 8u;   // K / V row texels loaded before their first use
const MASKED = -1.0e30;

var<workgroup> sc : array<f32, SCMAX>;  // [query][key], row stride chunk: scores, then weights
var<workgroup> qsh : array<vec4<f32>, QSTAGE>;  // [query][texel of the slice]
var<workgroup> red : array<f32, 64>;
var<workgroup> stat_m : array<f32, 32>;
var<workgroup> stat_l : array<f32, 32>;

struct Block { G: u32, q0: u32, nq: u32, c0: u32, kvh: u32 }

// Query i of the block: its out row, and how many keys of this chunk it sees.
fn row_of(k: Block, i: u32) -> u32 {
  let qi = k.q0 + min(i, k.nq - 1u);
  return (qi / k.G) * pc.Hq + k.kvh * k.G + qi % k.G;
}
fn seen_of(k: Block, i: u32) -> u32 {
  let n = pc.pos + (k.q0 + min(i, k.nq - 1u)) / k.G + 1u;
  return select(0u, min(pc.chunk, n - k.c0), n > k.c0);
}
// Element index of texel d4 of this step's key c >= pos in k / v; of an earlier key in the caches.
fn fresh_at(k: Block, c: u32, d4: u32) -> u32 { return 4u * (((c - pc.pos) * pc.Hkv + k.kvh) * pc.D4 + d4); }
fn cached_at(k: Block, c: u32, d4: u32) -> u32 { return 4u * ((c * pc.Hkv + k.kvh) * pc.D4 + d4); }
fn score(i: u32, c: u32) -> f32 { return sc[i * pc.chunk + c]; }
fn set_weight(i: u32, c: u32, e: f32) { sc[i * pc.chunk + c] = e; }
// chunk_softmax's runs: single invocations (this kernel assumes no subgroup size).
const RUN = 1u;
fn run_max(x: f32) -> f32 { return x; }
fn run_sum(x: f32) -> f32 { return x; }
#include "sdpa_chunk_softmax.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let l = ts_local_index(li);
  let w = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
  if (w >= pc.qblocks * pc.chunks * pc.Hkv) { return; }  // a folded grid's spare workgroups, whole
  let b = w % pc.qblocks;
  let rest = w / pc.qblocks;
  let j = rest % pc.chunks;
  let G = pc.Hq / pc.Hkv;
  let q0 = b * pc.qblock;
  let blk = Block(G, q0, min(pc.qblock, pc.S * G - q0), j * pc.chunk, rest / pc.chunks);
  let nq = blk.nq;
  let c0 = blk.c0;
  let nk = seen_of(blk, nq - 1u);  // the last query sees furthest

  let qs = max(clamp(WG / pc.chunk, 1u, nq), (nq + QPT - 1u) / QPT);
  let ds = min(QSTAGE / nq, pc.D4);
  // Slices outside, keys inside: each slice is staged once; a key's partial sums wait in sc between
  // slices (its invocation is the same in every slice), scaled and masked after the last.
  let nd = select(0u, pc.D4, nk > 0u);
  for (var s0 = 0u; s0 < nd; s0 += ds) {
    let sn = min(ds, pc.D4 - s0);
    let last = s0 + sn == pc.D4;
    workgroupBarrier();  // the previous slice was read
    for (var x = l; x < nq * sn; x += WG) { qsh[x] = q_at4(4u * (row_of(blk, x / sn) * pc.D4 + s0 + x % sn)); }
    workgroupBarrier();
    for (var t = l; t < qs * nk; t += WG) {
      let c = t % nk;
      let g = t / nk;
      var acc : array<f32, QPT>;
      for (var a = 0u; a < QPT; a++) {
        acc[a] = 0.0;
        if (s0 > 0u && g + a * qs < nq) { acc[a] = sc[(g + a * qs) * pc.chunk + c]; }
      }
      if (c0 + c >= pc.pos) {
        for (var d = 0u; d < sn; d++) {
          let kt = k_at4(fresh_at(blk, c0 + c, s0 + d));
          for (var a = 0u; a < QPT; a++) {
            if (g + a * qs < nq) { acc[a] += dot(qsh[(g + a * qs) * sn + d], kt); }
          }
        }
      } else {
        for (var d0 = 0u; d0 < sn; d0 += KB) {
          var kk : array<vec4<f32>, KB>;
          for (var u = 0u; u < KB; u++) {
            kk[u] = select(vec4<f32>(0.0), k_cache_at4(cached_at(blk, c0 + c, s0 + min(d0 + u, sn - 1u))), d0 + u < sn);
          }
          for (var a = 0u; a < QPT; a++) {
            if (g + a * qs < nq) {
              for (var u = 0u; u < KB; u++) {
                if (d0 + u < sn) { acc[a] += dot(qsh[(g + a * qs) * sn + d0 + u], kk[u]); }
              }
            }
          }
        }
      }
      for (var a = 0u; a < QPT; a++) {
        let i = g + a * qs;
        if (i < nq) {
          sc[i * pc.chunk + c] = select(select(MASKED, pc.scale * acc[a], c < seen_of(blk, i)), acc[a], !last);
        }
      }
    }
  }
  workgroupBarrier();

  let P = WG / pc.qblock;
  var n = 0u;
  if (l / P < nq) { n = seen_of(blk, l / P); }
  chunk_softmax(l, P, n);

  let qv = max(clamp(WG / pc.D4, 1u, nq), (nq + QPT - 1u) / QPT);
  let nc = select(0u, min(nk, pc.pos - c0), pc.pos > c0);  // cached keys, then this step's
  for (var t = l; t < qv * pc.D4; t += WG) {
    let d4 = t % pc.D4;
    let g = t / pc.D4;
    var acc : array<vec4<f32>, QPT>;
    var na : array<u32, QPT>;
    for (var a = 0u; a < QPT; a++) {
      acc[a] = vec4<f32>(0.0);
      na[a] = 0u;
      if (g + a * qv < nq) { na[a] = seen_of(blk, g + a * qv); }
    }
    for (var c = 0u; c < nc; c += KB) {
      var vv : array<vec4<f32>, KB>;
      for (var u = 0u; u < KB; u++) {
        vv[u] = select(vec4<f32>(0.0), v_cache_at4(cached_at(blk, c0 + min(c + u, nc - 1u), d4)), c + u < nc);
      }
      for (var a = 0u; a < QPT; a++) {
        for (var u = 0u; u < KB; u++) {
          if (c + u < min(na[a], nc)) { acc[a] += sc[(g + a * qv) * pc.chunk + c + u] * vv[u]; }
        }
      }
    }
    for (var c = nc; c < nk; c++) {
      let vt = v_at4(fresh_at(blk, c0 + c, d4));
      for (var a = 0u; a < QPT; a++) {
        if (c < na[a]) { acc[a] += sc[(g + a * qv) * pc.chunk + c] * vt; }
      }
    }
    for (var a = 0u; a < QPT; a++) {
      let i = g + a * qv;
      if (i < nq) { part_o[(row_of(blk, i) * pc.chunks + j) * pc.D4 + d4] = acc[a]; }
    }
  }
  if (l < nq) { part_ml[row_of(blk, l) * pc.chunks + j] = vec2<f32>(stat_m[l], stat_l[l]); }
}
