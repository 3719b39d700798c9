// sdpa split (flash-decoding), step 1 of 2 for decode (S = 1, G = Hq / Hkv <= QD, G * D4 <= QSTAGE,
// D4 <= DMAX; the plan picks it): gpu/vulkan/shaders/sdpa_split_decode.comp, which states why and
// how; the function, scratch layout and order of operations of sdpa_split_partial, with the chunk's
// cached K and V rows staged through workgroup memory in tiles (coalesced loads, TL in flight per
// invocation, one tile ahead of their use), this step's key and value (from k and v) staged beside the queries and last.
// Workgroup memory holds float32 texels here (WGSL buffers of float16 / bfloat16 widen in their
// accessors).
// Bindings (gpu/webgpu/PROTOCOL.md): q, k, v and the caches through their accessors (TS_INPUT,
// gpu/ACCESSORS.md); each storage array binds the tensor of its name; `pc` takes the plan's
// uniforms; SCMAX and QSTAGE (the shared arrays' sizes) come from the plan. Barriers are in uniform
// control flow: the bounds of the loops around them depend only on the uniforms and the workgroup id.
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

// WG = 64 (reference/sdpa.cpp kSplitWg)
const QD = 8u;      // the most queries of a block (kSplitDecodeQueries)
const DMAX = 64u;   // the longest head dim, in texels (kSplitDecodeTexels)
const TT = 1088u;   // tile texels: 32 rows of 32 texels (+ 1 of padding), 16 of 64, ...
const TL = 17u;     // = TT / WG: texels an invocation stages
const MASKED = -1.0e30;

var<workgroup> sc : array<f32, SCMAX>;  // [query][key], row stride chunk: scores, then weights
var<workgroup> qsh : array<vec4<f32>, QSTAGE>;  // [query][texel]
var<workgroup> tile : array<vec4<f32>, TT>;  // [key][texel], row stride D4 + 1
var<workgroup> fk : array<vec4<f32>, DMAX>;  // this step's key row
var<workgroup> fv : array<vec4<f32>, DMAX>;  // and value row
var<workgroup> red : array<f32, 64>;
var<workgroup> stat_m : array<f32, QD>;
var<workgroup> stat_l : array<f32, QD>;

fn cached_at(kvh: u32, c: u32, d4: u32) -> u32 { return (c * pc.Hkv + kvh) * pc.D4 + d4; }

// Tile texels in flight, R in main: invocation l holds texel ld = l % D4 of rows lk + i * rows
// (lk = l / D4, rows = WG / D4, i < TL) of rows [c, c + n) of a cache (n >= 1, n <= TL * rows,
// n * (D4 + 1) <= TT), loaded one tile ahead of their use (the next K tile, or after the last the
// first V tile, held through the softmax). R is local to main and indexed only in loops of
// straight-line bodies, so that it stays in registers (the Vulkan kernel says why).
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) l: u32) {
  let w = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
  if (w >= pc.chunks * pc.Hkv) { return; }  // a folded grid's spare workgroups, whole
  let j = w % pc.chunks;
  let D4 = pc.D4;
  let kvh = w / pc.chunks;
  let nq = pc.Hq / pc.Hkv;
  let c0 = j * pc.chunk;
  let n = pc.pos + 1u;
  let nk = select(0u, min(pc.chunk, n - c0), n > c0);
  let nc = select(0u, min(nk, pc.pos - c0), pc.pos > c0);  // cached keys, then this step's (nk - nc <= 1)
  let rows = WG / D4;
  let lk = select(1u << 30u, l / D4, l < rows * D4);  // 2^30: stages nothing
  let ld = l % D4;
  let tk = min(min(TT / (D4 + 1u), pc.chunk), TL * rows);  // keys a tile holds
  let nt = (nc + tk - 1u) / tk;                            // tiles of K, then as many of V
  let qs = clamp(WG / tk, 1u, nq);  // QK: invocation x takes key x % tn of the tile, queries x / tn + a * qs

  var R : array<vec4<f32>, TL>;
  var rn = min(tk, nc);
  if (rn > 0u) {
    for (var i = 0u; i < TL; i++) {
      let key = lk + i * rows;
      R[i] = select(vec4<f32>(0.0), k_cache_texel(cached_at(kvh, c0 + min(key, rn - 1u), ld)), key < rn);
    }
  }
  for (var x = l; x < nq * D4; x += WG) { qsh[x] = q_at4(4u * ((kvh * nq + x / D4) * D4 + x % D4)); }
  if (nk > nc) {
    for (var x = l; x < D4; x += WG) {
      fk[x] = k_at4(4u * (kvh * D4 + x));
      fv[x] = v_at4(4u * (kvh * D4 + x));
    }
  }
  for (var t = 0u; t < nt; t++) {
    let t0 = t * tk;
    let tn = min(tk, nc - t0);
    workgroupBarrier();  // the previous tile was read
    for (var i = 0u; i < TL; i++) {
      let key = lk + i * rows;
      if (key < rn) { tile[key * (D4 + 1u) + ld] = R[i]; }
    }
    workgroupBarrier();
    if (t + 1u < nt) {
      rn = min(tk, nc - t0 - tk);
      for (var i = 0u; i < TL; i++) {
        let key = lk + i * rows;
        R[i] = select(vec4<f32>(0.0), k_cache_texel(cached_at(kvh, c0 + t0 + tk + min(key, rn - 1u), ld)), key < rn);
      }
    } else {
      rn = min(tk, nc);
      for (var i = 0u; i < TL; i++) {
        let key = lk + i * rows;
        R[i] = select(vec4<f32>(0.0), v_cache_texel(cached_at(kvh, c0 + min(key, rn - 1u), ld)), key < rn);
      }
    }
    for (var x = l; x < qs * tn; x += WG) {
      let c = x % tn;
      let g = x / tn;
      var acc : array<f32, QD>;
      for (var a = 0u; a < QD; a++) { acc[a] = 0.0; }
      for (var d = 0u; d < D4; d++) {
        let kt = tile[c * (D4 + 1u) + d];
        for (var a = 0u; a < QD; a++) {
          if (g + a * qs < nq) { acc[a] += dot(qsh[(g + a * qs) * D4 + d], kt); }
        }
      }
      for (var a = 0u; a < QD; a++) {
        if (g + a * qs < nq) { sc[(g + a * qs) * pc.chunk + t0 + c] = pc.scale * acc[a]; }
      }
    }
  }
  workgroupBarrier();  // q and this step's rows staged (also when nc == 0)
  if (nk > nc && l < nq) {
    var acc = 0.0;
    for (var d = 0u; d < D4; d++) { acc += dot(qsh[l * D4 + d], fk[d]); }
    sc[l * pc.chunk + nc] = pc.scale * acc;
  }
  workgroupBarrier();

  let P = WG / pc.qblock;
  let qi = min(l / P, QD - 1u);  // < qblock <= QD
  let part = l % P;
  let ns = select(0u, nk, qi < nq);
  var m = MASKED;
  for (var c = part; c < ns; c += P) { m = max(m, sc[qi * pc.chunk + c]); }
  red[l] = m;
  workgroupBarrier();
  if (part == 0u) {
    for (var k = 1u; k < P; k++) { m = max(m, red[l + k]); }
    stat_m[qi] = m;
  }
  workgroupBarrier();
  m = stat_m[qi];
  var sum = 0.0;
  for (var c = part; c < ns; c += P) {
    let e = exp(sc[qi * pc.chunk + c] - m);
    sc[qi * pc.chunk + c] = e;
    sum += e;
  }
  red[l] = sum;  // the maxima were read before the last barrier
  workgroupBarrier();
  if (part == 0u) {
    for (var k = 1u; k < P; k++) { sum += red[l + k]; }
    stat_l[qi] = sum;
  }

  let qv = clamp(WG / D4, 1u, nq);
  let d4 = l % D4;
  let g = l / D4;
  var acc : array<vec4<f32>, QD>;
  for (var a = 0u; a < QD; a++) { acc[a] = vec4<f32>(0.0); }
  for (var t = 0u; t < nt; t++) {
    let t0 = t * tk;
    let tn = min(tk, nc - t0);
    workgroupBarrier();  // the weights are written; the previous tile was read
    for (var i = 0u; i < TL; i++) {
      let key = lk + i * rows;
      if (key < rn) { tile[key * (D4 + 1u) + ld] = R[i]; }
    }
    workgroupBarrier();
    if (t + 1u < nt) {
      rn = min(tk, nc - t0 - tk);
      for (var i = 0u; i < TL; i++) {
        let key = lk + i * rows;
        R[i] = select(vec4<f32>(0.0), v_cache_texel(cached_at(kvh, c0 + t0 + tk + min(key, rn - 1u), ld)), key < rn);
      }
    }
    if (g < qv) {
      for (var c = 0u; c < tn; c++) {
        let vt = tile[c * (D4 + 1u) + d4];
        for (var a = 0u; a < QD; a++) {
          if (g + a * qv < nq) { acc[a] += sc[(g + a * qv) * pc.chunk + t0 + c] * vt; }
        }
      }
    }
  }
  workgroupBarrier();  // the weights are written (also when nc == 0)
  if (g < qv) {
    for (var a = 0u; a < QD; a++) {
      let i = g + a * qv;
      if (i < nq) {
        if (nk > nc) { acc[a] += sc[i * pc.chunk + nc] * fv[d4]; }
        part_o[((kvh * nq + i) * pc.chunks + j) * D4 + d4] = acc[a];
      }
    }
  }
  if (l < nq) { part_ml[(kvh * nq + l) * pc.chunks + j] = vec2<f32>(stat_m[l], stat_l[l]); }
}
