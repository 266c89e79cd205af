// tests/wine_run_linger.cc: a Windows program that starts a copy of itself
// which inherits its standard handles and outlives it by 45 s, then says so
// and exits. It checks the test launcher, not gort: run by CTest through
// cmake/wine-run.sh (test wine_run.LingeringChildKeepsNoTestWaiting, with a
// 30 s timeout), it passes only if the launcher returns when the program
// exits rather than when the last holder of its output does. Wine gives a
// process it starts the parent's Unix stdout and stderr; services.exe,
// explorer.exe and the other helpers a program can cause to start then hold
// ctest's pipe for as long as they live (docs/targets.md, Wine).
#include <windows.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

constexpr DWORD kLingerMs = 45'000;  // beyond the test's 30 s timeout

// startLingeringChild runs this program again with "linger", inheriting the
// standard handles; returns whether the child started.
bool startLingeringChild() {
  wchar_t self[MAX_PATH];
  DWORD n = GetModuleFileNameW(nullptr, self, MAX_PATH);
  if (n == 0 || n >= MAX_PATH) return false;
  std::wstring cmd = L"\"" + std::wstring(self, n) + L"\" linger";
  STARTUPINFOW si{};
  si.cb = sizeof(si);
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
  si.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
  si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
  PROCESS_INFORMATION pi{};
  if (!CreateProcessW(nullptr, cmd.data(), nullptr, nullptr, TRUE, 0, nullptr,
                      nullptr, &si, &pi)) {
    return false;
  }
  CloseHandle(pi.hThread);
  CloseHandle(pi.hProcess);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "linger") == 0) {
    Sleep(kLingerMs);
    return 0;
  }
  if (!startLingeringChild()) {
    std::fprintf(stderr, "CreateProcessW failed: %lu\n", GetLastError());
    return 1;
  }
  std::printf("child started; the parent exits now\n");
  return 0;
}
