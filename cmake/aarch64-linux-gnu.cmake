# CMake toolchain for the host suite on AArch64 Linux (g++-aarch64-linux-gnu); ctest runs the
# test programs under qemu-aarch64 (user mode). Configure with -DSGMCMC_BUILD_BENCH=OFF
# -DSGMCMC_BUILD_EXAMPLES=OFF: Debian's Google Benchmark is an x86-64 library only.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Target libraries come from the cross sysroot only. Headers and CMake package files may come
# from the build machine: Eigen3 and doctest are header-only and architecture-independent
# (/usr/share/eigen3/cmake, /usr/lib/cmake/doctest).
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
list(APPEND CMAKE_PREFIX_PATH /usr /usr/share/eigen3/cmake /usr/lib/cmake)

# -L points the user-mode emulator at the target's dynamic loader and libstdc++.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
