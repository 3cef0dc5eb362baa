/* Whether this test is built with AddressSanitizer: GP_TEST_ASAN is 1 under ASan (gcc defines
 * __SANITIZE_ADDRESS__, clang answers __has_feature), 0 otherwise. Tests that bound their own
 * memory use read it: ASan's shadow memory and quarantine keep freed buffers resident. */
#ifndef GP_TESTS_SANITIZER_H
#define GP_TESTS_SANITIZER_H

#if defined(__SANITIZE_ADDRESS__)
#define GP_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GP_TEST_ASAN 1
#endif
#endif
#ifndef GP_TEST_ASAN
#define GP_TEST_ASAN 0
#endif

#endif
