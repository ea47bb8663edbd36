/* A stand-in libcuda.so.1 for unit tests of the verifier's CUDA code path on machines without a GPU.
 * It is NOT a GPU: it only lets the verifier's control flow (dlsym, error naming, allocation and
 * clean-up order) run. STUB_CUDA_MODE=nodevice makes cuInit fail like a machine without a GPU. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static int mode_ok(void) {
    const char *m = getenv("STUB_CUDA_MODE");
    return !(m && strcmp(m, "nodevice") == 0);
}
CUresult cuInit(unsigned int flags) { (void)flags; return mode_ok() ? 0 : 100; }
CUresult cuDriverGetVersion(int *v) { *v = 12040; return 0; }
CUresult cuGetErrorName(CUresult e, const char **s) {
    switch (e) {
    case 0: *s = "CUDA_SUCCESS"; return 0;
    case 100: *s = "CUDA_ERROR_NO_DEVICE"; return 0;
    case 801: *s = "CUDA_ERROR_NOT_SUPPORTED"; return 0;
    default: *s = 0; return 1;
    }
}
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int ordinal) { *d = ordinal; return 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) { (void)dev; *v = attr == 124 ? 1 : 0; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { (void)dev; *ctx = (void *)0x1; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return 0; }
CUresult cuCtxSetCurrent(void *ctx) { (void)ctx; return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) { *p = (CUdeviceptr)(size_t)malloc(n); return *p ? 0 : 2; }
CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)(size_t)p); return 0; }
CUresult cuMemGetAllocationGranularity(size_t *g, const void *prop, int opt) { (void)prop; (void)opt; *g = 2u << 20; return 0; }
CUresult cuMemCreate(unsigned long long *h, size_t n, const void *prop, unsigned long long f) { (void)n; (void)prop; (void)f; *h = 7; return 0; }
CUresult cuMemAddressReserve(CUdeviceptr *p, size_t n, size_t a, CUdeviceptr addr, unsigned long long f) {
    (void)a; (void)addr; (void)f;
    void *m = mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return 2;
    *p = (CUdeviceptr)(size_t)m;
    return 0;
}
CUresult cuMemMap(CUdeviceptr p, size_t n, size_t o, unsigned long long h, unsigned long long f) { (void)p; (void)n; (void)o; (void)h; (void)f; return 0; }
CUresult cuMemSetAccess(CUdeviceptr p, size_t n, const void *d, size_t c) { (void)p; (void)n; (void)d; (void)c; return 0; }
CUresult cuMemUnmap(CUdeviceptr p, size_t n) { (void)p; (void)n; return 0; }
CUresult cuMemAddressFree(CUdeviceptr p, size_t n) { munmap((void *)(size_t)p, n); return 0; }
CUresult cuMemRelease(unsigned long long h) { (void)h; return 0; }
CUresult cuMemGetHandleForAddressRange(void *h, CUdeviceptr p, size_t n, int t, unsigned long long f) {
    (void)h; (void)p; (void)n; (void)t; (void)f; return 801;
}
