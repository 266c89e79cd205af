// expect: MakeChan<void>: use MakeChan<std::monostate>\(\)
#include "gort/gort.h"
void F() { auto c = gort::MakeChan<void>(); }
