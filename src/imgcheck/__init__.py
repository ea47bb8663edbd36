"""imgcheck: will this container image's RDMA/GPU userspace work on these nodes?"""

__version__ = "0.1.0"
