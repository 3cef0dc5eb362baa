# The diff module's tests (included from tests/diff/CMakeLists.txt, or from src/diff while
# tests/CMakeLists.txt does not list diff). Paths are absolute so either caller works.
if(NOT TARGET PkgConfig::CMOCKA)
  pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)
endif()
set(GP_DIFF_TEST_DIR ${CMAKE_SOURCE_DIR}/tests/diff)
gp_add_test(test_diff ${GP_DIFF_TEST_DIR}/test_diff.c)
# The CI example (examples/profiles/ci_example.sh) against the freshly built CLI.
add_test(NAME diff_ci_example
  COMMAND sh ${CMAKE_SOURCE_DIR}/examples/profiles/ci_example.sh $<TARGET_FILE:gpuprof_cli>)
# Integration test of the command line (input forms, options, output files, exit codes).
add_test(NAME test_diff_cli
  COMMAND sh ${GP_DIFF_TEST_DIR}/test_diff_cli.sh $<TARGET_FILE:gpuprof_cli> ${CMAKE_SOURCE_DIR})
# Allocation-failure test: malloc/calloc/realloc of gpuprof code wrapped by the linker.
gp_add_test(test_diff_alloc ${GP_DIFF_TEST_DIR}/test_diff_alloc.c
  LIBS -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc)
