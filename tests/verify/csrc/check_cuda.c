/* Compile-time proof that vf_cuda.h matches NVIDIA's cuda.h: prototypes (with cuda.h's own enum and
 * struct types substituted), struct layouts (offsets and sizes) and constants. */
#include <stddef.h>
#include <cuda.h>

#define VF_CU_RESULT CUresult
#define VF_CU_DEVICE_ATTRIBUTE CUdevice_attribute
#define VF_CU_GRANULARITY_FLAGS CUmemAllocationGranularity_flags
#define VF_CU_RANGE_HANDLE_TYPE CUmemRangeHandleType
#define VF_CU_ALLOCATION_PROP CUmemAllocationProp
#define VF_CU_ACCESS_DESC CUmemAccessDesc
#define VF_CU_CONTEXT CUcontext
#include "vf_cuda.h"

#define SAME(fn, vf_type) _Static_assert(__builtin_types_compatible_p(__typeof__(&fn), vf_type), #fn)
/* cuda.h #defines the unversioned names to the exported _v2 symbols; check those. */
SAME(cuInit, vf_cuInit_fn);
SAME(cuDriverGetVersion, vf_cuDriverGetVersion_fn);
SAME(cuGetErrorName, vf_cuGetErrorName_fn);
SAME(cuDeviceGetCount, vf_cuDeviceGetCount_fn);
SAME(cuDeviceGet, vf_cuDeviceGet_fn);
SAME(cuDeviceGetAttribute, vf_cuDeviceGetAttribute_fn);
SAME(cuDevicePrimaryCtxRetain, vf_cuDevicePrimaryCtxRetain_fn);
SAME(cuDevicePrimaryCtxRelease_v2, vf_cuDevicePrimaryCtxRelease_v2_fn);
SAME(cuCtxSetCurrent, vf_cuCtxSetCurrent_fn);
SAME(cuMemAlloc_v2, vf_cuMemAlloc_v2_fn);
SAME(cuMemFree_v2, vf_cuMemFree_v2_fn);
SAME(cuMemGetAllocationGranularity, vf_cuMemGetAllocationGranularity_fn);
SAME(cuMemCreate, vf_cuMemCreate_fn);
SAME(cuMemAddressReserve, vf_cuMemAddressReserve_fn);
SAME(cuMemMap, vf_cuMemMap_fn);
SAME(cuMemSetAccess, vf_cuMemSetAccess_fn);
SAME(cuMemUnmap, vf_cuMemUnmap_fn);
SAME(cuMemAddressFree, vf_cuMemAddressFree_fn);
SAME(cuMemRelease, vf_cuMemRelease_fn);
SAME(cuMemGetHandleForAddressRange, vf_cuMemGetHandleForAddressRange_fn);
_Static_assert(__builtin_types_compatible_p(vf_cu_deviceptr, CUdeviceptr), "CUdeviceptr");
_Static_assert(__builtin_types_compatible_p(vf_cu_device, CUdevice), "CUdevice");
_Static_assert(__builtin_types_compatible_p(vf_cu_generic_handle, CUmemGenericAllocationHandle), "handle");

#define SAME_FIELD(ours, theirs, field) \
    _Static_assert(offsetof(ours, field) == offsetof(theirs, field) && \
                   sizeof(((ours *)0)->field) == sizeof(((theirs *)0)->field), #theirs "." #field)
SAME_FIELD(struct vf_cu_location, CUmemLocation, type);
SAME_FIELD(struct vf_cu_location, CUmemLocation, id);
_Static_assert(sizeof(struct vf_cu_location) == sizeof(CUmemLocation), "CUmemLocation size");
SAME_FIELD(struct vf_cu_allocation_prop, CUmemAllocationProp, type);
SAME_FIELD(struct vf_cu_allocation_prop, CUmemAllocationProp, requestedHandleTypes);
SAME_FIELD(struct vf_cu_allocation_prop, CUmemAllocationProp, location);
SAME_FIELD(struct vf_cu_allocation_prop, CUmemAllocationProp, win32HandleMetaData);
SAME_FIELD(struct vf_cu_allocation_prop, CUmemAllocationProp, allocFlags);
SAME_FIELD(struct vf_cu_allocation_prop, CUmemAllocationProp, allocFlags.gpuDirectRDMACapable);
_Static_assert(sizeof(struct vf_cu_allocation_prop) == sizeof(CUmemAllocationProp), "CUmemAllocationProp size");
SAME_FIELD(struct vf_cu_access_desc, CUmemAccessDesc, location);
SAME_FIELD(struct vf_cu_access_desc, CUmemAccessDesc, flags);
_Static_assert(sizeof(struct vf_cu_access_desc) == sizeof(CUmemAccessDesc), "CUmemAccessDesc size");

_Static_assert(VF_CUDA_SUCCESS == CUDA_SUCCESS, "");
_Static_assert(VF_CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED ==
               CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, "");
_Static_assert(VF_CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED ==
               CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, "");
_Static_assert(VF_CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED == CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, "");
_Static_assert(VF_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED == CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, "");
_Static_assert(VF_CU_MEM_ALLOCATION_TYPE_PINNED == CU_MEM_ALLOCATION_TYPE_PINNED, "");
_Static_assert(VF_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, "");
_Static_assert(VF_CU_MEM_LOCATION_TYPE_DEVICE == CU_MEM_LOCATION_TYPE_DEVICE, "");
_Static_assert(VF_CU_MEM_ACCESS_FLAGS_PROT_READWRITE == CU_MEM_ACCESS_FLAGS_PROT_READWRITE, "");
_Static_assert(VF_CU_MEM_ALLOC_GRANULARITY_MINIMUM == CU_MEM_ALLOC_GRANULARITY_MINIMUM, "");
_Static_assert(VF_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD == CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, "");
/* every enum we pass as int must be int-sized */
_Static_assert(sizeof(CUresult) == sizeof(int) && sizeof(CUdevice_attribute) == sizeof(int) &&
               sizeof(CUmemRangeHandleType) == sizeof(int) && sizeof(CUmemAllocationGranularity_flags) == sizeof(int),
               "enum sizes");

int main(void) { return 0; }
