// tests/os_windows_planted_winmm.cc: a winmm.dll planted beside
// os_windows_test.exe (tests/CMakeLists.txt builds it into the same
// directory), standing in for a DLL an attacker drops next to a program.
// It records being loaded by creating the file named by
// $GORT_PLANTED_WINMM_MARKER, and exports harmless timeBeginPeriod and
// timeEndPeriod so a program that loads it by mistake keeps running.
#define WIN32_LEAN_AND_MEAN  // no timeapi.h: this file defines those
#include <windows.h>

extern "C" {

__declspec(dllexport) UINT WINAPI timeBeginPeriod(UINT) { return 0; }
__declspec(dllexport) UINT WINAPI timeEndPeriod(UINT) { return 0; }

BOOL WINAPI DllMain(HINSTANCE, DWORD reason, LPVOID) {
  if (reason != DLL_PROCESS_ATTACH) return TRUE;
  wchar_t path[MAX_PATH];
  DWORD n =
      GetEnvironmentVariableW(L"GORT_PLANTED_WINMM_MARKER", path, MAX_PATH);
  if (n == 0 || n >= MAX_PATH) return TRUE;
  HANDLE h = CreateFileW(path, GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS,
                         FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h != INVALID_HANDLE_VALUE) CloseHandle(h);
  return TRUE;
}

}  // extern "C"
