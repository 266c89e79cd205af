// runtime/os/symbolize_windows.cc: symbolize (runtime/os/traceback_os.h) on
// Windows, from the running program's COFF symbol table.
//
// A Go binary carries its own symbol table; gort's Linux build reads DWARF
// through libdw. Here the program's own file (GetModuleFileName) is read
// once: the PE headers, the section table and the COFF symbol table with its
// string table, which mingw-w64's linker keeps unless the program is
// stripped. Its function symbols (and the global symbols of code sections,
// which assembly functions are) sorted by address name an address as the
// nearest symbol at or below it, demangled; no file or line (that is in
// DWARF, which no small reader reads). An address in a DLL is named by the
// DLL's nearest export at or below it ("ntdll.dll!NtDelayExecution"), read
// from its export directory in memory. A stripped program names none of its
// own functions: its profiles show addresses there.
#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "os/traceback_os.h"
#include "os/windows_sdk.h"

namespace gort::os {

namespace {

// coffSym: a function's address in memory and its (mangled) name.
struct coffSym {
  std::uintptr_t addr;
  std::string name;
};

// codeRange: a code section in memory.
struct codeRange {
  std::uintptr_t lo, hi;
};

struct symTable {
  std::vector<coffSym> syms;  // sorted by addr
  std::vector<codeRange> code;
  std::string module;
};

std::uint16_t u16(const unsigned char* p) {
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}
std::uint32_t u32(const unsigned char* p) {
  return static_cast<std::uint32_t>(u16(p)) |
         static_cast<std::uint32_t>(u16(p + 2)) << 16;
}

// readAt: n bytes of f at off, or an empty vector.
std::vector<unsigned char> readAt(std::FILE* f, long off, std::size_t n) {
  std::vector<unsigned char> b(n);
  if (std::fseek(f, off, SEEK_SET) != 0 || std::fread(b.data(), 1, n, f) != n) {
    b.clear();
  }
  return b;
}

// section: one entry of the PE section table.
struct section {
  std::uint32_t va, size;
  bool code;
};

// readSections: the section table of the PE file f.
std::vector<section> readSections(std::FILE* f, std::uint32_t* symOff,
                                  std::uint32_t* nsyms) {
  std::vector<section> out;
  auto dos = readAt(f, 0, 64);
  if (dos.size() < 64 || dos[0] != 'M' || dos[1] != 'Z') return out;
  long pe = static_cast<long>(u32(&dos[0x3c]));
  auto hdr = readAt(f, pe, 24);
  if (hdr.size() < 24 || std::memcmp(hdr.data(), "PE\0\0", 4) != 0) return out;
  const unsigned char* fh = &hdr[4];  // IMAGE_FILE_HEADER
  std::uint16_t nsec = u16(fh + 2);
  *symOff = u32(fh + 8);
  *nsyms = u32(fh + 12);
  auto secs = readAt(f, pe + 24 + u16(fh + 16), nsec * 40u);
  for (std::size_t i = 0; i + 40 <= secs.size(); i += 40) {
    const unsigned char* s = &secs[i];  // IMAGE_SECTION_HEADER
    out.push_back(
        {u32(s + 12), u32(s + 8), (u32(s + 36) & IMAGE_SCN_CNT_CODE) != 0});
  }
  return out;
}

// readSymbols fills t from the PE file at path.
void readSymbols(const wchar_t* path, symTable* t) {
  std::FILE* f = _wfopen(path, L"rb");
  if (f == nullptr) return;
  std::uint32_t symOff = 0, nsyms = 0;
  std::vector<section> secs = readSections(f, &symOff, &nsyms);
  auto base = reinterpret_cast<std::uintptr_t>(GetModuleHandleW(nullptr));
  for (const section& s : secs) {
    if (s.code) t->code.push_back({base + s.va, base + s.va + s.size});
  }
  std::vector<unsigned char> syms, strs;
  if (symOff != 0 && nsyms != 0) syms = readAt(f, symOff, nsyms * 18u);
  if (!syms.empty()) {
    auto len = readAt(f, static_cast<long>(symOff + nsyms * 18u), 4);
    if (len.size() == 4 && u32(len.data()) >= 4) {
      strs = readAt(f, static_cast<long>(symOff + nsyms * 18u), u32(&len[0]));
    }
  }
  std::fclose(f);
  for (std::size_t i = 0; i + 18 <= syms.size(); i += 18 * (1 + syms[i + 17])) {
    const unsigned char* r = &syms[i];  // IMAGE_SYMBOL
    auto sec = static_cast<std::int16_t>(u16(r + 12));
    bool fn = (u16(r + 14) >> 4) == 2;  // IMAGE_SYM_DTYPE_FUNCTION
    std::uint8_t cls = r[16];
    if (sec <= 0 || static_cast<std::size_t>(sec) > secs.size()) continue;
    bool ext = cls == IMAGE_SYM_CLASS_EXTERNAL && secs[sec - 1].code;
    if (!(fn &&
          (cls == IMAGE_SYM_CLASS_EXTERNAL || cls == IMAGE_SYM_CLASS_STATIC)) &&
        !ext) {
      continue;
    }
    std::string name;
    if (u32(r) == 0) {
      std::uint32_t off = u32(r + 4);
      if (off >= strs.size()) continue;
      const char* s = reinterpret_cast<const char*>(&strs[off]);
      name.assign(s, strnlen(s, strs.size() - off));
    } else {
      const char* s = reinterpret_cast<const char*>(r);
      name.assign(s, strnlen(s, 8));
    }
    t->syms.push_back({base + secs[sec - 1].va + u32(r + 8), std::move(name)});
  }
  std::sort(t->syms.begin(), t->syms.end(),
            [](const coffSym& a, const coffSym& b) { return a.addr < b.addr; });
}

// demangle: name as C++ source spells it (386 names carry a leading '_').
std::string demangle(const std::string& name) {
  std::string n = name;
#if defined(__i386__)
  if (!n.empty() && n[0] == '_') n.erase(0, 1);
#endif
  int status = 0;
  char* d = abi::__cxa_demangle(n.c_str(), nullptr, nullptr, &status);
  if (d == nullptr) return n;
  std::string out = d;
  std::free(d);
  return out;
}

// exportNear: for pc in a loaded DLL, "dll!name" of the export at or below
// it (the nearest exported function: a DLL's own symbols are not in memory,
// so an internal function shows as the export before it), and its address;
// empty if pc is in no module or below every export.
std::string exportNear(std::uintptr_t pc, std::uintptr_t* at,
                       std::string* module) {
  HMODULE mod = nullptr;
  if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
                              GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                          reinterpret_cast<LPCWSTR>(pc), &mod)) {
    return "";
  }
  auto base = reinterpret_cast<std::uintptr_t>(mod);
  const auto* dos = reinterpret_cast<const IMAGE_DOS_HEADER*>(base);
  const auto* nt =
      reinterpret_cast<const IMAGE_NT_HEADERS*>(base + dos->e_lfanew);
  const IMAGE_DATA_DIRECTORY& dir =
      nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_EXPORT];
  if (dir.VirtualAddress == 0) return "";
  const auto* ex = reinterpret_cast<const IMAGE_EXPORT_DIRECTORY*>(
      base + dir.VirtualAddress);
  const auto* fns =
      reinterpret_cast<const DWORD*>(base + ex->AddressOfFunctions);
  const auto* names = reinterpret_cast<const DWORD*>(base + ex->AddressOfNames);
  const auto* ords =
      reinterpret_cast<const WORD*>(base + ex->AddressOfNameOrdinals);
  std::uintptr_t rva = pc - base, best = 0;
  const char* bestName = nullptr;
  for (DWORD i = 0; i < ex->NumberOfNames; i++) {
    DWORD f = fns[ords[i]];
    bool forwarder =
        f >= dir.VirtualAddress && f < dir.VirtualAddress + dir.Size;
    if (forwarder || f > rva || f < best) continue;
    best = f;
    bestName = reinterpret_cast<const char*>(base + names[i]);
  }
  if (bestName == nullptr) return "";
  char path[MAX_PATH];
  DWORD n = GetModuleFileNameA(mod, path, MAX_PATH);
  if (n > 0 && n < MAX_PATH) module->assign(path, n);
  std::string dll = module->substr(module->find_last_of("\\/") + 1);
  *at = base + best;
  return dll + "!" + bestName;
}

// table: the program's symbols, read on first use (callers hold symbolize's
// lock).
const symTable& table() {
  static symTable* t = [] {
    auto* t = new symTable;
    std::vector<wchar_t> path(32768);
    DWORD n = GetModuleFileNameW(nullptr, path.data(),
                                 static_cast<DWORD>(path.size()));
    if (n > 0 && n < path.size()) {
      readSymbols(path.data(), t);
      char a[MAX_PATH];
      DWORD k = GetModuleFileNameA(nullptr, a, MAX_PATH);
      if (k > 0 && k < MAX_PATH) t->module.assign(a, k);
    }
    return t;
  }();
  return *t;
}

}  // namespace

// symbolize: the function whose symbol is the nearest at or below the call
// before pc, in the program's own code sections, else a DLL's nearest
// export; one frame, no line.
int symbolize(std::uintptr_t pc, Symbol* out, int max) {
  if (max <= 0 || pc == 0) return 0;
  static std::mutex mu;
  std::lock_guard<std::mutex> l(mu);
  const symTable& t = table();
  std::uintptr_t call = pc - 1;  // inside the call instruction
  bool inCode = false;
  for (const codeRange& r : t.code) inCode |= call >= r.lo && call < r.hi;
  if (!inCode) {
    std::uintptr_t at = 0;
    out[0] = Symbol{};
    out[0].function = exportNear(call, &at, &out[0].module);
    if (out[0].function.empty()) return 0;
    out[0].offset = pc - at;
    return 1;
  }
  auto it = std::upper_bound(
      t.syms.begin(), t.syms.end(), call,
      [](std::uintptr_t a, const coffSym& s) { return a < s.addr; });
  if (it == t.syms.begin()) return 0;
  --it;
  out[0] = Symbol{};
  out[0].function = demangle(it->name);
  out[0].module = t.module;
  out[0].offset = pc - it->addr;
  return 1;
}

}  // namespace gort::os
