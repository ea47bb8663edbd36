"""The node's host name and the addresses its /etc/hosts gives it.

A process that shares the node's network namespace (hostNetwork, docker --network host, enroot) sees the node's
host name, and its /etc/hosts is the node's: Kubernetes does not manage the hosts file of a hostNetwork pod
(kubernetes.io/docs/tasks/network/customize-hosts-file-for-pods/), Docker's host network copies the host's, and
enroot binds it (conf/mounts/10-system.fstab). PyTorch's Gloo, without GLOO_SOCKET_IFNAME, binds to what the host
name resolves to (ProcessGroupGloo::createDefaultDevice); glibc's files backend answers from the first /etc/hosts
line naming it (multi off, the default), and Debian/Ubuntu installers write "127.0.1.1 HOSTNAME" there.
"""

from __future__ import annotations

from .hostroot import HostReadError, HostRoot

KERNEL_HOSTNAME = "/proc/sys/kernel/hostname"
ETC_HOSTNAME = "/etc/hostname"
ETC_HOSTS = "/etc/hosts"
_MAX = 1024 * 1024


def scan_hostname(
    host: HostRoot, unknown: dict[str, str], read: dict[str, str]
) -> tuple[str | None, tuple[str, ...] | None]:
    """(host name, the addresses /etc/hosts maps it to in file order: () none, so DNS decides; None: unread)."""
    name = None
    for path in (KERNEL_HOSTNAME, ETC_HOSTNAME):
        try:
            value = host.read_value(path)
        except HostReadError:
            value = None
        if value:
            name, read["hostname"] = value.split()[0], path
            break
    if name is None:
        unknown["hostname"] = f"neither {KERNEL_HOSTNAME} nor {ETC_HOSTNAME} is readable under the probe root"
        unknown["hostname_addresses"] = "the host name is not known"
        return None, None
    try:
        text = host.read_text(ETC_HOSTS, _MAX)
    except HostReadError as exc:
        text, why = None, str(exc)
    else:
        why = f"{ETC_HOSTS} is not readable under the probe root"
    if text is None:
        unknown["hostname_addresses"] = why
        return name, None
    read["hostname_addresses"] = ETC_HOSTS
    return name, addresses_for(text, name)


def addresses_for(hosts_text: str, name: str) -> tuple[str, ...]:
    """The addresses of the /etc/hosts lines naming `name` (or its first label), in file order."""
    wanted = {name.lower(), name.split(".", 1)[0].lower()}
    found: list[str] = []
    for line in hosts_text.splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) >= 2 and wanted & {f.lower() for f in fields[1:]} and fields[0] not in found:
            found.append(fields[0])
    return tuple(found)
