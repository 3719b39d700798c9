// sdpa split (flash-decoding), step 1 of 2: partial attention of a block of query rows over one
// chunk of the context; the algorithm, order of operations and scratch layout of
// gpu/vulkan/shaders/sdpa_split_partial.comp, which states them. Workgroup (query block b, chunk j,
// kv head kvh), b fastest; queries qi = qblock*b + i of the kv head (qi = s*G + g) share every K/V
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
struct Params {
  S: u32, Hq: u32, Hkv: u32, D4: u32, pos: u32, scale: f32, chunk: u32, chunks: u32, qblocks: u32, qblock: u32
}
@group(0) @binding(5) var<uniform> pc : Params;

// WG = 64 (reference/sdpa.cpp kSplitWg); qblock is a power of two <= 32; qblock * chunk <= 4096.
const MASKED = -1.0e30;

var<workgroup> sc : array<f32, 4096>;  // [query][key], row stride chunk: scores, then weights
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

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) l: u32) {
  let w = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
  if (w >= pc.qblocks * pc.chunks * pc.Hkv) { return; }  // a folded grid's spare workgroups, whole
  let b = w % pc.qblocks;
  let rest = w / pc.qblocks;
  let j = rest % pc.chunks;
  let G = pc.Hq / pc.Hkv;
  let q0 = b * pc.qblock;
  let blk = Block(G, q0, min(pc.qblock, pc.S * G - q0), j * pc.chunk, rest / pc.chunks);
  let nk = seen_of(blk, blk.nq - 1u);  // the last query sees furthest

  for (var t = l; t < blk.nq * nk; t += WG) {
    let i = t / nk;
    let c = t % nk;
    let kb = ((blk.c0 + c) * pc.Hkv + blk.kvh) * pc.D4;
    let qb = row_of(blk, i) * pc.D4;
    var acc = 0.0;
    for (var d4 = 0u; d4 < pc.D4; d4++) { acc += dot(q_at4(4u * (qb + d4)), k_cache_at4(4u * (kb + d4))); }
    sc[i * pc.chunk + c] = select(MASKED, pc.scale * acc, c < seen_of(blk, i));
  }
  workgroupBarrier();

  let P = WG / pc.qblock;
  let qi = l / P;
  let part = l % P;
  var n = 0u;
  if (qi < blk.nq) { n = seen_of(blk, qi); }
  var m = MASKED;
  for (var c = part; c < n; c += P) { m = max(m, sc[qi * pc.chunk + c]); }
  red[l] = m;
  workgroupBarrier();
  if (part == 0u) {
    for (var k = 1u; k < P; k++) { m = max(m, red[l + k]); }
    stat_m[qi] = m;
  }
  workgroupBarrier();
  m = stat_m[qi];
  var sum = 0.0;
  for (var c = part; c < n; c += P) {
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
  workgroupBarrier();

  for (var t = l; t < blk.nq * pc.D4; t += WG) {
    let i = t / pc.D4;
    let d4 = t % pc.D4;
    let n_i = seen_of(blk, i);
    var acc = vec4<f32>(0.0);
    for (var c = 0u; c < n_i; c++) {
      acc += sc[i * pc.chunk + c] * v_cache_at4(4u * (((blk.c0 + c) * pc.Hkv + blk.kvh) * pc.D4 + d4));
    }
    part_o[(row_of(blk, i) * pc.chunks + j) * pc.D4 + d4] = acc;
  }
  if (l < blk.nq) { part_ml[row_of(blk, l) * pc.chunks + j] = vec2<f32>(stat_m[l], stat_l[l]); }
}
