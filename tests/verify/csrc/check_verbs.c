/* Compile-time proof that vf_verbs.h matches rdma-core's real <infiniband/verbs.h>. */
#include <infiniband/verbs.h>
#include "vf_verbs.h"

#define SAME(fn, vf_type) _Static_assert(__builtin_types_compatible_p(__typeof__(&fn), vf_type), #fn)

SAME(ibv_get_device_list, vf_ibv_get_device_list_fn);
SAME(ibv_free_device_list, vf_ibv_free_device_list_fn);
SAME(ibv_get_device_name, vf_ibv_get_device_name_fn);
SAME(ibv_open_device, vf_ibv_open_device_fn);
SAME(ibv_close_device, vf_ibv_close_device_fn);
SAME(ibv_alloc_pd, vf_ibv_alloc_pd_fn);
SAME(ibv_dealloc_pd, vf_ibv_dealloc_pd_fn);
SAME(ibv_reg_mr, vf_ibv_reg_mr_fn);
SAME(ibv_reg_mr_iova2, vf_ibv_reg_mr_iova2_fn);
SAME(ibv_reg_dmabuf_mr, vf_ibv_reg_dmabuf_mr_fn);
SAME(ibv_dereg_mr, vf_ibv_dereg_mr_fn);

_Static_assert(VF_IBV_ACCESS_LOCAL_WRITE == IBV_ACCESS_LOCAL_WRITE, "LOCAL_WRITE");
_Static_assert(VF_IBV_ACCESS_REMOTE_WRITE == IBV_ACCESS_REMOTE_WRITE, "REMOTE_WRITE");
_Static_assert(VF_IBV_ACCESS_REMOTE_READ == IBV_ACCESS_REMOTE_READ, "REMOTE_READ");
_Static_assert(VF_IBV_ACCESS_REMOTE_ATOMIC == IBV_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC");
_Static_assert(VF_IBV_ACCESS_RELAXED_ORDERING == IBV_ACCESS_RELAXED_ORDERING, "RELAXED_ORDERING");

int main(void) { return 0; }
