// sdpa AV (tiled): the output of sdpa_av_naive, 4 queries x 4 head dims per invocation: for the
// invocation's (h, query tile s0 = 4*st, head-dim vec4 d4), i in [0, 4),
//   out[s0+i, h, 4*d4 : 4*d4+4] = sum_{c < ctx} p[h, s0+i, c] * v_cache[c, kvh, 4*d4 : 4*d4+4].
// Each context row's V is one load of 4 contiguous head-dim lanes (v_cache binds as a vec4 array,
// D % 4 == 0), scaled by each query's weight; accumulation per lane in c order, f32. The 4 head
// dims of a query are one texel of out (a buffer or width-packed: W = D, a multiple of 4).
// The context loop is a branch-free body over whole groups of 4 rows, then one checked ragged tail
// of ctx % 4 rows. Queries past S read a clamped, valid score row and are not stored.
// Bindings (gpu/webgpu/PROTOCOL.md): out is written through its accessors (TS_OUTPUT,
// gpu/ACCESSORS.md; `out_` is tensor out, accessors out_*); each storage array binds the tensor of
// its name; the uniform block `pc` takes the plan's uniforms by member name.
@group(0) @binding(0) var<storage, read> scores : array<f32>;
@group(0) @binding(1) var<storage, read> v_cache : array<vec4<DTYPE>>;
TS_OUTPUT(out_, 2)
struct Params { n: u32, S: u32, Hq: u32, Hkv: u32, D4: u32, ctx: u32 }
@group(0) @binding(3) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let id = ts_linear_id(gid, nwg);
  if (id >= pc.n) { return; }
  let s_tiles = (pc.S + 3u) / 4u;
  let d4 = id % pc.D4;
  let rest = id / pc.D4;
  let st = rest % s_tiles;
  let h = rest / s_tiles;
  let s0 = st * 4u;
  let kvh = h / (pc.Hq / pc.Hkv);
  let vstride = pc.Hkv * pc.D4;  // v_cache row stride, in vec4s
  let vb = kvh * pc.D4 + d4;     // this head's lanes within a row
  var pb: array<u32, 4>;
  for (var i = 0u; i < 4u; i++) {
    pb[i] = (h * pc.S + min(s0 + i, pc.S - 1u)) * pc.ctx;
  }
  var acc: array<vec4<f32>, 4>;  // zero-initialised
  let aligned = pc.ctx - pc.ctx % 4u;
  for (var c = 0u; c < aligned; c += 4u) {
    var vv: array<vec4<f32>, 4>;
    for (var j = 0u; j < 4u; j++) {
      vv[j] = vec4<f32>(v_cache[(c + j) * vstride + vb]);
    }
    for (var i = 0u; i < 4u; i++) {
      let p = vec4<f32>(scores[pb[i] + c], scores[pb[i] + c + 1u], scores[pb[i] + c + 2u], scores[pb[i] + c + 3u]);
      acc[i] += p.x * vv[0];
      acc[i] += p.y * vv[1];
      acc[i] += p.z * vv[2];
      acc[i] += p.w * vv[3];
    }
  }
  for (var c = aligned; c < pc.ctx; c++) {
    let vv = vec4<f32>(v_cache[c * vstride + vb]);
    for (var i = 0u; i < 4u; i++) {
      acc[i] += scores[pb[i] + c] * vv;
    }
  }
  for (var i = 0u; i < 4u && s0 + i < pc.S; i++) {
    out_store(out_texel_of(((s0 + i) * pc.Hq + h) * pc.D4 * 4u + 4u * d4), acc[i]);
  }
}
