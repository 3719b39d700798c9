// rms_norm over the rows r of x [B,S,H] (rows = B*S, H the hidden size):
//   rstd[r]   = inversesqrt(sum_h x[r,h]^2 * inv_h + eps)
//   out[r,h]  = (x[r,h] * rstd[r]) * weight[h]
// float32 arithmetic; inv_h is 1/H rounded once on the host (a division would cost 2.5 ulp).
// PASS 1 and 2: a workgroup of WGR (the plan's) invocations per row; invocation l sums the squares
// of the groups of four h = 4k .. 4k+3 for k = l, l + WGR, ... (one texel each where x is a buffer
// and H % 4 == 0), one square at a time in h order in every layout, uncontracted (precise), so that
// a layout changes the addressing and never the bits; the parts added as a tree in shared memory;
// rstd[r] stored. PASS 2 then stores the row's texels itself: the plan takes it where every texel
// of x and out lies in one row (a buffer with H % 4 == 0, texture3d_w). PASS 0: one invocation per
// output texel, any layouts (gpu/ACCESSORS.md), after PASS 1: a texel of texture3d_h or _c spans 4
// rows.
TS_INPUT(x, 0)
TS_INPUT(weight, 1)
TS_OUTPUT(out, 2)
layout(std430, binding = 3) buffer RS { float rstd[]; };
layout(push_constant) uniform Params { uint n; uint H; float inv_h; float eps; } pc;

// Texel t of out, its lanes computed from the flat indices they hold; row_rs: the row's rstd where
// the texel lies in one known row (PASS 2), else each lane reads its row's.
vec4 normalised(uint t, bool one_row, float row_rs) {
  vec4 v = vec4(0.0);
  if (x_is_buffer && out_is_buffer && weight_is_buffer && (pc.H & 3u) == 0u) {  // a texel is 4 h of one row
    uint i = 4u * t;
    v = (x_texel(t) * (one_row ? row_rs : rstd[i / pc.H])) * weight_texel((i % pc.H) / 4u);
  } else {
    for (uint j = 0u; j < 4u; ++j) {
      uint i = out_flat(t, j);
      if (i == TS_PADDING) continue;
      v[j] = (x_at(i) * (one_row ? row_rs : rstd[i / pc.H])) * weight_at(i % pc.H);
    }
  }
  return v;
}

#if PASS != 0
shared float red[WGR];

// rstd of row r, returned to every invocation of its workgroup.
float row_rstd(uint r, uint l) {
  uint base = r * pc.H;
  precise float ss = 0.0;
  if (x_is_buffer && (pc.H & 3u) == 0u) {
    for (uint k = l; 4u * k < pc.H; k += WGR) {
      vec4 v = x_texel(base / 4u + k);
      ss += v.x * v.x;
      ss += v.y * v.y;
      ss += v.z * v.z;
      ss += v.w * v.w;
    }
  } else {
    for (uint k = l; 4u * k < pc.H; k += WGR)
      for (uint h = 4u * k; h < min(4u * k + 4u, pc.H); ++h) {
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
  float rs = inversesqrt(red[0] * pc.inv_h + pc.eps);  // @marker rstd
  return rs;
}
#endif

void main() {
#if PASS == 0
  uint t = ts_linear_id();
  if (t >= pc.n) return;
  out_store(t, normalised(t, false, 0.0));
#else
  uint r = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  if (r >= pc.n) return;  // a folded grid's spare workgroups, whole
  uint l = ts_local_index();
  float rs = row_rstd(r, l);
  if (l == 0u) rstd[r] = rs;
#if PASS == 2
  // The row's texels: in a buffer (H % 4 == 0) the H / 4 from r * H / 4; in texture3d_w those of
  // its ceil(H / 4) texels along x, found from their first element.
  for (uint k = l; 4u * k < pc.H; k += WGR) {
    uint t = out_texel_of(r * pc.H + 4u * k);
    out_store(t, normalised(t, true, rs));
  }
#endif
#endif
}
