/* The libibverbs entry points the verifier calls, and nothing else.
 *
 * Prototypes copied from rdma-core libibverbs/verbs.h (checked against rdma-core v44.0 as shipped
 * in Debian's libibverbs-dev 44.0-2, /usr/include/infiniband/verbs.h; ibv_reg_mr_iova2 exists since
 * v28.0 at IBVERBS_1.8, ibv_reg_dmabuf_mr since v34.0 at IBVERBS_1.12). Only opaque pointers are
 * used: the verifier never reads a field of a verbs struct, so no struct layout is declared here.
 * tests/verify/test_headers.py compiles these against the real verbs.h when it is installed. */
#ifndef IMGCHECK_VF_VERBS_H
#define IMGCHECK_VF_VERBS_H

#include <stddef.h>
#include <stdint.h>

struct ibv_device;
struct ibv_context;
struct ibv_pd;
struct ibv_mr;

typedef struct ibv_device **(*vf_ibv_get_device_list_fn)(int *num_devices);
typedef void (*vf_ibv_free_device_list_fn)(struct ibv_device **list);
typedef const char *(*vf_ibv_get_device_name_fn)(struct ibv_device *device);
typedef struct ibv_context *(*vf_ibv_open_device_fn)(struct ibv_device *device);
typedef int (*vf_ibv_close_device_fn)(struct ibv_context *context);
typedef struct ibv_pd *(*vf_ibv_alloc_pd_fn)(struct ibv_context *context);
typedef int (*vf_ibv_dealloc_pd_fn)(struct ibv_pd *pd);
typedef struct ibv_mr *(*vf_ibv_reg_mr_fn)(struct ibv_pd *pd, void *addr, size_t length, int access);
typedef struct ibv_mr *(*vf_ibv_reg_mr_iova2_fn)(struct ibv_pd *pd, void *addr, size_t length,
                                                 uint64_t iova, unsigned int access);
typedef struct ibv_mr *(*vf_ibv_reg_dmabuf_mr_fn)(struct ibv_pd *pd, uint64_t offset, size_t length,
                                                  uint64_t iova, int fd, int access);
typedef int (*vf_ibv_dereg_mr_fn)(struct ibv_mr *mr);
/* libmlx5 (rdma-core providers/mlx5/mlx5dv.h), both at MLX5_1.25 (rdma-core >= 54.0), as NCCL >= 2.27.3 loads them. */
typedef struct ibv_mr *(*vf_mlx5dv_reg_dmabuf_mr_fn)(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
                                                     int fd, int access, int mlx5_access);
typedef int (*vf_mlx5dv_get_data_direct_sysfs_path_fn)(struct ibv_context *context, char *buf, size_t buf_len);
enum { VF_MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT = 1 << 0 };

/* enum ibv_access_flags; RELAXED_ORDERING is IBV_ACCESS_OPTIONAL_FIRST = IB_UVERBS_ACCESS_OPTIONAL_FIRST
 * = 1 << 20 (kernel-headers/rdma/ib_user_ioctl_verbs.h). */
enum {
    VF_IBV_ACCESS_LOCAL_WRITE = 1,
    VF_IBV_ACCESS_REMOTE_WRITE = 1 << 1,
    VF_IBV_ACCESS_REMOTE_READ = 1 << 2,
    VF_IBV_ACCESS_REMOTE_ATOMIC = 1 << 3,
    VF_IBV_ACCESS_RELAXED_ORDERING = 1 << 20,
};

#endif
