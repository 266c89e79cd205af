// runtime/export_test.cc: what only tests may call, as Go's
// export_test.go exports internals to package runtime's tests. It is no
// source of the gort library: the gort-internals target adds it to each
// test and tool that reaches inside the runtime, so no program links it.
#include "proc.h"

namespace gort::runtime {

// setCgroupRootForTest: cgroup files are read under root ("" for the real
// system), so a test can give the runtime a fake cgroup tree.
void setCgroupRootForTest(const char* root) { cgroupRoot = root; }

}  // namespace gort::runtime
