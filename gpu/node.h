#pragma once
// Node.js, which the workers written in JavaScript run on (gpu/webgpu, gpu/ort).
#include <string>
#include <vector>

namespace ts {

// An executable node: `requested` (a path, or a name looked up on PATH), else $TOUCHSTONE_NODE,
// else `node` on PATH. Empty, with the reason in *why_not, if there is none.
std::string find_node(const std::string& requested, std::string* why_not);

// The command line that runs a worker written in JavaScript, an embedded file (e.g.
// "gpu/ort/worker.mjs"): `node` runs gpu/worker_frames.mjs (the frames, one copy for every worker)
// and the worker as one module, `--input-type=module -e`, with `args` as process.argv.slice(1).
std::vector<std::string> node_worker_argv(const std::string& node, const std::string& worker,
                                          const std::vector<std::string>& args);

}  // namespace ts
