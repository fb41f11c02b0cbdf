// The environment a confined child inherits: an allow-list, then a deny-list
// of secret-looking names over it (an allow-listed prefix such as NV* must
// not let NVIDIA_API_KEY through).
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <string>

#include "confine/confine.hpp"
#include "core/fs.hpp"

extern char** environ;

namespace tessera {

namespace {

constexpr std::array kInheritedNames = {
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TMP", "TEMP",
    "LD_LIBRARY_PATH", "XDG_CACHE_HOME",
    // tessera's own settings that a child reads (cache, binary, nvcc, CUPTI off, confinement off, the
    // machine-wide GPU lock that the worker takes)
    "TESSERA_CACHE_DIR", "TESSERA_BINARY", "TESSERA_NVCC", "TESSERA_CUDA_INCLUDE", "TESSERA_NO_CUPTI",
    "TESSERA_CONFINE", "TESSERA_GPU_LOCK", "TESSERA_GPU_LOCK_DIR",
    // a CUDA tool the user attached (compute-sanitizer, Nsight) follows children through these
    "LD_PRELOAD", "CUDA_INJECTION64_PATH"};
// CUDA_VISIBLE_DEVICES, CUDA_MODULE_LOADING, CUDA_HOME, CUDA_CACHE_PATH ...;
// NVCC_PREPEND_FLAGS, NVIDIA_*, NV_* (driver and tool settings); locale.
constexpr std::array kInheritedPrefixes = {"CUDA_", "NV", "LC_"};

constexpr std::array kSecretSuffixes = {"_KEY", "_KEYS", "_TOKEN", "_TOKENS", "_SECRET", "_SECRETS", "_PAT"};
constexpr std::array kSecretParts = {"PASSWORD", "PASSWD", "CREDENTIAL", "SECRET", "APIKEY", "API_KEY", "PRIVATE",
                                     "SESSION", "COOKIE", "AUTH"};
constexpr std::array kSecretPrefixes = {"AWS_", "AZURE_", "GOOGLE_", "GCP_", "GCLOUD_", "HF_", "HUGGING",
                                        "OPENAI", "ANTHROPIC", "GITHUB_", "GH_", "GITLAB", "WANDB", "SSH_"};

std::string upper(std::string_view s) {
  std::string u(s);
  std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return u;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) { return s.size() >= p.size() && s.substr(s.size() - p.size()) == p; }

}  // namespace

bool is_secret_name(std::string_view name) {
  const std::string u = upper(name);
  if (u == "KEY" || u == "TOKEN" || u == "SECRET") return true;
  for (const char* s : kSecretSuffixes)
    if (ends_with(u, s)) return true;
  for (const char* s : kSecretParts)
    if (u.find(s) != std::string::npos) return true;
  for (const char* s : kSecretPrefixes)
    if (starts_with(u, s)) return true;
  return false;
}

bool is_inherited_name(std::string_view name) {
  if (name.empty() || is_secret_name(name)) return false;
  for (const char* n : kInheritedNames)
    if (name == n) return true;
  for (const char* p : kInheritedPrefixes)
    if (starts_with(name, p)) return true;
  return false;
}

std::vector<std::string> sandbox_environment(const std::vector<std::string>& parent,
                                             const std::map<std::string, std::string>& overrides) {
  // A CUDA tool the user attached follows children through variables of
  // its own, whose names we cannot know: then every name but a secret's passes.
  bool tool = false;
  for (const auto& entry : parent)
    for (const char* var : {"CUDA_INJECTION64_PATH=", "LD_PRELOAD="})
      if (entry.rfind(var, 0) == 0 && entry.size() > std::strlen(var)) tool = true;
  std::vector<std::string> out;
  for (const auto& entry : parent) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string name = entry.substr(0, eq);
    if (overrides.count(name)) continue;
    if (!is_inherited_name(name) && (!tool || is_secret_name(name))) continue;
    out.push_back(entry);
  }
  for (const auto& [name, value] : overrides) out.push_back(name + "=" + value);
  return out;
}

std::vector<std::string> current_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  return env;
}

std::string visible_device(const char* parent_visible_devices, int device) {
  if (!parent_visible_devices || !*parent_visible_devices) return std::to_string(device);
  std::string list(parent_visible_devices);
  int index = 0;
  for (std::size_t start = 0; start <= list.size(); ++index) {
    const auto comma = std::min(list.find(',', start), list.size());
    if (index == device) return list.substr(start, comma - start);
    start = comma + 1;
  }
  // Past the end of the parent's list: the child sees none, and says so
  // when it cannot find a device.
  return "-1";
}

std::vector<std::string> worker_environment(int device, const std::filesystem::path& scratch) {
  return sandbox_environment(current_environment(),
                             {{"CUDA_VISIBLE_DEVICES", visible_device(std::getenv("CUDA_VISIBLE_DEVICES"), device)},
                              {"TMPDIR", scratch.string()},
                              {"TESSERA_CACHE_DIR", cache_dir().string()}});
}

std::vector<std::string> runner_environment(const std::filesystem::path& scratch) {
  // HOME in scratch: whatever the CUDA runtime caches there (~/.nv) stays
  // private and goes with the runner.
  return sandbox_environment(current_environment(), {{"TMPDIR", scratch.string()}, {"HOME", scratch.string()}});
}

}  // namespace tessera
