// expect: Chan<void>: a channel of no value is Chan<std::monostate>
#include "gort/gort.h"
void F(gort::Chan<void>* c) { (void)sizeof(*c); }
