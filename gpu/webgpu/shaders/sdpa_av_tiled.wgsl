// sdpa AV (tiled): the output of sdpa_av_naive as a tiled GEMM per kv head; the algorithm, tiles and
// order of operations of gpu/vulkan/shaders/sdpa_av_tiled.comp, which states them. Rows r = s*G + g
// (head kvh*G + g at position s) share each V tile; workgroup (row tile rt, head-dim tile dt, kvh)
// of WG = 256, the last row tiles first, computes TM = 128 rows x 16 head-dim texels, the context
// in stages of KC keys through shared memory up to the tile's last causal limit (the softmax's
// weights are 0 past each row's own), in c order, float32:
//   out[s, h, d] = sum_{c < ctx} p[h, s, c] * v_cache[c, kvh, d].
// Barriers are in uniform control flow.
// Bindings (gpu/webgpu/PROTOCOL.md): out is written through its accessors (TS_OUTPUT,
// gpu/ACCESSORS.md; `out_` is tensor out, accessors out_*); each storage array binds the tensor of
// its name; the uniform block `pc` takes the plan's uniforms by member name.
@group(0) @binding(0) var<storage, read> scores : array<f32>;
TS_INPUT(v_cache, 1)
TS_OUTPUT(out_, 2)
struct Params { S: u32, Hq: u32, Hkv: u32, D4: u32, pos: u32, ctx: u32, rtiles: u32, dtiles: u32 }
@group(0) @binding(3) var<uniform> pc : Params;

// WG = 256 = KC * TD4 (reference/sdpa.cpp kTiledWg), TM = kTiledRows, 4 * TD4 = kTiledCols.
const TM = 128u;
const TD4 = 16u;
const KC = 16u;
const PP = 33u;  // TM / 4 + 1: weight row pitch in vec4s, padded against bank conflicts

var<workgroup> ps : array<vec4<f32>, 528>;  // KC * PP: [key][row / 4][row % 4]
var<workgroup> vs : array<vec4<f32>, 256>;  // KC * TD4: [key][texel]

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) l: u32) {
  let w = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
  if (w >= pc.rtiles * pc.dtiles * pc.Hkv) { return; }  // a folded grid's spare workgroups, whole
  let tx = l % 16u;
  let ty = l / 16u;
  let rt = pc.rtiles - 1u - w % pc.rtiles;
  let rest = w / pc.rtiles;
  let dt = rest % pc.dtiles;
  let kvh = rest / pc.dtiles;
  let G = pc.Hq / pc.Hkv;
  let rows = pc.S * G;
  let r0 = rt * TM;
  let t0 = dt * TD4;
  let kend = min(pc.ctx, pc.pos + (min(r0 + TM, rows) - 1u) / G + 1u);
  let vstride = pc.Hkv * pc.D4;  // v_cache row stride in vec4s

  var acc: array<vec4<f32>, 8>;  // zero-initialised; acc[i]: row 4ty + i or TM/2 + 4ty + i - 4, texel t0 + tx
  for (var c0 = 0u; c0 < kend; c0 += KC) {
    for (var e = l; e < TM * KC; e += WG) {
      let i = e / KC;
      let c = c0 + e % KC;
      let r = r0 + i;
      var p = 0.0;
      if (r < rows && c < kend) { p = scores[((kvh * G + r % G) * pc.S + r / G) * pc.ctx + c]; }
      ps[(e % KC) * PP + i / 4u][i % 4u] = p;
    }
    let c = c0 + l / TD4;
    let t = t0 + l % TD4;
    var v = vec4<f32>(0.0);
    if (c < kend && t < pc.D4) { v = v_cache_at4(4u * (c * vstride + kvh * pc.D4 + t)); }
    vs[l] = v;
    workgroupBarrier();
    for (var k = 0u; k < KC; k++) {
      let a0 = ps[k * PP + ty];
      let a1 = ps[k * PP + TM / 8u + ty];
      let b = vs[k * TD4 + tx];
      acc[0] += a0.x * b;
      acc[1] += a0.y * b;
      acc[2] += a0.z * b;
      acc[3] += a0.w * b;
      acc[4] += a1.x * b;
      acc[5] += a1.y * b;
      acc[6] += a1.z * b;
      acc[7] += a1.w * b;
    }
    workgroupBarrier();
  }
  if (t0 + tx >= pc.D4) { return; }
  for (var i = 0u; i < 8u; i++) {
    let r = r0 + (i / 4u) * (TM / 2u) + 4u * ty + i % 4u;
    if (r < rows) { out_store(out_texel_of(4u * (((r / G) * pc.Hq + kvh * G + r % G) * pc.D4 + t0 + tx)), acc[i]); }
  }
}
