// Smoke test of gpu/ort/worker.mjs: spawns the worker, speaks its frames (gpu/foreign/PROTOCOL.md)
// and checks RotaryEmbedding and GroupQueryAttention on ONNX Runtime's WebGPU EP against float64
// references computed here. Run: node gpu/ort/smoke.mjs [dir holding node_modules] (default: this
// file's directory). Prints one line per case (max abs error, ms of the first and of a second run of
// the same request); exits 1 if any check fails. Set SMOKE_STDERR=1 to see the worker's stderr.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';

const here = path.dirname(fileURLToPath(import.meta.url));
const modulesDir = process.argv[2] ?? here;
const FRAME = { INFO: 1, RUN: 2, RESULT: 3, ERROR: 4 };

// ---- float16 ---------------------------------------------------------------------------------
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
function toHalf(value) {  // round to nearest even
  f32[0] = value;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const e = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (e === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const exp = e - 127 + 15;
  if (exp >= 0x1f) return sign | 0x7c00;
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - exp;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h++;
    return sign | h;
  }
  let h = sign | (exp << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++;
  return h;
}
function fromHalf(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >>> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}
// Values as the tensor holds them (rounded to its dtype), and the tensor's bytes.
const rounded = (dtype, xs) => (dtype === 'float16' ? xs.map((x) => fromHalf(toHalf(x))) : Array.from(Float32Array.from(xs)));
const encode = (dtype, xs) => (dtype === 'float16' ? Uint16Array.from(xs, toHalf) : Float32Array.from(xs));

let seed = 12345;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
const randoms = (n) => Array.from({ length: n }, rnd);

// ---- the worker --------------------------------------------------------------------------------
class Worker {
  constructor() {
    // As the backend runs it (gpu/node.h node_worker_argv): the shared frames, then the worker, one module.
    const script = ['../worker_frames.mjs', 'worker.mjs'].map((f) => readFileSync(path.join(here, f), 'utf8')).join('\n');
    this.proc = spawn(process.execPath, ['--input-type=module', '-e', script, '--', modulesDir], {
      // Replies come on descriptor 3 (gpu/worker_protocol.h's kFrameFd); stdout is log, as stderr.
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
      // verbose: ORT logs each session's node placement, checked below
      env: { ...process.env, TOUCHSTONE_ORT_LOG: 'verbose' },
    });
    this.placements = [];
    this.stderrTail = '';
    let line = '';
    const onLog = (d) => {
      if (process.env.SMOKE_STDERR) process.stderr.write(d);
      this.stderrTail = (this.stderrTail + d).slice(-4000);
      const lines = (line + d).split('\n');
      line = lines.pop();
      for (const l of lines) {
        const m = /VerifyEachNodeIsAssignedToAnEp\]\s+(.*)/.exec(l);
        if (m && /placed on/.test(m[1])) this.placements.push(m[1].trim());
      }
    };
    this.proc.stderr.on('data', onLog);
    this.proc.stdout.on('data', onLog);
    this.buf = Buffer.alloc(0);
    this.waiting = [];
    this.proc.stdio[3].on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      while (this.buf.length >= 4 && this.buf.length >= 4 + this.buf.readUInt32LE(0)) {
        const len = this.buf.readUInt32LE(0);
        const frame = { type: this.buf[4], payload: this.buf.subarray(5, 4 + len) };
        this.buf = this.buf.subarray(4 + len);
        this.waiting.shift()?.resolve(frame);
      }
    });
    this.proc.on('exit', (code, signal) => {
      this.exited = true;
      for (const w of this.waiting.splice(0)) w.reject(new Error(`worker exited (${code ?? signal}): ${this.stderrTail}`));
    });
  }
  request(type, payload = Buffer.alloc(0)) {
    const head = Buffer.alloc(5);
    head.writeUInt32LE(payload.length + 1, 0);
    head[4] = type;
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.proc.stdin.write(Buffer.concat([head, payload]));
    });
  }
  async info() {
    const r = await this.request(FRAME.INFO);
    if (r.type !== FRAME.INFO) throw new Error(`INFO: ${r.payload.toString()}`);
    return JSON.parse(r.payload.toString());
  }
  // spec.inputs: [{name, dtype, shape, data: TypedArray} | {absent: true}]; returns {name: {dtype, shape, values}}
  async run(spec) {
    const datas = [];
    let offset = 0;
    const inputs = spec.inputs.map((t) => {
      if (t.absent) return { name: t.name ?? '', absent: true };
      const b = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
      datas.push(b);
      const desc = { name: t.name, dtype: t.dtype, shape: t.shape, offset, bytes: b.length };
      offset += b.length;
      return desc;
    });
    const head = Buffer.from(JSON.stringify({ ...spec, inputs }));
    const len = Buffer.alloc(4);
    len.writeUInt32LE(head.length);
    const r = await this.request(FRAME.RUN, Buffer.concat([len, head, ...datas]));
    if (r.type === FRAME.ERROR) throw new Error(r.payload.toString());
    if (r.type !== FRAME.RESULT) throw new Error(`unexpected frame ${r.type}`);
    const hl = r.payload.readUInt32LE(0);
    const h = JSON.parse(r.payload.toString('utf8', 4, 4 + hl));
    const blob = r.payload.subarray(4 + hl);
    const out = {};
    for (const o of h.outputs) {
      const raw = new Uint8Array(blob.subarray(o.offset, o.offset + o.bytes)).slice().buffer;
      const values = o.dtype === 'float16' ? Array.from(new Uint16Array(raw), fromHalf)
        : o.dtype === 'float32' ? Array.from(new Float32Array(raw)) : Array.from(new Int32Array(raw));
      out[o.name] = { dtype: o.dtype, shape: o.shape, values };
    }
    return out;
  }
  peakRssMiB() {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.proc.pid}/status`, 'utf8'));
      return m ? Math.round(Number(m[1]) / 1024) : null;
    } catch {
      return null;
    }
  }
  close() {
    this.proc.stdin.end();
    return new Promise((r) => (this.exited ? r() : this.proc.on('exit', r)));
  }
}

// ---- checks --------------------------------------------------------------------------------------
let failures = 0;
function report(ok, name, detail) {
  if (!ok) failures++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? `: ${detail}` : ''}`);
}
const maxAbs = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
const TOL = { float32: 2e-5, float16: 4e-3 };

// Runs the request twice (a fresh session, then the cached one); returns the first result and times.
async function twice(worker, spec) {
  let t0 = performance.now();
  const r = await worker.run(spec);
  const first = performance.now() - t0;
  t0 = performance.now();
  await worker.run(spec);
  const again = performance.now() - t0;
  return { r, ms: `${first.toFixed(0)}/${again.toFixed(0)} ms` };
}

async function expectError(worker, name, spec, pattern) {
  try {
    await worker.run(spec);
    report(false, name, 'ran, an ERROR was expected');
  } catch (e) {
    report(pattern.test(e.message), name, `ERROR "${e.message.slice(0, 300)}"`);
  }
}

// RotaryEmbedding. c: {domain, opset, layout: 'BSH' ([B,S,H*D]) | 'BHSD', B, S, H, D, rot,
// interleaved, dtype, pos: 'BS' (position_ids [B,S]) | 'offset' ([1]: s + offset) | 'none' (ONNX
// only: cos/sin [B,S,rot/2], indexed by b, s)}.
async function rope(worker, c) {
  const { B, S, H, D, dtype } = c;
  const rot = c.rot ?? D;
  const half = rot / 2;
  const maxPos = 16;
  const x = rounded(dtype, randoms(B * S * H * D));
  const pos = [];
  for (let b = 0; b < B; b++) for (let s = 0; s < S; s++) pos.push(c.pos === 'offset' ? 3 + s : (5 * b + 2 * s + 1) % maxPos);
  const rows = c.pos === 'none' ? B * S : maxPos;
  const angle = (row, i) => row * 0.1 * (i + 1) + 0.05 * i;
  const cos = rounded(dtype, Array.from({ length: rows * half }, (_, k) => Math.cos(angle(Math.floor(k / half), k % half))));
  const sin = rounded(dtype, Array.from({ length: rows * half }, (_, k) => Math.sin(angle(Math.floor(k / half), k % half))));
  const at = (b, s, h, d) => (c.layout === 'BHSD' ? ((b * H + h) * S + s) * D + d : ((b * S + s) * H + h) * D + d);
  const ref = x.slice();
  for (let b = 0; b < B; b++) for (let s = 0; s < S; s++) for (let h = 0; h < H; h++) {
    const row = c.pos === 'none' ? b * S + s : pos[b * S + s];
    for (let i = 0; i < half; i++) {
      const cc = cos[row * half + i];
      const ss = sin[row * half + i];
      const [i0, i1] = c.interleaved ? [2 * i, 2 * i + 1] : [i, i + half];
      const x0 = x[at(b, s, h, i0)];
      const x1 = x[at(b, s, h, i1)];
      ref[at(b, s, h, i0)] = x0 * cc - x1 * ss;
      ref[at(b, s, h, i1)] = x0 * ss + x1 * cc;
    }
  }
  const input = { name: 'input', dtype, shape: c.layout === 'BHSD' ? [B, H, S, D] : [B, S, H * D], data: encode(dtype, x) };
  const cacheShape = c.pos === 'none' ? [B, S, half] : [maxPos, half];
  const cosT = { name: 'cos_cache', dtype, shape: cacheShape, data: encode(dtype, cos) };
  const sinT = { name: 'sin_cache', dtype, shape: cacheShape, data: encode(dtype, sin) };
  const posT = c.pos === 'none' ? { absent: true }
    : c.pos === 'offset' ? { name: 'position_ids', dtype: 'int64', shape: [1], data: new BigInt64Array([3n]) }
    : { name: 'position_ids', dtype: 'int64', shape: [B, S], data: BigInt64Array.from(pos, BigInt) };
  // com.microsoft: (input, position_ids, cos_cache, sin_cache); ONNX 23: (X, cos_cache, sin_cache, position_ids)
  const inputs = c.domain === 'com.microsoft' ? [input, posT, cosT, sinT] : [input, cosT, sinT, posT];
  const attrs = { interleaved: { i: c.interleaved } };
  if (c.layout === 'BSH') attrs.num_heads = { i: H };
  if (rot !== D) attrs.rotary_embedding_dim = { i: rot };
  const { r, ms } = await twice(worker, {
    op: 'RotaryEmbedding', domain: c.domain, opset: c.opset, attrs, inputs, outputs: [{ name: 'output', dtype }],
  });
  const err = maxAbs(r.output.values, ref);
  const name = `RotaryEmbedding ${c.domain || `onnx opset ${c.opset}`} ${c.layout} B${B} S${S} H${H} D${D} rot${rot} ` +
               `interleaved=${c.interleaved} pos=${c.pos} ${dtype}`;
  report(err <= TOL[dtype] && r.output.shape.join() === input.shape.join(), name, `max abs err ${err.toExponential(2)}, ${ms}`);
}

// GroupQueryAttention (com.microsoft), no rotary. c: {B, S, Hq, Hkv, D, P: [past length per batch],
// L: past buffer rows (0: no past inputs), dtype, scale (attribute; default 1/sqrt(D))}.
async function gqa(worker, c) {
  const { B, S, Hq, Hkv, D, L, P, dtype } = c;
  const T = P.map((p) => p + S);  // total length per batch; seqlens_k = T - 1
  const q = rounded(dtype, randoms(B * S * Hq * D));
  const k = rounded(dtype, randoms(B * S * Hkv * D));
  const v = rounded(dtype, randoms(B * S * Hkv * D));
  // Past rows at and after P[b] hold 100 + row (K) and 200 + row (V), to see where they end up.
  const pastK = [];
  const pastV = [];
  for (let b = 0; b < B; b++) for (let h = 0; h < Hkv; h++) for (let r = 0; r < L; r++) for (let d = 0; d < D; d++) {
    pastK.push(r < P[b] ? rnd() : 100 + r);
    pastV.push(r < P[b] ? rnd() : 200 + r);
  }
  const pk = rounded(dtype, pastK);
  const pv = rounded(dtype, pastV);
  const K = (b, h, r, d) => (r < P[b] ? pk[((b * Hkv + h) * L + r) * D + d] : k[((b * S + r - P[b]) * Hkv + h) * D + d]);
  const V = (b, h, r, d) => (r < P[b] ? pv[((b * Hkv + h) * L + r) * D + d] : v[((b * S + r - P[b]) * Hkv + h) * D + d]);
  const scale = c.scale ?? 1 / Math.sqrt(D);
  // Query row s of batch b sees keys 0..P[b]+s (causal, aligned to the end); head h uses KV head
  // h / (Hq / Hkv). `last` gives the alternative alignments the check must tell apart.
  const attend = (last) => {
    const out = new Array(B * S * Hq * D).fill(0);
    for (let b = 0; b < B; b++) for (let s = 0; s < S; s++) for (let h = 0; h < Hq; h++) {
      const hk = Math.floor(h / (Hq / Hkv));
      const n = last(b, s) + 1;
      const qa = ((b * S + s) * Hq + h) * D;
      const sc = [];
      for (let r = 0; r < n; r++) {
        let dot = 0;
        for (let d = 0; d < D; d++) dot += q[qa + d] * K(b, hk, r, d);
        sc.push(dot * scale);
      }
      const m = Math.max(...sc);
      const e = sc.map((x) => Math.exp(x - m));
      const z = e.reduce((a, x) => a + x, 0);
      for (let d = 0; d < D; d++) {
        let acc = 0;
        for (let r = 0; r < n; r++) acc += (e[r] / z) * V(b, hk, r, d);
        out[qa + d] = acc;
      }
    }
    return out;
  };
  const ref = attend((b, s) => P[b] + s);
  const inputs = [
    { name: 'query', dtype, shape: [B, S, Hq * D], data: encode(dtype, q) },
    { name: 'key', dtype, shape: [B, S, Hkv * D], data: encode(dtype, k) },
    { name: 'value', dtype, shape: [B, S, Hkv * D], data: encode(dtype, v) },
    L ? { name: 'past_key', dtype, shape: [B, Hkv, L, D], data: encode(dtype, pk) } : { absent: true },
    L ? { name: 'past_value', dtype, shape: [B, Hkv, L, D], data: encode(dtype, pv) } : { absent: true },
    { name: 'seqlens_k', dtype: 'int32', shape: [B], data: Int32Array.from(T, (t) => t - 1) },
    { name: 'total_sequence_length', dtype: 'int32', shape: [], data: new Int32Array([Math.max(...T)]) },
  ];
  const attrs = { num_heads: { i: Hq }, kv_num_heads: { i: Hkv } };
  if (c.scale) attrs.scale = { f: c.scale };
  const { r, ms } = await twice(worker, {
    op: 'GroupQueryAttention', domain: 'com.microsoft', attrs, inputs,
    outputs: [{ name: 'output', dtype }, { name: 'present_key', dtype }, { name: 'present_value', dtype }],
  });
  const name = `GroupQueryAttention B${B} S${S} Hq${Hq} Hkv${Hkv} D${D} P=${P} L=${L}${c.scale ? ` scale=${c.scale}` : ''} ${dtype}`;
  const err = maxAbs(r.output.values, ref);
  // present: [B, Hkv, max(L, total), D]; rows < T[b] are past rows then the new ones.
  const rows = Math.max(L, ...T);
  let presentErr = 0;
  const after = new Set();
  for (const [name2, want, past] of [['present_key', K, pk], ['present_value', V, pv]]) {
    const p = r[name2];
    if (p.shape.join() !== [B, Hkv, rows, D].join()) {
      report(false, `${name} ${name2} shape`, `[${p.shape}], expected [${[B, Hkv, rows, D]}]`);
      continue;
    }
    for (let b = 0; b < B; b++) for (let h = 0; h < Hkv; h++) for (let row = 0; row < rows; row++) for (let d = 0; d < D; d++) {
      const got = p.values[((b * Hkv + h) * rows + row) * D + d];
      if (row < T[b]) presentErr = Math.max(presentErr, Math.abs(got - want(b, h, row, d)));
      else after.add(row < L && got === past[((b * Hkv + h) * L + row) * D + d] ? 'past' : got === 0 ? 'zero' : 'other');
    }
  }
  // That the reference's alignment is the one that matches: row s seeing 0..s, or everything, is far off.
  const alt = S > 1 && Math.max(...P) > 0
    ? ` (vs keys <= s: ${maxAbs(r.output.values, attend((b, s) => s)).toExponential(1)}, vs all: ${maxAbs(r.output.values, attend((b) => T[b] - 1)).toExponential(1)})`
    : '';
  report(err <= TOL[dtype] && presentErr === 0, name,
         `max abs err ${err.toExponential(2)}${alt}, present [${r.present_key.shape}] exact=${presentErr === 0}` +
         `${after.size ? `, rows >= P+S: ${[...after]}` : ''}, ${ms}`);
}

// ---- the cases ------------------------------------------------------------------------------------
const worker = new Worker();
const t0 = performance.now();
try {
  const info = await worker.info();
  report(/onnxruntime-node 1\.30\.0/.test(info.library), 'INFO', `${JSON.stringify(info)}, ${(performance.now() - t0).toFixed(0)} ms`);

  await expectError(worker, 'MatMulInteger (no WebGPU kernel) is an ERROR, not a CPU run', {
    op: 'MatMulInteger',
    inputs: [{ name: 'a', dtype: 'int8', shape: [2, 2], data: new Int8Array([1, 2, 3, 4]) },
             { name: 'b', dtype: 'int8', shape: [2, 2], data: new Int8Array([1, 2, 3, 4]) }],
    outputs: [{ name: 'y', dtype: 'int32' }],
  }, /no WebGPU kernel/);
  await expectError(worker, 'bfloat16 input', {
    op: 'Add',
    inputs: [{ name: 'a', dtype: 'bfloat16', shape: [1], data: new Uint16Array([0x3f80]) },
             { name: 'b', dtype: 'bfloat16', shape: [1], data: new Uint16Array([0x3f80]) }],
    outputs: [{ name: 'y', dtype: 'bfloat16' }],
  }, /bfloat16/);

  for (const dtype of ['float32', 'float16']) {
    for (const interleaved of [0, 1]) {
      await rope(worker, { domain: 'com.microsoft', layout: 'BSH', B: 2, S: 3, H: 2, D: 8, interleaved, dtype, pos: 'BS' });
      await rope(worker, { domain: '', opset: 23, layout: 'BSH', B: 2, S: 3, H: 2, D: 8, interleaved, dtype, pos: 'BS' });
    }
  }
  await rope(worker, { domain: 'com.microsoft', layout: 'BHSD', B: 2, S: 3, H: 2, D: 8, interleaved: 0, dtype: 'float32', pos: 'BS' });
  await rope(worker, { domain: 'com.microsoft', layout: 'BSH', B: 2, S: 3, H: 2, D: 8, interleaved: 1, dtype: 'float32', pos: 'offset' });
  await rope(worker, { domain: 'com.microsoft', layout: 'BSH', B: 2, S: 3, H: 2, D: 16, rot: 8, interleaved: 0, dtype: 'float32', pos: 'BS' });
  await rope(worker, { domain: '', opset: 23, layout: 'BHSD', B: 2, S: 3, H: 2, D: 8, interleaved: 0, dtype: 'float32', pos: 'BS' });
  await rope(worker, { domain: '', opset: 23, layout: 'BSH', B: 2, S: 3, H: 2, D: 8, interleaved: 1, dtype: 'float32', pos: 'none' });
  await rope(worker, { domain: '', opset: 23, layout: 'BSH', B: 2, S: 3, H: 2, D: 16, rot: 8, interleaved: 1, dtype: 'float32', pos: 'BS' });

  const G = { B: 1, Hq: 8, Hkv: 2, D: 64 };
  for (const dtype of ['float32', 'float16']) {
    await gqa(worker, { ...G, S: 1, P: [5], L: 5, dtype });    // decode, past exactly P rows
    await gqa(worker, { ...G, S: 1, P: [5], L: 12, dtype });   // decode, a cache of 12 rows holding 5
    // S=2: lavapipe compiles the S=4 attention pipelines for ~30 s each (S=2: ~9 s)
    await gqa(worker, { ...G, S: 2, P: [3], L: 12, dtype });   // prefill after a past, causal
  }
  await gqa(worker, { ...G, S: 2, P: [0], L: 0, dtype: 'float32' });                 // prefill, no past
  await gqa(worker, { ...G, S: 1, P: [5], L: 5, dtype: 'float32', scale: 0.3 });     // scale attribute
  // Decode with per-batch lengths. Batch 0's present rows P+S..total_sequence_length-1 come out
  // holding other rows' new K/V (CopyKVCache reads `key` past the batch's rows there).
  await gqa(worker, { ...G, B: 2, S: 1, P: [2, 5], L: 8, dtype: 'float32' });
  const qkv = (D, S, B = 1) => [
    { name: 'query', dtype: 'float32', shape: [B, S, 8 * D], data: new Float32Array(B * S * 8 * D) },
    { name: 'key', dtype: 'float32', shape: [B, S, 2 * D], data: new Float32Array(B * S * 2 * D) },
    { name: 'value', dtype: 'float32', shape: [B, S, 2 * D], data: new Float32Array(B * S * 2 * D) },
    { name: 'past_key', dtype: 'float32', shape: [B, 2, 4, D], data: new Float32Array(B * 2 * 4 * D) },
    { name: 'past_value', dtype: 'float32', shape: [B, 2, 4, D], data: new Float32Array(B * 2 * 4 * D) },
    { name: 'seqlens_k', dtype: 'int32', shape: [B], data: new Int32Array(B).fill(4 + S - 1) },
    { name: 'total_sequence_length', dtype: 'int32', shape: [], data: new Int32Array([4 + S]) },
  ];
  const gqaSpec = (inputs) => ({
    op: 'GroupQueryAttention', domain: 'com.microsoft', attrs: { num_heads: { i: 8 }, kv_num_heads: { i: 2 } }, inputs,
    outputs: [{ name: 'output', dtype: 'float32' }, { name: 'present_key', dtype: 'float32' }, { name: 'present_value', dtype: 'float32' }],
  });
  await expectError(worker, 'GroupQueryAttention D68', gqaSpec(qkv(68, 1)), /multiple of 8/);
  await expectError(worker, 'GroupQueryAttention D36', gqaSpec(qkv(36, 1)), /multiple of 8/);
  await expectError(worker, 'GroupQueryAttention B2 S2 with past', gqaSpec(qkv(64, 2, 2)), /batch_size must be 1/);

  // Every session (the worker's probe, and each case's) placed its node on WebGPU.
  const onWebGpu = worker.placements.filter((p) => /All nodes placed on \[WebGpuExecutionProvider\]/.test(p)).length;
  report(onWebGpu > 0 && onWebGpu === worker.placements.length, 'node placement',
         `${onWebGpu} of ${worker.placements.length} sessions: all nodes on WebGpuExecutionProvider`);
  console.log(`total ${((performance.now() - t0) / 1000).toFixed(1)} s, worker peak RSS ${worker.peakRssMiB()} MiB`);
} catch (e) {
  report(false, 'smoke', e.message);
}
await worker.close();
process.exit(failures ? 1 : 0);
