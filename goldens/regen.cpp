#include "goldens/regen.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "core/runner.h"
#include "goldens/files.h"
#include "goldens/manifest.h"
#include "goldens/sha256.h"
#include "gpu/plans/coverage.h"
#include "gpu/plans/registry.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

constexpr size_t kValidPerDtype = 3;

// Listed before any is removed: removing entries while iterating a directory is unspecified.
std::vector<fs::path> files_of(const std::string& dir) {
  std::vector<fs::path> v;
  for (auto& e : fs::directory_iterator(dir)) v.push_back(e.path());
  return v;
}

// An edge case with its inputs and verdict; the reference runs only for the cases picked.
struct Candidate {
  Case c;
  Problem problem;
  std::optional<Violation> violation;
  size_t bytes = 0;  // of the inputs
  std::vector<std::string> classes;  // valid cases: the shape classes it covers
};

Candidate candidate(const Case& c, const OpDef& op) {
  Candidate k{c, {}, {}, 0};
  try {
    k.problem = op.make(c);
    k.violation = op.validate(k.problem);
  } catch (const std::exception& e) {
    throw std::runtime_error(cat("edge case ", c.id(), " cannot be built: ", e.what()));
  }
  for (auto& [_, t] : k.problem.inputs) k.bytes += t.nbytes();
  if (!k.violation) {
    Expected e;  // the classes need the case and its problem, not the reference's outputs
    e.c = c;
    e.op = &op;
    e.problem = k.problem;
    for (auto& cls : case_classes(e, /*of_plans=*/false))
      if (cls != "valid" && cls.rfind("dtype ", 0) != 0 && !is_storage_class(cls)) k.classes.push_back(cls);
  }
  return k;
}

// An exclusive flock on DIR/.regen.lock for the lifetime of the object. A second regen refuses at
// once rather than waiting: a regen takes seconds, so one still holding the lock is more likely
// stuck (or being debugged) than about to finish, and a CI job should fail visibly, not hang.
// The lock file is never removed: unlinking a lock file lets a third process lock a new inode.
class DirLock {
 public:
  explicit DirLock(const std::string& dir) : path_((fs::path(dir) / ".regen.lock").string()) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
    if (fd_ < 0) throw std::runtime_error(cat("cannot open the lock file ", path_, ": ", std::strerror(errno)));
    struct stat st;
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      throw std::runtime_error(cat("the lock file ", path_, " is not a regular file"));
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      ::close(fd_);
      if (err == EWOULDBLOCK)
        throw std::runtime_error(cat("another golden regen is running in ", dir, " (it holds ", path_,
                                     "); refusing to run two at once: try again when it has finished"));
      throw std::runtime_error(cat("cannot lock ", path_, ": ", std::strerror(err)));
    }
  }
  ~DirLock() { ::close(fd_); }  // releases the lock
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

// The golden files a previous regen of `dir` wrote, each with the sha256 it wrote it with: those its
// manifest lists, and those listed by the marker of a regen killed while committing (a name may
// carry two hashes there: the old set's and the one being renamed in). A manifest or marker that
// cannot be read or is malformed adds nothing, and a marker line without a hash (an older
// touchstone's) adds the name without one: such files are never removed, only reported.
using Owned = std::map<std::string, std::set<std::string>>;  // file name -> sha256 it may have

Owned previous_files(const std::string& dir, const std::string& marker) {
  Owned ours;
  const std::string manifest = (fs::path(dir) / kManifestName).string();
  try {
    if (!describe_path(manifest).empty())
      for (auto& [name, hash] : parse_manifest(read_file(manifest, kMaxManifestBytes), manifest).files)
        ours[name].insert(hash);
  } catch (const std::exception&) {
  }
  try {
    if (!describe_path(marker).empty()) {
      std::string text = read_file(marker, kMaxManifestBytes);
      for (size_t at = 0, end; at < text.size(); at = end + 1) {
        end = std::min(text.find('\n', at), text.size());
        std::string line = text.substr(at, end - at), hash;
        if (const size_t sp = line.find(' '); sp == 64 && is_sha256_hex(line.substr(0, sp))) {
          hash = line.substr(0, sp);
          line.erase(0, sp + 1);
        }
        if (!is_golden_file_name(line)) continue;
        std::set<std::string>& hashes = ours[line];
        if (!hash.empty()) hashes.insert(hash);
      }
    }
  } catch (const std::exception&) {
  }
  return ours;
}

// Why the file at `path` cannot be shown to be the one regen wrote under one of `hashes` ("" when
// it can: then regen may remove it). The content decides, not the name: a manifest or marker may
// name a file that someone has since replaced with their own.
std::string not_provably_ours(const fs::path& path, const std::set<std::string>& hashes) {
  if (hashes.empty()) return "named by an in-progress marker without its sha256";
  std::string bytes;
  try {
    bytes = read_file(path.string());
  } catch (const std::exception& e) {
    return cat("cannot be read to check its sha256: ", e.what());
  }
  if (hashes.count(sha256_hex(bytes))) return "";
  return cat("its sha256 ", sha256_hex(bytes), " is not the one regen wrote (", *hashes.begin(), ")");
}

Golden golden_from_expected(const Expected& e) {
  Golden g;
  g.op = e.c.op;
  g.dtype = e.c.dtype;
  g.params = e.problem.params;
  g.reject = e.violation.has_value();
  g.source = kReferenceSource;
  g.case_id = e.c.id();
  g.seed = e.c.seed;
  g.inputs = e.problem.inputs;
  if (!g.reject) {
    g.expected = e.outputs;
    // Per-element bounds have no {"atol","rtol"} form: without one, verify derives them again.
    if (e.tol.elem.empty()) g.tolerance = e.tol;
  }
  return g;
}

// Case variables describe well-formed ranks only, so a rule such as input_rank is broken by no
// case id. Such a golden is derived from a valid case by reshaping one input (same bytes, another
// rank) until validate names the rule; it has no `case`, and `derived_from` says how it was made.
std::optional<Golden> derived_reject(const OpDef& op, const Candidate& base, const std::string& rule) {
  for (auto& [name, t] : base.problem.inputs) {
    std::vector<Shape> shapes;
    if (t.shape.size() >= 2) {
      Shape merged(t.shape.begin() + 1, t.shape.end());
      merged[0] *= t.shape[0];
      shapes.push_back(merged);
    }
    Shape lifted = t.shape;
    lifted.insert(lifted.begin(), 1);
    shapes.push_back(lifted);
    for (const Shape& s : shapes) {
      Problem p = base.problem;
      p.inputs[name].shape = s;
      auto v = op.validate(p);
      if (!v || v->rule != rule) continue;
      Golden g;
      g.op = op.name;
      g.dtype = base.c.dtype;
      g.params = p.params;
      g.reject = true;
      g.source = kReferenceSource;
      g.seed = base.c.seed;
      g.inputs = std::move(p.inputs);
      g.extra["derived_from"] = cat(base.c.id(), " with ", name, " reshaped from ", shape_str(t.shape), " to ", shape_str(s));
      return g;
    }
  }
  return std::nullopt;
}

}  // namespace

Golden golden_from_case(const Case& c) {
  Expected e = prepare(c);
  if (!e.error.empty()) throw UsageError(cat("case ", c.id(), ": ", e.error));
  return golden_from_expected(e);
}

GoldenSet golden_set() {
  GoldenSet set;
  for (const OpDef* op : all_ops())
    for (DType t : op->dtypes) {
      std::vector<Candidate> valid, invalid;
      std::set<std::string> seen;
      for (Case c : op->edge_cases(t)) {
        // Goldens hold logical tensors (`golden verify --layout` runs any golden through any
        // storage): an edge case drawn for its storage counts for its values, once.
        c.storage = "buffer";
        if (!seen.insert(c.id()).second) continue;
        Candidate k = candidate(c, *op);
        (k.violation ? invalid : valid).push_back(std::move(k));
      }
      if (valid.empty()) throw std::runtime_error(cat(op->name, " has no valid edge case for ", dtype_name(t)));
      // The smallest cases keep the committed set small; edge cases are ordered by intent, so ties keep it.
      auto smaller = [](const Candidate& a, const Candidate& b) { return a.bytes < b.bytes; };
      std::stable_sort(valid.begin(), valid.end(), smaller);
      std::stable_sort(invalid.begin(), invalid.end(), smaller);
      const std::string prefix = cat(op->name, "-", dtype_name(t));
      // The smallest cases, then for each shape class of the sweep (gpu/plans/coverage.h: GQA, MQA,
      // prefill, chunked prefill, large logits, ragged, ...) that they miss, the smallest case in it.
      std::vector<const Candidate*> picked;
      std::set<std::string> covered;
      auto pick = [&](const Candidate& k) {
        picked.push_back(&k);
        for (auto& cls : k.classes) covered.insert(cls);
      };
      for (size_t i = 0; i < valid.size() && i < kValidPerDtype && valid[i].bytes <= kMaxInputBytes; ++i) pick(valid[i]);
      std::set<std::string> wanted;
      for (auto& k : valid) wanted.insert(k.classes.begin(), k.classes.end());
      for (const std::string& cls : wanted) {
        if (covered.count(cls)) continue;
        auto it = std::find_if(valid.begin(), valid.end(), [&](auto& k) {
          return std::find(k.classes.begin(), k.classes.end(), cls) != k.classes.end();
        });
        if (it->bytes <= kMaxInputBytes) pick(*it);
        else set.uncovered[cat("class ", op->name, "/", dtype_name(t), "/", cls)] =
            cat("the smallest case of the class, ", it->c.id(), ", has ", it->bytes, " bytes of inputs (cap ", kMaxInputBytes, ")");
      }
      for (size_t i = 0; i < picked.size(); ++i)
        set.files.emplace_back(cat(prefix, "-pass-", i + 1, ".safetensors"), golden_from_case(picked[i]->c));
      for (const Rule& rule : op->rules) {
        if (rule.about_storage) {
          set.uncovered[cat(op->name, "/", dtype_name(t), "/", rule.id)] =
              "a rule about storage: golden files hold logical tensors (the sweep and `golden verify --layout` break it)";
          continue;
        }
        auto it = std::find_if(invalid.begin(), invalid.end(), [&](auto& k) { return k.violation->rule == rule.id; });
        if (it != invalid.end() && it->bytes > kMaxInputBytes) {
          set.uncovered[cat(op->name, "/", dtype_name(t), "/", rule.id)] =
              cat("the smallest case breaking it, ", it->c.id(), ", has ", it->bytes, " bytes of inputs (cap ",
                  kMaxInputBytes, ")");
          continue;
        }
        std::optional<Golden> g = it != invalid.end() ? golden_from_case(it->c) : derived_reject(*op, valid[0], rule.id);
        if (!g)
          throw std::runtime_error(cat("no edge case of ", op->name, " (", dtype_name(t), ") breaks rule ", rule.id,
                                       "; add an invalid edge case for it"));
        set.files.emplace_back(cat(prefix, "-reject-", rule.id, ".safetensors"), std::move(*g));
      }
    }
  std::sort(set.files.begin(), set.files.end(), [](auto& a, auto& b) { return a.first < b.first; });
  return set;
}

RegenSummary regenerate(const std::string& dir) {
  fs::create_directories(dir);
  DirLock lock(dir);
  GoldenSet set = golden_set();
  Manifest m;
  m.uncovered = set.uncovered;
  m.sources = reference_sources();
  if (m.sources.empty()) throw std::runtime_error("this binary embeds no reference sources to hash (see CMakeLists.txt)");
  for (auto& [name, g] : set.files) m.files[name] = "";

  // Ours: what the previous regen listed, and what a killed one was committing; nothing else.
  const std::string marker = (fs::path(dir) / kRegenMarkerName).string();
  const Owned ours = previous_files(dir, marker);
  std::set<std::string> temps_of;
  for (auto& [name, _] : ours) temps_of.insert(name);
  for (auto& [name, _] : m.files) temps_of.insert(name);
  temps_of.insert(std::string(kManifestName));
  temps_of.insert(std::string(kRegenMarkerName));
  for (const fs::path& p : files_of(dir))
    if (std::any_of(temps_of.begin(), temps_of.end(), [&](auto& of) { return is_temp_name(p.filename().string(), of); }))
      fs::remove(p);

  RegenSummary sum;
  std::vector<std::pair<std::string, std::string>> staged;  // temporary file, final path
  auto clean = [&] {
    std::error_code ec;
    for (auto& [temp, _] : staged) fs::remove(temp, ec);  // those already renamed are gone
  };
  auto stage = [&](const std::string& path, const std::string& bytes) {
    std::string old;
    try {
      old = read_file(path);
    } catch (const std::runtime_error&) {  // missing, or not a regular file: the commit refuses those
    }
    if (old != bytes || describe_path(path) != "a regular file") staged.emplace_back(write_temp_beside(path, bytes), path);
  };
  try {
    for (auto& [name, g] : set.files) {
      std::string bytes = serialize_golden(g);
      m.files[name] = sha256_hex(bytes);
      sum.bytes += bytes.size();
      stage((fs::path(dir) / name).string(), bytes);
    }
    sum.changed = staged.size();
    stage((fs::path(dir) / kManifestName).string(), serialize_manifest(m));
    // Every destination is checked before the first rename, so a link or special file among them
    // fails the regen with the previous set untouched.
    for (auto& [_, path] : staged)
      if (std::string what = describe_path(path); !what.empty() && what != "a regular file")
        throw std::runtime_error(cat("refusing to replace ", path, ": it is ", what, ", not a regular file"));
    if (!staged.empty()) {
      // What this regen may rename in or has still to remove, with the hashes it may find them
      // under, for the next one if it is killed.
      Owned names = ours;
      for (auto& [temp, path] : staged) {
        const std::string name = fs::path(path).filename().string();
        if (m.files.count(name)) names[name].insert(m.files[name]);
      }
      std::string listing = "# golden regen is committing these files (see goldens/manifest.h)\n";
      for (auto& [name, hashes] : names)
        for (auto& hash : hashes) listing += cat(hash, " ", name, "\n");
      write_file_atomic(marker, listing);
    }
    for (auto& [temp, path] : staged) commit_temp(temp, path);
    sync_dir(dir);
  } catch (...) {
    clean();
    throw;
  }
  for (auto& [name, hashes] : ours) {
    const fs::path path = fs::path(dir) / name;
    if (m.files.count(name) || describe_path(path.string()).empty()) continue;
    if (std::string why = not_provably_ours(path, hashes); !why.empty()) {
      sum.not_ours[name] = std::move(why);
      continue;
    }
    std::error_code ec;
    if (fs::remove(path, ec)) ++sum.removed;
  }
  std::error_code ec;
  fs::remove(marker, ec);
  sync_dir(dir);
  for (const fs::path& p : files_of(dir))
    if (p.extension() == ".safetensors" && !m.files.count(p.filename().string()))
      sum.left_alone.push_back(p.filename().string());
  std::sort(sum.left_alone.begin(), sum.left_alone.end());
  sum.files = set.files.size();
  sum.uncovered = set.uncovered;
  for (auto& [name, g] : set.files)
    if (!g.reject && g.case_id) sum.pass_cases.push_back(*g.case_id);
  return sum;
}

}  // namespace ts
