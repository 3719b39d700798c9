// What Dawn (npm webgpu, the WebGPU backend's) offers of subgroup matrices (WGSL's cooperative matrices)
// on this machine's GPU, and whether the two multiplies the tensor-core kernels use are exact: f16 x
// f16 -> f32 16x16x16 and i8 x i8 -> i32 16x16x32 (bytes packed 4 to an i32 word). The feature,
// chromium-experimental-subgroup-matrix, is offered only behind Dawn's allow_unsafe_apis toggle (the
// WebGPU worker's flags). Each multiply is compiled with the majorness as a template argument (the
// kernels' form) and as a boolean argument (the form Tint deprecated and warns about), and Tint's
// messages are printed. The int8 operands are then loaded as q8ta_linear_coopmat.wgsl stages them,
// from one i32 array at offsets: the two forms count offsets and strides in different units. On the
// GPU machine, from a checkout carrying gpu-bundle/:
//   bash gpu-bundle/run.sh sh -c '"$TOUCHSTONE_NODE" ci/gpu/dawn_subgroup_matrix_probe.mjs'
import { dawnAdapter } from './dawn_adapter.mjs';

const adapter = await dawnAdapter(['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia']);
const configs = adapter.info.subgroupMatrixConfigs ?? [];
for (const c of configs) console.log(`  ${c.componentType} -> ${c.resultComponentType}: M ${c.M} N ${c.N} K ${c.K}`);
const feature = 'chromium-experimental-subgroup-matrix';
if (!adapter.features.has(feature) || !adapter.features.has('shader-f16')) {
  console.log(`no ${feature} (or no shader-f16) on this adapter`);
  process.exit(0);
}
const device = await adapter.requestDevice({ requiredFeatures: [feature, 'shader-f16'] });

// C = A B for A [16 x K] and B [K x 16], row-major; returns the number of wrong elements of C.
async function multiply(code, A, B, expected) {
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code });
  for (const m of (await module.getCompilationInfo()).messages) console.log(`  wgsl ${m.type}:`, m.lineNum, m.message);
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const error = await device.popErrorScope();
  if (error) return `pipeline: ${error.message}`;
  const upload = (arr) => {
    const b = device.createBuffer({ size: arr.byteLength, usage: GPUBufferUsage.STORAGE, mappedAtCreation: true });
    new Uint8Array(b.getMappedRange()).set(new Uint8Array(arr.buffer));
    b.unmap();
    return b;
  };
  const size = Math.max(1024, expected.byteLength);
  const c = device.createBuffer({ size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const read = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const group = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [upload(A), upload(B), c].map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, group);
  pass.dispatchWorkgroups(1);
  pass.end();
  enc.copyBufferToBuffer(c, 0, read, 0, size);
  device.queue.submit([enc.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const got = new expected.constructor(read.getMappedRange().slice(0));
  read.unmap();
  return `${expected.filter((v, i) => v !== got[i]).length} of ${expected.length} elements wrong`;
}

// A load or store of a subgroup matrix; `form` puts the majorness in the template ('template') or
// passes it as the boolean argument ('argument', the deprecated form).
const load = (form, type, ptr, offset, major, stride) =>
  form === 'template'
    ? `subgroupMatrixLoad<${type}, ${major}>(${ptr}, ${offset}u, ${stride}u)`
    : `subgroupMatrixLoad<${type}>(${ptr}, ${offset}u, ${major === 'col_major'}, ${stride}u)`;
const store = (form, ptr, offset, m, stride) =>
  form === 'template'
    ? `subgroupMatrixStore<row_major>(${ptr}, ${offset}u, ${m}, ${stride}u)`
    : `subgroupMatrixStore(${ptr}, ${offset}u, ${m}, false, ${stride}u)`;

// Row-major operands and result. A stride counts the matrix's elements in the boolean form and the
// array's in the template form: `per` matrix elements to an array element.
const kernel = (elem, acc, arr, k, form, per = 1) => {
  const stride = (n) => (form === 'template' ? n / per : n);
  const product = `subgroupMatrixMultiplyAccumulate(l, r, subgroup_matrix_result<${acc}, 16, 16>())`;
  return `enable f16;
enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a : array<${arr}>;
@group(0) @binding(1) var<storage, read> b : array<${arr}>;
@group(0) @binding(2) var<storage, read_write> c : array<${acc}>;
@compute @workgroup_size(32)
fn main() {
  let l = ${load(form, `subgroup_matrix_left<${elem}, ${k}, 16>`, '&a', 0, 'row_major', stride(k))};
  let r = ${load(form, `subgroup_matrix_right<${elem}, 16, ${k}>`, '&b', 0, 'row_major', stride(16))};
  ${store(form, '&c', 0, product, 16)};
}`;
};
const product = (A, B, K, out) => {
  for (let i = 0; i < 16; ++i)
    for (let j = 0; j < 16; ++j) for (let k = 0; k < K; ++k) out[i * 16 + j] += A(i * K + k) * B(k * 16 + j);
  return out;
};

// float16: small integers, so every product and sum is exact.
const half = (x) => {  // a small integer's float16 bits
  if (x === 0) return 0;
  const a = Math.abs(x), e = Math.floor(Math.log2(a));
  return (x < 0 ? 0x8000 : 0) | ((e + 15) << 10) | Math.round((a / 2 ** e - 1) * 1024);
};
const av = (i) => (i % 7) - 3, bv = (i) => (i % 5) - 2;
const A16 = Uint16Array.from({ length: 256 }, (_, i) => half(av(i))), B16 = Uint16Array.from({ length: 256 }, (_, i) => half(bv(i)));
for (const form of ['template', 'argument'])
  console.log(`f16 x f16 -> f32 16x16x16 (majorness as ${form}):`, await multiply(kernel('f16', 'f32', 'f16', 16, form), A16, B16, product(av, bv, 16, new Float32Array(256))));
const A8 = Int8Array.from({ length: 512 }, (_, i) => ((i * 37) % 255) - 127), B8 = Int8Array.from({ length: 512 }, (_, i) => ((i * 91) % 251) - 125);
for (const form of ['template', 'argument'])
  console.log(`i8 x i8 -> i32 16x16x32 (majorness as ${form}):`, await multiply(kernel('i8', 'i32', 'i32', 32, form, 4), A8, B8, product((i) => A8[i], (i) => B8[i], 32, new Int32Array(256))));

// The int8 multiply as q8ta_linear_coopmat.wgsl stages it: the operands in one i32 array (storage or
// workgroup), left rows [m][k] at byte offset oa, right either [n][k] (col_major) or [k][n]
// (row_major) at byte offset ob, the result stored at word offset 4. The boolean form is given the
// offsets and strides in bytes (the matrices' i8 elements), the template form in bytes and in words
// (the array's elements): in the bundled Dawn the template form counts words, and Tint's validation
// of a workgroup array says so ("the pointer operand ... is too small").
const layoutKernel = (space, rightMajor, oa, ob, sa, sb, form) => {
  const ptr = space === 'workgroup' ? '&w' : '&a';
  return `enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a : array<i32>;
@group(0) @binding(1) var<storage, read> unused : array<i32>;
@group(0) @binding(2) var<storage, read_write> c : array<i32>;
var<workgroup> w : array<i32, 512>;
@compute @workgroup_size(32)
fn main(@builtin(local_invocation_index) li: u32) {
  _ = unused[0];
  for (var i = li; i < 512u; i += 32u) { w[i] = a[i]; }
  workgroupBarrier();
  let l = ${load(form, 'subgroup_matrix_left<i8, 32, 16>', ptr, oa, 'row_major', sa)};
  let r = ${load(form, 'subgroup_matrix_right<i8, 16, 32>', ptr, ob, rightMajor, sb)};
  let p = subgroupMatrixMultiplyAccumulate(l, r, subgroup_matrix_result<i32, 16, 16>());
  ${store(form, '&c', 4, 'p', 16)};
}`;
};
const bytes = Int8Array.from({ length: 2048 }, (_, i) => ((i * 53) % 241) - 120);
for (const space of ['storage', 'workgroup'])
  for (const rightMajor of ['col_major', 'row_major'])
    for (const [oa, ob, sa, sb] of [[0, 1024, 32, rightMajor === 'col_major' ? 32 : 16], [144, 1024, 48, rightMajor === 'col_major' ? 48 : 32]]) {
      const A = (i) => bytes[oa + Math.floor(i / 32) * sa + (i % 32)];
      const B = (i) => {  // element (k, n) of the right operand, i = k * 16 + n
        const k = Math.floor(i / 16), n = i % 16;
        return bytes[ob + (rightMajor === 'col_major' ? n * sb + k : k * sb + n)];
      };
      const want = new Int32Array(260);
      want.set(product(A, B, 32, new Int32Array(256)), 4);
      const got = [];
      for (const form of ['template', 'argument'])
        got.push(`${form}: ${await multiply(layoutKernel(space, rightMajor, oa, ob, sa, sb, form), bytes, new Int8Array(4), want)}`);
      got.push(`template in words: ${await multiply(layoutKernel(space, rightMajor, oa / 4, ob / 4, sa / 4, sb / 4, 'template'), bytes, new Int8Array(4), want)}`);
      console.log(`i8 ${space}, right ${rightMajor}, offsets ${oa}/${ob}, strides ${sa}/${sb}:`, got.join('; '));
    }
device.destroy();
process.exit(0);
