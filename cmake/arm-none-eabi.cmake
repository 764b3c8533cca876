# CMake toolchain for Cortex-M4F firmware (arm-none-eabi-gcc, newlib-nano, hard float).
# ctest runs each firmware on QEMU's mps2-an386 board through ports/cortex-m/run-qemu.sh.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_OBJCOPY arm-none-eabi-objcopy CACHE FILEPATH "objcopy")
set(CMAKE_SIZE arm-none-eabi-size CACHE FILEPATH "size")

# Compiler checks link a test program; a bare-metal program without startup code cannot link,
# so check with a static library instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# Cortex-M4 with the single-precision FPU (fpv4-sp-d16), hard-float ABI. double is emulated.
set(SGMCMC_CPU_FLAGS "-mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
# newlib-nano: in the compile flags, which CMake also passes to the link, so that compiling sees
# nano's newlib.h and linking takes libc_nano (given twice, gcc rejects the specs file).
set(CMAKE_C_FLAGS_INIT
    "${SGMCMC_CPU_FLAGS} --specs=nano.specs -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT
    "${SGMCMC_CPU_FLAGS} --specs=nano.specs -ffunction-sections -fdata-sections \
-fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit")
set(CMAKE_ASM_FLAGS_INIT "${SGMCMC_CPU_FLAGS}")

# No crt0 (ports/cortex-m/src/startup.cpp is the entry), no libnosys: a libc call that needs
# a system call (including _sbrk, hence the heap) fails the link. The --wrap options
# redirect every allocator entry point to a __wrap_ symbol that nothing defines, so any heap
# use anywhere in the firmware (malloc, operator new, newlib's reentrant _malloc_r) is a link
# error: the zero-heap proof.
set(SGMCMC_NO_HEAP_LINK_FLAGS
    "-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=_malloc_r,\
--wrap=_calloc_r,--wrap=_realloc_r,--wrap=_free_r,--wrap=memalign,--wrap=aligned_alloc,\
--wrap=posix_memalign,--wrap=_sbrk,--wrap=_sbrk_r")
set(CMAKE_EXE_LINKER_FLAGS_INIT
    "${SGMCMC_CPU_FLAGS} -nostartfiles -Wl,--gc-sections \
${SGMCMC_NO_HEAP_LINK_FLAGS}")

# Find programs on the host, headers and packages (Eigen3 is header-only) anywhere.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# ctest prepends this to every test command: the wrapper passes the ELF with -kernel to
# qemu-system-arm (mps2-an386, semihosting on) and returns the firmware's exit status.
set(CMAKE_CROSSCOMPILING_EMULATOR "${CMAKE_CURRENT_LIST_DIR}/../ports/cortex-m/run-qemu.sh")
