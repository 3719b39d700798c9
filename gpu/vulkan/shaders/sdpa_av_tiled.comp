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

const uint WG = 256u;  // = Dispatch::workgroup (reference/sdpa.cpp kTiledWg)
const uint TM = 128u;  // rows a tile (kTiledRows)
const uint TD4 = 16u;  // head-dim texels a tile
const uint KC = 16u;   // keys a stage
const uint PP = TM / 4u + 1u;  // weight row pitch in vec4s, padded against bank conflicts

shared vec4 ps[KC * PP];   // [key][row / 4][row % 4]
shared vec4 vs[KC * TD4];  // [key][texel]

uint l, kvh, G, rows, r0, t0, kend;
float preg[TM * KC / WG];  // the next stage, fetched while this one computes
vec4 vreg;

// Weight e % KC of tile row e / KC (e = l + WG*u): consecutive invocations read consecutive weights
// of a row; V: one texel per invocation (WG = KC * TD4). Zeros past the tile's limit, S*G and D.
void fetch(uint c0) {
  for (uint u = 0u; u < TM * KC / WG; ++u) {
    uint e = l + WG * u, i = e / KC, c = c0 + e % KC, r = r0 + i;
    preg[u] = r < rows && c < kend ? scores[((kvh * G + r % G) * pc.S + r / G) * pc.ctx + c] : 0.0;
  }
  uint c = c0 + l / TD4, t = t0 + l % TD4;
  vreg = c < kend && t < pc.D4 ? TO_VEC4(v_cache[(c * pc.Hkv + kvh) * pc.D4 + t]) : vec4(0.0);
}

void main() {
  uint w = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  if (w >= pc.rtiles * pc.dtiles * pc.Hkv) return;  // a folded grid's spare workgroups, whole
  l = gl_LocalInvocationIndex;
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

  vec4 acc[8];  // acc[i]: row 4ty + i (i < 4) or TM/2 + 4ty + i - 4, head-dim texel t0 + tx
  for (uint i = 0u; i < 8u; ++i) acc[i] = vec4(0.0);
  fetch(0u);
  for (uint c0 = 0u; c0 < kend; c0 += KC) {
    for (uint u = 0u; u < TM * KC / WG; ++u) {
      uint e = l + WG * u, i = e / KC;
      ps[(e % KC) * PP + i / 4u][i % 4u] = preg[u];
    }
    vs[l] = vreg;
    barrier();
    if (c0 + KC < kend) fetch(c0 + KC);
    for (uint c = 0u; c < KC && busy; ++c) {
      vec4 a0 = ps[c * PP + ty], a1 = ps[c * PP + TM / 8u + ty], b = vs[c * TD4 + tx];
      acc[0] += a0.x * b;
      acc[1] += a0.y * b;
      acc[2] += a0.z * b;
      acc[3] += a0.w * b;
      acc[4] += a1.x * b;
      acc[5] += a1.y * b;
      acc[6] += a1.z * b;
      acc[7] += a1.w * b;
    }
    barrier();
  }
  if (!busy) return;
  for (uint i = 0u; i < 8u; ++i) {
    uint r = r0 + (i / 4u) * (TM / 2u) + 4u * ty + i % 4u;
    if (r < rows) out_store(out_texel_of(4u * (((r / G) * pc.Hq + kvh * G + r % G) * pc.D4 + t0 + tx)), acc[i]);
  }
}
