// sdpa AV (tiled): the output of sdpa_av_naive as a tiled GEMM per kv head; the algorithm, tiles and
// order of operations of gpu/vulkan/shaders/sdpa_av_tiled.comp, which states them. Rows r = s*G + g
// (head kvh*G + g at position s) share each V tile; workgroup (row tile rt, head-dim tile dt, kvh)
// of WG = 256, the last row tiles first, computes TM = 128 rows x 16 head-dim texels, the context
// in stages of KC keys through shared memory up to the tile's last causal limit (the softmax's
// weights are 0 past each row's own), in c order, float32:
//   out[s, h, d] = sum_{c < ctx} p[h, s, c] * v_cache[c, kvh, d].
// The next stage is fetched into registers while a stage computes. Barriers are in uniform control
// flow.
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

var<private> preg : array<f32, 8>;  // TM * KC / WG: the next stage, fetched while this one computes
var<private> vreg : vec4<f32>;

struct Tile { l: u32, kvh: u32, G: u32, rows: u32, r0: u32, t0: u32, kend: u32 }

// Weight e % KC of tile row e / KC (e = l + WG*u); V one texel per invocation (WG = KC * TD4).
// Zeros past the tile's limit, S*G and D.
fn fetch(k: Tile, c0: u32) {
  for (var u = 0u; u < 8u; u++) {
    let e = k.l + WG * u;
    let i = e / KC;
    let c = c0 + e % KC;
    let r = k.r0 + i;
    var p = 0.0;
    if (r < k.rows && c < k.kend) { p = scores[((k.kvh * k.G + r % k.G) * pc.S + r / k.G) * pc.ctx + c]; }
    preg[u] = p;
  }
  let c = c0 + k.l / TD4;
  let t = k.t0 + k.l % TD4;
  var v = vec4<f32>(0.0);
  if (c < k.kend && t < pc.D4) { v = v_cache_at4(4u * ((c * pc.Hkv + k.kvh) * pc.D4 + t)); }
  vreg = v;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) l: u32) {
  let w = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
  if (w >= pc.rtiles * pc.dtiles * pc.Hkv) { return; }  // a folded grid's spare workgroups, whole
  let tx = l % 16u;
  let ty = l / 16u;
  let rt = pc.rtiles - 1u - w % pc.rtiles;
  let rest = w / pc.rtiles;
  let G = pc.Hq / pc.Hkv;
  let rows = pc.S * G;
  let r0 = rt * TM;
  let kend = min(pc.ctx, pc.pos + (min(r0 + TM, rows) - 1u) / G + 1u);
  let k = Tile(l, rest / pc.dtiles, G, rows, r0, (rest % pc.dtiles) * TD4, kend);
  let busy = r0 + 4u * ty < rows && k.t0 + tx < pc.D4;  // this invocation has outputs (decode: few do)

  var acc: array<vec4<f32>, 8>;  // zero-initialised; acc[i]: row 4ty + i or TM/2 + 4ty + i - 4, texel t0 + tx
  fetch(k, 0u);
  for (var c0 = 0u; c0 < kend; c0 += KC) {
    for (var u = 0u; u < 8u; u++) {
      let e = l + WG * u;
      let i = e / KC;
      ps[(e % KC) * PP + i / 4u][i % 4u] = preg[u];
    }
    vs[l] = vreg;
    workgroupBarrier();
    if (c0 + KC < kend) { fetch(k, c0 + KC); }
    for (var c = 0u; c < KC && busy; c++) {
      let a0 = ps[c * PP + ty];
      let a1 = ps[c * PP + TM / 8u + ty];
      let b = vs[c * TD4 + tx];
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
  if (!busy) { return; }
  for (var i = 0u; i < 8u; i++) {
    let r = r0 + (i / 4u) * (TM / 2u) + 4u * ty + i % 4u;
    if (r < rows) { out_store(out_texel_of(4u * (((r / G) * pc.Hq + k.kvh * G + r % G) * pc.D4 + k.t0 + tx)), acc[i]); }
  }
}
