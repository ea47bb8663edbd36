#!/bin/bash
# The docker run of vllm-project/vllm examples/online_serving/run_cluster.sh (commit 0c37e239), as it launches
# each Ray node (the script's argument handling left out).
DOCKER_IMAGE="$1"
CONTAINER_NAME="node-${RANDOM}"
ADDITIONAL_ARGS=("$@")
RAY_IP_VARS=()
docker run \
    --entrypoint /bin/bash \
    --network host \
    --name "${CONTAINER_NAME}" \
    --shm-size 10.24g \
    --gpus all \
    -v "${PATH_TO_HF_HOME}:/root/.cache/huggingface" \
    "${RAY_IP_VARS[@]}" \
    "${ADDITIONAL_ARGS[@]}" \
    "${DOCKER_IMAGE}" -c "${RAY_START_CMD}"
