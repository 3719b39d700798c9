// rms_norm over the rows r of x [B,S,H]; the algorithm, passes and order of operations of
// gpu/vulkan/shaders/rms_norm.comp, which states them:
//   rstd[r]   = inverseSqrt(sum_h x[r,h]^2 * inv_h + eps)
//   out[r,h]  = (x[r,h] * rstd[r]) * weight[h]
// PASS 1: rstd, a workgroup of WGR invocations a row (squares summed per invocation, groups of four
// h in h order in every layout, then as a tree in workgroup memory); PASS 2: rstd and the row's
// texels (rows in whole texels); PASS 0: one invocation per output texel, any layouts, after PASS 1.
TS_INPUT(x, 0)
TS_INPUT(weight, 1)
TS_OUTPUT(out_, 2)
@group(0) @binding(3) var<storage, read_write> rstd : array<f32>;
struct Params { n: u32, H: u32, inv_h: f32, eps: f32 }
@group(0) @binding(4) var<uniform> pc : Params;

var<workgroup> red : array<f32, WGR>;

fn normalised(t: u32, one_row: bool, row_rs: f32) -> vec4<f32> {
  var v = vec4<f32>(0.0);
  if (x_is_buffer && out_is_buffer && weight_is_buffer && pc.H % 4u == 0u) {  // a texel is 4 h of one row
    let i = 4u * t;
    var rs = row_rs;
    if (!one_row) { rs = rstd[i / pc.H]; }
    v = (x_texel(t) * rs) * weight_texel((i % pc.H) / 4u);
  } else {
    for (var j = 0u; j < 4u; j++) {
      let i = out_flat(t, j);
      if (i == TS_PAD) { continue; }
      var rs = row_rs;
      if (!one_row) { rs = rstd[i / pc.H]; }
      v[j] = (x_at(i) * rs) * weight_at(i % pc.H);
    }
  }
  return v;
}

fn row_rstd(r: u32, l: u32) -> f32 {
  let base = r * pc.H;
  var ss = 0.0;
  if (x_is_buffer && pc.H % 4u == 0u) {
    for (var k = l; 4u * k < pc.H; k += WGR) {
      let v = x_texel(base / 4u + k);
      ss += v.x * v.x;
      ss += v.y * v.y;
      ss += v.z * v.z;
      ss += v.w * v.w;
    }
  } else {
    for (var k = l; 4u * k < pc.H; k += WGR) {
      for (var h = 4u * k; h < min(4u * k + 4u, pc.H); h++) {
        let v = x_at(base + h);
        ss += v * v;
      }
    }
  }
  red[l] = ss;
  workgroupBarrier();
  for (var k = WGR / 2u; k > 0u; k /= 2u) {
    if (l < k) { red[l] += red[l + k]; }  // @marker tree_sum
    workgroupBarrier();
  }
  var rs = inverseSqrt(red[0] * pc.inv_h + pc.eps);  // @marker rstd
  return rs;
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  if (PASS == 0) {
    let t = ts_linear_id(gid, nwg);
    if (t < pc.n) { out_store(t, normalised(t, false, 0.0)); }
  } else {
    let r = wid.x + nwg.x * (wid.y + nwg.y * wid.z);
    if (r >= pc.n) { return; }  // a folded grid's spare workgroups, whole
    let l = ts_local_index(li);
    let rs = row_rstd(r, l);
    if (l == 0u) { rstd[r] = rs; }
    if (PASS == 2) {
      for (var k = l; 4u * k < pc.H; k += WGR) {
        let t = out_texel_of(r * pc.H + 4u * k);
        out_store(t, normalised(t, true, rs));
      }
    }
  }
}
