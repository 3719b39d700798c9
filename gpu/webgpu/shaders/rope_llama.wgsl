// rope_llama: for pair i of row (b,s,h) of xq and of xk, with c = freqs_cos[s,i], n = freqs_sin[s,i]:
//   out[2i] = x[2i]*c - x[2i+1]*n,   out[2i+1] = x[2i]*n + x[2i+1]*c.
// One invocation per pair, xq's nq pairs first, then xk's. float16 storage computes in float32.
// Bindings (gpu/webgpu/PROTOCOL.md): each storage array binds the tensor of its name, the uniform
// block `pc` takes the plan's uniforms by member name. The preamble gives DTYPE, WG, ts_linear_id.
@group(0) @binding(0) var<storage, read> xq : array<DTYPE>;
@group(0) @binding(1) var<storage, read> xk : array<DTYPE>;
@group(0) @binding(2) var<storage, read> freqs_cos : array<DTYPE>;
@group(0) @binding(3) var<storage, read> freqs_sin : array<DTYPE>;
@group(0) @binding(4) var<storage, read_write> xq_out : array<DTYPE>;
@group(0) @binding(5) var<storage, read_write> xk_out : array<DTYPE>;
struct Params { n: u32, nq: u32, S: u32, Hq: u32, Hkv: u32, hd: u32 }
@group(0) @binding(6) var<uniform> pc : Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let id = ts_linear_id(gid, nwg);
  if (id >= pc.n) { return; }
  let is_q = id < pc.nq;
  let p = select(id - pc.nq, id, is_q);
  let i = p % pc.hd;
  let s = (p / pc.hd / select(pc.Hkv, pc.Hq, is_q)) % pc.S;
  let c = f32(freqs_cos[s * pc.hd + i]);
  let n = f32(freqs_sin[s * pc.hd + i]);
  if (is_q) {
    let a = f32(xq[2u * p]);
    let b = f32(xq[2u * p + 1u]);
    xq_out[2u * p] = DTYPE(a * c - b * n);
    xq_out[2u * p + 1u] = DTYPE(a * n + b * c);
  } else {
    let a = f32(xk[2u * p]);
    let b = f32(xk[2u * p + 1u]);
    xk_out[2u * p] = DTYPE(a * c - b * n);
    xk_out[2u * p + 1u] = DTYPE(a * n + b * c);
  }
}
