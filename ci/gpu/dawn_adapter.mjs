// The probes' Dawn: npm webgpu from TOUCHSTONE_WEBGPU_DIR (run.sh unpacks it there), else the
// checkout's gpu/webgpu, on Vulkan with the given Dawn flags. The instance is kept on globalThis:
// Dawn's adapter and device stop working once it is collected (ENVIRONMENT.md).
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export async function dawnAdapter(flags) {
  const dir = path.resolve(process.env.TOUCHSTONE_WEBGPU_DIR ?? 'gpu/webgpu');
  const req = createRequire(path.join(dir, 'package.json'));
  const { create, globals } = await import(pathToFileURL(req.resolve('webgpu')).href);
  Object.assign(globalThis, globals);
  globalThis.keepDawn = create(['backend=vulkan', ...flags]);
  const adapter = await globalThis.keepDawn.requestAdapter();
  if (!adapter) throw new Error('no WebGPU adapter');
  console.log('adapter', adapter.info.description);
  return adapter;
}
