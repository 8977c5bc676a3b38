// Tests of the thread pool behind kiln_parallel_for (runtime/src/thread_pool.c).
#include "artifact.h"
#include "internal.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace {

struct PoolDeleter {
  void operator()(kiln_thread_pool *p) const { kiln_thread_pool_destroy(p); }
};
using PoolPtr = std::unique_ptr<kiln_thread_pool, PoolDeleter>;

PoolPtr makePool(int32_t threads) {
  kiln_thread_pool *pool = nullptr;
  EXPECT_EQ(kiln_test::statusString(kiln_thread_pool_create(threads, &pool)), "OK");
  return PoolPtr(pool);
}

/// Counts how often each index is visited and records the chunks.
struct Coverage {
  explicit Coverage(int64_t n) : hits(n) {}
  std::vector<std::atomic<int>> hits;
  std::atomic<int64_t> sum{0};
  std::atomic<int> calls{0};
  std::mutex mutex;
  std::set<std::thread::id> threads;

  static void body(void *closure, int64_t begin, int64_t end) {
    auto *c = static_cast<Coverage *>(closure);
    ASSERT_LT(begin, end);
    int64_t local = 0;
    for (int64_t i = begin; i < end; ++i) {
      c->hits[i].fetch_add(1);
      local += i;
    }
    c->sum.fetch_add(local);
    c->calls.fetch_add(1);
    std::lock_guard<std::mutex> lock(c->mutex);
    c->threads.insert(std::this_thread::get_id());
  }
};

void expectCovered(Coverage &c, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(c.hits[i].load(), 1) << "index " << i << " of " << n;
  EXPECT_EQ(c.sum.load(), n * (n - 1) / 2);
}

TEST(ThreadPool, SumsOverRanges) {
  for (int32_t threads = 1; threads <= 4; ++threads) {
    PoolPtr pool = makePool(threads);
    kiln_exec_context *ctx = kiln_thread_pool_context(pool.get());
    EXPECT_EQ(kiln_exec_context_num_threads(ctx), threads);
    for (int64_t n : {1, 2, 3, 5, 7, 16, 17, 100, 1000, 100003}) {
      Coverage c(n);
      kiln_parallel_for(ctx, n, Coverage::body, &c);
      expectCovered(c, n);
      // At most 16 chunks per thread (KILN_CHUNKS_PER_THREAD), and a single
      // thread runs everything as one chunk.
      EXPECT_LE(c.calls.load(), threads == 1 ? 1 : threads * 16)
          << "chunks for n=" << n;
    }
  }
}

TEST(ThreadPool, FewerItemsThanThreads) {
  PoolPtr pool = makePool(4);
  kiln_exec_context *ctx = kiln_thread_pool_context(pool.get());
  for (int64_t n : {1, 2, 3}) {
    Coverage c(n);
    kiln_parallel_for(ctx, n, Coverage::body, &c);
    expectCovered(c, n);
    EXPECT_EQ(c.calls.load(), n);
  }
}

TEST(ThreadPool, EmptyAndNegativeRanges) {
  PoolPtr pool = makePool(3);
  kiln_exec_context *ctx = kiln_thread_pool_context(pool.get());
  Coverage c(1);
  kiln_parallel_for(ctx, 0, Coverage::body, &c);
  kiln_parallel_for(ctx, -5, Coverage::body, &c);
  kiln_parallel_for(nullptr, 0, Coverage::body, &c);
  EXPECT_EQ(c.calls.load(), 0);
}

TEST(ThreadPool, NullContextRunsInline) {
  Coverage c(10);
  kiln_parallel_for(nullptr, 10, Coverage::body, &c);
  expectCovered(c, 10);
  EXPECT_EQ(c.calls.load(), 1);
  EXPECT_EQ(kiln_exec_context_num_threads(nullptr), 1);
  // The inline route of parallel.h behaves the same.
  Coverage d(10);
  kiln_exec_parallel_for(nullptr, 10, Coverage::body, &d);
  expectCovered(d, 10);
}

TEST(ThreadPool, InlineHeaderRoute) {
  PoolPtr pool = makePool(3);
  Coverage c(999);
  kiln_exec_parallel_for(kiln_thread_pool_context(pool.get()), 999,
                         Coverage::body, &c);
  expectCovered(c, 999);
}

TEST(ThreadPool, UsesWorkerThreads) {
  PoolPtr pool = makePool(4);
  kiln_exec_context *ctx = kiln_thread_pool_context(pool.get());
  // Slow chunks give the workers time to join in; over many rounds on a busy
  // machine at least one worker must have run a chunk.
  std::set<std::thread::id> seen;
  for (int round = 0; round < 50 && seen.size() < 2; ++round) {
    Coverage c(16);
    kiln_parallel_for(
        ctx, 16,
        [](void *closure, int64_t begin, int64_t end) {
          std::this_thread::sleep_for(std::chrono::microseconds(500));
          Coverage::body(closure, begin, end);
        },
        &c);
    expectCovered(c, 16);
    seen.insert(c.threads.begin(), c.threads.end());
  }
  EXPECT_GE(seen.size(), 2u);
}

TEST(ThreadPool, NestedCallsRunInline) {
  PoolPtr pool = makePool(4);
  struct Outer {
    kiln_exec_context *ctx;
    std::atomic<int64_t> total{0};
  } outer{kiln_thread_pool_context(pool.get())};
  kiln_parallel_for(
      outer.ctx, 8,
      [](void *closure, int64_t begin, int64_t end) {
        auto *o = static_cast<Outer *>(closure);
        for (int64_t i = begin; i < end; ++i) {
          Coverage inner(10);
          kiln_parallel_for(o->ctx, 10, Coverage::body, &inner);
          o->total.fetch_add(inner.sum.load());
          EXPECT_EQ(inner.calls.load(), 1); // nested: one inline chunk
        }
      },
      &outer);
  EXPECT_EQ(outer.total.load(), 8 * 45);
}

TEST(ThreadPool, ManyBackToBackCalls) {
  PoolPtr pool = makePool(3);
  kiln_exec_context *ctx = kiln_thread_pool_context(pool.get());
  std::atomic<int64_t> total{0};
  for (int i = 0; i < 2000; ++i) {
    kiln_parallel_for(
        ctx, 37,
        [](void *closure, int64_t begin, int64_t end) {
          static_cast<std::atomic<int64_t> *>(closure)->fetch_add(end - begin);
        },
        &total);
  }
  EXPECT_EQ(total.load(), 2000 * 37);
}

TEST(ThreadPool, CallerStartsWithTheFirstChunk) {
  // Chunks have home threads and only the owner takes from the front of its
  // range: chunk 0 is always the caller's, whatever the workers do. This is
  // what keeps a thread on the same rows of consecutive layers.
  for (int32_t threads : {2, 3, 4}) {
    PoolPtr pool = makePool(threads);
    kiln_exec_context *ctx = kiln_thread_pool_context(pool.get());
    for (int64_t n : {2, 3, 5, 64, 1000}) {
      for (int i = 0; i < 50; ++i) {
        std::thread::id first;
        kiln_parallel_for(
            ctx, n,
            [](void *closure, int64_t begin, int64_t) {
              if (begin == 0)
                *static_cast<std::thread::id *>(closure) =
                    std::this_thread::get_id();
            },
            &first);
        ASSERT_EQ(first, std::this_thread::get_id())
            << threads << " threads, n=" << n;
      }
    }
  }
}

TEST(ThreadPool, StealingCoversEveryIndexOnce) {
  // More threads than this machine has cores, and a slow first chunk: the
  // others empty the caller's range from the back and each other's ranges.
  PoolPtr pool = makePool(8);
  kiln_exec_context *ctx = kiln_thread_pool_context(pool.get());
  for (int i = 0; i < 300; ++i) {
    int64_t n = 1 + (i * 37) % 500;
    Coverage c(n);
    kiln_parallel_for(
        ctx, n,
        [](void *closure, int64_t begin, int64_t end) {
          if (begin == 0)
            std::this_thread::sleep_for(std::chrono::microseconds(50));
          Coverage::body(closure, begin, end);
        },
        &c);
    expectCovered(c, n);
  }
}

TEST(ThreadPool, IdleWorkersSleepAndWake) {
  PoolPtr pool = makePool(2);
  kiln_exec_context *ctx = kiln_thread_pool_context(pool.get());
  for (int i = 0; i < 3; ++i) {
    // Longer than the spin phase, so the worker is asleep on the condvar.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    Coverage c(64);
    kiln_parallel_for(ctx, 64, Coverage::body, &c);
    expectCovered(c, 64);
  }
}

TEST(ThreadPool, ConcurrentCallersFallBackToSerial) {
  // Not how the runtime uses a pool (runs are not reentrant), but two threads
  // calling into one pool must still get correct results.
  PoolPtr pool = makePool(3);
  kiln_exec_context *ctx = kiln_thread_pool_context(pool.get());
  auto work = [ctx] {
    for (int i = 0; i < 200; ++i) {
      Coverage c(50);
      kiln_parallel_for(ctx, 50, Coverage::body, &c);
      expectCovered(c, 50);
    }
  };
  std::thread t1(work), t2(work);
  t1.join();
  t2.join();
}

TEST(ThreadPool, CreateDestroy) {
  for (int32_t threads : {0, 1, 2, 8}) {
    PoolPtr pool = makePool(threads);
    ASSERT_TRUE(pool);
    EXPECT_EQ(kiln_exec_context_num_threads(kiln_thread_pool_context(pool.get())),
              threads == 0 ? kiln_available_cpus() : threads);
  }
  kiln_thread_pool *pool = nullptr;
  EXPECT_EQ(kiln_test::statusString(kiln_thread_pool_create(-1, &pool)),
            "INVALID_ARGUMENT: num_threads must be >= 0 (0 = one per CPU), got -1");
}

} // namespace

// The artifact checksum (artifact.c) is checked by several threads when the
// file is large; under ThreadSanitizer too (kiln_runtime_tsan_tests).
TEST(ArtifactCheck, ThreadsAgreeAndFindDamage) {
  kiln_test::TempDir dir;
  std::string data(size_t(40) << 20, '\0'); // 40 MiB: two threads or more
  for (size_t i = 0; i < data.size(); i += 512)
    data[i] = static_cast<char>(i >> 9);
  unsigned char trailer[KILN_ARTIFACT_TRAILER_SIZE];
  kiln_artifact_store_le64(trailer, data.size());
  kiln_artifact_store_le64(trailer + 8,
                           kiln_artifact_hash(data.data(), data.size()));
  memcpy(trailer + 16, KILN_ARTIFACT_MAGIC, 8);
  std::string sealed = data + std::string((const char *)trailer, 24);
  std::string path = dir.file("m.so");
  kiln_test::writeFile(path, sealed);
  for (int32_t threads : {1, 2, 4, 8})
    EXPECT_EQ(kiln_test::statusString(kiln_check_artifact(path.c_str(), threads)),
              "OK")
        << threads;
  sealed[sealed.size() * 3 / 4] ^= 0x10; // in the last thread's part
  kiln_test::writeFile(path, sealed);
  for (int32_t threads : {1, 4})
    EXPECT_NE(kiln_test::statusString(kiln_check_artifact(path.c_str(), threads))
                  .find("the file is damaged: checksum"),
              std::string::npos)
        << threads;
}
