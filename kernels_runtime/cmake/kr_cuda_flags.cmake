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
