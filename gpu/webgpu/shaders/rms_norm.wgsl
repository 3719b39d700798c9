// rms_norm over the rows r of x [B,S,H]; the algorithm and order of operations of
// gpu/vulkan/shaders/rms_norm.comp, which states them:
//   rstd[r]   = inverseSqrt(sum_h x[r,h]^2 * inv_h + eps)      (pass RSTD = 1)
//   out[r,h]  = (x[r,h] * rstd[r]) * weight[h]                  (pass RSTD = 0)
// RSTD = 1: a workgroup of WGR (the plan's) invocations per row, squares summed per invocation then
// as a tree in workgroup memory; RSTD = 0: one invocation per output texel, any layouts.
TS_INPUT(x, 0)
TS_INPUT(weight, 1)
TS_OUTPUT(out_, 2)
@group(0) @binding(3) var<storage, read_write> rstd : array<f32>;
struct Params { n: u32, H: u32, inv_h: f32, eps: f32 }
@group(0) @binding(4) var<uniform> pc : Params;

var<workgroup> red : array<f32, WGR>;

fn row_rstd(r: u32, l: u32) {
  let base = r * pc.H;
  var ss = 0.0;  // @marker sum_squares
  if (x_is_buffer && pc.H % 4u == 0u) {
    for (var k = l; 4u * k < pc.H; k += WGR) {
      let v = x_texel(base / 4u + k);
      ss += dot(v, v);
    }
  } else {
    for (var h = l; h < pc.H; h += WGR) {
      let v = x_at(base + h);
      ss += v * v;
    }
  }
  red[l] = ss;
  workgroupBarrier();
  for (var k = WGR / 2u; k > 0u; k /= 2u) {
    if (l < k) { red[l] += red[l + k]; }  // @marker tree_sum
    workgroupBarrier();
  }
  if (l == 0u) { rstd[r] = inverseSqrt(red[0] * pc.inv_h + pc.eps); }  // @marker rstd
}

fn normalise(t: u32) {
  var v = vec4<f32>(0.0);
  if (x_is_buffer && out_is_buffer && weight_is_buffer && pc.H % 4u == 0u) {  // a texel is 4 h of one row
    let i = 4u * t;
    v = (x_texel(t) * rstd[i / pc.H]) * weight_texel((i % pc.H) / 4u);
  } else {
    for (var j = 0u; j < 4u; j++) {
      let i = out_flat(t, j);
      if (i == TS_PAD) { continue; }
      v[j] = (x_at(i) * rstd[i / pc.H]) * weight_at(i % pc.H);
    }
  }
  out_store(t, v);  // @marker store
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  if (RSTD == 1) {
    let r = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
    if (r >= pc.n) { return; }  // a folded grid's spare workgroups, whole
    row_rstd(r, ts_local_index(li));
  } else {
    let t = ts_linear_id(gid, nwg);
    if (t >= pc.n) { return; }
    normalise(t);
  }
}
