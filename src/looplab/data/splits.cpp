#include "looplab/data/splits.h"

#include "looplab/tasks/registry.h"

namespace looplab {

Split to_split(const std::string& name, const Examples& e) {
  Split s;
  s.name = name;
  s.inputs = torch::from_blob(const_cast<float*>(e.inputs.data()), {e.count, e.positions, e.channels}, torch::kFloat32)
                 .clone();
  s.targets =
      torch::from_blob(const_cast<int64_t*>(e.targets.data()), {e.count, e.positions}, torch::kInt64).clone();
  return s;
}

Split load_split(const DataOptions& data, const std::string& split) {
  const Task& t = task(data.task);
  data.count(split);  // an unknown split is an error before any work
  return to_split(split, t.load(data, split));
}

}  // namespace looplab
