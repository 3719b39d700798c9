// sdpa AV (naive): out[s,h,d] = sum_{c < ctx} p[h,s,c] * v_cache[c,kvh,d],  kvh = h / (Hq / Hkv),
// p the softmaxed scores (0 where masked). One invocation per output element; f32 accumulation
// in c order.
// Bindings (gpu/webgpu/PROTOCOL.md): each storage array binds the tensor of its name (`out_` binds
// `out`), the uniform block `pc` takes the plan's uniforms by member name.
@group(0) @binding(0) var<storage, read> scores : array<f32>;
@group(0) @binding(1) var<storage, read> v_cache : array<DTYPE>;
@group(0) @binding(2) var<storage, read_write> out_ : array<DTYPE>;
struct Params { n: u32, S: u32, Hq: u32, Hkv: u32, D4: u32, ctx: u32 }
@group(0) @binding(3) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = ts_linear_id(gid, nwg);
  if (i >= pc.n) { return; }
  let D = pc.D4 * 4u;
  let d = i % D;
  let sh = i / D;
  let h = sh % pc.Hq;
  let s = sh / pc.Hq;
  let kvh = h / (pc.Hq / pc.Hkv);
  let pb = (h * pc.S + s) * pc.ctx;
  let vstride = pc.Hkv * D;
  var acc = 0.0;
  for (var c = 0u; c < pc.ctx; c++) {
    acc += scores[pb + c] * f32(v_cache[c * vstride + kvh * D + d]);
  }
  out_[i] = DTYPE(acc);
}
