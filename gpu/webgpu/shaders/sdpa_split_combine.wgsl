// sdpa split (flash-decoding), step 2 of 2, as gpu/vulkan/shaders/sdpa_split_combine.comp: for
// output row (s, h) and its chunks j with j * chunk <= pos + s (each holds a key the query sees),
//   M = max_j m_j,  a_j = exp(m_j - M),  out = (sum_j a_j part_o[j]) * (1 / sum_j a_j l_j),
// f32. 16 invocations per output texel (4 texels per workgroup of 64): slice k takes chunks k,
// k + 16, ... in order, the slices' sums are added in slice order through workgroup memory (the max
// is exact in any order). A texel (buffer or width-packed, W = D % 4 == 0) is 4 consecutive head
// dims of one row. Invocations of spare texels take part in the barriers and store nothing.
// It also writes this step's cache rows, k_cache[pos + s] = k[s], v_cache[pos + s] = v[s] (the
// partial read them from k and v, never from the caches), an exact copy as in the Vulkan kernel.
// Bindings (gpu/webgpu/PROTOCOL.md): `out_` is tensor out (TS_OUTPUT, gpu/ACCESSORS.md); each
// storage array binds the tensor of its name; `pc` takes the plan's uniforms by member name.
@group(0) @binding(0) var<storage, read> part_o : array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> part_ml : array<vec2<f32>>;
TS_OUTPUT(out_, 2)
TS_INPUT(k, 3)
TS_INPUT(v, 4)
TS_OUTPUT(k_cache, 5)
TS_OUTPUT(v_cache, 6)
struct Params { n: u32, S: u32, Hq: u32, Hkv: u32, D4: u32, pos: u32, chunk: u32, chunks: u32 }
@group(0) @binding(7) var<uniform> pc : Params;

const SL = 16u;  // invocations (chunk slices) per texel; WG = 64 (gpu/plans/sdpa.cpp kSplitWg)
const CB = 8u;   // chunks a slice holds from its first pass (the GLSL's CB)
const MASKED = -1.0e30;
var<workgroup> red_m : array<f32, 64>;
var<workgroup> red_l : array<f32, 64>;
var<workgroup> red_o : array<vec4<f32>, 64>;

// A chunk's share of the row, rescaled to its max M (as the GLSL's add_chunk).
fn add_chunk(ml: vec2<f32>, po: vec4<f32>, M: f32, L: ptr<function, f32>, o: ptr<function, vec4<f32>>) {
  var a = exp(ml.x - M);  // var: tests splice a bug after this line (tests/test_sdpa_split.cpp)
  *L += a * ml.y;
  *o += a * po;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let l = ts_local_index(li);
  let w = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
  let grid = nwg.x * nwg.y * nwg.z * WG;
  for (var i = w * WG + l; i < pc.S * pc.Hkv * pc.D4; i += grid) {
    k_cache_store(pc.pos * pc.Hkv * pc.D4 + i, k_at4(4u * i));
    v_cache_store(pc.pos * pc.Hkv * pc.D4 + i, v_at4(4u * i));
  }
  let k = l % SL;
  let first = l - k;
  let t = w * (WG / SL) + l / SL;
  var b = 0u;
  var d4 = 0u;
  var nv = 0u;
  if (t < pc.n) {
    let f = out_flat(t, 0u);
    let D = 4u * pc.D4;
    let r = f / D;
    d4 = (f % D) / 4u;
    nv = min((pc.pos + r / pc.Hq) / pc.chunk + 1u, pc.chunks);
    b = r * pc.chunks;
  }
  // A slice's first CB chunks loaded together and held, before the max's barrier (as the GLSL).
  var mlh : array<vec2<f32>, CB>;
  var oh : array<vec4<f32>, CB>;
  var M = MASKED;
  for (var x = 0u; x < CB; x++) {
    let j = k + x * SL;
    mlh[x] = vec2<f32>(MASKED, 0.0);
    oh[x] = vec4<f32>(0.0);
    if (j < nv) {
      mlh[x] = part_ml[b + j];
      oh[x] = part_o[(b + j) * pc.D4 + d4];
    }
    M = max(M, mlh[x].x);
  }
  for (var j = k + CB * SL; j < nv; j += SL) { M = max(M, part_ml[b + j].x); }
  red_m[l] = M;
  workgroupBarrier();
  for (var i = 0u; i < SL; i++) { M = max(M, red_m[first + i]); }
  var L = 0.0;
  var o = vec4<f32>(0.0);
  for (var x = 0u; x < CB; x++) {
    if (k + x * SL < nv) { add_chunk(mlh[x], oh[x], M, &L, &o); }
  }
  for (var j = k + CB * SL; j < nv; j += SL) { add_chunk(part_ml[b + j], part_o[(b + j) * pc.D4 + d4], M, &L, &o); }
  red_l[l] = L;
  red_o[l] = o;
  workgroupBarrier();
  if (t < pc.n && k == 0u) {
    for (var i = 1u; i < SL; i++) {
      L += red_l[l + i];
      o += red_o[l + i];
    }
    out_store(t, o * (1.0 / L));
  }
}
