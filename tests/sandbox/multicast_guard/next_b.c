/* The definition next_a.c's RTLD_NEXT lookups must find. */
__attribute__((visibility("default"))) int next_target(void) { return 2; }
