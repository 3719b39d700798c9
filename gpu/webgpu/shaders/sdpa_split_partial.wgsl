// sdpa split (flash-decoding), step 1 of 2: partial attention of a block of query rows over one
// chunk of the context; the algorithm, order of operations and scratch layout of
// gpu/vulkan/shaders/sdpa_split_partial.comp, which states them. Workgroup (query block b, chunk j,
// kv head kvh), b fastest; queries qi = 8b .. 8b+7 of the kv head (qi = s*G + g) share every K/V
// load; per query m = max s_c over the keys it sees, e_c = exp(s_c - m), l = sum e_c,
// part_o[row, j, :] = sum e_c v_c, part_ml[row, j] = (m, l); a chunk past a query's causal limit
// writes (MASKED, 0) and zeros. Barriers are in uniform control flow: the bounds of the loops
// around them depend only on the uniforms and the workgroup id.
// Bindings (gpu/webgpu/PROTOCOL.md): q and the caches through their accessors (TS_INPUT,
// gpu/ACCESSORS.md); each storage array binds the tensor of its name; `pc` takes the plan's uniforms.
TS_INPUT(q, 0)
TS_INPUT(k_cache, 1)
TS_INPUT(v_cache, 2)
@group(0) @binding(3) var<storage, read_write> part_o : array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> part_ml : array<vec2<f32>>;
struct Params { S: u32, Hq: u32, Hkv: u32, D4: u32, pos: u32, scale: f32, chunk: u32, chunks: u32, qblocks: u32 }
@group(0) @binding(5) var<uniform> pc : Params;

const QB = 8u;       // queries per workgroup (reference/sdpa.cpp kSplitQueries); WG = 64 (kSplitWg)
const PER_Q = 8u;    // WG / QB: invocations per query in the reductions
const CHMAX = 256u;  // longest chunk (kSplitMaxChunk)
const MASKED = -1.0e30;

var<workgroup> sc : array<f32, 2048>;  // QB * CHMAX, [query][key]: scores, then weights
var<workgroup> red : array<f32, 64>;
var<workgroup> stat_m : array<f32, 8>;
var<workgroup> stat_l : array<f32, 8>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) l: u32) {
  let w = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
  if (w >= pc.qblocks * pc.chunks * pc.Hkv) { return; }  // a folded grid's spare workgroups, whole
  let b = w % pc.qblocks;
  let rest = w / pc.qblocks;
  let j = rest % pc.chunks;
  let kvh = rest / pc.chunks;
  let G = pc.Hq / pc.Hkv;
  let q0 = b * QB;
  let nq = min(QB, pc.S * G - q0);
  let c0 = j * pc.chunk;
  let limit = pc.pos + (q0 + nq - 1u) / G + 1u;  // the last query sees furthest
  var nk = 0u;
  if (limit > c0) { nk = min(pc.chunk, limit - c0); }
  var row: array<u32, 8>;   // out row of each query
  var seen: array<u32, 8>;  // keys of this chunk it sees
  for (var i = 0u; i < QB; i++) {
    let qi = q0 + min(i, nq - 1u);
    let s = qi / G;
    let n = pc.pos + s + 1u;
    row[i] = s * pc.Hq + kvh * G + qi % G;
    seen[i] = select(0u, min(pc.chunk, n - c0), n > c0);
  }

  for (var t = l; t < nq * nk; t += WG) {
    let i = t / nk;
    let c = t % nk;
    let kb = ((c0 + c) * pc.Hkv + kvh) * pc.D4;
    let qb = row[i] * pc.D4;
    var acc = 0.0;
    for (var d4 = 0u; d4 < pc.D4; d4++) { acc += dot(q_at4(4u * (qb + d4)), k_cache_at4(4u * (kb + d4))); }
    sc[i * CHMAX + c] = select(MASKED, pc.scale * acc, c < seen[i]);
  }
  workgroupBarrier();

  let qi = l / PER_Q;
  let part = l % PER_Q;
  let n = select(0u, seen[qi], qi < nq);
  var m = MASKED;
  for (var c = part; c < n; c += PER_Q) { m = max(m, sc[qi * CHMAX + c]); }
  red[l] = m;
  workgroupBarrier();
  if (part == 0u) {
    for (var k = 1u; k < PER_Q; k++) { m = max(m, red[l + k]); }
    stat_m[qi] = m;
  }
  workgroupBarrier();
  m = stat_m[qi];
  var sum = 0.0;
  for (var c = part; c < n; c += PER_Q) {
    let e = exp(sc[qi * CHMAX + c] - m);
    sc[qi * CHMAX + c] = e;
    sum += e;
  }
  red[l] = sum;  // the maxima were read before the last barrier
  workgroupBarrier();
  if (part == 0u) {
    for (var k = 1u; k < PER_Q; k++) { sum += red[l + k]; }
    stat_l[qi] = sum;
  }
  workgroupBarrier();

  for (var t = l; t < nq * pc.D4; t += WG) {
    let i = t / pc.D4;
    let d4 = t % pc.D4;
    var acc = vec4<f32>(0.0);
    for (var c = 0u; c < seen[i]; c++) {
      acc += sc[i * CHMAX + c] * v_cache_at4(4u * (((c0 + c) * pc.Hkv + kvh) * pc.D4 + d4));
    }
    part_o[(row[i] * pc.chunks + j) * pc.D4 + d4] = acc;
  }
  if (l < nq) { part_ml[row[l] * pc.chunks + j] = vec2<f32>(stat_m[l], stat_l[l]); }
}
