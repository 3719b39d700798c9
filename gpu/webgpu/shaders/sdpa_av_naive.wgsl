// sdpa AV (naive): out[s,h,d] = sum_{c < ctx} p[h,s,c] * v_cache[c,kvh,d],  kvh = h / (Hq / Hkv),
// p the softmaxed scores (0 where masked). One invocation per output texel, one output element per
// lane; f32 accumulation in c order.
// Bindings (gpu/webgpu/PROTOCOL.md): out is written through its accessors (TS_OUTPUT,
// gpu/ACCESSORS.md; `out_` is tensor out, accessors out_*); each storage array binds the tensor of
// its name; the uniform block `pc` takes the plan's uniforms by member name.
@group(0) @binding(0) var<storage, read> scores : array<f32>;
@group(0) @binding(1) var<storage, read> v_cache : array<DTYPE>;
TS_OUTPUT(out_, 2)
struct Params { n: u32, S: u32, Hq: u32, Hkv: u32, D4: u32, ctx: u32 }
@group(0) @binding(3) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = ts_linear_id(gid, nwg);
  if (t >= pc.n) { return; }
  let D = pc.D4 * 4u;
  let vstride = pc.Hkv * D;
  var o = vec4<f32>(0.0);  // padding lanes stay 0
  for (var j = 0u; j < 4u; j++) {
    let i = out_flat(t, j);
    if (i == TS_PAD) { continue; }
    let d = i % D;
    let sh = i / D;
    let h = sh % pc.Hq;
    let s = sh / pc.Hq;
    let kvh = h / (pc.Hq / pc.Hkv);
    let pb = (h * pc.S + s) * pc.ctx;
    var acc = 0.0;
    for (var c = 0u; c < pc.ctx; c++) {
      acc += scores[pb + c] * f32(v_cache[c * vstride + kvh * D + d]);
    }
    o[j] = acc;
  }
  out_store(t, o);
}
