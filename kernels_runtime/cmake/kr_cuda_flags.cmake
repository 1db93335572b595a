# The top-level add_compile_options(-Wall -Wextra) reaches CUDA sources too, and nvcc refuses
# them ("Unknown option '-Wall'"). In the including directory, keep every inherited option for
# the other languages and hand the warnings to nvcc's host compiler instead.
get_directory_property(_kr_opts COMPILE_OPTIONS)
set(_kr_fixed)
foreach(_opt IN LISTS _kr_opts)
  list(APPEND _kr_fixed "$<$<NOT:$<COMPILE_LANGUAGE:CUDA>>:${_opt}>")
endforeach()
list(APPEND _kr_fixed "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>")
set_directory_properties(PROPERTIES COMPILE_OPTIONS "${_kr_fixed}")

# CMake 3.25 does not know nvcc 13's C++20 flag, and CUDA targets inherit CXX_STANDARD_REQUIRED
# (ON at the top level), so it refuses to configure them. Not required, the standard decays silently
# (CMake 4 knows it and adds -std=c++20); kr_headers passes -std=c++20 itself either way.
set(CMAKE_CUDA_STANDARD_REQUIRED OFF)
