#include "looplab/sweep/slurm.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "looplab/io/atomic_file.h"
#include "looplab/sweep/state.h"
#include "looplab/util/error.h"

namespace looplab::sweep {

namespace fs = std::filesystem;

namespace {

// Runs a shell command, returning its exit status and standard output (stderr joined).
int capture(const std::string& command, std::string& out) {
  out.clear();
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string quote(const std::string& s) {  // for the shell
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::vector<std::string> recorded_jobs(const Sweep& sw) {
  std::vector<std::string> jobs;
  std::ifstream in(sw.out + "/slurm/jobs.txt");
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) jobs.push_back(line.substr(0, line.find(' ')));
  return jobs;
}

}  // namespace

std::string array_indices(const std::vector<int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(v[i]);
    if (j > i) out += "-" + std::to_string(v[j]);
    i = j + 1;
  }
  return out;
}

std::string array_script(const Sweep& sw, const SubmitOptions& o, const std::vector<int64_t>& indices) {
  if (o.threads_per_run < 1 || o.max_parallel < 0 || o.ranks_per_run < 1)
    throw Error("sweep submit: --threads-per-run and --ranks-per-run must be >= 1 and --max-parallel >= 0");
  const std::string self = o.self.empty() ? fs::read_symlink("/proc/self/exe").string() : o.self;
  const std::string file = fs::absolute(sw.file).lexically_normal().string();
  const std::string logs = fs::absolute(sw.out).lexically_normal().string() + "/slurm";
  std::string s = "#!/bin/bash\n# looplab sweep " + sw.name + ": one array task per run not done when submitted.\n";
  s += "#SBATCH --job-name=looplab-" + sw.name + "\n";
  s += "#SBATCH --array=" + array_indices(indices) + (o.max_parallel > 0 ? "%" + std::to_string(o.max_parallel) : "") + "\n";
  s += "#SBATCH --output=" + logs + "/%A_%a.out\n";
  if (o.ranks_per_run > 1) s += "#SBATCH --ntasks=" + std::to_string(o.ranks_per_run) + "\n";
  s += "#SBATCH --cpus-per-task=" + std::to_string(o.threads_per_run) + "\n";
  s += "#SBATCH --requeue\n";  // a preempted or requeued task runs exec again, which resumes
  if (!o.partition.empty()) s += "#SBATCH --partition=" + o.partition + "\n";
  if (!o.gres.empty()) s += "#SBATCH --gres=" + o.gres + "\n";
  if (!o.time.empty()) s += "#SBATCH --time=" + o.time + "\n";
  // Several ranks: srun starts them (distributed/environment.h reads its variables) and ends
  // the step when one fails.
  s += std::string("exec ") + (o.ranks_per_run > 1 ? "srun --kill-on-bad-exit=1 " : "") + quote(self) + " --threads " + std::to_string(o.threads_per_run) + " sweep exec " + quote(file) +
       " --index \"$SLURM_ARRAY_TASK_ID\" --device " + quote(o.device) + "\n";
  return s;
}

std::string array_script(const Sweep& sw, const SubmitOptions& o) {
  const std::vector<int64_t> todo = runs_not_done(sw);
  if (todo.empty()) throw Error("sweep " + sw.name + ": every run is done, nothing to submit");
  return array_script(sw, o, todo);
}

std::string submit(const Sweep& sw, const SubmitOptions& o) {
  const std::string text = array_script(sw, o);
  const std::string dir = sw.out + "/slurm";
  make_directories(dir);
  int64_t n = 0;
  while (fs::exists(dir + "/submit-" + std::to_string(n) + ".sh")) ++n;
  const std::string script = dir + "/submit-" + std::to_string(n) + ".sh";
  write_file_atomic(script, text);
  std::string out;
  if (capture("sbatch --parsable " + quote(script), out) != 0)
    throw Error("sweep submit: sbatch failed: " + out.substr(0, out.find('\n')));
  const std::string job = out.substr(0, out.find_first_of(";\n"));
  std::ofstream(dir + "/jobs.txt", std::ios::app) << job << " " << script << "\n";
  return job;
}

std::vector<std::pair<int64_t, std::string>> slurm_states(const Sweep& sw) {
  std::map<int64_t, std::string> states;
  for (const std::string& job : recorded_jobs(sw)) {
    std::string out;
    // Accounting first (it remembers finished tasks), then the queue (pending and running).
    if (capture("sacct -n -P -X -j " + quote(job) + " -o JobID,State", out) == 0) {
      std::istringstream lines(out);
      for (std::string line; std::getline(lines, line);) {
        const size_t us = line.find('_'), bar = line.find('|');
        if (us == std::string::npos || bar == std::string::npos || line.compare(0, us, job) != 0) continue;
        const std::string index = line.substr(us + 1, bar - us - 1);
        if (index.empty() || index[0] == '[') continue;
        states[std::stoll(index)] = line.substr(bar + 1, line.find(' ', bar) - bar - 1);
      }
    }
    if (capture("squeue -h -r -j " + quote(job) + " -o '%i %T'", out) == 0) {
      std::istringstream lines(out);
      for (std::string id, state; lines >> id >> state;) {
        const size_t us = id.find('_');
        if (us == std::string::npos || id.compare(0, us, job) != 0 || id[us + 1] == '[') continue;
        states[std::stoll(id.substr(us + 1))] = state;
      }
    }
  }
  return {states.begin(), states.end()};
}

std::string status_text(const Sweep& sw) {
  std::map<int64_t, std::string> slurm;
  for (const auto& [index, state] : slurm_states(sw)) slurm[index] = state;
  char line[1024];
  std::snprintf(line, sizeof line, "sweep %s: %zu runs in %s\n%5s  %-8s %-9s %-12s %s\n", sw.name.c_str(),
                sw.runs.size(), sw.out.c_str(), "index", "state", "epochs", "slurm", "run");
  std::string out = line;
  for (const Run& r : sw.runs) {
    const RunStatus st = run_status(sw, r);
    const auto it = slurm.find(r.index);
    const std::string epochs = std::to_string(st.epochs_done) + "/" + std::to_string(r.spec.train.epochs);
    std::snprintf(line, sizeof line, "%5lld  %-8s %-9s %-12s ", static_cast<long long>(r.index),
                  state_name(st.state), epochs.c_str(), it == slurm.end() ? "-" : it->second.c_str());
    out += line + r.name + "\n";
  }
  return out;
}

}  // namespace looplab::sweep
