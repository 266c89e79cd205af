// tests/check_diagrams/runtime/names.h: the "runtime" of check_diagrams.py's
// self-test: realFunction and pdReadyish exist; the third name the picture
// lists must not appear here.
void realFunction();
constexpr int pdReadyish = 1;
