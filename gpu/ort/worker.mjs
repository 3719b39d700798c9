// Touchstone's ONNX Runtime worker: one-node ONNX models run by onnxruntime-node's WebGPU execution
// provider (Dawn, linked into libonnxruntime), behind the frames of gpu/foreign/PROTOCOL.md
// (requests on stdin, replies on descriptor 3), one request at a time. The backend embeds this file and
// runs it after gpu/worker_frames.mjs (send, sendError, frameReader, FRAME) as `node --input-type=module
// -e <both> -- <dir holding node_modules>` (gpu/node.h node_worker_argv), and gives it descriptor 3.
//
// RUN header (beyond PROTOCOL.md's):
//   "op":      the node's ONNX op_type, e.g. "RotaryEmbedding"
//   "domain":  "" (ONNX, the default) or "com.microsoft" (contrib ops)
//   "opset":   the opset of that domain (default: 21 for "", 1 for "com.microsoft")
//   "attrs":   {name: {"i": n} | {"f": x} | {"ints": [...]} | {"floats": [...]} | {"s": "text"}}
//   "inputs":  in the node's input order; {"absent": true} is an omitted optional input (no data)
//   "outputs": in the node's output order, [{"name", "dtype"}]; {"absent": true} leaves an optional
//              output out (not computed, not returned). RESULT returns the others, in this order.
// The model's tensor names are the worker's own (i0.., o0..); the header's names come back in RESULT.
import { createRequire } from 'node:module';
import path from 'node:path';
import { createHash } from 'node:crypto';

const SESSION_CACHE_MAX = 32;
const LIBRARY = 'onnxruntime-node';

const [modulesDir] = process.argv.slice(1);

// ---- a minimal protobuf writer: just what ModelProto needs ----------------------------------
function varint(value) {
  let n = BigInt.asUintN(64, BigInt(value));  // negative int64s: ten bytes, two's complement
  const out = [];
  do {
    let b = Number(n & 0x7fn);
    n >>= 7n;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return Buffer.from(out);
}
const tag = (field, wire) => varint((field << 3) | wire);
const pbInt = (field, n) => Buffer.concat([tag(field, 0), varint(n)]);
const pbBytes = (field, b) => {
  const buf = typeof b === 'string' ? Buffer.from(b, 'utf8') : b;
  return Buffer.concat([tag(field, 2), varint(buf.length), buf]);
};
const pbMsg = (field, ...parts) => pbBytes(field, Buffer.concat(parts));
const pbFloat = (field, x) => {
  const b = Buffer.alloc(4);
  b.writeFloatLE(x, 0);
  return Buffer.concat([tag(field, 5), b]);
};

// TensorProto.DataType, and the onnxruntime-common tensor type each travels as.
const DTYPES = {
  float32: { onnx: 1, ort: 'float32', size: 4 },
  uint8: { onnx: 2, ort: 'uint8', size: 1 },
  int8: { onnx: 3, ort: 'int8', size: 1 },
  int32: { onnx: 6, ort: 'int32', size: 4 },
  int64: { onnx: 7, ort: 'int64', size: 8 },
  bool: { onnx: 9, ort: 'bool', size: 1 },
  float16: { onnx: 10, ort: 'float16', size: 2 },  // as Uint16Array: Node 20 has no Float16Array
  uint32: { onnx: 12, ort: 'uint32', size: 4 },
  // onnxruntime-node 1.30 has no bfloat16 tensor type (onnxruntime-common's Tensor knows none).
  bfloat16: { onnx: 16, ort: null, size: 2 },
};
const FROM_ORT = Object.fromEntries(Object.entries(DTYPES).filter(([, d]) => d.ort).map(([k, d]) => [d.ort, k]));

function dtypeOf(name, where) {
  const d = DTYPES[name];
  if (!d) throw new Error(`${where}: unknown dtype '${name}'`);
  if (!d.ort) throw new Error(`${where}: dtype ${name}: ${LIBRARY} has no ${name} tensors`);
  return d;
}

// AttributeProto: name 1, f 2, i 3, s 4, floats 7, ints 8, type 20 (FLOAT 1, INT 2, STRING 3,
// FLOATS 6, INTS 7). Repeated scalars unpacked, as onnx writes them.
function attribute(name, a) {
  const parts = [pbBytes(1, name)];
  if ('i' in a) parts.push(pbInt(3, a.i), pbInt(20, 2));
  else if ('f' in a) parts.push(pbFloat(2, a.f), pbInt(20, 1));
  else if ('s' in a) parts.push(pbBytes(4, a.s), pbInt(20, 3));
  else if ('ints' in a) parts.push(...a.ints.map((v) => pbInt(8, v)), pbInt(20, 7));
  else if ('floats' in a) parts.push(...a.floats.map((v) => pbFloat(7, v)), pbInt(20, 6));
  else throw new Error(`attribute ${name}: expected one of i, f, s, ints, floats`);
  return Buffer.concat(parts);
}

function buildModel(head) {
  const domain = head.domain ?? '';
  if (typeof head.op !== 'string' || !head.op) throw new Error('RUN: "op" (the ONNX op_type) is missing');
  const inputs = head.inputs ?? [];
  const outputs = head.outputs ?? [];
  const nodeIn = inputs.map((t, i) => (t.absent ? '' : `i${i}`));
  const nodeOut = outputs.map((t, i) => (t.absent ? '' : `o${i}`));
  // Trailing omitted inputs/outputs are dropped, the others stay as empty names.
  while (nodeIn.length && nodeIn.at(-1) === '') nodeIn.pop();
  while (nodeOut.length && nodeOut.at(-1) === '') nodeOut.pop();
  const node = Buffer.concat([
    ...nodeIn.map((n) => pbBytes(1, n)),
    ...nodeOut.map((n) => pbBytes(2, n)),
    pbBytes(3, 'node'),
    pbBytes(4, head.op),
    ...Object.entries(head.attrs ?? {}).map(([k, a]) => pbBytes(5, attribute(k, a))),
    pbBytes(7, domain),
  ]);
  const graph = [pbBytes(1, node), pbBytes(2, 'touchstone')];
  inputs.forEach((t, i) => {
    if (!t.absent) graph.push(pbBytes(11, valueInfoBody(`i${i}`, dtypeOf(t.dtype, `input ${t.name}`).onnx, t.shape)));
  });
  outputs.forEach((t, i) => {
    if (!t.absent) graph.push(pbBytes(12, valueInfoBody(`o${i}`, dtypeOf(t.dtype, `output ${t.name}`).onnx, null)));
  });
  // OperatorSetIdProto {domain 1, version 2}; the ONNX domain is always imported.
  const opsets = new Map([['', 21]]);
  if (domain === 'com.microsoft') opsets.set(domain, 1);
  else if (domain !== '') throw new Error(`RUN: unknown domain '${domain}'`);
  if (head.opset != null) opsets.set(domain, head.opset);
  // ModelProto {ir_version 1, producer_name 2, graph 7, opset_import 8}; IR 10 goes with opset 21-23.
  return Buffer.concat([
    pbInt(1, 10),
    pbBytes(2, 'touchstone'),
    pbBytes(7, Buffer.concat(graph)),
    ...[...opsets].map(([d, v]) => pbMsg(8, pbBytes(1, d), pbInt(2, v))),
  ]);
}
// ValueInfoProto {name 1, type 2: TypeProto {tensor_type 1: {elem_type 1, shape 2: {dim 1: {dim_value 1}}}}}.
// No shape: rank unknown (graph outputs); [] is a scalar.
function valueInfoBody(name, elemType, shape) {
  const tensor = [pbInt(1, elemType)];
  if (shape) {
    if (!Array.isArray(shape)) throw new Error(`tensor ${name}: shape must be an array`);
    tensor.push(pbBytes(2, Buffer.concat(shape.map((d) => pbMsg(1, pbInt(1, d))))));
  }
  return Buffer.concat([pbBytes(1, name), pbMsg(2, pbMsg(1, ...tensor))]);
}

// ---- ONNX Runtime ----------------------------------------------------------------------------
function loadOrt() {
  if (!modulesDir) throw new Error('usage: node worker.mjs <dir holding node_modules>');
  const req = createRequire(path.join(path.resolve(modulesDir), 'package.json'));
  try {
    req.resolve(LIBRARY);
  } catch {
    throw new Error(`npm package '${LIBRARY}' not found in ${modulesDir}/node_modules: run ci/setup.sh`);
  }
  const ort = req(LIBRARY);
  // TOUCHSTONE_ORT_LOG=verbose|info|warning|error|fatal: ONNX Runtime's log level (stderr).
  ort.env.logLevel = process.env.TOUCHSTONE_ORT_LOG || 'error';
  return ort;
}

const LOG_SEVERITY = { verbose: 0, info: 1, warning: 2, error: 3, fatal: 4 };
const SESSION_OPTIONS = {
  executionProviders: ['webgpu'],
  // The node as written: no fusions or rewrites (a one-node graph has nothing to fuse anyway).
  graphOptimizationLevel: 'disabled',
  logSeverityLevel: LOG_SEVERITY[process.env.TOUCHSTONE_ORT_LOG || 'error'] ?? 3,
  // A node the WebGPU EP does not take fails the session, never runs quietly on the CPU EP.
  // (onnxruntime-node passes `extra` as session config entries, its keys joined by dots.)
  extra: { session: { disable_cpu_ep_fallback: '1' } },
};

// Sessions by model bytes, least recently used dropped first.
const sessions = new Map();
async function sessionFor(ort, model) {
  const key = createHash('sha256').update(model).digest('hex');
  let s = sessions.get(key);
  if (s) {
    sessions.delete(key);
    sessions.set(key, s);
    return s;
  }
  s = await ort.InferenceSession.create(model, SESSION_OPTIONS);
  if (sessions.size >= SESSION_CACHE_MAX) {
    const [oldKey, old] = sessions.entries().next().value;
    sessions.delete(oldKey);
    await old.release().catch(() => {});
  }
  sessions.set(key, s);
  return s;
}

function tensorFrom(ort, t, blob) {
  const d = dtypeOf(t.dtype, `input ${t.name}`);
  const shape = t.shape ?? [];
  const count = shape.reduce((a, b) => a * b, 1);
  if (t.bytes !== count * d.size) {
    throw new Error(`input ${t.name}: ${t.bytes} bytes for shape [${shape}] of ${t.dtype} (${count * d.size} expected)`);
  }
  if (t.offset + t.bytes > blob.length) throw new Error(`input ${t.name}: data past the end of the frame`);
  // A copy: typed arrays need their element alignment, and the frame's buffer is reused.
  const raw = new Uint8Array(t.bytes);
  raw.set(blob.subarray(t.offset, t.offset + t.bytes));
  const Arr = { float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int32: Int32Array, int64: BigInt64Array,
                bool: Uint8Array, float16: Uint16Array, uint32: Uint32Array }[d.ort];
  return new ort.Tensor(d.ort, new Arr(raw.buffer, 0, count), shape);
}

async function run(ort, payload) {
  const headLen = payload.readUInt32LE(0);
  const head = JSON.parse(payload.toString('utf8', 4, 4 + headLen));
  const blob = payload.subarray(4 + headLen);
  const model = buildModel(head);
  let session;
  try {
    session = await sessionFor(ort, model);
  } catch (e) {
    // ORT's message names neither the node nor its types: say which.
    if (/fallback to CPU EP has been explicitly disabled/.test(e.message)) {
      const types = head.inputs.map((t) => (t.absent ? '-' : t.dtype)).join(', ');
      const opset = head.opset ?? (head.domain === 'com.microsoft' ? 1 : 21);
      throw new Error(`${head.op} (domain '${head.domain ?? ''}', opset ${opset}) with inputs ` +
                      `[${types}] has no WebGPU kernel: ${e.message}`);
    }
    throw e;
  }
  const feeds = {};
  head.inputs.forEach((t, i) => {
    if (!t.absent) feeds[`i${i}`] = tensorFrom(ort, t, blob);
  });
  const wanted = head.outputs.map((t, i) => [t, `o${i}`]).filter(([t]) => !t.absent);
  const got = await session.run(feeds, wanted.map(([, n]) => n));
  const outs = [];
  const datas = [];
  let offset = 0;
  for (const [t, n] of wanted) {
    const r = got[n];
    const dtype = FROM_ORT[r.type] ?? r.type;
    const data = Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength);
    outs.push({ name: t.name, dtype, shape: [...r.dims], offset, bytes: data.length });
    datas.push(data);
    offset += data.length;
  }
  const json = Buffer.from(JSON.stringify({ outputs: outs }), 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32LE(json.length, 0);
  return Buffer.concat([len, json, ...datas]);
}

// A session of one Add node on WebGPU: that the library loads and the EP finds a device.
async function probe(ort) {
  const head = {
    op: 'Add',
    inputs: [{ name: 'a', dtype: 'float32', shape: [4], offset: 0, bytes: 16 },
             { name: 'b', dtype: 'float32', shape: [4], offset: 0, bytes: 16 }],
    outputs: [{ name: 'c', dtype: 'float32' }],
  };
  const json = Buffer.from(JSON.stringify(head));
  const data = Buffer.from(new Float32Array([1, 2, 3, 4]).buffer);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(json.length, 0);
  const reply = await run(ort, Buffer.concat([len, json, data]));
  const rlen = reply.readUInt32LE(0);
  const out = new Float32Array(reply.buffer.slice(reply.byteOffset + 4 + rlen, reply.byteOffset + reply.length));
  if (out.join() !== '2,4,6,8') throw new Error(`WebGPU probe: 1,2,3,4 + itself gave ${out.join()}`);
}

async function main() {
  let ort;
  let info;
  try {
    ort = loadOrt();
    await probe(ort);
    info = {
      // ORT's WebGPU EP says nothing of its adapter through the Node API.
      device: 'webgpu',
      library: `${LIBRARY} ${ort.env.versions?.node ?? '?'}`,
      executionProvider: 'WebGpuExecutionProvider (Dawn, in libonnxruntime)',
      backends: ort.listSupportedBackends?.().map((b) => b.name),
      node: process.version,
    };
  } catch (e) {
    sendError(`ort: ${e.message}`);
    process.exit(2);
  }
  let queue = Promise.resolve();
  const serve = async (type, payload) => {
    try {
      if (type === FRAME.INFO) send(FRAME.INFO, Buffer.from(JSON.stringify(info), 'utf8'));
      else if (type === FRAME.RUN) send(FRAME.RESULT, await run(ort, payload));
      else sendError(`ort worker: unknown frame type ${type}`);
    } catch (e) {
      sendError(`ort: ${e?.message ?? e}`);
    }
  };
  process.stdin.on('data', frameReader((type, payload) => {
    queue = queue.then(() => serve(type, payload));
  }));
  process.stdin.on('end', () => queue.then(() => process.exit(0)));
}

main();
