// sdpa AV (tiled): the output of sdpa_av_naive as a tiled GEMM per kv head, with its rows r = s*G + g
// (head h = kvh*G + g at position s, G = Hq / Hkv) as in sdpa_qk_tiled: the G heads of a kv head
// share every V tile. Workgroup (row tile rt, head-dim tile dt, kvh), WG = 256 invocations,
// computes rows r0 = TM*rt .. +TM, head-dim texels 16*dt .. +16 (64 head dims):
//   out[s, h, d] = sum_{c < ctx} p[h, s, c] * v_cache[c, kvh, d].
// The context goes in stages of KC keys: the workgroup loads the stage's weights (float32 scores)
// and V rows into shared memory once, then invocation (tx, ty) = (l % 16, l / 16) accumulates rows
// 4ty + i and TM/2 + 4ty + i (i < 4) times head-dim texel tx in registers, in c order, float32.
// Causal: the softmax leaves weight 0 past each row's limit pos + s, so the loop ends at the
// tile's last row's limit; keys past it in a stage load weight 0 and V 0 (exact zeros added).
// The next stage is fetched into registers while a stage computes. Invocations whose rows are all
// past S*G, or whose texel is past D4, skip the arithmetic and store nothing. The 4 head dims are one
// texel of out in its layouts (buffer, texture3d_w: gpu/ACCESSORS.md).
layout(std430, binding = 0) readonly buffer SC { float scores[]; };
layout(std430, binding = 1) readonly buffer VC { DTYPE4 v_cache[]; };
TS_OUTPUT(out, 2)
layout(push_constant) uniform Params { uint S; uint Hq; uint Hkv; uint D4; uint pos; uint ctx; uint rtiles; uint dtiles; } pc;

const uint WG = 256u;  // = Dispatch::workgroup (gpu/plans/sdpa.cpp kTiledWg)
const uint TM = 128u;  // rows a tile (kTiledRows)
const uint TD4 = 16u;  // head-dim texels a tile
const uint KC = 16u;   // keys a stage
const uint PP = TM / 4u + 1u;  // weight row pitch in vec4s, padded against bank conflicts

shared vec4 ps[KC * PP];   // [key][row / 4][row % 4]
shared vec4 vs[KC * TD4];  // [key][texel]

// No private array is indexed by a loop variable (the fetches and stores are written out, as the
// accumulators are: sdpa_tile_acc): a compiler that does not unroll such a loop keeps the array in
// local memory.
uint l, kvh, G, rows, r0, t0, kend;

// The next stage, fetched into registers while this one computes: invocation l loads weight pk =
// l % KC (consecutive invocations: consecutive weights of a row) of tile rows pi + 16u (u < 8;
// TM * KC = 8 WG), and V texel l % TD4 of key l / TD4 (WG = KC * TD4). Zeros past the tile's
// limit, S*G and D.
uint pk, pi;
vec4 pa, pb, v;

float fetch_p(uint i, uint c) {
  uint r = r0 + i;
  return r < rows && c < kend ? scores[((kvh * G + r % G) * pc.S + r / G) * pc.ctx + c] : 0.0;
}
void fetch(uint c0) {
  uint c = c0 + pk;
  pa = vec4(fetch_p(pi, c), fetch_p(pi + 16u, c), fetch_p(pi + 32u, c), fetch_p(pi + 48u, c));
  pb = vec4(fetch_p(pi + 64u, c), fetch_p(pi + 80u, c), fetch_p(pi + 96u, c), fetch_p(pi + 112u, c));
  uint vc = c0 + l / TD4, vt = t0 + l % TD4;
  v = vc < kend && vt < pc.D4 ? TO_VEC4(v_cache[(vc * pc.Hkv + kvh) * pc.D4 + vt]) : vec4(0.0);
}
void put_p(uint i, float p) { ps[pk * PP + i / 4u][i % 4u] = p; }
void store(uint i, uint tx, vec4 a) {
  uint r = r0 + i;
  if (r < rows) out_store(out_texel_of(4u * (((r / G) * pc.Hq + kvh * G + r % G) * pc.D4 + t0 + tx)), a);
}
#include "sdpa_tile_acc.glsl"

void main() {
  uint w = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  if (w >= pc.rtiles * pc.dtiles * pc.Hkv) return;  // a folded grid's spare workgroups, whole
  l = ts_local_index();
  uint tx = l % 16u, ty = l / 16u;
  // The last row tiles, with the longest contexts, come first: the short ones fill in behind them.
  uint rt = pc.rtiles - 1u - w % pc.rtiles, rest = w / pc.rtiles, dt = rest % pc.dtiles;
  kvh = rest / pc.dtiles;
  G = pc.Hq / pc.Hkv;
  rows = pc.S * G;
  r0 = rt * TM;
  t0 = dt * TD4;
  kend = min(pc.ctx, pc.pos + (min(r0 + TM, rows) - 1u) / G + 1u);  // uniform in the workgroup
  bool busy = r0 + 4u * ty < rows && t0 + tx < pc.D4;  // this invocation has outputs (decode: few do)
  pk = l % KC;
  pi = l / KC;

  // Rows 4ty + i and TM/2 + 4ty + i (sdpa_tile_acc.glsl), head-dim texel t0 + tx.
  fetch(0u);
  for (uint c0 = 0u; c0 < kend; c0 += KC) {
    put_p(pi, pa.x);
    put_p(pi + 16u, pa.y);
    put_p(pi + 32u, pa.z);
    put_p(pi + 48u, pa.w);
    put_p(pi + 64u, pb.x);
    put_p(pi + 80u, pb.y);
    put_p(pi + 96u, pb.z);
    put_p(pi + 112u, pb.w);
    vs[l] = v;
    barrier();
    if (c0 + KC < kend) fetch(c0 + KC);
    for (uint c = 0u; c < KC && busy; ++c) {
      tile_fma(ps[c * PP + ty], ps[c * PP + TM / 8u + ty], vs[c * TD4 + tx]);
    }
    barrier();
  }
  if (!busy) return;
  tile_store(ty, tx);
}
