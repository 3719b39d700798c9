// The accumulators of the tiled sdpa GEMMs (sdpa_qk_tiled.comp, sdpa_av_tiled.comp), which share one
// tile shape: invocation (tx, ty) of a TM-row tile holds rows 4ty + i in acc_i and TM/2 + 4ty + i in
// acc_(4+i) (i < 4), 4 columns each, float32. Included after the includer's TM and
// `void store(uint i, uint tx, vec4 a)` (row i of the tile, its 4 columns at tx).
// Eight variables, not an array: a compiler that does not unroll a loop over a private array keeps
// the array in local memory, and the FMAs then go through memory.
vec4 acc0 = vec4(0.0), acc1 = vec4(0.0), acc2 = vec4(0.0), acc3 = vec4(0.0);
vec4 acc4 = vec4(0.0), acc5 = vec4(0.0), acc6 = vec4(0.0), acc7 = vec4(0.0);

// One term of the contraction: a0 lane i for row 4ty + i, a1 lane i for row TM/2 + 4ty + i, b the
// invocation's 4 columns.
void tile_fma(vec4 a0, vec4 a1, vec4 b) {
  acc0 += a0.x * b;
  acc1 += a0.y * b;
  acc2 += a0.z * b;
  acc3 += a0.w * b;
  acc4 += a1.x * b;
  acc5 += a1.y * b;
  acc6 += a1.z * b;
  acc7 += a1.w * b;
}

// The invocation's 8 rows of the tile, through the includer's store.
void tile_store(uint ty, uint tx) {
  store(4u * ty, tx, acc0);
  store(4u * ty + 1u, tx, acc1);
  store(4u * ty + 2u, tx, acc2);
  store(4u * ty + 3u, tx, acc3);
  store(TM / 2u + 4u * ty, tx, acc4);
  store(TM / 2u + 4u * ty + 1u, tx, acc5);
  store(TM / 2u + 4u * ty + 2u, tx, acc6);
  store(TM / 2u + 4u * ty + 3u, tx, acc7);
}
