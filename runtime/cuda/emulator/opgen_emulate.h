// opgen: the CUDA built-ins that generated kernels use, for the host execution engine.
// Included (by runtime/cuda/emulator/engine.py) before the unchanged .cu text, which g++ compiles
// into one shared library per source. Note [Host execution of CUDA kernels]:
//  - every thread of a block is a cooperative fiber with its own stack (stacks are pooled and reused);
//    a fiber runs until it finishes or reaches a barrier, so `__syncthreads` (per block) and the warp
//    exchanges (`__syncwarp`, shuffles, votes: per warp) are passed only when every live thread of the
//    block or warp arrived, as on a GPU;
//  - a barrier no thread can pass (a deadlock), or a thread that exits while others wait at a barrier
//    (a divergent barrier), aborts the launch with an error message instead of hanging;
//  - blocks run one after another in an order shuffled by a seed (`opgen_emu_set_seed`), so a kernel
//    that depends on block order shows it.
// Note [Schedules that expose races]: a GPU gives no order between warps, nor between the lanes of a
// warp between two warp-synchronous points. The engine runs one warp at a time, its ready lanes in a
// seeded random order, until every lane of it waits at `__syncthreads` or finished; then a warp drawn at
// random. After a `__syncthreads` the next warp is always drawn at random (the last thread to arrive
// does not keep running). So one warp regularly runs from a barrier all the way to the next one before
// another warp leaves the barrier: a shared word reused without a barrier in between is overwritten
// before it is read. Racecheck (`opgen_emu_set_racecheck`) makes it deterministic: a shadow entry per
// element of shared memory declared with OPGEN_SHARED_ARRAY/VAR records the last writer and readers
// with the barrier epochs they saw; two threads of a block touching one element between barriers (one
// writing) is an error. A global-memory check runs with it: each block's writes to the launch's array
// arguments are found by comparing those bytes before and after the block; bytes two blocks change, and
// no atomic touched, are an error.
// Note [Faults]: a GPU traps where a CPU would read garbage or crash the process. The engine reports as
// an error (EmulationError in Python, never a signal): a SIGSEGV/SIGBUS inside a kernel (an access
// outside the emulated allocations, whose raw blocks have guard pages: runtime/cuda/emulator/memory.py),
// a misaligned or out-of-range vector access (opgen::load_pack/store_pack), a shared array index out of
// its bounds, a warp-synchronous call whose mask leaves out the calling lane or that the lanes of a warp
// reach at different call sites or with different masks, launch limits (block and grid dimensions,
// static plus dynamic shared memory), and (at compile time) host-only functions such as rand().
// `__shared__` variables are function statics: one copy, shared by the threads of the running block;
// those declared with OPGEN_SHARED_ARRAY/VAR are filled with 0xFF bytes when a block first touches them,
// and `extern __shared__` (dynamic shared memory; rewritten by engine.py) with 0xFF at every block start.
// Each library is driven by one OS thread at a time (the Python side holds a lock).
#pragma once

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <csignal>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <type_traits>
#include <utility>
#include <vector>

#define OPGEN_HOST_EMULATION 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __align__(n) alignas(n)

#define __shared__ static
#define __constant__ static

using std::isfinite;
using std::isinf;
using std::isnan;

struct uint3 { unsigned int x, y, z; };
struct dim3 { unsigned int x = 1, y = 1, z = 1; };

namespace opgen_emu {

constexpr int kWarp = 32;
constexpr int kWarps = 1024 / kWarp;
constexpr int kMaxThreads = 1024;
constexpr unsigned kSharedLimit = 48 * 1024;  // static + dynamic shared memory per block (no opt-in)
constexpr std::size_t kStackBytes = 256 * 1024;
constexpr std::size_t kGlobalCheckLimit = 256u << 20;  // bytes of arguments the global write check covers

enum State : unsigned char { READY, WAIT_BLOCK, WAIT_WARP, DONE };

struct Fiber {
  void* sp = nullptr;
  State state = READY;
  uint3 idx{0, 0, 0};
};

// What a lane brings to a warp-synchronous call (checked against the other lanes).
struct Site {
  unsigned mask = 0;
  int line = 0;
  const char* file = "";
  const char* what = "";
};

struct Range {
  std::uintptr_t lo, hi;
};

struct Engine {
  uint3 thread_idx{0, 0, 0};
  uint3 block_idx{0, 0, 0};
  dim3 block_dim;
  dim3 grid_dim;
  Fiber fibers[kMaxThreads];
  int nthreads = 0;
  int current = 0;
  int done = 0;
  int live_block = 0;
  int arrived_block = 0;
  int live_warp[kWarps] = {};
  int arrived_warp[kWarps] = {};
  int ready_in_warp[kWarps] = {};
  unsigned block_epoch = 0;        // __syncthreads passed by the running block
  unsigned warp_epoch[kWarps] = {};  // warp-synchronous points passed by each warp
  unsigned long long exchange[kWarps][kWarp] = {};
  Site site[kWarps][kWarp] = {};
  void* scheduler_sp = nullptr;
  std::vector<char*> stacks;
  void (*body)(void*) = nullptr;
  void* body_arg = nullptr;
  unsigned long long seed = 0;
  unsigned long long rng = 0;
  unsigned long long block_serial = 0;   // which block runs (shared memory is poisoned per block)
  unsigned long long launch_serial = 0;
  unsigned static_shared = 0;   // bytes of OPGEN_SHARED memory the launch touched
  unsigned dynamic_shared = 0;  // bytes of `extern __shared__` memory the launch asked for
  bool racecheck = false;
  bool in_launch = false;
  std::vector<Range> ranges;  // the launch's array arguments (merged), for access and write checks
  sigjmp_buf fault_jmp;
  char error[1024] = {0};
};

inline Engine g;
alignas(16) inline char dynamic_shared_memory[kSharedLimit];

}  // namespace opgen_emu

// The built-in variables: views of the running fiber's coordinates.
#define threadIdx (static_cast<const uint3&>(opgen_emu::g.thread_idx))
#define blockIdx (static_cast<const uint3&>(opgen_emu::g.block_idx))
#define blockDim (static_cast<const dim3&>(opgen_emu::g.block_dim))
#define gridDim (static_cast<const dim3&>(opgen_emu::g.grid_dim))
#define warpSize 32

// ---- the context switch: callee-saved registers on the old stack, then the new stack's ---------------
// (The floating-point control state is not switched: every fiber runs with the launching thread's.)
#if defined(__x86_64__)
extern "C" void opgen_emu_switch(void** save, void* load);
asm(R"(
.text
.globl opgen_emu_switch
.hidden opgen_emu_switch
.type opgen_emu_switch,@function
opgen_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
.size opgen_emu_switch, .-opgen_emu_switch
)");
#elif defined(__aarch64__)
extern "C" void opgen_emu_switch(void** save, void* load);
asm(R"(
.text
.globl opgen_emu_switch
.hidden opgen_emu_switch
.type opgen_emu_switch,%function
opgen_emu_switch:
  sub sp, sp, #176
  stp x19, x20, [sp, #0]
  stp x21, x22, [sp, #16]
  stp x23, x24, [sp, #32]
  stp x25, x26, [sp, #48]
  stp x27, x28, [sp, #64]
  stp x29, x30, [sp, #80]
  stp d8, d9, [sp, #96]
  stp d10, d11, [sp, #112]
  stp d12, d13, [sp, #128]
  stp d14, d15, [sp, #144]
  mov x9, sp
  str x9, [x0]
  mov sp, x1
  ldp x19, x20, [sp, #0]
  ldp x21, x22, [sp, #16]
  ldp x23, x24, [sp, #32]
  ldp x25, x26, [sp, #48]
  ldp x27, x28, [sp, #64]
  ldp x29, x30, [sp, #80]
  ldp d8, d9, [sp, #96]
  ldp d10, d11, [sp, #112]
  ldp d12, d13, [sp, #128]
  ldp d14, d15, [sp, #144]
  add sp, sp, #176
  ret
.size opgen_emu_switch, .-opgen_emu_switch
)");
#else
#error "opgen's CUDA emulation has a context switch for x86-64 and AArch64 only"
#endif

namespace opgen_emu {

inline void set_thread(int t) {
  g.current = t;
  g.thread_idx = g.fibers[t].idx;
}

inline void set_state(int t, State s) {
  const int w = t / kWarp;
  if (g.fibers[t].state == READY) --g.ready_in_warp[w];
  if (s == READY) ++g.ready_in_warp[w];
  g.fibers[t].state = s;
}

// Ends the launch now (from any fiber, or from a signal handler inside one) with the message, which
// names the running block and thread. The fibers are abandoned; the next launch starts fresh ones.
[[noreturn]] inline void trap(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline void trap(const char* fmt, ...) {
  if (!g.error[0]) {
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    std::snprintf(g.error, sizeof g.error, "%s (block (%u,%u,%u), thread (%u,%u,%u))", what, g.block_idx.x,
                  g.block_idx.y, g.block_idx.z, g.thread_idx.x, g.thread_idx.y, g.thread_idx.z);
  }
  if (g.in_launch) siglongjmp(g.fault_jmp, 1);
  std::abort();  // a trap outside a launch is a bug of the engine
}

inline unsigned long long splitmix(unsigned long long& s) {
  unsigned long long z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
inline int rand_below(int n) { return static_cast<int>(splitmix(g.rng) % static_cast<unsigned>(n)); }

// Note [Schedules that expose races]: a ready lane of warp `w` drawn at random; with `any_warp` (or when
// `w` has none), first a warp drawn at random among those with a ready lane. -1 when none is ready.
inline int pick_next(bool any_warp) {
  const int warps = (g.nthreads + kWarp - 1) / kWarp;
  int w = g.current / kWarp;
  if (any_warp || g.ready_in_warp[w] == 0) {
    int candidates = 0;
    for (int k = 0; k < warps; ++k) candidates += g.ready_in_warp[k] > 0;
    if (candidates == 0) return -1;
    int pick = rand_below(candidates);
    for (w = 0; w < warps; ++w) {
      if (g.ready_in_warp[w] > 0 && pick-- == 0) break;
    }
  }
  int pick = rand_below(g.ready_in_warp[w]);
  const int lo = w * kWarp, hi = std::min(lo + kWarp, g.nthreads);
  for (int t = lo; t < hi; ++t) {
    if (g.fibers[t].state == READY && pick-- == 0) return t;
  }
  return -1;
}

// Leaves the running fiber (its stack pointer saved in *save) for the next one drawn, or for the
// scheduler when none is ready (the block finished, or no barrier can complete). The running fiber, if
// still ready, may be drawn itself: then it just goes on.
inline void switch_to_next(void** save, bool any_warp) {
  const int me = g.current;
  const int t = pick_next(any_warp);
  if (t < 0) {
    opgen_emu_switch(save, g.scheduler_sp);
    return;
  }
  if (t == me && save == &g.fibers[me].sp) return;
  set_thread(t);
  opgen_emu_switch(save, g.fibers[t].sp);
}

// Releases the waiters of a scope once every live thread of it arrived.
inline void release(State waiting, int warp) {
  const int lo = warp < 0 ? 0 : warp * kWarp;
  const int hi = warp < 0 ? g.nthreads : std::min(lo + kWarp, g.nthreads);
  for (int t = lo; t < hi; ++t) {
    if (g.fibers[t].state == waiting) set_state(t, READY);
  }
  if (warp < 0) {
    g.arrived_block = 0;
    ++g.block_epoch;
  } else {
    g.arrived_warp[warp] = 0;
    ++g.warp_epoch[warp];
  }
}

inline void wait(State state) {
  const int me = g.current;
  set_state(me, state);
  switch_to_next(&g.fibers[me].sp, false);
  set_thread(me);
}

inline void yield(bool any_warp) {
  const int me = g.current;
  switch_to_next(&g.fibers[me].sp, any_warp);
  set_thread(me);
}

inline void block_barrier() {
  if (g.done > 0) {  // (whatever the schedule: else it shows only when the exit comes after an arrival)
    trap("divergent __syncthreads: %d threads of the block exited before reaching it (every thread of a "
         "block must reach each __syncthreads)", g.done);
  }
  if (++g.arrived_block == g.live_block) {
    release(WAIT_BLOCK, -1);
    yield(true);  // the last to arrive does not keep running: a warp drawn at random goes first
    return;
  }
  wait(WAIT_BLOCK);
}

inline void warp_barrier() {
  const int w = g.current / kWarp;
  if (++g.arrived_warp[w] == g.live_warp[w]) {
    release(WAIT_WARP, w);
    yield(false);
    return;
  }
  wait(WAIT_WARP);
}

[[noreturn]] inline void fiber_main() {
  g.body(g.body_arg);
  const int t = g.current;
  set_state(t, DONE);
  ++g.done;
  const int w = t / kWarp;
  --g.live_block;
  --g.live_warp[w];
  if (g.arrived_block > 0 && g.arrived_block == g.live_block) {
    trap("divergent __syncthreads: a thread exited while the others of its block wait at a barrier");
  }
  if (g.arrived_warp[w] > 0 && g.arrived_warp[w] == g.live_warp[w]) {
    trap("divergent warp barrier: a thread exited while the others of its warp wait in a warp-synchronous "
         "call (__syncwarp, shuffle or vote)");
  }
  void* discard;
  switch_to_next(&discard, false);
  std::abort();  // a finished fiber is never resumed
}

inline void* fresh_stack(int t) {
  while (static_cast<int>(g.stacks.size()) <= t) {
    void* p = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) return nullptr;
    g.stacks.push_back(static_cast<char*>(p));
  }
  // An initial frame that opgen_emu_switch "returns" into fiber_main with an ABI-aligned stack.
  // Stack tops are staggered: equally aligned tops would share L1 cache sets and evict each other.
  auto top = reinterpret_cast<std::uintptr_t>(g.stacks[t] + kStackBytes - (t % 61) * 208) & ~std::uintptr_t(15);
#if defined(__x86_64__)
  auto* sp = reinterpret_cast<std::uint64_t*>(top - 16);
  sp[0] = reinterpret_cast<std::uint64_t>(&fiber_main);  // return address
  sp -= 6;
  for (int i = 0; i < 6; ++i) sp[i] = 0;  // r15 r14 r13 r12 rbx rbp
  return sp;
#else
  auto* sp = reinterpret_cast<std::uint64_t*>(top - 176);
  std::memset(sp, 0, 176);
  sp[11] = reinterpret_cast<std::uint64_t>(&fiber_main);  // x30 (the link register)
  return sp;
#endif
}

// Runs one block: every thread from the start of the kernel body until all are done. Fibers hand control
// to each other (switch_to_next); it comes back here only when no fiber is ready.
inline bool run_block() {
  const int n = g.nthreads;
  g.live_block = n;
  g.arrived_block = 0;
  g.done = 0;
  g.block_epoch = 0;
  ++g.block_serial;
  std::memset(dynamic_shared_memory, 0xFF, g.dynamic_shared);
  for (int w = 0; w < (n + kWarp - 1) / kWarp; ++w) {
    g.live_warp[w] = (w + 1) * kWarp <= n ? kWarp : n - w * kWarp;
    g.arrived_warp[w] = 0;
    g.ready_in_warp[w] = g.live_warp[w];
    g.warp_epoch[w] = 0;
  }
  const unsigned bx = g.block_dim.x, by = g.block_dim.y;
  for (int t = 0; t < n; ++t) {
    g.fibers[t].state = READY;
    g.fibers[t].idx = uint3{t % bx, (t / bx) % by, t / (bx * by)};
    g.fibers[t].sp = fresh_stack(t);
    if (!g.fibers[t].sp) {
      std::snprintf(g.error, sizeof g.error, "cannot allocate a fiber stack for thread %d", t);
      return false;
    }
  }
  g.current = 0;
  const int first = pick_next(true);
  set_thread(first);
  opgen_emu_switch(&g.scheduler_sp, g.fibers[first].sp);
  if (g.error[0]) return false;
  if (g.done < n) {
    int at_block = 0, at_warp = 0;
    for (int t = 0; t < n; ++t) {
      at_block += g.fibers[t].state == WAIT_BLOCK;
      at_warp += g.fibers[t].state == WAIT_WARP;
    }
    std::snprintf(g.error, sizeof g.error,
                  "deadlock in block (%u,%u,%u): %d threads wait at __syncthreads and %d at a warp barrier; "
                  "no barrier can complete (a barrier inside divergent code?)",
                  g.block_idx.x, g.block_idx.y, g.block_idx.z, at_block, at_warp);
    return false;
  }
  return true;
}

// ---- Note [Faults]: signals inside a kernel end the launch with an error -----------------------------
struct SignalGuard {
  struct sigaction old_segv {}, old_bus {};
  stack_t old_stack{};
  bool stack_set = false;
  SignalGuard();
  ~SignalGuard();
};

inline void on_fault(int sig, siginfo_t* info, void*) {
  trap("%s at address %p: an access outside every allocation of the emulated device (out of bounds, a "
       "freed or a wrong pointer) or past a thread's stack",
       sig == SIGBUS ? "bus error" : "invalid memory access", info ? info->si_addr : nullptr);
}

inline SignalGuard::SignalGuard() {
  static char* alt = static_cast<char*>(std::malloc(1 << 16));
  stack_t ss{};
  ss.ss_sp = alt;
  ss.ss_size = 1 << 16;
  stack_set = alt && sigaltstack(&ss, &old_stack) == 0;
  struct sigaction sa {};
  sa.sa_sigaction = &on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &old_segv);
  sigaction(SIGBUS, &sa, &old_bus);
}

inline SignalGuard::~SignalGuard() {
  sigaction(SIGSEGV, &old_segv, nullptr);
  sigaction(SIGBUS, &old_bus, nullptr);
  if (stack_set) sigaltstack(&old_stack, nullptr);
}

// ---- the launch's array arguments: access checks and the global write check ------------------------
inline const Range* range_of(std::uintptr_t p) {
  for (const Range& r : g.ranges) {
    if (r.lo <= p && p < r.hi) return &r;
  }
  return nullptr;
}

// A vector access of `bytes` at `p` must be aligned to `align` and lie inside one array argument.
inline void check_vector_access(const void* p, std::size_t bytes, std::size_t align, const char* what) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  if (a % align) trap("misaligned vector %s: %zu bytes at %p, which is not %zu-byte aligned", what, bytes, p, align);
  if (!g.ranges.empty()) {
    const Range* r = range_of(a);
    if (!r || a + bytes > r->hi) {
      trap("out-of-bounds vector %s: %zu bytes at %p lie outside the launch's array arguments", what, bytes, p);
    }
  }
}

struct GlobalCheck {
  std::vector<unsigned char> before;
  std::vector<long long> owner;  // per byte of the ranges: the linear index of the block that wrote it
  std::vector<unsigned char> atomic;
  bool on = false;
};
inline GlobalCheck global;

inline std::size_t range_bytes() {
  std::size_t total = 0;
  for (const Range& r : g.ranges) total += r.hi - r.lo;
  return total;
}

inline void note_atomic(const void* p, std::size_t bytes) {
  if (!global.on) return;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::size_t base = 0;
  for (const Range& r : g.ranges) {
    if (r.lo <= a && a < r.hi) {
      const std::size_t from = base + (a - r.lo);
      for (std::size_t k = 0; k < bytes && from + k < global.atomic.size(); ++k) global.atomic[from + k] = 1;
      return;
    }
    base += r.hi - r.lo;
  }
}

inline void snapshot_ranges() {
  std::size_t base = 0;
  for (const Range& r : g.ranges) {
    std::memcpy(global.before.data() + base, reinterpret_cast<const void*>(r.lo), r.hi - r.lo);
    base += r.hi - r.lo;
  }
}

// Bytes the block `b` changed; a byte another block changed too, with no atomic on it, is an error.
inline bool compare_ranges(long long b, const unsigned* grid) {
  std::size_t base = 0;
  for (const Range& r : g.ranges) {
    const auto* now = reinterpret_cast<const unsigned char*>(r.lo);
    const std::size_t n = r.hi - r.lo;
    for (std::size_t k = 0; k < n; k += 64) {
      const std::size_t len = std::min<std::size_t>(64, n - k);
      if (std::memcmp(now + k, global.before.data() + base + k, len) == 0) continue;
      for (std::size_t j = k; j < k + len; ++j) {
        if (now[j] == global.before[base + j]) continue;
        long long& o = global.owner[base + j];
        if (o >= 0 && o != b && !global.atomic[base + j]) {
          std::snprintf(g.error, sizeof g.error,
                        "global-memory race: blocks (%llu,%llu,%llu) and (%llu,%llu,%llu) of one launch both wrote "
                        "address %p without an atomic",
                        o % grid[0], o / grid[0] % grid[1], o / (1ull * grid[0] * grid[1]), b % grid[0],
                        b / grid[0] % grid[1], b / (1ull * grid[0] * grid[1]), static_cast<const void*>(now + j));
          return false;
        }
        o = b;
      }
    }
    base += n;
  }
  return true;
}

// A launch: every block (in a seeded shuffled order) runs `body(arg)` in every thread. 0 on success.
inline int launch(const unsigned* grid, const unsigned* block, unsigned shared_bytes, void (*body)(void*),
                  void* arg) {
  g.error[0] = 0;
  const unsigned long long threads = 1ull * block[0] * block[1] * block[2];
  if (threads == 0 || threads > kMaxThreads || block[0] > 1024 || block[1] > 1024 || block[2] > 64) {
    std::snprintf(g.error, sizeof g.error,
                  "invalid block size (%u,%u,%u): 1 to %d threads per block, at most (1024,1024,64)", block[0],
                  block[1], block[2], kMaxThreads);
    return 1;
  }
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0 || grid[0] > 2147483647u || grid[1] > 65535 ||
      grid[2] > 65535) {
    std::snprintf(g.error, sizeof g.error,
                  "invalid grid size (%u,%u,%u): each dimension at least 1, at most (2147483647,65535,65535)",
                  grid[0], grid[1], grid[2]);
    return 1;
  }
  if (shared_bytes > kSharedLimit) {
    std::snprintf(g.error, sizeof g.error, "%u bytes of dynamic shared memory requested, at most %u per block",
                  shared_bytes, kSharedLimit);
    return 1;
  }
  const unsigned long long blocks = 1ull * grid[0] * grid[1] * grid[2];
  g.grid_dim = dim3{grid[0], grid[1], grid[2]};
  g.block_dim = dim3{block[0], block[1], block[2]};
  g.nthreads = static_cast<int>(threads);
  g.body = body;
  g.body_arg = arg;
  g.dynamic_shared = shared_bytes;
  g.static_shared = 0;
  ++g.launch_serial;
  std::vector<unsigned long long> order(blocks);
  for (unsigned long long b = 0; b < blocks; ++b) order[b] = b;
  unsigned long long s = g.seed;
  for (unsigned long long b = blocks; b > 1; --b) std::swap(order[b - 1], order[splitmix(s) % b]);
  g.rng = g.seed ^ 0x5DEECE66Dull;
  const std::size_t checked = range_bytes();
  global.on = g.racecheck && blocks > 1 && checked > 0 && checked <= kGlobalCheckLimit;
  if (global.on) {
    global.before.resize(checked);
    global.owner.assign(checked, -1);
    global.atomic.assign(checked, 0);
  }
  SignalGuard guard;
  g.in_launch = true;
  if (sigsetjmp(g.fault_jmp, 1)) {
    g.in_launch = false;
    global.on = false;
    return 1;
  }
  for (unsigned long long b : order) {
    g.block_idx.x = static_cast<unsigned>(b % grid[0]);
    g.block_idx.y = static_cast<unsigned>((b / grid[0]) % grid[1]);
    g.block_idx.z = static_cast<unsigned>(b / (1ull * grid[0] * grid[1]));
    if (global.on) snapshot_ranges();
    const bool ok = run_block() && (!global.on || compare_ranges(static_cast<long long>(b), grid));
    if (!ok) {
      g.in_launch = false;
      global.on = false;
      return 1;
    }
  }
  g.in_launch = false;
  global.on = false;
  return 0;
}

// Calls a kernel with its arguments unpacked from CUDA's launch convention (one pointer per argument).
template <typename... A, std::size_t... I>
inline void call(void (*fn)(A...), void** args, std::index_sequence<I...>) {
  fn(*static_cast<std::remove_cv_t<std::remove_reference_t<A>>*>(args[I])...);
}

template <typename... A> struct Bound {
  void (*fn)(A...);
  void** args;
  static void run(void* self) {
    auto* b = static_cast<Bound*>(self);
    call(b->fn, b->args, std::index_sequence_for<A...>{});
  }
};

template <typename... A>
inline int entry(void (*fn)(A...), const unsigned* grid, const unsigned* block, unsigned shared, void** args) {
  Bound<A...> bound{fn, args};
  return launch(grid, block, shared, &Bound<A...>::run, &bound);
}

// ---- shared memory: poisoned per block, bounds-checked, and race-checked (racecheck mode) -------------
struct Access {
  int thread = -1;
  unsigned block_epoch = 0;
  unsigned warp_epoch = 0;
};
struct Shadow {
  Access writer;
  Access readers[2];
};

// Whether access `a` is ordered before the running thread's next access (the same thread, a
// __syncthreads since, or a warp-synchronous point of their common warp since).
inline bool ordered(const Access& a, int t) {
  if (a.thread < 0 || a.thread == t || a.block_epoch != g.block_epoch) return true;
  const int w = t / kWarp;
  return a.thread / kWarp == w && a.warp_epoch != g.warp_epoch[w];
}

[[noreturn]] inline void report_race(const char* name, long long index, const void* address, const Access& other,
                                     bool other_wrote, bool i_write) {
  const uint3 o = g.fibers[other.thread].idx;
  trap("shared-memory race on '%s'[%lld] (address %p): thread (%u,%u,%u) %s it and thread (%u,%u,%u) %s it "
       "with no __syncthreads between",
       name, index, address, o.x, o.y, o.z, other_wrote ? "wrote" : "read", g.thread_idx.x, g.thread_idx.y,
       g.thread_idx.z, i_write ? "writes" : "reads");
}

inline void track(Shadow& s, const char* name, long long index, const void* address, bool write) {
  const int t = g.current;
  const Access now{t, g.block_epoch, g.warp_epoch[t / kWarp]};
  if (!ordered(s.writer, t)) report_race(name, index, address, s.writer, true, write);
  if (write) {
    for (const Access& r : s.readers) {
      if (!ordered(r, t)) report_race(name, index, address, r, false, true);
    }
    s.writer = now;
    s.readers[0] = s.readers[1] = Access{};
    return;
  }
  for (Access& r : s.readers) {
    if (r.thread == t || r.thread < 0 || r.block_epoch != g.block_epoch) {  // own slot, or a stale one
      r = now;
      return;
    }
  }
  s.readers[1] = now;
}

template <typename T, int N> struct SharedArray {
  const char* name;
  T data[N];
  Shadow shadow[N];
  unsigned long long block_serial = 0, launch_serial = 0;

  constexpr explicit SharedArray(const char* n) : name(n), data{}, shadow{} {}

  T& at(long long i, bool write) {
    if (launch_serial != g.launch_serial) {
      launch_serial = g.launch_serial;
      g.static_shared += sizeof data;
      if (g.static_shared + g.dynamic_shared > kSharedLimit) {
        trap("too much shared memory: %u bytes static (with '%s') plus %u dynamic, at most %u per block",
             g.static_shared, name, g.dynamic_shared, kSharedLimit);
      }
    }
    if (block_serial != g.block_serial) {
      block_serial = g.block_serial;
      std::memset(static_cast<void*>(data), 0xFF, sizeof data);
      for (Shadow& s : shadow) s = Shadow{};
    }
    if (i < 0 || i >= N) trap("shared-memory index %lld out of the bounds of '%s' (%d elements)", i, name, N);
    if (g.racecheck) track(shadow[i], name, i, &data[i], write);
    return data[i];
  }

  struct Ref {
    SharedArray* a;
    long long i;
    operator T() const { return a->at(i, false); }
    Ref& operator=(const T& v) {
      a->at(i, true) = v;
      return *this;
    }
    Ref& operator=(const Ref& r) { return *this = static_cast<T>(r); }
    template <typename U> Ref& operator+=(const U& u) { return *this = static_cast<T>(static_cast<T>(*this) + u); }
    template <typename U> Ref& operator-=(const U& u) { return *this = static_cast<T>(static_cast<T>(*this) - u); }
    template <typename U> Ref& operator*=(const U& u) { return *this = static_cast<T>(static_cast<T>(*this) * u); }
  };
  Ref operator[](long long i) { return Ref{this, i}; }
};

template <typename T> struct SharedVar : SharedArray<T, 1> {
  constexpr explicit SharedVar(const char* n) : SharedArray<T, 1>(n) {}
  SharedVar& operator=(const T& v) {
    this->at(0, true) = v;
    return *this;
  }
  operator T() { return this->at(0, false); }
};

}  // namespace opgen_emu

#define OPGEN_SHARED_ARRAY(T, name, n) static opgen_emu::SharedArray<T, n> name{#name}
#define OPGEN_SHARED_VAR(T, name) static opgen_emu::SharedVar<T> name{#name}

namespace opgen_emu {

// ---- 16-bit floats in software (what PTX's cvt instructions do) ----------------------------------------
inline float half_bits_to_float(unsigned short h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  std::uint32_t u;
  if (exp == 0) {
    const float f = static_cast<float>(mant) * 5.9604644775390625e-8f;  // mant * 2^-24
    std::memcpy(&u, &f, 4);
    u |= sign;
  } else if (exp == 31) {
    u = sign | 0x7f800000u | (mant << 13);
  } else {
    u = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline unsigned short float_to_half_bits(float f) {  // round to nearest even
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  if (u > 0x7f800000u) return static_cast<unsigned short>(sign | 0x7e00u | ((u >> 13) & 0x3ffu));
  if (u >= 0x477ff000u) return static_cast<unsigned short>(sign | 0x7c00u);
  if (u < 0x38800000u) {  // below 2^-14: a subnormal half (or zero)
    float a;
    std::memcpy(&a, &u, 4);
    return static_cast<unsigned short>(sign | static_cast<std::uint32_t>(std::nearbyintf(a * 16777216.0f)));
  }
  return static_cast<unsigned short>(sign | ((u - 0x38000000u + 0xfffu + ((u >> 13) & 1u)) >> 13));
}

}  // namespace opgen_emu

// ---- barriers, warp exchanges, votes ---------------------------------------------------------------------
inline void __syncthreads() { opgen_emu::block_barrier(); }

namespace opgen_emu {
// A lane named in a warp-synchronous call's mask must take part: a lane past the end of a partial warp
// (or one that exited) cannot, which CUDA leaves undefined; nor may the mask leave out the calling lane.
inline void check_mask(unsigned mask, int w, const char* what) {
  const int live = g.live_warp[w];
  const unsigned present = live >= 32 ? 0xffffffffu : ((1u << live) - 1u);
  const int lane = g.current % kWarp;
  if (!((mask >> lane) & 1u)) {
    trap("%s called by lane %d with mask 0x%08x, which leaves the calling lane out (undefined on a GPU)", what,
         lane, mask);
  }
  if (mask & ~present) {
    trap("%s: mask 0x%08x names lanes that do not exist or exited (a partial warp: blockDim not a multiple of "
         "32?)", what, mask);
  }
}

// Every lane of the warp must reach the same call (file and line) with the same mask.
inline void check_sites(int w, int lane) {
  const Site& mine = g.site[w][lane];
  const Site& first = g.site[w][0];
  if (lane == 0) return;
  if (first.line != mine.line || std::strcmp(first.file, mine.file) != 0 || std::strcmp(first.what, mine.what)) {
    trap("the lanes of a warp reach different warp-synchronous calls: lane 0 %s at %s:%d, lane %d %s at %s:%d",
         first.what, first.file, first.line, lane, mine.what, mine.file, mine.line);
  }
  if (first.mask != mine.mask) {
    trap("the lanes of a warp call %s (%s:%d) with different masks: lane 0 0x%08x, lane %d 0x%08x", mine.what,
         mine.file, mine.line, first.mask, lane, mine.mask);
  }
}

// A warp exchange: every lane publishes its word and its call site, all meet, each checks the sites and
// reads its source lane's word, and all meet again before a slot can be overwritten by the next exchange.
inline const unsigned long long* exchange_publish(unsigned long long bits, const Site& site) {
  const int lane = g.current % kWarp, w = g.current / kWarp;
  check_mask(site.mask, w, site.what);
  g.exchange[w][lane] = bits;
  g.site[w][lane] = site;
  warp_barrier();
  check_sites(w, lane);
  return g.exchange[w];
}
inline void exchange_done() { warp_barrier(); }

template <typename T> inline T exchange(T v, int src_lane, const Site& site) {
  static_assert(sizeof(T) <= 8, "warp exchanges move at most 8 bytes");
  const int w = g.current / kWarp;
  unsigned long long bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  const unsigned long long* bank = exchange_publish(bits, site);
  T r = v;
  if (src_lane >= 0 && src_lane < g.live_warp[w]) std::memcpy(&r, &bank[src_lane], sizeof(T));
  exchange_done();
  return r;
}
inline unsigned lane_id() { return static_cast<unsigned>(g.current % kWarp); }
}  // namespace opgen_emu

#define OPGEN_EMU_SITE int line_ = __builtin_LINE(), const char* file_ = __builtin_FILE()

inline void __syncwarp(unsigned mask = 0xffffffffu) {
  opgen_emu::check_mask(mask, opgen_emu::g.current / opgen_emu::kWarp, "__syncwarp");
  opgen_emu::warp_barrier();
}
template <typename T> inline T __shfl_sync(unsigned mask, T v, int src, int width = 32, OPGEN_EMU_SITE) {
  const int lane = static_cast<int>(opgen_emu::lane_id());
  return opgen_emu::exchange(v, (lane / width) * width + (src % width), {mask, line_, file_, "__shfl_sync"});
}
template <typename T> inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32, OPGEN_EMU_SITE) {
  const int lane = static_cast<int>(opgen_emu::lane_id());
  const int src = lane % width + static_cast<int>(delta) < width ? lane + static_cast<int>(delta) : lane;
  return opgen_emu::exchange(v, src, {mask, line_, file_, "__shfl_down_sync"});
}
template <typename T> inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32, OPGEN_EMU_SITE) {
  const int lane = static_cast<int>(opgen_emu::lane_id());
  const int src = lane % width >= static_cast<int>(delta) ? lane - static_cast<int>(delta) : lane;
  return opgen_emu::exchange(v, src, {mask, line_, file_, "__shfl_up_sync"});
}
template <typename T> inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32, OPGEN_EMU_SITE) {
  const int lane = static_cast<int>(opgen_emu::lane_id());
  const int src = lane ^ lane_mask;
  return opgen_emu::exchange(v, (src / width) == (lane / width) ? src : lane, {mask, line_, file_, "__shfl_xor_sync"});
}
namespace opgen_emu {
inline unsigned ballot(unsigned mask, int predicate, const Site& site) {
  unsigned result = 0;
  const int w = g.current / kWarp;
  const unsigned long long* bank = exchange_publish(predicate != 0, site);
  for (int lane = 0; lane < g.live_warp[w]; ++lane) {
    if (bank[lane]) result |= 1u << lane;
  }
  exchange_done();
  return result & mask;
}
}  // namespace opgen_emu
inline unsigned __ballot_sync(unsigned mask, int predicate, OPGEN_EMU_SITE) {
  return opgen_emu::ballot(mask, predicate, {mask, line_, file_, "__ballot_sync"});
}
inline int __any_sync(unsigned mask, int predicate, OPGEN_EMU_SITE) {
  return opgen_emu::ballot(mask, predicate, {mask, line_, file_, "__any_sync"}) != 0;
}
inline int __all_sync(unsigned mask, int predicate, OPGEN_EMU_SITE) {
  return opgen_emu::ballot(mask, predicate, {mask, line_, file_, "__all_sync"}) == mask;
}

// ---- atomics: fibers of one OS thread never interleave inside a call, so plain read-modify-write -------
// (each noted for the global write check: bytes only atomics change are no race)
#define OPGEN_EMU_ATOMIC(name, update)                                        \
  template <typename T> inline T name(T* p, T v) {                            \
    opgen_emu::note_atomic(p, sizeof(T));                                     \
    T old = *p;                                                               \
    *p = update;                                                              \
    return old;                                                               \
  }
OPGEN_EMU_ATOMIC(atomicAdd, old + v)
OPGEN_EMU_ATOMIC(atomicSub, old - v)
OPGEN_EMU_ATOMIC(atomicMax, old < v ? v : old)
OPGEN_EMU_ATOMIC(atomicMin, v < old ? v : old)
OPGEN_EMU_ATOMIC(atomicExch, v)
#undef OPGEN_EMU_ATOMIC
template <typename T> inline T atomicCAS(T* p, T cmp, T v) {
  opgen_emu::note_atomic(p, sizeof(T));
  T old = *p;
  if (old == cmp) *p = v;
  return old;
}

// ---- integer and bit intrinsics ---------------------------------------------------------------------------
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((1ull * a * b) >> 32);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
inline int __mulhi(int a, int b) { return static_cast<int>((1ll * a * b) >> 32); }
inline float __int_as_float(int v) { float f; std::memcpy(&f, &v, 4); return f; }
inline int __float_as_int(float f) { int v; std::memcpy(&v, &f, 4); return v; }
inline float __uint_as_float(unsigned int v) { float f; std::memcpy(&f, &v, 4); return f; }
inline unsigned int __float_as_uint(float f) { unsigned int v; std::memcpy(&v, &f, 4); return v; }
inline double __longlong_as_double(long long v) { double d; std::memcpy(&d, &v, 8); return d; }
inline long long __double_as_longlong(double d) { long long v; std::memcpy(&v, &d, 8); return v; }
inline int __popc(unsigned int v) { return __builtin_popcount(v); }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
inline int __clz(int v) { return v ? __builtin_clz(static_cast<unsigned>(v)) : 32; }
inline int __clzll(long long v) { return v ? __builtin_clzll(static_cast<unsigned long long>(v)) : 64; }
inline int __ffs(int v) { return __builtin_ffs(v); }
inline unsigned int __brev(unsigned int v) {
  unsigned int r = 0;
  for (int i = 0; i < 32; ++i) r |= ((v >> i) & 1u) << (31 - i);
  return r;
}

// ---- math the CUDA library has and the C++ library lacks ---------------------------------------------------
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline void sincospif(float x, float* s, float* c) {
  const double a = static_cast<double>(x) * 3.14159265358979323846;
  *s = static_cast<float>(std::sin(a));
  *c = static_cast<float>(std::cos(a));
}
inline void sincospi(double x, double* s, double* c) {
  // Exact at multiples of 1/2, as CUDA's sincospi: reduce x to [-1/4, 1/4] around a quadrant.
  const double q = std::nearbyint(2.0 * x);
  const double r = (x - 0.5 * q) * 3.14159265358979323846;
  const double sr = std::sin(r), cr = std::cos(r);
  const long long k = static_cast<long long>(q) & 3;
  *s = k == 0 ? sr : k == 1 ? cr : k == 2 ? -sr : -cr;
  *c = k == 0 ? cr : k == 1 ? -sr : k == 2 ? -cr : sr;
}
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
template <typename A, typename B> inline auto max(A a, B b) { return a < b ? b : a; }
template <typename A, typename B> inline auto min(A a, B b) { return b < a ? b : a; }

// ---- cuda_fp16 / cuda_bf16 types, for code that uses them ---------------------------------------------------
struct __half { unsigned short x; };
struct __nv_bfloat16 { unsigned short x; };
inline float __half2float(__half h) { return opgen_emu::half_bits_to_float(h.x); }
inline __half __float2half(float f) { return __half{opgen_emu::float_to_half_bits(f)}; }
inline __half __float2half_rn(float f) { return __float2half(f); }
inline float __bfloat162float(__nv_bfloat16 b) { return __uint_as_float(static_cast<unsigned>(b.x) << 16); }
inline __nv_bfloat16 __float2bfloat16(float f) {
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return __nv_bfloat16{0x7fc0};
  u += 0x7fffu + ((u >> 16) & 1u);
  return __nv_bfloat16{static_cast<unsigned short>(u >> 16)};
}
inline __half operator+(__half a, __half b) { return __float2half(__half2float(a) + __half2float(b)); }
inline __half operator-(__half a, __half b) { return __float2half(__half2float(a) - __half2float(b)); }
inline __half operator*(__half a, __half b) { return __float2half(__half2float(a) * __half2float(b)); }
inline __half operator/(__half a, __half b) { return __float2half(__half2float(a) / __half2float(b)); }
inline __nv_bfloat16 operator+(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __float2bfloat16(__bfloat162float(a) + __bfloat162float(b));
}
inline __nv_bfloat16 operator*(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __float2bfloat16(__bfloat162float(a) * __bfloat162float(b));
}

// One C entry point per kernel: `opgen_emu__<kernel>(grid[3], block[3], shared_bytes, args)`.
#define OPGEN_EMU_ENTRY(qualified, name)                                                              \
  extern "C" int opgen_emu__##name(const unsigned* grid, const unsigned* block, unsigned shared,     \
                                   void** args) {                                                    \
    return opgen_emu::entry(&qualified, grid, block, shared, args);                                  \
  }

extern "C" const char* opgen_emu_last_error() { return opgen_emu::g.error; }
extern "C" void opgen_emu_set_seed(unsigned long long seed) { opgen_emu::g.seed = seed; }
extern "C" void opgen_emu_set_racecheck(int on) { opgen_emu::g.racecheck = on != 0; }
// The array arguments of the next launches: `n` byte ranges [lo[i], lo[i] + size[i]), merged here.
extern "C" void opgen_emu_set_ranges(int n, const unsigned long long* lo, const unsigned long long* size) {
  std::vector<opgen_emu::Range> r;
  for (int i = 0; i < n; ++i) {
    if (size[i]) r.push_back({static_cast<std::uintptr_t>(lo[i]), static_cast<std::uintptr_t>(lo[i] + size[i])});
  }
  std::sort(r.begin(), r.end(), [](const opgen_emu::Range& a, const opgen_emu::Range& b) { return a.lo < b.lo; });
  opgen_emu::g.ranges.clear();
  for (const opgen_emu::Range& x : r) {
    if (!opgen_emu::g.ranges.empty() && x.lo <= opgen_emu::g.ranges.back().hi) {
      opgen_emu::g.ranges.back().hi = std::max(opgen_emu::g.ranges.back().hi, x.hi);
    } else {
      opgen_emu::g.ranges.push_back(x);
    }
  }
}

// Dynamic shared memory: engine.py rewrites `extern __shared__ T name[];` to a pointer to this buffer.
namespace opgen_emu {
inline char* dynamic_shared() { return dynamic_shared_memory; }
}  // namespace opgen_emu

// Host-only functions: device code that calls them does not compile for a GPU, nor here. (After every
// header this file includes, and only function-like: a name alone is untouched.)
#define OPGEN_EMU_HOST_ONLY(f) opgen_host_only_function_##f##_called_from_device_code
#define rand(...) OPGEN_EMU_HOST_ONLY(rand)
#define srand(...) OPGEN_EMU_HOST_ONLY(srand)
#define rand_r(...) OPGEN_EMU_HOST_ONLY(rand_r)
#define random(...) OPGEN_EMU_HOST_ONLY(random)
#define srandom(...) OPGEN_EMU_HOST_ONLY(srandom)
#define drand48(...) OPGEN_EMU_HOST_ONLY(drand48)
#define lrand48(...) OPGEN_EMU_HOST_ONLY(lrand48)
#define time(...) OPGEN_EMU_HOST_ONLY(time)
#define getenv(...) OPGEN_EMU_HOST_ONLY(getenv)
#define system(...) OPGEN_EMU_HOST_ONLY(system)
#define exit(...) OPGEN_EMU_HOST_ONLY(exit)
#define fopen(...) OPGEN_EMU_HOST_ONLY(fopen)
#define fprintf(...) OPGEN_EMU_HOST_ONLY(fprintf)
#define puts(...) OPGEN_EMU_HOST_ONLY(puts)
#define sleep(...) OPGEN_EMU_HOST_ONLY(sleep)
#define usleep(...) OPGEN_EMU_HOST_ONLY(usleep)
