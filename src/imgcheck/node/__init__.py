"""Node side: the probe (reads a host root), the inventory, NFD features and the Kubernetes reader."""
