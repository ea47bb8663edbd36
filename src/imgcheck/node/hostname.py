"""What kind of address the node's /etc/hosts gives its host name.

A process that shares the node's network namespace (hostNetwork, docker --network host, enroot) sees the node's
host name, and its /etc/hosts is the node's: Kubernetes does not manage the hosts file of a hostNetwork pod
(kubernetes.io/docs/tasks/network/customize-hosts-file-for-pods/), Docker's host network copies the host's, and
enroot binds it (conf/mounts/10-system.fstab). PyTorch's Gloo, without GLOO_SOCKET_IFNAME, binds to what the host
name resolves to (ProcessGroupGloo::createDefaultDevice); glibc's files backend answers from the first /etc/hosts
line naming it (multi off, the default), and Debian/Ubuntu installers write "127.0.1.1 HOSTNAME" there.
"""

from __future__ import annotations

import ipaddress

from .hostroot import HostReadError, HostRoot

KERNEL_HOSTNAME = "/proc/sys/kernel/hostname"
ETC_HOSTNAME = "/etc/hostname"
ETC_HOSTS = "/etc/hosts"
_MAX = 1024 * 1024


def scan_hostname(host: HostRoot, unknown: dict[str, str], read: dict[str, str]) -> str | None:
    """What kind of address the node's /etc/hosts gives its host name (first line naming it): "loopback",
    "link-local", "routable", or "none" (no line names it: DNS decides); None: unread. The kind, not the address:
    node facts are grouped across a fleet, and a routable address differs per node while its kind does not."""
    name = None
    for path in (KERNEL_HOSTNAME, ETC_HOSTNAME):
        try:
            value = host.read_value(path)
        except HostReadError:
            value = None
        if value:
            name = value.split()[0]
            break
    if name is None:
        unknown["hostname_in_hosts"] = f"neither {KERNEL_HOSTNAME} nor {ETC_HOSTNAME} is readable under the probe root"
        return None
    try:
        text = host.read_text(ETC_HOSTS, _MAX)
    except HostReadError as exc:
        text, why = None, str(exc)
    else:
        why = f"{ETC_HOSTS} is not readable under the probe root"
    if text is None:
        unknown["hostname_in_hosts"] = why
        return None
    read["hostname_in_hosts"] = ETC_HOSTS
    found = addresses_for(text, name)
    return address_kind(found[0]) if found else "none"


def address_kind(text: str) -> str:
    try:
        addr = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return "routable"  # not an address glibc would return as one: treated as any other name
    if addr.is_loopback:
        return "loopback"
    return "link-local" if addr.is_link_local else "routable"


def addresses_for(hosts_text: str, name: str) -> tuple[str, ...]:
    """The addresses of the /etc/hosts lines naming `name` (or its first label), in file order."""
    wanted = {name.lower(), name.split(".", 1)[0].lower()}
    found: list[str] = []
    for line in hosts_text.splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) >= 2 and wanted & {f.lower() for f in fields[1:]} and fields[0] not in found:
            found.append(fields[0])
    return tuple(found)
