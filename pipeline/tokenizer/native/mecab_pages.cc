// The system dictionary's index in 2 MB pages (mecab_pages.h). Linux only; elsewhere nothing is moved.
#include "mecab_pages.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#if defined(__linux__)
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace scdv_mecab {

#if defined(__linux__)
namespace {

constexpr uintptr_t kHugePage = uintptr_t(1) << 21;
// sys.dic's header (MeCab 0.996 dictionary.cpp): ten u32 (magic, version, type, lexsize, lsize, rsize, dsize,
// tsize, fsize, dummy) and a 32-byte charset; then the double array (dsize bytes), the tokens (tsize), the features.
constexpr size_t kHeaderBytes = 10 * 4 + 32;

/** Whether transparent huge pages can be asked for with madvise (the setting is "always" or "madvise"). */
bool TransparentHugePagesOn() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  std::getline(f, s);
  return s.find("[always]") != std::string::npos || s.find("[madvise]") != std::string::npos;
}

}  // namespace

std::vector<Mapping> MappingsOf(const std::string& file) {
  std::vector<Mapping> out;
  char* real = ::realpath(file.c_str(), nullptr);
  if (!real) return out;
  const std::string path(real);
  std::free(real);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    // start-end perms offset dev inode path
    unsigned long start = 0, end = 0, offset = 0;
    char perms[8] = {0};
    int pathAt = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx %7s %lx %*s %*s %n", &start, &end, perms, &offset, &pathAt) < 4 || pathAt <= 0) continue;
    if (offset != 0 || line.compare(static_cast<size_t>(pathAt), std::string::npos, path) != 0) continue;
    out.push_back({start, end});
  }
  return out;
}

size_t MovableIndexBytes(const Mapping& m) {
  const uintptr_t start = m.start;
  const size_t mapped = m.end - m.start;
  if (start == 0 || start % kHugePage != 0 || mapped < kHeaderBytes || !TransparentHugePagesOn()) return 0;
  uint32_t header[10];
  std::memcpy(header, reinterpret_cast<const void*>(start), sizeof header);
  const uint64_t index = kHeaderBytes + uint64_t(header[6]) + uint64_t(header[7]);
  // Whole huge pages, within the mapping (which ends on a page boundary): a part past it is someone else's.
  size_t len = static_cast<size_t>((index + kHugePage - 1) & ~uint64_t(kHugePage - 1));
  if (len > mapped) len = mapped & ~size_t(kHugePage - 1);
  return len;
}

size_t MoveIndexToHugePages(const Mapping& m) {
  const uintptr_t start = m.start;
  const size_t len = MovableIndexBytes(m);
  if (len == 0) return 0;
  // A fresh region aligned to 2 MB, filled, made read-only, then moved over the file's pages in one step
  // (mremap moves whole page-table entries, so the huge pages stay huge and no reader sees a half-copied index).
  void* raw = ::mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return 0;
  const uintptr_t base = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (base + kHugePage - 1) & ~(kHugePage - 1);
  if (aligned > base) ::munmap(raw, aligned - base);
  const uintptr_t tail = aligned + len;
  if (base + len + kHugePage > tail) ::munmap(reinterpret_cast<void*>(tail), base + len + kHugePage - tail);
  void* region = reinterpret_cast<void*>(aligned);
  if (::madvise(region, len, MADV_HUGEPAGE) != 0) {
    ::munmap(region, len);
    return 0;
  }
  std::memcpy(region, reinterpret_cast<const void*>(start), len);
  if (::mprotect(region, len, PROT_READ) != 0 ||
      ::mremap(region, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, reinterpret_cast<void*>(start)) == MAP_FAILED) {
    ::munmap(region, len);
    return 0;
  }
  return len;
}

void NoteParsed(const std::shared_ptr<SharedModel>& m, size_t bytes) {
  if (!m->wantHugePages.load(std::memory_order_relaxed) || m->moveStarted.load(std::memory_order_relaxed)) return;
  if (m->parsedBytes.fetch_add(bytes, std::memory_order_relaxed) + bytes < m->moveAfterBytes) return;
  if (m->moveStarted.exchange(true)) return;
  // Off the parsing thread, at the lowest priority (on Linux a thread's niceness is its own).
  std::thread([m] {
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 19);
    m->hugePageBytes.store(MoveIndexToHugePages(m->index));
  }).detach();
}

#else

std::vector<Mapping> MappingsOf(const std::string&) { return {}; }
size_t MovableIndexBytes(const Mapping&) { return 0; }
size_t MoveIndexToHugePages(const Mapping&) { return 0; }
void NoteParsed(const std::shared_ptr<SharedModel>&, size_t) {}

#endif

}  // namespace scdv_mecab
