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
//    that depends on block order shows it;
//  - `__shared__` variables are function statics: one copy, shared by the threads of the running block.
//    Each library is driven by one OS thread at a time (the Python side holds a lock).
#pragma once

#include <cmath>
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

#define __shared__ static
#define __constant__ static

using std::isfinite;
using std::isinf;
using std::isnan;

struct uint3 { unsigned int x, y, z; };
struct dim3 { unsigned int x = 1, y = 1, z = 1; };

namespace opgen_emu {

constexpr int kWarp = 32;
constexpr int kMaxThreads = 1024;
constexpr std::size_t kStackBytes = 256 * 1024;

enum State : unsigned char { READY, WAIT_BLOCK, WAIT_WARP, DONE };

struct Fiber {
  void* sp = nullptr;
  State state = READY;
  uint3 idx{0, 0, 0};
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
  int live_warp[kMaxThreads / kWarp] = {};
  int arrived_warp[kMaxThreads / kWarp] = {};
  unsigned long long exchange[kMaxThreads / kWarp][kWarp] = {};
  void* scheduler_sp = nullptr;
  std::vector<char*> stacks;
  void (*body)(void*) = nullptr;
  void* body_arg = nullptr;
  unsigned long long seed = 0;
  char error[512] = {0};
};

inline Engine g;

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

inline void fail(const char* what) {
  if (!g.error[0]) {
    std::snprintf(g.error, sizeof g.error, "%s (block (%u,%u,%u), thread (%u,%u,%u))", what, g.block_idx.x,
                  g.block_idx.y, g.block_idx.z, g.thread_idx.x, g.thread_idx.y, g.thread_idx.z);
  }
}

// Leaves the running fiber (its stack pointer saved in *save) for the next ready one in round-robin
// order, or for the scheduler when none is ready (the block finished, or no barrier can complete).
inline void switch_to_next(void** save) {
  const int n = g.nthreads;
  int t = g.current;
  for (int k = 1; k <= n; ++k) {
    if (++t == n) t = 0;
    if (g.fibers[t].state == READY) {
      set_thread(t);
      opgen_emu_switch(save, g.fibers[t].sp);
      return;
    }
  }
  opgen_emu_switch(save, g.scheduler_sp);
}

// Releases the waiters of a scope once every live thread of it arrived.
inline void release(State waiting, int warp) {
  const int lo = warp < 0 ? 0 : warp * kWarp;
  const int hi = warp < 0 ? g.nthreads : (lo + kWarp < g.nthreads ? lo + kWarp : g.nthreads);
  for (int t = lo; t < hi; ++t) {
    if (g.fibers[t].state == waiting) g.fibers[t].state = READY;
  }
  if (warp < 0) g.arrived_block = 0; else g.arrived_warp[warp] = 0;
}

inline void wait(State state) {
  const int me = g.current;
  g.fibers[me].state = state;
  switch_to_next(&g.fibers[me].sp);
  set_thread(me);
}

inline void block_barrier() {
  if (++g.arrived_block == g.live_block) {
    release(WAIT_BLOCK, -1);
    return;
  }
  wait(WAIT_BLOCK);
}

inline void warp_barrier() {
  const int w = g.current / kWarp;
  if (++g.arrived_warp[w] == g.live_warp[w]) {
    release(WAIT_WARP, w);
    return;
  }
  wait(WAIT_WARP);
}

[[noreturn]] inline void fiber_main() {
  g.body(g.body_arg);
  const int t = g.current;
  g.fibers[t].state = DONE;
  ++g.done;
  const int w = t / kWarp;
  --g.live_block;
  --g.live_warp[w];
  if (g.arrived_block > 0 && g.arrived_block == g.live_block) {
    fail("divergent __syncthreads: a thread exited while the others of its block wait at a barrier");
  }
  if (g.arrived_warp[w] > 0 && g.arrived_warp[w] == g.live_warp[w]) {
    fail("divergent warp barrier: a thread exited while the others of its warp wait in a warp-synchronous "
         "call (__syncwarp, shuffle or vote)");
  }
  void* discard;
  if (g.error[0]) opgen_emu_switch(&discard, g.scheduler_sp);
  switch_to_next(&discard);
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
  for (int w = 0; w < (n + kWarp - 1) / kWarp; ++w) {
    g.live_warp[w] = (w + 1) * kWarp <= n ? kWarp : n - w * kWarp;
    g.arrived_warp[w] = 0;
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
  set_thread(0);
  opgen_emu_switch(&g.scheduler_sp, g.fibers[0].sp);
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

inline unsigned long long splitmix(unsigned long long& s) {
  unsigned long long z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A launch: every block (in a seeded shuffled order) runs `body(arg)` in every thread. 0 on success.
inline int launch(const unsigned* grid, const unsigned* block, unsigned shared_bytes, void (*body)(void*),
                  void* arg) {
  g.error[0] = 0;
  const unsigned long long threads = 1ull * block[0] * block[1] * block[2];
  if (threads == 0 || threads > kMaxThreads) {
    std::snprintf(g.error, sizeof g.error, "invalid block size (%u,%u,%u): 1 to %d threads per block",
                  block[0], block[1], block[2], kMaxThreads);
    return 1;
  }
  if (shared_bytes > 48 * 1024) {
    std::snprintf(g.error, sizeof g.error, "%u bytes of dynamic shared memory requested, at most 49152",
                  shared_bytes);
    return 1;
  }
  const unsigned long long blocks = 1ull * grid[0] * grid[1] * grid[2];
  g.grid_dim = dim3{grid[0], grid[1], grid[2]};
  g.block_dim = dim3{block[0], block[1], block[2]};
  g.nthreads = static_cast<int>(threads);
  g.body = body;
  g.body_arg = arg;
  std::vector<unsigned long long> order(blocks);
  for (unsigned long long b = 0; b < blocks; ++b) order[b] = b;
  unsigned long long s = g.seed;
  for (unsigned long long b = blocks; b > 1; --b) std::swap(order[b - 1], order[splitmix(s) % b]);
  for (unsigned long long b : order) {
    g.block_idx.x = static_cast<unsigned>(b % grid[0]);
    g.block_idx.y = static_cast<unsigned>((b / grid[0]) % grid[1]);
    g.block_idx.z = static_cast<unsigned>(b / (1ull * grid[0] * grid[1]));
    if (!run_block()) return 1;
  }
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
inline void __syncwarp(unsigned = 0xffffffffu) { opgen_emu::warp_barrier(); }

namespace opgen_emu {
// A warp exchange: every lane publishes its word, all meet, each reads its source lane's word, and all
// meet again before a slot can be overwritten by the next exchange.
inline unsigned long long* exchange_publish(int w, int lane, unsigned long long bits) {
  g.exchange[w][lane] = bits;
  warp_barrier();
  return g.exchange[w];
}
inline void exchange_done() { warp_barrier(); }

// A lane named in a warp-synchronous call's mask must take part: a lane past the end of a partial warp
// (or one that exited) cannot, which CUDA leaves undefined; the engine reports it.
inline void check_mask(unsigned mask, int w) {
  const int live = g.live_warp[w];
  const unsigned present = live >= 32 ? 0xffffffffu : ((1u << live) - 1u);
  if (mask & ~present) {
    fail("a warp-synchronous call's mask names lanes that do not exist or exited (a partial warp: blockDim "
         "not a multiple of 32?)");
  }
}
template <typename T> inline T exchange(T v, int src_lane, unsigned mask) {
  static_assert(sizeof(T) <= 8, "warp exchanges move at most 8 bytes");
  const int lane = g.current % kWarp, w = g.current / kWarp;
  check_mask(mask, w);
  unsigned long long bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  const unsigned long long* bank = exchange_publish(w, lane, bits);
  T r = v;
  if (src_lane >= 0 && src_lane < g.live_warp[w]) std::memcpy(&r, &bank[src_lane], sizeof(T));
  exchange_done();
  return r;
}
inline unsigned lane_id() { return static_cast<unsigned>(g.current % kWarp); }
}  // namespace opgen_emu

template <typename T> inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  const int lane = static_cast<int>(opgen_emu::lane_id());
  return opgen_emu::exchange(v, (lane / width) * width + (src % width), mask);
}
template <typename T> inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const int lane = static_cast<int>(opgen_emu::lane_id());
  const int src = lane % width + static_cast<int>(delta) < width ? lane + static_cast<int>(delta) : lane;
  return opgen_emu::exchange(v, src, mask);
}
template <typename T> inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const int lane = static_cast<int>(opgen_emu::lane_id());
  const int src = lane % width >= static_cast<int>(delta) ? lane - static_cast<int>(delta) : lane;
  return opgen_emu::exchange(v, src, mask);
}
template <typename T> inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  const int lane = static_cast<int>(opgen_emu::lane_id());
  const int src = lane ^ lane_mask;
  return opgen_emu::exchange(v, (src / width) == (lane / width) ? src : lane, mask);
}
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  unsigned result = 0;
  const int w = opgen_emu::g.current / opgen_emu::kWarp;
  opgen_emu::check_mask(mask, w);
  const unsigned long long* bank = opgen_emu::exchange_publish(w, opgen_emu::lane_id(), predicate != 0);
  for (int lane = 0; lane < opgen_emu::g.live_warp[w]; ++lane) {
    if (bank[lane]) result |= 1u << lane;
  }
  opgen_emu::exchange_done();
  return result & mask;
}
inline int __any_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }
inline int __all_sync(unsigned mask, int predicate) {
  const int w = opgen_emu::g.current / opgen_emu::kWarp;
  const int live = opgen_emu::g.live_warp[w];
  const unsigned everyone = live == 32 ? 0xffffffffu : ((1u << live) - 1u);
  return __ballot_sync(mask, predicate) == (everyone & mask);
}

// ---- atomics: fibers of one OS thread never interleave inside a call, so plain read-modify-write -------
template <typename T> inline T atomicAdd(T* p, T v) { T old = *p; *p = old + v; return old; }
template <typename T> inline T atomicSub(T* p, T v) { T old = *p; *p = old - v; return old; }
template <typename T> inline T atomicMax(T* p, T v) { T old = *p; *p = old < v ? v : old; return old; }
template <typename T> inline T atomicMin(T* p, T v) { T old = *p; *p = v < old ? v : old; return old; }
template <typename T> inline T atomicExch(T* p, T v) { T old = *p; *p = v; return old; }
template <typename T> inline T atomicCAS(T* p, T cmp, T v) { T old = *p; if (old == cmp) *p = v; return old; }

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
