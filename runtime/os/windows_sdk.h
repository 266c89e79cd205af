// runtime/os/windows_sdk.h: <windows.h> as gort's Windows files use it: the
// Windows 10 API level (_WIN32_WINNT), and the one constant older mingw-w64
// headers lack (CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, Windows 10 1803).
// Files that need Winsock include os/iocp_windows.h first instead, which
// puts <winsock2.h> before <windows.h>.
#ifndef GORT_RUNTIME_OS_WINDOWS_SDK_H_
#define GORT_RUNTIME_OS_WINDOWS_SDK_H_

#ifndef _WIN32_WINNT
#define _WIN32_WINNT 0x0A00
#endif
#include <windows.h>

#ifndef CREATE_WAITABLE_TIMER_HIGH_RESOLUTION
#define CREATE_WAITABLE_TIMER_HIGH_RESOLUTION 0x00000002
#endif

#endif  // GORT_RUNTIME_OS_WINDOWS_SDK_H_
