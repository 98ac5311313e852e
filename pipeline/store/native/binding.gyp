# scdv_store: the vector store's native part (segments, search, merge, flock), built with
#   npx node-gyp rebuild --directory pipeline/store/native
# node-addon-api with C++ exceptions, C++17, -O3 for a portable x86-64-v2 baseline (SSE4.2, POPCNT):
# the .node file must run on any CPU of the CI/production class, so no -march=native.
# ../../threads/native/include: thread_yield.h, the search threads' scheduling (shared with the scdv_threads addon).
# -ffp-contract=off: no a*b+c fused into one FMA (x86-64-v2 has none, but other targets do): the re-ranking
# (src/rerank.cc) must round every product and sum as the JS code it mirrors does.
# NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS: when a worker thread is terminated during a native call, the call's error
# cannot be thrown into JavaScript; node-addon-api then drops it instead of rethrowing it out of the callback, which
# would abort the whole process (std::terminate).
{
  "targets": [
    {
      "target_name": "scdv_store",
      "sources": [
        "src/addon.cc",
        "src/addon_js.cc",
        "src/addon_rerank.cc",
        "src/addon_view.cc",
        "src/fwd_codec.cc",
        "src/fwd_dot.cc",
        "src/rerank.cc",
        "src/result_fields.cc",
        "src/segment.cc",
        "src/search.cc",
        "src/search_decode.cc",
        "src/search_pool.cc",
        "src/search_queue.cc",
        "src/search_scan.cc",
        "src/util.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "../../threads/native/include"],
      "defines": [
        "NAPI_VERSION=8",
        "NODE_ADDON_API_CPP_EXCEPTIONS",
        "NODE_ADDON_API_CPP_EXCEPTIONS_ALL",
        "NODE_ADDON_API_DISABLE_DEPRECATED",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"
      ],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-Wall", "-Wextra", "-Wno-unused-parameter", "-ffp-contract=off"],
      "conditions": [
        ["target_arch=='x64'", {
          "cflags": ["-march=x86-64-v2", "-mtune=generic"],
          "cflags_cc": ["-march=x86-64-v2", "-mtune=generic"]
        }]
      ],
      "configurations": {
        "Release": {
          "cflags": ["-O3"],
          "cflags_cc": ["-O3"]
        }
      },
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "GCC_OPTIMIZATION_LEVEL": "3",
        "OTHER_CPLUSPLUSFLAGS": ["-ffp-contract=off"]
      }
    }
  ]
}
