// Touchstone's WebGPU worker: Dawn (npm `webgpu`) behind length-prefixed binary frames (requests on
// stdin, replies on descriptor 3), one request at a time. WebGpuBackend (webgpu_backend.cpp) embeds
// this file and runs it after gpu/worker_frames.mjs (send, sendError, frameReader, FRAME) as `node
// --input-type=module -e <both> -- <modules dir> <layer dir> <worker index> <toggle or flag>...`
// (gpu/node.h node_worker_argv); the frames are described in gpu/webgpu/PROTOCOL.md. What Dawn
// prints (to stdout or stderr) goes to one pipe, of which the C++ side keeps a tail for error messages.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';

const TIMING_BATCH_MAX = 64;  // timed repetitions per submission
const PIPELINE_CACHE_MAX = 256;

const [modulesDir, layerDir, workerIndex, ...userFlags] = process.argv.slice(1);

// VK_LAYER_TOUCHSTONE_roll_loops (gpu/vulkan/roll_loops_layer.cpp): on a CPU device the modules
// Dawn makes get their loops marked DontUnroll, as the Vulkan backend's own do. The Vulkan loader
// reads these when Dawn creates its instance, after this.
if (layerDir) {
  const add = (name, value) => { process.env[name] = process.env[name] ? `${value}:${process.env[name]}` : value; };
  add('VK_ADD_LAYER_PATH', layerDir);
  add('VK_INSTANCE_LAYERS', 'VK_LAYER_TOUCHSTONE_roll_loops');
}

// The NVIDIA driver keeps compiled pipelines in one on-disk cache per user, and the backend's
// workers are separate processes that all write it at once: that lost entries, and a warm check
// recompiled a different few dozen pipelines in every run. Worker i keeps its own cache, where the
// pipelines it is routed (the same ones every run: WebGpuBackend::route) stay. Set before Dawn
// loads the driver, which reads it then; other drivers ignore it.
function driverCachePerWorker() {
  try {
    const base = process.env.__GL_SHADER_DISK_CACHE_PATH ||
                 path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'nvidia');
    const dir = path.join(base, `touchstone-webgpu-worker-${workerIndex}`);
    // One level at a time: Node 20's recursive mkdirSync never returns under /proc (HOME=/proc/x).
    let made = path.parse(dir).root;
    for (const part of path.relative(made, dir).split(path.sep)) {
      made = path.join(made, part);
      try {
        mkdirSync(made);
      } catch (e) {
        if (e.code !== 'EEXIST') throw e;
      }
    }
    process.env.__GL_SHADER_DISK_CACHE_PATH = dir;
  } catch {
    // No home or no writable cache: the driver compiles every pipeline, as it does without a cache.
  }
}
driverCachePerWorker();

// dawn.node keeps one value per flag key, so every toggle to enable goes into a single
// `enable-dawn-features=` flag.
function dawnFlags(flags) {
  const keyed = new Map([['backend', 'vulkan']]);
  const enable = [];
  for (const f of flags) {
    const eq = f.indexOf('=');
    if (eq < 0) enable.push(f);
    else if (f.slice(0, eq) === 'enable-dawn-features') enable.push(...f.slice(eq + 1).split(',').filter(Boolean));
    else keyed.set(f.slice(0, eq), f.slice(eq + 1));
  }
  // Timestamps unrounded: Dawn quantizes them (to blunt timing attacks in browsers) unless told not to.
  if (!keyed.has('disable-dawn-features')) keyed.set('disable-dawn-features', 'timestamp_quantization');
  const out = [...keyed].map(([k, v]) => `${k}=${v}`);
  if (enable.length) out.push(`enable-dawn-features=${[...new Set(enable)].join(',')}`);
  return out;
}

// dawn.node settles its promises (mapAsync, popErrorScope, ...) by calling the global setImmediate
// again and again while one is pending, so a core spins for as long as the device works. A device
// that compiles at its first dispatch (lavapipe) works for seconds, and on a 2-core runner the spin
// takes the core the Vulkan backend compiles on. A wait longer than SPIN_MS polls once a
// millisecond instead; shorter ones (a warm case on a GPU) keep the immediate ticks.
const SPIN_MS = 2;
const immediate = globalThis.setImmediate;
let waitingSince = performance.now();
globalThis.setImmediate = (fn, ...args) =>
  performance.now() - waitingSince < SPIN_MS ? immediate(fn, ...args) : setTimeout(fn, 1, ...args);

async function openDevice() {
  const req = createRequire(path.join(modulesDir, 'package.json'));
  let entry;
  try {
    entry = req.resolve('webgpu');
  } catch {
    throw new Error(`npm package 'webgpu' not found in ${modulesDir}/node_modules: run ci/setup.sh`);
  }
  const { create, globals } = await import(pathToFileURL(entry).href);
  Object.assign(globalThis, globals);
  const flags = dawnFlags(userFlags);
  // Dawn's instance must outlive every object made from it: when V8 collects the object create()
  // returns, the process dies at random (ENVIRONMENT.md). A global keeps it for the process' life.
  globalThis.tsDawn = create(flags);
  const adapter = await globalThis.tsDawn.requestAdapter();
  if (!adapter) throw new Error(`no WebGPU adapter (Dawn flags ${flags.join(' ')})`);
  const limits = {};
  for (const k in adapter.limits) if (typeof adapter.limits[k] === 'number') limits[k] = adapter.limits[k];
  // timestamp-query: `touchstone bench` times dispatch chains on the device (TIME frames).
  // chromium-experimental-subgroup-matrix: the tensor cores (impl=coopmat), offered behind allow_unsafe_apis.
  const wanted = ['shader-f16', 'subgroups', 'timestamp-query', 'chromium-experimental-subgroup-matrix']
    .filter((f) => adapter.features.has(f));
  // The adapter's own limits, every one: defaults cap storage bindings at 128 MiB and more.
  const device = await adapter.requestDevice({ requiredFeatures: wanted, requiredLimits: limits });
  device.lost.then((info) => {
    if (info.reason === 'destroyed') return;
    process.stderr.write(`webgpu worker: device lost: ${info.message}\n`);
    process.exit(3);
  });
  device.addEventListener('uncapturederror', (e) => uncaptured.push(e.error.message));
  const formats = await probeFormats(device);
  const ai = adapter.info;
  const info = {
    adapter: {
      vendor: ai.vendor, architecture: ai.architecture, device: ai.device, description: ai.description,
      subgroupMinSize: ai.subgroupMinSize, subgroupMaxSize: ai.subgroupMaxSize,
      isFallbackAdapter: ai.isFallbackAdapter,
      // e.g. 'i8>i32:16x16x32' (component > result: M x N x K)
      subgroupMatrixConfigs: [...(ai.subgroupMatrixConfigs ?? [])].map((c) => `${c.componentType}>${c.resultComponentType}:${c.M}x${c.N}x${c.K}`),
    },
    features: [...device.features].sort(),
    // WGSL language extensions (packed_4x8_integer_dot_product: dot4I8Packed), from navigator.gpu.
    wgslLanguageFeatures: [...(globalThis.tsDawn.wgslLanguageFeatures ?? [])].sort(),
    limits: Object.fromEntries(Object.keys(limits).map((k) => [k, device.limits[k]])),
    formats,
    flags,
  };
  return { device, info };
}

const uncaptured = [];
const pipelines = new Map();

// Buffers are recycled across cases, by usage and power-of-two capacity (at most POOL_MAX_BYTES
// idle), so a sweep's steady state allocates nothing on the device: on a discrete GPU a buffer's
// allocation costs more than a small case's whole dispatch. A recycled buffer's contents are a
// previous case's: every byte a case's bindings or copies can reach is written first (below).
const POOL_MAX_BYTES = 2 ** 30;
const idle = new Map();  // `${usage}/${capacity}` -> [GPUBuffer]
let idleBytes = 0;
function acquire(device, size, usage, made) {
  const capacity = Math.max(256, 2 ** Math.ceil(Math.log2(Math.max(size, 1))));
  const key = `${usage}/${capacity}`;
  let buffer = idle.get(key)?.pop();
  if (buffer) idleBytes -= capacity;
  else buffer = device.createBuffer({ size: capacity, usage });
  made.push({ buffer, key, capacity });
  return buffer;
}
// After a case: recycled buffers go back to the pool (unless the case had an error, when nothing
// is trusted), everything else is destroyed.
function release(made, ok) {
  for (const m of made) {
    if (!m.key) m.destroy();
    else if (ok && idleBytes + m.capacity <= POOL_MAX_BYTES) {
      if (!idle.has(m.key)) idle.set(m.key, []);
      idle.get(m.key).push(m.buffer);
      idleBytes += m.capacity;
    } else m.buffer.destroy();
  }
}

// Fill patterns are written from one scratch array, grown as needed (writeBuffer copies at once).
let scratch = new Uint32Array(0);
function writeWord(device, buffer, at, size, word) {
  for (let done = 0; done < size;) {
    const n = Math.min(size - done, 64 << 20);
    if (scratch.byteLength < n) scratch = new Uint32Array(Math.max(n, 2 * scratch.byteLength) / 4);
    const view = scratch.subarray(0, n / 4);
    view.fill(word);
    device.queue.writeBuffer(buffer, at + done, view);
    done += n;
  }
}

// The texture formats of texture3d tensors (gpu/webgpu/accessors.cpp): float32, float16, and
// bfloat16 as raw 16-bit words. Each must make a 3-D texture that kernels read with textureLoad and
// write as a write-only storage texture; the reply maps each to null, or to Dawn's reason why not.
const IMAGE_FORMATS = ['rgba32float', 'rgba16float', 'rgba16uint'];
const sampleType = (format) => (format.endsWith('uint') ? 'uint' : format.endsWith('sint') ? 'sint' : 'unfilterable-float');

async function probeFormats(device) {
  const out = {};
  for (const format of IMAGE_FORMATS) {
    device.pushErrorScope('validation');
    let thrown = null;
    try {
      const texture = device.createTexture({ dimension: '3d', size: [1, 1, 1], format, usage: imageUsage() });
      const layout = device.createBindGroupLayout({
        entries: [
          { binding: 0, visibility: GPUShaderStage.COMPUTE, texture: { sampleType: sampleType(format), viewDimension: '3d' } },
          { binding: 1, visibility: GPUShaderStage.COMPUTE, storageTexture: { access: 'write-only', format, viewDimension: '3d' } },
        ],
      });
      const view = texture.createView();
      device.createBindGroup({ layout, entries: [{ binding: 0, resource: view }, { binding: 1, resource: view }] });
      texture.destroy();
    } catch (e) {
      thrown = e;
    }
    const err = await device.popErrorScope();
    out[format] = err ? err.message : thrown ? String(thrown.message ?? thrown) : null;
  }
  return out;
}

// Every image is uploaded and read back by copies, read by textureLoad and written as storage.
// (A function: GPUTextureUsage exists once openDevice() has loaded the package.)
const imageUsage = () => GPUTextureUsage.TEXTURE_BINDING | GPUTextureUsage.STORAGE_BINDING |
                         GPUTextureUsage.COPY_SRC | GPUTextureUsage.COPY_DST;

// A bind group layout entry from the C++ reflection's type string (PROTOCOL.md, "RUN header").
function layoutEntry(binding, type) {
  const entry = { binding, visibility: GPUShaderStage.COMPUTE };
  const colon = type.indexOf(':');
  if (colon < 0) entry.buffer = { type };
  else if (type.startsWith('texture:')) entry.texture = { sampleType: type.slice(colon + 1), viewDimension: '3d' };
  else entry.storageTexture = { access: 'write-only', format: type.slice(colon + 1), viewDimension: '3d' };
  return entry;
}

// copyTextureToBuffer's rows are 256-byte aligned; the C++ side repacks them.
const rowPitch = (image) => Math.ceil((image.extent[0] * image.texel) / 256) * 256;
const resultSize = (b) => (b.image ? rowPitch(b.image) * b.image.extent[1] * b.image.extent[2] : b.size);

// A compute pipeline per (WGSL text, workgroup size), with the explicit layout the C++ reflection
// found: 'auto' would drop bindings a broken kernel leaves unused and turn that into a bind error.
// Only pipelines that Dawn accepted are cached, so a bad kernel reports its own error every time.
// `pipelines` maps a key to a promise: a compile started ahead (PREPARE) is awaited, not repeated.
const pipelineKey = (shader) => `${shader.wg}\n${shader.code}`;
const bindLayout = (device, shader) =>
  device.createBindGroupLayout({ entries: shader.layout.map(([binding, type]) => layoutEntry(binding, type)) });

function remember(key, promise) {
  if (pipelines.size >= PIPELINE_CACHE_MAX) pipelines.clear();
  pipelines.set(key, promise);
  promise.catch(() => { if (pipelines.get(key) === promise) pipelines.delete(key); });
}

async function pipelineFor(device, shader) {
  const key = pipelineKey(shader);
  const known = pipelines.get(key);
  if (known) {
    try {
      return await known;
    } catch {
      // A compile ahead failed: compile here, where its errors are reported with their lines.
    }
  }
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code: shader.code });
  const diag = await module.getCompilationInfo();
  const errors = diag.messages.filter((m) => m.type === 'error');
  if (errors.length) {
    await device.popErrorScope();
    // Line numbers count from the kernel file's first line, not the generated preamble's.
    const where = (m) => `${shader.name}:${m.lineNum - shader.line0}:${m.linePos}`;
    // Tint's notes (type 'info') say why, e.g. which value made control flow non-uniform.
    const said = diag.messages.filter((m) => m.type === 'error' || m.type === 'info');
    throw new Error(`kernel ${shader.name} does not compile:\n` +
                    said.map((m) => `${where(m)}: ${m.type === 'info' ? 'note' : 'error'}: ${m.message}`).join('\n'));
  }
  const layout = bindLayout(device, shader);
  const pipeline = device.createComputePipeline({
    layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
    compute: { module, entryPoint: 'main', constants: { WG: shader.wg } },
  });
  const err = await device.popErrorScope();
  if (err) throw new Error(`kernel ${shader.name}: ${err.message}`);
  const entry = { pipeline, layout };
  remember(key, Promise.resolve(entry));
  return entry;
}

// PREPARE: pipelines that RUN frames will soon need, compiled by Dawn in the background (a driver
// takes ~0.1 s per pipeline; Dawn compiles several at once). Everything here happens in one
// synchronous stretch, so its error scope cannot interleave with a RUN's.
function prepare(device, shaders) {
  for (const shader of shaders) {
    const key = pipelineKey(shader);
    if (pipelines.has(key)) continue;
    device.pushErrorScope('validation');
    const module = device.createShaderModule({ code: shader.code });
    const layout = bindLayout(device, shader);
    const made = device.createComputePipelineAsync({
      layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: { module, entryPoint: 'main', constants: { WG: shader.wg } },
    });
    const scope = device.popErrorScope();
    remember(key, Promise.all([made, scope]).then(([pipeline, err]) => {
      if (err) throw new Error(err.message);
      return { pipeline, layout };
    }));
  }
}

// Records every dispatch of the case in order and submits it; returns the staging buffer that
// receives the read-back buffers, back to back, then the snapshots (a dispatch's `snapshots`: buffers
// copied right after it, which ends the compute pass there), or null when nothing is read back.
function submit(device, head, shaders, bytes, made, kept = {}) {
  const buffers = head.buffers.map((b) => {
    if (b.image) {
      const { format, extent, texel } = b.image;
      const tex = device.createTexture({ dimension: '3d', size: extent, format, usage: imageUsage() });
      made.push(tex);
      const [, off, len] = b.init[0] ?? [0, 0, 0];
      if (len) {
        device.queue.writeTexture({ texture: tex }, bytes([off, len]),
                                  { bytesPerRow: extent[0] * texel, rowsPerImage: extent[1] }, extent);
      }
      return tex;
    }
    // The host's spans copied in, guard bands and poison filled here (`fill`, so those bytes never
    // cross the pipe), and the rest of the case's `size` bytes zeroed: a recycled buffer holds a
    // previous case's data, and an input's last texel may reach past its end.
    const buf = acquire(device, b.size, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST, made);
    let end = 0;
    for (const [at, off, len] of b.init) {
      const n = Math.min(len, b.size - at);
      if (n) device.queue.writeBuffer(buf, at, bytes([off, n]));
      end = Math.max(end, at + n);
    }
    for (const [at, size, word] of b.fill ?? []) {
      if (size) writeWord(device, buf, at, size, word);
      end = Math.max(end, at + size);
    }
    if (end < b.size) writeWord(device, buf, end, b.size - end, 0);
    return buf;
  });
  const reads = head.buffers.map((b, i) => [b, i]).filter(([b]) => b.read);
  const snapshots = head.dispatches.flatMap((d) => d.snapshots ?? []);
  const total = reads.reduce((n, [b]) => n + resultSize(b), 0) + snapshots.reduce((n, i) => n + head.buffers[i].size, 0);
  let staging = null;
  kept.total = total;
  if (total) {
    staging = acquire(device, total, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, made);
  }
  let at = reads.reduce((n, [b]) => n + resultSize(b), 0);  // snapshots go after the read-back buffers
  const enc = device.createCommandEncoder();
  let pass = enc.beginComputePass();
  for (const d of head.dispatches) {
    const { pipeline, layout } = shaders[d.shader];
    const entries = d.binds.map(([binding, index, offset, size]) =>
      ({ binding, resource: head.buffers[index].image ? buffers[index].createView() : { buffer: buffers[index], offset, size } }));
    if (d.uniform) {
      const u = acquire(device, d.uniform.bytes[1], GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST, made);
      device.queue.writeBuffer(u, 0, bytes(d.uniform.bytes));
      entries.push({ binding: d.uniform.binding, resource: { buffer: u, offset: 0, size: d.uniform.bytes[1] } });
    }
    const group = device.createBindGroup({ layout, entries });
    (kept.chain ??= []).push({ pipeline, group, groups: d.groups });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(...d.groups);
    if (d.snapshots?.length) {
      pass.end();
      for (const i of d.snapshots) {
        enc.copyBufferToBuffer(buffers[i], 0, staging, at, head.buffers[i].size);
        at += head.buffers[i].size;
      }
      pass = enc.beginComputePass();
    }
  }
  pass.end();
  at = 0;
  for (const [b, i] of reads) {
    if (b.image) {
      enc.copyTextureToBuffer({ texture: buffers[i] },
                              { buffer: staging, offset: at, bytesPerRow: rowPitch(b.image), rowsPerImage: b.image.extent[1] },
                              b.image.extent);
    } else {
      enc.copyBufferToBuffer(buffers[i], 0, staging, at, b.size);
    }
    at += resultSize(b);
  }
  device.queue.submit([enc.finish()]);
  return staging;
}

// The dispatch chain that submit() recorded, again: each repetition one compute pass with a
// timestamp at its beginning and end (after the chain's untimed dispatches, below), a batch of them
// per submission (TIMING_BATCH_MAX at most), after `warmup` untimed ones, until minReps ran and maxMs
// passed, or maxReps ran. Returns the seconds of each timed repetition as float64s.
async function timeChain(device, chain, timing, made) {
  if (!device.features.has('timestamp-query'))
    throw new Error('webgpu: the adapter does not offer timestamp-query, which timing needs');
  const querySet = device.createQuerySet({ type: 'timestamp', count: 2 * TIMING_BATCH_MAX });
  const resolve = device.createBuffer({ size: 16 * TIMING_BATCH_MAX, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const read = device.createBuffer({ size: 16 * TIMING_BATCH_MAX, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  made.push(querySet, resolve, read);
  const stream = timing.stream ?? 1;
  // timing.untimed (TimingBudget::untimed): the chain's first dispatches run before each timed pass,
  // each in a pass of its own. A pass's first timestamp is written where the queue reaches it, not
  // after earlier work, and Dawn orders a pass only after work on its own resources: GpuBackend::timed
  // ends them with a dispatch on the same resources as the one before, whose barrier makes the queue
  // wait for that one, so the timed pass is reached after both. (Waiting on the host instead leaves
  // the GPU idle before each interval, which slows what follows: PERFORMANCE.md.)
  const before = chain.slice(0, timing.untimed ?? 0), timed = chain.slice(timing.untimed ?? 0);
  const batch = async (reps) => {
    const enc = device.createCommandEncoder();
    for (let r = 0; r < reps; ++r) {
      for (const d of before) {
        const pass = enc.beginComputePass();
        pass.setPipeline(d.pipeline);
        pass.setBindGroup(0, d.group);
        pass.dispatchWorkgroups(...d.groups);
        pass.end();
      }
      const pass = enc.beginComputePass({
        timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * r, endOfPassWriteIndex: 2 * r + 1 },
      });
      // timing.stream chains a pass (TimingBudget::stream): Dawn orders a pass's dispatches as it
      // orders a chain's, one after the other.
      for (let s = 0; s < stream; ++s)
        for (const d of timed) {
          pass.setPipeline(d.pipeline);
          pass.setBindGroup(0, d.group);
          pass.dispatchWorkgroups(...d.groups);
        }
      pass.end();
    }
    enc.resolveQuerySet(querySet, 0, 2 * reps, resolve, 0);
    enc.copyBufferToBuffer(resolve, 0, read, 0, 16 * reps);
    device.queue.submit([enc.finish()]);
    await read.mapAsync(GPUMapMode.READ, 0, 16 * reps);
    const stamps = new BigUint64Array(read.getMappedRange(0, 16 * reps).slice(0));
    read.unmap();
    const out = [];
    for (let r = 0; r < reps; ++r) out.push(Number(stamps[2 * r + 1] - stamps[2 * r]) * 1e-9);  // ns; may be <= 0: the C++ side refuses it
    return out;
  };
  let t0 = performance.now();
  for (let left = timing.warmup; left > 0; left -= TIMING_BATCH_MAX) await batch(Math.min(left, TIMING_BATCH_MAX));
  // A GPU at rest clocks up only after a while of work (TimingBudget::warmup_seconds).
  while (performance.now() - t0 < (timing.warmupMs ?? 0)) await batch(TIMING_BATCH_MAX);
  t0 = performance.now();
  const seconds = [];
  for (let n = 1; seconds.length < timing.maxReps; n = Math.min(2 * n, TIMING_BATCH_MAX)) {
    if (seconds.length >= timing.minReps && performance.now() - t0 >= timing.maxMs) break;
    seconds.push(...(await batch(Math.min(n, timing.maxReps - seconds.length))));
  }
  return Buffer.from(new Float64Array(seconds).buffer);
}

// Runs every error scope around `work` (a function that may await); throws every message caught.
async function scoped(device, work) {
  uncaptured.length = 0;
  const scopes = ['internal', 'out-of-memory', 'validation'];
  for (const s of scopes) device.pushErrorScope(s);
  let result = null;
  let thrown = null;
  try {
    result = await work();
  } catch (e) {
    thrown = e;
  }
  // Scopes pop in reverse order of their push, all of them, whatever happened above.
  const errs = await Promise.all(scopes.map(() => device.popErrorScope()));
  const msgs = errs.filter(Boolean).map((e) => e.message).concat(uncaptured);
  if (msgs.length) throw new Error(msgs.join('\n'));
  if (thrown) throw thrown;
  return result;
}

// TOUCHSTONE_WORKER_PROFILE=FILE: the worker's own time per phase of a RUN (milliseconds, calls),
// written as it goes to FILE.<pid> (a GPU has several workers): what the C++ side's `webgpu: worker
// round trip` is made of.
const profileFile = process.env.TOUCHSTONE_WORKER_PROFILE && `${process.env.TOUCHSTONE_WORKER_PROFILE}.${process.pid}`;
const profile = new Map();
async function phase(name, work) {
  if (!profileFile) return work();
  const t0 = performance.now();
  try {
    return await work();
  } finally {
    const p = profile.get(name) ?? [0, 0];
    profile.set(name, [p[0] + performance.now() - t0, p[1] + 1]);
    // Written as it goes: the C++ side may end the worker without waiting for it.
    if (performance.now() - profileWritten > 1000) writeProfile();
  }
}
let profileWritten = 0;
function writeProfile() {
  if (!profileFile) return;
  const lines = [...profile].map(([k, [ms, n]]) => `${k}\t${ms.toFixed(1)} ms\t${n}\t${(ms / n).toFixed(3)} ms/call`);
  writeFileSync(profileFile, lines.join('\n') + '\n');
  profileWritten = performance.now();
}

async function run(device, payload, timed = false) {
  const headLen = payload.readUInt32LE(0);
  const head = JSON.parse(payload.toString('utf8', 4, 4 + headLen));
  const blob = payload.subarray(4 + headLen);
  const bytes = ([off, len]) => blob.subarray(off, off + len);

  const shaders = [];
  await phase('pipelines', async () => {
    for (const s of head.shaders) shaders.push(await pipelineFor(device, s));
  });

  const made = [];
  const kept = {};
  let ok = false;
  try {
    const staging = await phase('submit, error scopes', () => scoped(device, async () => submit(device, head, shaders, bytes, made, kept)));
    let out = Buffer.alloc(0);
    if (timed) {
      out = await scoped(device, () => timeChain(device, kept.chain ?? [], head.timing, made));
    } else if (staging) {
      await phase('mapAsync (the GPU work, then the map)', () => staging.mapAsync(GPUMapMode.READ, 0, kept.total));
      out = await phase('copy out', async () => Buffer.from(staging.getMappedRange(0, kept.total).slice(0)));
      staging.unmap();
    }
    ok = true;
    return out;
  } finally {
    release(made, ok);
  }
}

async function main() {
  let opened;
  try {
    opened = await openDevice();
  } catch (e) {
    sendError(`webgpu: ${e.message}`);
    process.exit(2);
  }
  const { device, info } = opened;
  // One request at a time, in order: a queue of promises keeps frames that arrive during an
  // await from overtaking the one being served.
  let queue = Promise.resolve();
  const serve = async (type, payload) => {
    waitingSince = performance.now();
    try {
      if (type === FRAME.INFO) send(FRAME.INFO, Buffer.from(JSON.stringify(info), 'utf8'));
      else if (type === FRAME.RUN) {
        const result = await phase('run (whole)', () => run(device, payload));
        send(FRAME.RESULT, result);
      }
      else if (type === FRAME.TIME) send(FRAME.TIMES, await run(device, payload, true));
      else sendError(`webgpu worker: unknown frame type ${type}`);
    } catch (e) {
      sendError(`webgpu: ${e.message}`);
    }
  };
  process.stdin.on('data', frameReader((type, payload) => {
    // PREPARE has no reply and must not wait behind the RUN being served: its compiles overlap it.
    if (type === FRAME.PREPARE) {
      try {
        prepare(device, JSON.parse(payload.toString('utf8')));
      } catch (e) {
        process.stderr.write(`webgpu worker: PREPARE ignored: ${e.message}\n`);
      }
      return;
    }
    queue = queue.then(() => serve(type, payload));
  }));
  // The Dawn instance held on globalThis keeps Node alive, so the worker leaves on its own when
  // the C++ side closes stdin.
  process.stdin.on('end', () => queue.then(() => {
    writeProfile();
    process.exit(0);
  }));
}

main();
