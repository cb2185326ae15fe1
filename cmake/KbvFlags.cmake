# One place for compile flags; every kbv target calls kbv_target_flags().
function(kbv_target_flags target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  endif()
endfunction()

set(KBV_SANITIZE "" CACHE STRING "Sanitizers for the asan preset, e.g. address,undefined")
if(KBV_SANITIZE)
  add_compile_options(-fsanitize=${KBV_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${KBV_SANITIZE})
endif()
