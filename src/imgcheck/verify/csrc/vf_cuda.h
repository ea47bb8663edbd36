/* The CUDA driver API entry points, structs and constants the verifier uses, and nothing else.
 *
 * Copied from NVIDIA's cuda.h (checked against CUDA 12.9, nvidia-cuda-runtime-cu12 12.9.79,
 * nvidia/cuda_runtime/include/cuda.h). Enum-typed parameters and fields are declared through the
 * VF_CU_* macros (int by default: every enum here has values within 0..0x7FFFFFFF, so it is an int
 * in the x86_64 and aarch64 ABIs). tests/verify/test_headers.py redefines those macros to cuda.h's
 * own types, includes this file after cuda.h and checks each prototype, struct offset and constant
 * with _Static_assert, so a wrong layout cannot go unnoticed where cuda.h is available. */
#ifndef IMGCHECK_VF_CUDA_H
#define IMGCHECK_VF_CUDA_H

#include <stddef.h>

#ifndef VF_CU_RESULT
#define VF_CU_RESULT int                  /* CUresult */
#endif
#ifndef VF_CU_DEVICE_ATTRIBUTE
#define VF_CU_DEVICE_ATTRIBUTE int        /* CUdevice_attribute */
#endif
#ifndef VF_CU_GRANULARITY_FLAGS
#define VF_CU_GRANULARITY_FLAGS int       /* CUmemAllocationGranularity_flags */
#endif
#ifndef VF_CU_RANGE_HANDLE_TYPE
#define VF_CU_RANGE_HANDLE_TYPE int       /* CUmemRangeHandleType */
#endif
#ifndef VF_CU_ALLOCATION_PROP
#define VF_CU_ALLOCATION_PROP struct vf_cu_allocation_prop
#endif
#ifndef VF_CU_ACCESS_DESC
#define VF_CU_ACCESS_DESC struct vf_cu_access_desc
#endif
#ifndef VF_CU_CONTEXT
#define VF_CU_CONTEXT void *              /* CUcontext: an opaque pointer */
#endif

typedef unsigned long long vf_cu_deviceptr;       /* CUdeviceptr on 64-bit hosts */
typedef int vf_cu_device;                          /* CUdevice */
typedef unsigned long long vf_cu_generic_handle;   /* CUmemGenericAllocationHandle */

struct vf_cu_location {                            /* CUmemLocation */
    int type;                                      /* CUmemLocationType */
    int id;
};

struct vf_cu_allocation_prop {                     /* CUmemAllocationProp (_v1) */
    int type;                                      /* CUmemAllocationType */
    int requestedHandleTypes;                      /* CUmemAllocationHandleType */
    struct vf_cu_location location;
    void *win32HandleMetaData;
    struct {
        unsigned char compressionType;
        unsigned char gpuDirectRDMACapable;
        unsigned short usage;
        unsigned char reserved[4];
    } allocFlags;
};

struct vf_cu_access_desc {                         /* CUmemAccessDesc (_v1) */
    struct vf_cu_location location;
    int flags;                                     /* CUmemAccess_flags */
};

enum {
    VF_CUDA_SUCCESS = 0,
    VF_CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102,
    VF_CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 110,
    VF_CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 116,
    VF_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124,
    VF_CU_MEM_ALLOCATION_TYPE_PINNED = 0x1,
    VF_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 0x1,
    VF_CU_MEM_LOCATION_TYPE_DEVICE = 0x1,
    VF_CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3,
    VF_CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0x0,
    VF_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 0x1,
    /* CUmemRangeFlags (CUDA 12.8 cuda.h): the PCIe (BAR1) mapping NCCL >= 2.26.2 asks for on C2C GPUs */
    VF_CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE = 0x1,
};

/* Names are the exported symbols (cuda.h maps cuMemAlloc to cuMemAlloc_v2 and so on). */
typedef VF_CU_RESULT (*vf_cuInit_fn)(unsigned int flags);
typedef VF_CU_RESULT (*vf_cuDriverGetVersion_fn)(int *driverVersion);
typedef VF_CU_RESULT (*vf_cuGetErrorName_fn)(VF_CU_RESULT error, const char **pStr);
typedef VF_CU_RESULT (*vf_cuDeviceGetCount_fn)(int *count);
typedef VF_CU_RESULT (*vf_cuDeviceGet_fn)(vf_cu_device *device, int ordinal);
typedef VF_CU_RESULT (*vf_cuDeviceGetAttribute_fn)(int *pi, VF_CU_DEVICE_ATTRIBUTE attrib, vf_cu_device dev);
typedef VF_CU_RESULT (*vf_cuDevicePrimaryCtxRetain_fn)(VF_CU_CONTEXT *pctx, vf_cu_device dev);
typedef VF_CU_RESULT (*vf_cuDevicePrimaryCtxRelease_v2_fn)(vf_cu_device dev);
typedef VF_CU_RESULT (*vf_cuCtxSetCurrent_fn)(VF_CU_CONTEXT ctx);
typedef VF_CU_RESULT (*vf_cuMemAlloc_v2_fn)(vf_cu_deviceptr *dptr, size_t bytesize);
typedef VF_CU_RESULT (*vf_cuMemFree_v2_fn)(vf_cu_deviceptr dptr);
typedef VF_CU_RESULT (*vf_cuMemGetAllocationGranularity_fn)(size_t *granularity, const VF_CU_ALLOCATION_PROP *prop,
                                                          VF_CU_GRANULARITY_FLAGS option);
typedef VF_CU_RESULT (*vf_cuMemCreate_fn)(vf_cu_generic_handle *handle, size_t size, const VF_CU_ALLOCATION_PROP *prop,
                                        unsigned long long flags);
typedef VF_CU_RESULT (*vf_cuMemAddressReserve_fn)(vf_cu_deviceptr *ptr, size_t size, size_t alignment,
                                                vf_cu_deviceptr addr, unsigned long long flags);
typedef VF_CU_RESULT (*vf_cuMemMap_fn)(vf_cu_deviceptr ptr, size_t size, size_t offset, vf_cu_generic_handle handle,
                                     unsigned long long flags);
typedef VF_CU_RESULT (*vf_cuMemSetAccess_fn)(vf_cu_deviceptr ptr, size_t size, const VF_CU_ACCESS_DESC *desc,
                                           size_t count);
typedef VF_CU_RESULT (*vf_cuMemUnmap_fn)(vf_cu_deviceptr ptr, size_t size);
typedef VF_CU_RESULT (*vf_cuMemAddressFree_fn)(vf_cu_deviceptr ptr, size_t size);
typedef VF_CU_RESULT (*vf_cuMemRelease_fn)(vf_cu_generic_handle handle);
typedef VF_CU_RESULT (*vf_cuMemGetHandleForAddressRange_fn)(void *handle, vf_cu_deviceptr dptr, size_t size,
                                                          VF_CU_RANGE_HANDLE_TYPE handleType,
                                                          unsigned long long flags);

#endif
