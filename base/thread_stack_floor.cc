// A floor under the thread stack sizes libraries ask for, linked into --config=cuda builds only
// (kernels/BUILD.bazel). cuBLAS and cuBLASLt carry about 110 KiB of static TLS, which glibc places
// at the top of every thread's stack; a library that asks for a small fixed stack then gets
// EINVAL from pthread_create. Debian's civetweb (the Prometheus exporter's HTTP server) asks for
// 100 KiB, so with CUDA linked in the metrics endpoint could not start. This definition interposes
// on libc's (the executable and its libraries are searched first) and raises any request below
// kThreadStackFloor to it; larger requests and the default stack are left as they are.
#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <cstddef>

namespace {

constexpr size_t kThreadStackFloor = size_t{1} << 20;  // 1 MiB

using SetStackSize = int (*)(pthread_attr_t*, size_t);

SetStackSize Real() {
  static const SetStackSize real =
      reinterpret_cast<SetStackSize>(dlsym(RTLD_NEXT, "pthread_attr_setstacksize"));
  return real;
}

}  // namespace

extern "C" int pthread_attr_setstacksize(pthread_attr_t* attr, size_t size) {
  return Real()(attr, std::max(size, kThreadStackFloor));
}
