# scdv_threads: the calling thread's scheduling (SCHED_BATCH and niceness, paced sections), built with
#   npx node-gyp rebuild --directory pipeline/threads/native
# src/ is this addon; include/thread_yield.h is header-only and compiled into the store's addon as well (its search
# threads), so a change to it rebuilds both (pipeline/setup/node-deps.js). node-addon-api with C++ exceptions, C++17, -O2.
# NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS: when a worker thread is terminated during a native call, the call's error
# cannot be thrown into JavaScript; node-addon-api then drops it instead of rethrowing it out of the callback, which
# would abort the whole process (std::terminate).
{
  "targets": [
    {
      "target_name": "scdv_threads",
      "sources": ["src/threads_addon.cc", "src/thread_yield.cc", "src/thread_pacing.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "include"],
      "defines": [
        "NAPI_VERSION=8",
        "NODE_ADDON_API_CPP_EXCEPTIONS",
        "NODE_ADDON_API_CPP_EXCEPTIONS_ALL",
        "NODE_ADDON_API_DISABLE_DEPRECATED",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"
      ],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "conditions": [
        # timer_create and dladdr: in libc since glibc 2.34, in librt and libdl before.
        ["OS=='linux'", { "libraries": ["-lrt", "-ldl"] }]
      ],
      "configurations": {
        "Release": {
          "cflags!": ["-O3"],
          "cflags_cc!": ["-O3"],
          "cflags": ["-O2"],
          "cflags_cc": ["-O2"]
        }
      },
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "GCC_OPTIMIZATION_LEVEL": "2"
      }
    }
  ]
}
