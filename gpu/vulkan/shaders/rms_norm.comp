// rms_norm over the rows r of x [B,S,H] (rows = B*S, H the hidden size):
//   rstd[r]   = inversesqrt(sum_h x[r,h]^2 * inv_h + eps)      (pass RSTD = 1, scratch rstd [rows])
//   out[r,h]  = (x[r,h] * rstd[r]) * weight[h]                  (pass RSTD = 0)
// float32 arithmetic; inv_h is 1/H rounded once on the host (a division would cost 2.5 ulp).
// RSTD = 1: a workgroup of WGR (the plan's) invocations per row; invocation l sums the squares of
// h = l, l + WGR, ... (whole texels where x is a buffer and H % 4 == 0), the parts added as a tree in
// shared memory. RSTD = 0: one invocation per output texel, any layouts (gpu/ACCESSORS.md): a texel
// of texture3d_h or _c spans 4 rows, which is why rstd is a pass of its own.
TS_INPUT(x, 0)
TS_INPUT(weight, 1)
TS_OUTPUT(out, 2)
layout(std430, binding = 3) buffer RS { float rstd[]; };
layout(push_constant) uniform Params { uint n; uint H; float inv_h; float eps; } pc;

#if RSTD
shared float red[WGR];

void main() {
  uint r = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  if (r >= pc.n) return;  // a folded grid's spare workgroups, whole
  uint l = ts_local_index(), base = r * pc.H;
  float ss = 0.0;  // @marker sum_squares
  if (x_is_buffer && (pc.H & 3u) == 0u) {
    for (uint k = l; 4u * k < pc.H; k += WGR) {
      vec4 v = x_texel(base / 4u + k);
      ss += dot(v, v);
    }
  } else {
    for (uint h = l; h < pc.H; h += WGR) {
      float v = x_at(base + h);
      ss += v * v;
    }
  }
  red[l] = ss;
  barrier();
  for (uint k = WGR / 2u; k > 0u; k /= 2u) {
    if (l < k) red[l] += red[l + k];  // @marker tree_sum
    barrier();
  }
  if (l == 0u) rstd[r] = inversesqrt(red[0] * pc.inv_h + pc.eps);  // @marker rstd
}
#else
void main() {
  uint t = ts_linear_id();
  if (t >= pc.n) return;
  vec4 v = vec4(0.0);
  if (x_is_buffer && out_is_buffer && weight_is_buffer && (pc.H & 3u) == 0u) {  // a texel is 4 h of one row
    uint i = 4u * t, h = i % pc.H;
    v = (x_texel(t) * rstd[i / pc.H]) * weight_texel(h / 4u);
  } else {
    for (uint j = 0u; j < 4u; ++j) {
      uint i = out_flat(t, j);
      if (i == TS_PADDING) continue;
      v[j] = (x_at(i) * rstd[i / pc.H]) * weight_at(i % pc.H);
    }
  }
  out_store(t, v);  // @marker store
}
#endif
