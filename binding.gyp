# scdv_mecab: MeCab binding (pipeline/tokenizer/native/*.cc, *.h), built by `npm run build:native`.
# node-addon-api is used with C++ exceptions (std::exception also becomes a JS Error), -O2, C++17.
# NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS: when a worker thread is terminated during a native call, the call's error
# cannot be thrown into JavaScript; node-addon-api then drops it instead of rethrowing it out of the callback, which
# would abort the whole process (std::terminate).
{
  "targets": [
    {
      "target_name": "scdv_mecab",
      "sources": ["pipeline/tokenizer/native/mecab_addon.cc", "pipeline/tokenizer/native/mecab_options.cc", "pipeline/tokenizer/native/mecab_pages.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": [
        "NAPI_VERSION=8",
        "NODE_ADDON_API_CPP_EXCEPTIONS",
        "NODE_ADDON_API_CPP_EXCEPTIONS_ALL",
        "NODE_ADDON_API_DISABLE_DEPRECATED",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"
      ],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
      "cflags_cc": ["-std=c++17", "-fexceptions"],
      "libraries": ["<!@(mecab-config --libs)"],
      # node's common.gypi sets -O3 for Release; replace it with -O2.
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
