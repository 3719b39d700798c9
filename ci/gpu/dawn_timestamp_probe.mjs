// Where Dawn's timed interval spends its fixed cost: `touchstone bench` times a WebGPU chain with a
// compute pass's own timestamps (the only ones npm webgpu offers), and a one-texel kernel takes longer
// that way than through Vulkan's query pool (PERFORMANCE.md). Each row below is the median over 400 repetitions,
// recorded as bench records them (a batch of passes per submission), of a pass with stamps at its
// beginning and end around: nothing; 1, 2 or 8 dispatches of a one-workgroup kernel; the same after an
// untimed pass on the same buffer; and a 16 MiB copy once and 8 times. Then the same with the interval
// taken from the end of an untimed pass before it (end - end). On the GPU machine, from a checkout
// carrying gpu-bundle/:
//   bash gpu-bundle/run.sh sh -c '"$TOUCHSTONE_NODE" ci/gpu/dawn_timestamp_probe.mjs'
import { dawnAdapter } from './dawn_adapter.mjs';

// The worker's flags (gpu/webgpu/worker.mjs): unquantized timestamps.
const adapter = await dawnAdapter(['disable-dawn-features=timestamp_quantization']);
const device = await adapter.requestDevice({ requiredFeatures: ['timestamp-query'] });

const kernel = (code) => device.createComputePipeline({
  layout: 'auto', compute: { module: device.createShaderModule({ code }), entryPoint: 'main' } });
const tiny = kernel(`@group(0) @binding(0) var<storage, read_write> b : array<u32>;
@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) l : u32) { if (l == 0u) { b[0] = b[0] + 1u; } }`);
const WORDS = 4 << 20;  // 16 MiB of u32
const copy = kernel(`@group(0) @binding(0) var<storage, read> a : array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> c : array<vec4<u32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g : vec3<u32>, @builtin(num_workgroups) n : vec3<u32>) {
  let i = g.x + g.y * n.x * 256u;
  if (i < ${WORDS / 4}u) { c[i] = a[i]; } }`);
const buffer = (size) => device.createBuffer({ size, usage: GPUBufferUsage.STORAGE });
const t1 = buffer(256), t2 = buffer(256), big_a = buffer(4 * WORDS), big_c = buffer(4 * WORDS);
const group = (p, bufs) => device.createBindGroup({
  layout: p.getBindGroupLayout(0), entries: bufs.map((b, binding) => ({ binding, resource: { buffer: b } })) });
const tinyOn = (b) => ({ pipeline: tiny, group: group(tiny, [b]), groups: [1] });
const copyD = { pipeline: copy, group: group(copy, [big_a, big_c]), groups: [WORDS / 4 / 256 / 4, 4] };

const REPS = 100, ROUNDS = 4;
const querySet = device.createQuerySet({ type: 'timestamp', count: 2 * REPS });
const resolve = device.createBuffer({ size: 16 * REPS, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
const read = device.createBuffer({ size: 16 * REPS, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });

function record(pass, list) {
  for (const d of list) {
    pass.setPipeline(d.pipeline);
    pass.setBindGroup(0, d.group);
    pass.dispatchWorkgroups(...d.groups);
  }
}

// before: untimed dispatches, a pass each, ahead of every timed pass; timed: the timed pass's.
// endToEnd: the interval starts at the end of the last untimed pass (its end stamp), not at the
// timed pass's beginning.
async function median(before, timed, endToEnd = false) {
  const all = [];
  for (let round = 0; round < ROUNDS + 1; ++round) {
    const enc = device.createCommandEncoder();
    for (let r = 0; r < REPS; ++r) {
      before.forEach((d, i) => {
        const last = i === before.length - 1;
        const stamp = endToEnd && last ? { timestampWrites: { querySet, endOfPassWriteIndex: 2 * r } } : {};
        const pass = enc.beginComputePass(stamp);
        record(pass, [d]);
        pass.end();
      });
      const writes = endToEnd ? { querySet, endOfPassWriteIndex: 2 * r + 1 }
                              : { querySet, beginningOfPassWriteIndex: 2 * r, endOfPassWriteIndex: 2 * r + 1 };
      const pass = enc.beginComputePass({ timestampWrites: writes });
      record(pass, timed);
      pass.end();
    }
    enc.resolveQuerySet(querySet, 0, 2 * REPS, resolve, 0);
    enc.copyBufferToBuffer(resolve, 0, read, 0, 16 * REPS);
    device.queue.submit([enc.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const s = new BigUint64Array(read.getMappedRange().slice(0));
    read.unmap();
    if (round === 0) continue;  // warm-up
    for (let r = 0; r < REPS; ++r) all.push(Number(s[2 * r + 1] - s[2 * r]) / 1000);
  }
  all.sort((a, b) => a - b);
  return `${all[all.length >> 1].toFixed(2)} us (min ${all[0].toFixed(2)})`;
}

const rows = [
  ['empty pass', [], []],
  ['1 tiny dispatch', [], [tinyOn(t1)]],
  ['2 tiny dispatches, same buffer', [], [tinyOn(t1), tinyOn(t1)]],
  ['2 tiny dispatches, other buffers', [], [tinyOn(t1), tinyOn(t2)]],
  ['8 tiny dispatches, same buffer', [], Array(8).fill(tinyOn(t1))],
  ['1 tiny, after an untimed tiny pass on its buffer', [tinyOn(t1)], [tinyOn(t1)]],
  ['1 tiny, after an untimed tiny pass on another', [tinyOn(t2)], [tinyOn(t1)]],
  ['16 MiB copy', [], [copyD]],
  ['16 MiB copy x 8', [], Array(8).fill(copyD)],
];
for (const [name, before, timed] of rows) console.log(`${name.padEnd(52)} ${await median(before, timed)}`);
const e2e = [
  ['end-to-end: tiny pass, then 1 tiny (same buffer)', [tinyOn(t1)], [tinyOn(t1)]],
  ['end-to-end: tiny pass, then 16 MiB copy (other buffers)', [tinyOn(t1)], [copyD]],
  ['end-to-end: tiny pass on c, then 16 MiB copy', [{ ...copyD, groups: [1] }], [copyD]],
];
for (const [name, before, timed] of e2e) console.log(`${name.padEnd(52)} ${await median(before, timed, true)}`);
device.destroy();
