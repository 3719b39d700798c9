// The accumulators of the tiled sdpa GEMMs (sdpa_qk_tiled.wgsl, sdpa_av_tiled.wgsl), as
// gpu/vulkan/shaders/sdpa_tile_acc.glsl has them: invocation (tx, ty) of a TM-row tile holds rows
// 4ty + i in acc_i and TM/2 + 4ty + i in acc_(4+i) (i < 4), 4 columns each, float32. The includer
// has TM, its struct Tile and `fn store(k: Tile, i: u32, tx: u32, a: vec4<f32>)` (row i of the
// tile, its 4 columns at tx). Eight variables, not an array: a compiler that does not unroll a loop
// over a private array keeps the array in local memory, and the FMAs then go through memory.
var<private> acc0 : vec4<f32>;
var<private> acc1 : vec4<f32>;
var<private> acc2 : vec4<f32>;
var<private> acc3 : vec4<f32>;
var<private> acc4 : vec4<f32>;
var<private> acc5 : vec4<f32>;
var<private> acc6 : vec4<f32>;
var<private> acc7 : vec4<f32>;

// One term of the contraction: a0 lane i for row 4ty + i, a1 lane i for row TM/2 + 4ty + i, b the
// invocation's 4 columns.
fn tile_fma(a0: vec4<f32>, a1: vec4<f32>, b: vec4<f32>) {
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
fn tile_store(k: Tile, ty: u32, tx: u32) {
  store(k, 4u * ty, tx, acc0);
  store(k, 4u * ty + 1u, tx, acc1);
  store(k, 4u * ty + 2u, tx, acc2);
  store(k, 4u * ty + 3u, tx, acc3);
  store(k, TM / 2u + 4u * ty, tx, acc4);
  store(k, TM / 2u + 4u * ty + 1u, tx, acc5);
  store(k, TM / 2u + 4u * ty + 2u, tx, acc6);
  store(k, TM / 2u + 4u * ty + 3u, tx, acc7);
}
