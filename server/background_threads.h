// BackgroundThreads: runs blocking operations (a model load, the drain of an unload) on threads
// of their own, off the front ends' threads (gRPC's callback threads, libmicrohttpd's pool), and
// joins them: finished ones on the next Run, the rest in JoinAll / the destructor. Shared by the
// gRPC and HTTP front ends so that both handle RepositoryModelLoad/Unload the same way.
//
// Thread-safe.
#ifndef INFERD_SERVER_BACKGROUND_THREADS_H_
#define INFERD_SERVER_BACKGROUND_THREADS_H_

#include <atomic>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

namespace inferd::server {

class BackgroundThreads {
 public:
  BackgroundThreads() = default;
  ~BackgroundThreads() { JoinAll(); }
  BackgroundThreads(const BackgroundThreads&) = delete;
  BackgroundThreads& operator=(const BackgroundThreads&) = delete;

  // Runs `fn` on a new thread.
  void Run(std::function<void()> fn) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = ops_.begin(); it != ops_.end();) {  // join the finished ones
      if (it->done.load()) {
        it->thread.join();
        it = ops_.erase(it);
      } else {
        ++it;
      }
    }
    Op& op = ops_.emplace_back();
    op.thread = std::thread([fn = std::move(fn), &op] {
      fn();
      op.done.store(true);
    });
  }

  // Waits for every thread started so far.
  void JoinAll() {
    std::list<Op> ops;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ops.swap(ops_);
    }
    for (Op& op : ops) op.thread.join();
  }

 private:
  struct Op {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  std::mutex mu_;
  std::list<Op> ops_;  // protected by mu_
};

}  // namespace inferd::server

#endif  // INFERD_SERVER_BACKGROUND_THREADS_H_
