/* A stand-in verifier that never finishes: for the time-limit and clean-up tests. Built like the
 * real one (no start files, libc only) so it passes the same old-glibc check and runs in the image. */
#include <stdlib.h>
#include <unistd.h>
#if defined(__x86_64__)
__attribute__((force_align_arg_pointer))
#endif
__attribute__((noreturn, used)) void _start(void) {
    for (;;) pause();
}
