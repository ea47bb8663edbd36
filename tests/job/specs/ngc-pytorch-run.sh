#!/bin/sh
# The docker run line NVIDIA's NGC PyTorch container documentation gives (docs.nvidia.com/deeplearning/frameworks/
# user-guide: --ipc=host or --shm-size, --ulimit memlock=-1 --ulimit stack=67108864).
docker run --gpus all -it --rm --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 nvcr.io/nvidia/pytorch:24.05-py3
