// q8ta_conv2d, impl=im2col, step 1 of 2 (groups = 1, C_in % 4 == 0): the columns of the GEMM,
//   col[m, k] = x[n, ci, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw], or x_zp where that is padding,
// for output pixel m = (n*OH + oh)*OW + ow and tap k = (ci*KH + kh)*KW + kw (weight's own order), in
// an int8 scratch buffer [M, K], raw values (q8ta_conv2d_gemm subtracts x_zp as q8ta_linear does).
// One invocation per word of col: 4 taps of one pixel (K = C_in*KH*KW is a multiple of 4).
TS_INPUT(x, 0)
TS_OUTPUT(col, 1)
layout(push_constant) uniform Params {
  uint KH; uint KW; uint sh; uint sw; uint ph; uint pw; uint dh; uint dw; int x_zp; uint K; uint OH; uint OW;
} pc;

void main() {
  uint t = ts_linear_id();
  if (t >= col_texels()) return;
  uvec4 xd = x_dims();  // (W, H, C_in, N)
  uint m = (4u * t) / pc.K, ow = m % pc.OW, oh = (m / pc.OW) % pc.OH, n = m / (pc.OW * pc.OH);
  ivec4 v;
  for (uint j = 0u; j < 4u; ++j) {
    uint k = (4u * t) % pc.K + j;
    uint kw = k % pc.KW, kh = (k / pc.KW) % pc.KH, ci = k / (pc.KW * pc.KH);
    int ih = int(oh * pc.sh + kh * pc.dh) - int(pc.ph), iw = int(ow * pc.sw + kw * pc.dw) - int(pc.pw);
    bool inside = ih >= 0 && iw >= 0 && ih < int(xd.y) && iw < int(xd.x);
    v[j] = inside ? x_at(((n * xd.z + ci) * xd.y + uint(ih)) * xd.x + uint(iw)) : pc.x_zp;
  }
  col_store(t, v);
}
