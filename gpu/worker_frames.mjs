// The worker side of the frames (gpu/worker_protocol.h; gpu/webgpu/PROTOCOL.md, gpu/foreign/PROTOCOL.md),
// one copy for the workers written in JavaScript (gpu/webgpu/worker.mjs, gpu/ort/worker.mjs). It is not
// imported: node_worker_argv() (gpu/node.h) runs this text followed by the worker's own as one module,
// so it declares only what every worker uses, and imports under a name no worker takes.
import { writeSync as writeFrameBytes } from 'node:fs';

// gpu/worker_protocol.h's FrameType.
const FRAME = { INFO: 1, RUN: 2, RESULT: 3, ERROR: 4, PREPARE: 5, TIME: 6, TIMES: 7 };

// Replies go out on descriptor 3 (gpu/worker_protocol.h's kFrameFd), a blocking pipe; stdout is the
// stderr pipe, where whatever a library prints lands instead of among the frames.
const FRAME_FD = 3;
function send(type, payload) {
  const head = Buffer.alloc(5);
  head.writeUInt32LE(payload.length + 1, 0);
  head.writeUInt8(type, 4);
  for (const part of [head, payload]) for (let at = 0; at < part.length;) at += writeFrameBytes(FRAME_FD, part, at);
}
const sendError = (message) => send(FRAME.ERROR, Buffer.from(message, 'utf8'));

// Frames arrive in arbitrary chunks; they are joined only once a whole frame is present.
function frameReader(onFrame) {
  let chunks = [];
  let have = 0;
  return (chunk) => {
    chunks.push(chunk);
    have += chunk.length;
    while (have >= 4) {
      const first = chunks[0].length >= 4 ? chunks[0] : Buffer.concat(chunks);
      const len = first.readUInt32LE(0);
      if (have < 4 + len) return;
      const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      onFrame(all.readUInt8(4), all.subarray(5, 4 + len));
      const rest = all.subarray(4 + len);
      chunks = rest.length ? [rest] : [];
      have = rest.length;
    }
  };
}
