# hml_target_warnings(<target>): the project's warning set, on one target.
function(hml_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter>
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
  if(HML_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(HML_SANITIZE)
  add_compile_options(-fsanitize=${HML_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${HML_SANITIZE})
endif()

# Fuzzing: every object is instrumented for libFuzzer's coverage and
# checked by AddressSanitizer and UndefinedBehaviorSanitizer; only the
# fuzz executables link libFuzzer's main.
if(HML_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
