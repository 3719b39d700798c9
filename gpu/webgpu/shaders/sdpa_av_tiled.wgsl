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

// WG = 256 = KC * TD4 (gpu/plans/sdpa.cpp kTiledWg), TM = kTiledRows, 4 * TD4 = kTiledCols.
const TM = 128u;
const TD4 = 16u;
const KC = 16u;
const PP = 33u;  // TM / 4 + 1: weight row pitch in vec4s, padded against bank conflicts

var<workgroup> ps : array<vec4<f32>, 528>;  // KC * PP: [key][row / 4][row % 4]
var<workgroup> vs : array<vec4<f32>, 256>;  // KC * TD4: [key][texel]

// No private array is indexed by a loop variable (the fetches and stores are written out, as the
// accumulators are: sdpa_tile_acc): a compiler that does not unroll such a loop keeps the array in
// local memory.
struct Tile { l: u32, kvh: u32, G: u32, rows: u32, r0: u32, t0: u32, kend: u32, pk: u32, pi: u32 }

// The next stage, fetched into registers while this one computes: invocation l loads weight pk =
// l % KC of tile rows pi + 16u (pi = l / KC, u < 8; TM * KC = 8 WG), and V texel l % TD4 of key
// l / TD4 (WG = KC * TD4). Zeros past the tile's limit, S*G and D.
var<private> pa : vec4<f32>;
var<private> pb : vec4<f32>;
var<private> v : vec4<f32>;

fn fetch_p(k: Tile, i: u32, c: u32) -> f32 {
  let r = k.r0 + i;
  if (r < k.rows && c < k.kend) { return scores[((k.kvh * k.G + r % k.G) * pc.S + r / k.G) * pc.ctx + c]; }
  return 0.0;
}
fn fetch(k: Tile, c0: u32) {
  let c = c0 + k.pk;
  pa = vec4<f32>(fetch_p(k, k.pi, c), fetch_p(k, k.pi + 16u, c), fetch_p(k, k.pi + 32u, c), fetch_p(k, k.pi + 48u, c));
  pb = vec4<f32>(fetch_p(k, k.pi + 64u, c), fetch_p(k, k.pi + 80u, c), fetch_p(k, k.pi + 96u, c), fetch_p(k, k.pi + 112u, c));
  let vc = c0 + k.l / TD4;
  let vt = k.t0 + k.l % TD4;
  v = vec4<f32>(0.0);
  if (vc < k.kend && vt < pc.D4) { v = v_cache_at4(4u * ((vc * pc.Hkv + k.kvh) * pc.D4 + vt)); }
}
fn put_p(k: Tile, i: u32, p: f32) { ps[k.pk * PP + i / 4u][i % 4u] = p; }
fn store(k: Tile, i: u32, tx: u32, a: vec4<f32>) {
  let r = k.r0 + i;
  if (r < k.rows) { out_store(out_texel_of(4u * (((r / k.G) * pc.Hq + k.kvh * k.G + r % k.G) * pc.D4 + k.t0 + tx)), a); }
}
#include "sdpa_tile_acc.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let l = ts_local_index(li);
  let w = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
  if (w >= pc.rtiles * pc.dtiles * pc.Hkv) { return; }  // a folded grid's spare workgroups, whole
  let tx = l % 16u;
  let ty = l / 16u;
  let rt = pc.rtiles - 1u - w % pc.rtiles;
  let rest = w / pc.rtiles;
  let G = pc.Hq / pc.Hkv;
  let rows = pc.S * G;
  let r0 = rt * TM;
  let t0 = (rest % pc.dtiles) * TD4;
  let kend = min(pc.ctx, pc.pos + (min(r0 + TM, rows) - 1u) / G + 1u);
  let k = Tile(l, rest / pc.dtiles, G, rows, r0, t0, kend, l % KC, l / KC);
  let busy = r0 + 4u * ty < rows && t0 + tx < pc.D4;  // this invocation has outputs (decode: few do)

  // Rows 4ty + i and TM/2 + 4ty + i (sdpa_tile_acc.wgsl), head-dim texel t0 + tx.
  fetch(k, 0u);
  for (var c0 = 0u; c0 < kend; c0 += KC) {
    put_p(k, k.pi, pa.x);
    put_p(k, k.pi + 16u, pa.y);
    put_p(k, k.pi + 32u, pa.z);
    put_p(k, k.pi + 48u, pa.w);
    put_p(k, k.pi + 64u, pb.x);
    put_p(k, k.pi + 80u, pb.y);
    put_p(k, k.pi + 96u, pb.z);
    put_p(k, k.pi + 112u, pb.w);
    vs[l] = v;
    workgroupBarrier();
    if (c0 + KC < kend) { fetch(k, c0 + KC); }
    for (var c = 0u; c < KC && busy; c++) {
      tile_fma(ps[c * PP + ty], ps[c * PP + TM / 8u + ty], vs[c * TD4 + tx]);
    }
    workgroupBarrier();
  }
  if (!busy) { return; }
  tile_store(k, ty, tx);
}
